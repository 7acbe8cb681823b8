"""TensorFlow's forward mode traced per exact shape, whatever the process ran before.

``ForwardAccumulator`` computes each op's JVP with a function it traces per op, attributes
and input types (``_jvp_dispatch`` in ``tensorflow/python/eager/forwardprop.py``).  For an
op's first 32 traces in a process it traces exact shapes; after that it traces shapes
relaxed from those it has met, and both kinds share one cache, so a later exact call may
also be served by a relaxed trace.  The two graphs round differently: one
``nn.layer_norm`` check's ``hvp_rev_fwd`` values differed in their last digits between a
fresh process and one past the limit.  A reference's bits would then depend on what ran
before in the process: the other ops of a sweep's worker, the order the executor handed
them out in, or the user's own code.

:func:`exact_shapes` routes that dispatch, while gradcheck's own calls run, to a cache of
its own holding exact-shape traces only, and to a trace count of its own.  Every call is then
traced as TensorFlow traces an op's first shapes in a fresh process, and TensorFlow's own
cache and counts are left as they were.  The names it replaces are private to TensorFlow:
where they are missing (another version), the calls run as TensorFlow has them.

While it holds, gradcheck's own dispatch is the one TensorFlow's C layer calls for each op
(``TFE_Py_RegisterJVPFunction``).  TensorFlow's looks the trace up by building the trace type
of every argument and hashing it: about 0.7 ms per op here, half of an eager JVP's time.  For
eager calls gradcheck's keys the trace it asked TensorFlow for by the op, its attributes,
and each tensor's dtype and shape (what an exact-shape trace is specialised on), and calls
that same trace with the same flat tensors: the same graph, so the same bits
(``bench/tf_forward.py``: 3.1 instead of 6.1 ms per JVP of a 10-op chain).  A key met for
the first time is traced with an empty cache: a trace held matches it only where two keys
differ in what TensorFlow's trace type ignores (and tracing again builds the same graph),
while TensorFlow's lookup, on a miss, compares the new type with every trace it holds
first (in one worker's full sweep, tracing took 51.6 s of 332 s of CPU that way, 31.5 s of
311 s this way).  Graph-mode calls (inside a ``tf.function``), resource and variant
tensors, and attributes that cannot be keyed go through TensorFlow's lookup.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
from collections.abc import Iterator
from typing import Any

__all__ = ["exact_shapes", "CACHE_LIMIT"]

#: Exact-shape traces kept before the cache is emptied.  Each new shape adds one per op, and
#: each holds about 0.23 MB (2 200 traces of an 11-op function at 200 shapes: 504 MB).  A
#: trace dropped is traced again when needed, with the same result: only time is spent.
CACHE_LIMIT = 1024

_NAMES = ("_jvp_exact_config", "_jvp_relaxed_config", "_TRACE_COUNT")
#: Tensor dtypes whose trace type holds more than dtype and shape (a variable's handle data).
_UNKEYED = frozenset({"resource", "variant"})


class _Own:
    """gradcheck's exact-shape tracing options, with their cache, its trace count, and its
    dispatch (see the module's text)."""

    def __init__(self, forwardprop: Any, function_cache: Any, tracing: Any, context: Any,
                 register: Any) -> None:
        self.module, self.tracing, self.eager, self.register = \
            forwardprop, tracing, context.executing_eagerly, register
        self.new_cache = function_cache.FunctionCache
        self.cache = self.new_cache()
        self.config = dataclasses.replace(forwardprop._jvp_exact_config,
                                          reduce_retracing=False, function_cache=self.cache)
        self.counts: dict[str, int] = {}
        self.traces: dict[Any, Any] = {}  # key -> the trace, or None: TensorFlow's lookup
        self.depth = 0

    def __len__(self) -> int:
        """The keys met (each with its trace, or None) and the traces in the cache
        TensorFlow's lookup uses: what ``CACHE_LIMIT`` bounds."""
        return len(self.traces) + len(self.cache)

    def clear(self) -> None:
        """Drop every trace."""
        self.cache.clear()
        self.traces.clear()

    def dispatch(self, op_name: str, attr_tuple: Any, inputs: Any, outputs: Any,
                 tangents: Any, use_batch: bool = False) -> Any:
        """One op's JVP, as ``forwardprop._jvp_dispatch`` computes it with exact shapes."""
        args = (op_name, attr_tuple, inputs, outputs, tangents, use_batch)
        key = _key(args) if self.eager() else None
        trace = self.traces.get(key, False) if key is not None else None
        if trace is False:  # first met: traced into an empty cache (see the module's text)
            alone = dataclasses.replace(self.config, function_cache=self.new_cache())
            trace = self.tracing.trace_function(args, tracing_options=alone)
            flat = _flat(args)
            theirs = trace.function_type.unpack_inputs(trace.function_type.bind(*args))
            if len(theirs) != len(flat) or \
                    any(a is not b for a, b in zip(theirs, flat, strict=True)):
                trace = None  # flattened otherwise than here: always TensorFlow's way
            self.traces[key] = trace
        if trace is None:
            return self.tracing.call_function(args, tracing_options=self.config)
        return trace._call_flat(_flat(args), captured_inputs=trace.captured_inputs)


def _flat(args: tuple[Any, ...]) -> list[Any]:
    """The tensors of a dispatch's arguments, in order (Nones, the absent tangents, left out)."""
    return [t for group in args[2:5] for t in group if t is not None]


def _key(args: tuple[Any, ...]) -> Any:
    """What an exact-shape trace of an eager dispatch is specialised on, or None when a
    tensor or an attribute holds more than this can key."""
    op_name, attrs, inputs, outputs, tangents, use_batch = args
    try:
        specs = tuple(tuple(None if t is None else _spec(t) for t in group)
                      for group in (inputs, outputs, tangents))
        key = (op_name, _frozen(attrs), specs, bool(use_batch))
        hash(key)
    except (TypeError, AttributeError, ValueError):
        return None
    return key


def _spec(t: Any) -> tuple[Any, tuple[int, ...]]:
    if t.dtype.name in _UNKEYED:
        raise TypeError("not keyed")
    return t.dtype, t._shape_tuple()


def _frozen(value: Any) -> Any:
    """An attribute value as a key: lists as tuples, each value with its type (an attribute
    True is not the attribute 1)."""
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, *(_frozen(v) for v in value))
    return type(value).__name__, value


