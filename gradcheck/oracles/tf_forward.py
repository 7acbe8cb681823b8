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


class _Own:
    """gradcheck's exact-shape tracing options, with their cache, and its trace count."""

    def __init__(self, forwardprop: Any, function_cache: Any) -> None:
        self.module = forwardprop
        self.cache = function_cache.FunctionCache()
        self.config = dataclasses.replace(forwardprop._jvp_exact_config,
                                          reduce_retracing=False, function_cache=self.cache)
        self.counts: dict[str, int] = {}


@functools.lru_cache(maxsize=1)
def _own() -> _Own | None:
    """Built at first use; None where TensorFlow lacks the names replaced."""
    try:
        from tensorflow.core.function.polymorphism import function_cache
        from tensorflow.python.eager import forwardprop

        if not all(hasattr(forwardprop, name) for name in _NAMES):
            return None
        return _Own(forwardprop, function_cache)
    except (ImportError, AttributeError, TypeError, ValueError):
        return None


@contextlib.contextmanager
def exact_shapes() -> Iterator[None]:
    """Within: TensorFlow's forward mode traces each op's JVP for the exact input shapes,
    from gradcheck's own cache (one thread at a time, as gradcheck calls it).  Nested, the
    inner one saves and restores gradcheck's own names, so the outer one still holds."""
    own = _own()
    if own is None:
        yield
        return
    module = own.module
    if len(own.cache) > CACHE_LIMIT:
        own.cache.clear()
    saved = [getattr(module, name) for name in _NAMES]
    module._jvp_exact_config = module._jvp_relaxed_config = own.config
    module._TRACE_COUNT = own.counts
    try:
        yield
    finally:
        for name, value in zip(_NAMES, saved, strict=True):
            setattr(module, name, value)