@functools.lru_cache(maxsize=1)
def _own() -> _Own | None:
    """Built at first use; None where TensorFlow lacks the names replaced."""
    try:
        from tensorflow.core.function.polymorphism import function_cache
        from tensorflow.python import pywrap_tfe
        from tensorflow.python.eager import context, forwardprop
        from tensorflow.python.eager.polymorphic_function import tracing_compilation

        if not all(hasattr(forwardprop, name) for name in (*_NAMES, "_jvp_dispatch")) or \
                not hasattr(pywrap_tfe, "TFE_Py_RegisterJVPFunction") or \
                not all(hasattr(tracing_compilation, name)
                        for name in ("trace_function", "call_function")):
            return None
        return _Own(forwardprop, function_cache, tracing_compilation, context,
                    pywrap_tfe.TFE_Py_RegisterJVPFunction)
    except (ImportError, AttributeError, TypeError, ValueError):
        return None


@contextlib.contextmanager
def exact_shapes() -> Iterator[None]:
    """Within: TensorFlow's forward mode traces each op's JVP for the exact input shapes,
    from gradcheck's own cache, through gradcheck's keyed dispatch (one thread at a time, as
    gradcheck calls it).  Nested, the inner one saves and restores gradcheck's own names and
    leaves the dispatch registered, so the outer one still holds."""
    own = _own()
    if own is None:
        yield
        return
    module = own.module
    if len(own) > CACHE_LIMIT:
        own.clear()
    saved = [getattr(module, name) for name in _NAMES]
    module._jvp_exact_config = module._jvp_relaxed_config = own.config
    module._TRACE_COUNT = own.counts
    if own.depth == 0:
        own.register(own.dispatch)
    own.depth += 1
    try:
        yield
    finally:
        own.depth -= 1
        if own.depth == 0:  # TensorFlow's own dispatch again
            own.register(module._jvp_dispatch)
        for name, value in zip(_NAMES, saved, strict=True):
            setattr(module, name, value)
