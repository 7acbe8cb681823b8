"""Reverse mode: ``GradientTape`` records ops on watched tensors and backpropagates.

The backward pass is one iterative sweep over the record, last node first (no recursion),
so a chain of any length fits.  Its rules' ops are seen by every active tracer but the
tape itself (a persistent tape in its context records them too, as in TensorFlow);
when no tracer sees them, they get raw numpy arrays, which is the fast path.

The tape holds no tensor for its own sake: it knows tensors by their keys
(``Tensor._key``), and a node keeps only the values its VJP rule reads
(:mod:`gradcheck.engine.reads`), so the rest is freed as soon as the user drops it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from gradcheck.engine import state
from gradcheck.engine.op import Op, RuleError, call_rule, refuse_complex
from gradcheck.engine.primitives import add_cotangents
from gradcheck.engine.pytree import flatten, unflatten
from gradcheck.engine.reads import rule_reads, union
from gradcheck.engine.tensor import KEYS, Tensor, is_float, value_of

__all__ = ["GradientTape", "check_cotangent", "check_like", "fit_number", "user_value",
           "unshared"]

# Pending cotangents of one tensor are summed early once this many pile up.
_EARLY_AGGREGATE = 32


# One recorded op call: (op, args, outs, params, inputs, out_keys).
# - ``args`` and ``outs`` hold only what the op's VJP rule reads (None elsewhere);
# - ``inputs`` has a (position, key, shape, dtype) per input that needs a cotangent, shape
#   and dtype None when ``args`` keeps that input (its value then says);
# - ``out_keys`` is the output's key, or a tuple of keys for several outputs.
# Plain tuples: one is made per op call.
_Input = tuple[int, int, Any, Any]
_Node = tuple[Op, tuple[Any, ...], tuple[Any, ...] | None, dict[str, Any],
              tuple[_Input, ...], Any]

# Per op, by tracked positions and input count: (positions that need a cotangent, keeps
# out, which inputs to keep or None for all, and the rules this was worked out from).
_Plan = tuple[tuple[int, ...], bool, tuple[bool, ...] | None, Any, Any]


def _plan(op: Op, tracked: tuple[int, ...], n: int) -> _Plan:
    """For a node of ``op`` whose inputs at ``tracked`` are tracked: the positions that need a
    cotangent (not in ``nondiff_argnums``), whether the VJP rule reads the output, and which
    inputs it reads (None: all of them; see :mod:`gradcheck.engine.reads`)."""
    positions = tuple(i for i in tracked if i not in op.nondiff_argnums)
    parts = op.vjp_parts
    reads = rule_reads(op.vjp, n) if parts is None else \
        union([rule_reads(parts[i], n) for i in positions])
    if reads is None:
        return positions, True, None, op.vjp, parts
    keep = tuple(i in reads[1] for i in range(n))
    return positions, reads[0], None if all(keep) else keep, op.vjp, parts


# the plan keys of one and two inputs, and the positions they stand for
_TRACKED: dict[Any, tuple[int, ...]] = {1: (0,), 2: (0,), 3: (1,), 4: (0, 1)}
_NONE = (None,)


def _keyed(t: Tensor) -> int:
    """``t``'s key, given now if it has none yet."""
    if not t._key:
        t._key = next(KEYS)
    return t._key


def _shape_dtype(v: Any) -> tuple[Any, Any]:
    """A value's shape and dtype (None for a Python number's)."""
    try:
        return v.shape, v.dtype
    except AttributeError:  # a Python number
        return np.shape(v), getattr(v, "dtype", None)


def _frozen(v: Any) -> Any:
    """``v``, copied when it is an array its owner can still write into (read-only arrays,
    such as ``Tensor.numpy()``, and everything else are kept as they are)."""
    if isinstance(v, np.ndarray) and v.flags.writeable:
        return v.copy()
    return v


def _frozen_params(params: dict[str, Any]) -> dict[str, Any]:
    """``params`` with each writable array value (or one in a tuple or list) copied."""
    for v in params.values():
        if isinstance(v, np.ndarray) or (type(v) in (tuple, list) and any(
                isinstance(e, np.ndarray) for e in v)):
            break
    else:
        return params
    return {k: type(v)(_frozen(e) for e in v) if type(v) in (tuple, list) else _frozen(v)
            for k, v in params.items()}


def _input(position: int, t: Tensor) -> _Input:
    """(position, key, shape, dtype) of an input that needs a cotangent (see _Node)."""
    return (position, t._key, *_shape_dtype(t._value))


def _aggregate(cotangents: list[Any]) -> Any:
    """The sum of one tensor's cotangents, as ops (an outer tape differentiates it)."""
    total = cotangents[0]
    for c in cotangents[1:]:
        total = add_cotangents(total, c)
    return total


def user_value(value: Any, dtype: np.dtype, what: str, of: str) -> Any:
    """A value the user hands the engine (an output gradient, a tangent) in ``dtype``, the
    dtype of the tensor ``of`` it belongs to.

    A real value is cast (to the complex dtype for a complex tensor), so a float32 or integer
    output gradient gives gradients of the sources' dtypes, not a rule error deep in the
    pass; a complex value for a real tensor is an error (its imaginary part would have
    nowhere to go).  An array of the right dtype is the caller's own, uncopied: a rule
    that writes into its cotangent writes into it, which the checker reports; the tape
    and the accumulator copy what they return that may share memory with it.  A
    :class:`Tensor` is kept (cast by the ``astype`` op), so an outer tape still sees it.
    """
    if dtype.kind not in "fc":  # not differentiated: nothing to match
        return value
    if np.iscomplexobj(value_of(value)) and dtype.kind != "c":
        raise ValueError(f"{what} is complex but {of} is real ({dtype}); its imaginary part "
                         "would have nowhere to go")
    if type(value) is Tensor:
        return value if value.dtype == dtype else value.astype(dtype)
    return np.asarray(value, dtype=dtype)


def unshared(value: Any, given: list[np.ndarray]) -> Any:
    """``value``, copied when it is an array that may share memory with one of the caller's
    ``given`` arrays (what the engine returns never aliases what it was handed)."""
    if type(value) is np.ndarray and any(np.may_share_memory(value, a) for a in given):
        return value.copy()
    return value


def check_cotangent(op: Op, position: int, ct: Any, arg: Any, what: str = "cotangent") -> None:
    """Raise :class:`RuleError` unless ``ct`` has exactly ``arg``'s shape and dtype."""
    check_like(op, position, ct, *_shape_dtype(value_of(arg)), what)


def fit_number(op: Op, position: int, ct: Any, shape: Any, dtype: Any,
               what: str = "cotangent") -> Any:
    """``ct`` checked as :func:`check_like` does, except that a Python number standing for a
    0-d value is cast to its dtype (a rule's ``return 0.0`` for a float32 input gives a
    float32 gradient, not a float64 one); a complex one for a real value is an error."""
    if type(ct) in (int, float, complex) and shape == () and dtype is not None:
        if type(ct) is complex and dtype.kind != "c":
            side = "output" if what.startswith("output") else "input"
            raise RuleError(op.name, f"{side} {position}", "dtype",
                            f"the {what} is a Python complex but the {side} has dtype {dtype}")
        return np.asarray(ct, dtype=dtype)
    check_like(op, position, ct, shape, dtype, what)
    return ct


def check_like(op: Op, position: int, ct: Any, shape: Any, dtype: Any,
               what: str = "cotangent") -> None:
    """Raise :class:`RuleError` unless ``ct`` has this shape and dtype (None: any dtype).

    ``what`` names ``ct`` in the message; an ``"output ..."`` (an output tangent) is compared
    with output ``position``, anything else with input ``position``."""
    cv = ct._value if type(ct) is Tensor else ct
    try:
        if cv.shape == shape and (dtype is None or cv.dtype == dtype):
            return
    except AttributeError:
        pass
    side = "output" if what.startswith("output") else "input"
    got = np.shape(cv)
    if got != shape:
        raise RuleError(op.name, f"{side} {position}", "shape",
                        f"the {what} has shape {got} but the {side} has shape {shape}")
    dt = getattr(cv, "dtype", None)
    if dt is not None and dtype is not None and dt != dtype:
        raise RuleError(op.name, f"{side} {position}", "dtype",
                        f"the {what} has dtype {dt} but the {side} has dtype {dtype}")


class GradientTape:
    """Records ops on watched tensors; ``gradient`` computes VJPs from the record.

    >>> import gradcheck as gc, gradcheck.numpy as gnp
    >>> x = gc.tensor(2.0)
    >>> with gc.GradientTape() as tape:
    ...     tape.watch(x)
    ...     y = gnp.sin(x) * x
    >>> float(tape.gradient(y, x))  # cos(2)*2 + sin(2)
    0.0770037537313969
    """

    def __init__(self, persistent: bool = False) -> None:
        self.persistent = persistent
        self.level: float = state.new_level()
        self._nodes: list[_Node] = []
        self._tracked: set[int] = set()  # keys of the tensors computed from watched ones
        self._watched: set[int] = set()
        self._used = False
        self._recording = False

    # -- recording -----------------------------------------------------
    def __enter__(self) -> GradientTape:
        self._recording = True
        self.level = state.new_level()  # entry order: see gradcheck.engine.state
        state.push(self)
        return self

    def __exit__(self, *exc: object) -> None:
        self._recording = False
        state.pop(self)

    def watch(self, tensors: Any) -> None:
        """Track ``tensors`` (a tensor or a nested structure of tensors)."""
        for t in flatten(tensors)[0]:
            if type(t) is not Tensor:
                raise TypeError(
                    f"GradientTape.watch: expected gradcheck.Tensor, got {type(t).__name__}; "
                    "wrap arrays with gradcheck.tensor(...)"
                )
            if is_float(t):
                self._tracked.add(_keyed(t))
                self._watched.add(t._key)

    def watched(self, t: Any) -> bool:
        """True when the tape tracks ``t`` (watched, or computed from a watched tensor)."""
        return type(t) is Tensor and t._key in self._tracked

    @contextmanager
    def stop_recording(self) -> Iterator[None]:
        """Ops in this block are not recorded by this tape."""
        was = self in state.visible()
        state.pop(self)
        try:
            yield
        finally:
            if was:
                state.push(self)

    def record(self, op: Op, args: tuple[Any, ...], outs: Any, params: dict[str, Any]) -> None:
        tracked = self._tracked
        n = len(args)
        # which inputs are tracked, as a key for the op's plans: unrolled for one and two
        # inputs, the common cases on the hot path
        if n == 1:
            a = args[0]
            if type(a) is not Tensor or a._key not in tracked:
                return
            plan_key: Any = 1
        elif n == 2:
            a, b = args
            first = type(a) is Tensor and a._key in tracked
            second = type(b) is Tensor and b._key in tracked
            if not (first or second):
                return
            plan_key = (4 if second else 2) if first else 3
        else:
            found = tuple([i for i, a in enumerate(args)
                           if type(a) is Tensor and a._key in tracked])
            if not found:
                return
            plan_key = (found, n)
        plan = op.tape_plans.get(plan_key)
        if plan is None or plan[3] is not op.vjp or plan[4] is not op.vjp_parts:
            found = _TRACKED[plan_key] if type(plan_key) is int else plan_key[0]
            plan = op.tape_plans[plan_key] = _plan(op, found, n)  # (new rules: again)
        positions, keep_out, keep = plan[:3]
        if not op.complex_rules:
            refuse_complex(op, args, range(n), "GradientTape")  # constants too
        if len(positions) == 1:
            i = positions[0]
            t = args[i]
            if keep is None or keep[i]:  # kept: the backward pass reads it off the value
                inputs: tuple[_Input, ...] = ((i, t._key, None, None),)
            else:
                v = t._value
                inputs = ((i, t._key, v.shape, v.dtype),) if type(v) is np.ndarray \
                    else (_input(i, t),)
        elif positions:
            inputs = tuple([(i, args[i]._key, None, None) if keep is None or keep[i]
                            else _input(i, args[i]) for i in positions])
        else:
            return  # every tracked input is in nondiff_argnums
        if type(outs) is tuple and op.nout == 1:
            (outs,) = outs  # one output, passed in a tuple
        if type(outs) is tuple:
            out_keys: Any = tuple([_keyed(o) for o in outs])
            for o in outs:
                if o._value.dtype.kind in "fc":
                    tracked.add(o._key)
        else:
            out_keys = outs._key or _keyed(outs)  # (an outer tape may have keyed it)
            if outs._value.dtype.kind in "fc":
                tracked.add(out_keys)
            outs = (outs,)
        if keep is not None:  # only what the rule reads: the rest is freed with its user
            if n == 1:
                args = _NONE
            elif n == 2:
                args = (args[0] if keep[0] else None, args[1] if keep[1] else None)
            else:
                args = tuple([a if k else None for a, k in zip(args, keep, strict=True)])
        elif type(args) is not tuple:
            args = tuple(args)
        # a constant array the caller may still write into (a reused buffer) is kept as a
        # copy: the rule must see the value the forward saw (Tensors and numbers are immutable)
        if n == 2:
            a, b = args
            if (type(a) is not Tensor and isinstance(a, np.ndarray)) or \
                    (type(b) is not Tensor and isinstance(b, np.ndarray)):
                args = (_frozen(a), _frozen(b))
        elif n > 2:
            args = tuple([_frozen(a) for a in args])
        if params:
            params = _frozen_params(params)
        # several outputs stay: a missing cotangent is filled with zeros shaped like its output
        self._nodes.append((op, args, outs if keep_out or len(outs) > 1 else None, params,
                            inputs, out_keys))

    # -- backward ------------------------------------------------------
    def gradient(self, target: Any, sources: Any, output_gradients: Any = None,
                 unconnected_gradients: str = "none") -> Any:
        """Cotangents of ``sources`` (same nesting) for ``target``, weighted by
        ``output_gradients`` (default ones).

        A source computed from a watched tensor gets the total cotangent reaching it, as in
        TensorFlow.  ``output_gradients`` are cast to their targets' dtypes (a complex one for
        a real target is an error).  A gradient that may share memory with an
        ``output_gradients`` array (it is the seed, or a view of it) is copied, so the
        gradients returned never share memory with the caller's arrays; like every
        tensor's, their ``numpy()`` is read-only."""
        if unconnected_gradients not in ("none", "zero"):
            raise ValueError(
                "GradientTape.gradient: unconnected_gradients must be 'none' or 'zero', "
                f"got {unconnected_gradients!r}"
            )
        if self._used and not self.persistent:
            raise RuntimeError(
                "GradientTape.gradient can only be called once on a non-persistent tape; "
                "use GradientTape(persistent=True) to call it several times"
            )
        targets, _ = flatten(target)
        source_list, source_tree = flatten(sources)
        for i, s in enumerate(source_list):
            if type(s) is not Tensor:
                raise TypeError(f"GradientTape.gradient: source {i} is a "
                                f"{type(s).__name__}, not a gradcheck.Tensor")
            if not is_float(s):
                raise ValueError(f"GradientTape.gradient: source {i} has dtype {s.dtype}; "
                                 "only floating-point tensors are differentiated")
        seeds = self._seeds(targets, output_gradients)
        self._used = True  # only now: a call refused above leaves the tape usable
        for t in (*targets, *source_list):  # distinct keys, tracked or not
            if type(t) is Tensor:
                _keyed(t)
        all_live = self._watched <= {s._key for s in source_list}
        nodes = self._nodes
        if not self.persistent:  # the pass consumes the record, freeing each value it is done with
            self._nodes, self._tracked, self._watched = [], set(), set()
        result = _backward(nodes, seeds, source_list, state.without(self) if not
                           self.persistent else state.current, all_live,
                           consume=not self.persistent)
        given = [] if output_gradients is None else \
            [g for _, g in seeds if type(g) is np.ndarray]  # the caller's arrays
        out = []
        for s, g in zip(source_list, result, strict=False):
            if g is None and unconnected_gradients == "zero":
                g = np.zeros_like(s._value)
            else:  # the seed itself, or a view of it (add, reshape, target is source)
                g = unshared(g, given)
            out.append(None if g is None else (g if type(g) is Tensor else Tensor(g)))
        return unflatten(source_tree, out)

    def _seeds(self, targets: list[Any], output_gradients: Any) -> list[tuple[Any, Any]]:
        if output_gradients is None:
            grads = [np.ones_like(value_of(t)) for t in targets]
        else:
            grads = flatten(output_gradients)[0]
            if len(grads) != len(targets):
                raise ValueError(f"GradientTape.gradient: {len(targets)} targets but "
                                 f"{len(grads)} output_gradients")
        seeds = []
        for i, (t, g) in enumerate(zip(targets, grads, strict=False)):
            if g is None or type(t) is not Tensor or t._value.dtype.kind not in "fc":
                continue  # an integer or bool target has no derivative (never tracked)
            if np.shape(value_of(g)) != t.shape:
                raise ValueError(f"GradientTape.gradient: output_gradients[{i}] has shape "
                                 f"{np.shape(value_of(g))}, target {i} has shape {t.shape}")
            if output_gradients is not None:
                g = user_value(g, t.dtype, f"GradientTape.gradient: output_gradients[{i}]",
                               f"target {i}")
            seeds.append((t, g))
        return seeds


def _backward(nodes: list[_Node], seeds: list[tuple[Any, Any]], sources: list[Tensor],
              visible: tuple[Any, ...], all_live: bool = False,
              consume: bool = False) -> list[Any]:
    """Backpropagate: visit the recorded nodes last to first, each once.

    Recording order is a topological order (an op's inputs exist before it
    runs), so when the sweep reaches a node every use of its outputs has been
    visited: their cotangents are complete.  A node none of whose outputs has a
    cotangent is skipped.  Only inputs that depend on a source (``live``) get a
    cotangent; ``all_live`` says every recorded tensor does (the sources include
    every watched tensor), which skips the forward liveness sweep.  With
    ``consume`` the nodes are popped as they are visited, so the values only
    they hold are freed during the pass (and their memory reused) instead of
    after it.  Tensors are known by their keys (``Tensor._key``).
    """
    live: set[int] | None = None
    if not all_live:
        live = {s._key for s in sources}
        for node in nodes:
            if any(inp[1] in live for inp in node[4]):
                live.update(node[5] if type(node[5]) is tuple else (node[5],))
    pending: dict[int, list[Any]] = {}
    for t, g in seeds:
        if live is None or t._key in live:
            pending.setdefault(t._key, []).append(g)
    keys = {s._key for s in sources}
    saved = state.swap(visible)
    try:
        raw = not visible
        for node in _drain(nodes) if consume else reversed(nodes):
            out_keys = node[5]
            if type(out_keys) is int and out_keys not in pending:
                continue
            _propagate(node, pending, raw, live, keys)
        return [_aggregate(pending[s._key]) if s._key in pending else None for s in sources]
    finally:
        state.swap(saved)


def _drain(nodes: list[_Node]) -> Iterator[_Node]:
    """The nodes last to first, each removed from the list as it is handed out."""
    while nodes:
        yield nodes.pop()


def _propagate(node: _Node, pending: dict[int, list[Any]], raw: bool,
               live: set[int] | None, sources: set[int]) -> None:
    """Call one node's VJP rule and add its cotangents to the inputs' pending lists.

    The outputs' cotangents leave ``pending``, but for ``sources`` (keys) their totals
    stay: the gradient returns them."""
    op, args, outs, params, inputs, out_keys = node
    if op.nout == 1:
        lst = pending.pop(out_keys, None)
        if lst is None:
            return
        g = lst[0] if len(lst) == 1 else _aggregate(lst)
        if out_keys in sources:
            pending[out_keys] = [g]
        out: Any = None if outs is None else outs[0]
        if raw:
            g = value_of(g)
            if out is not None:
                out = out._value
            args = tuple([a._value if type(a) is Tensor else a for a in args])
    else:
        gs = [pending.pop(k, None) for k in out_keys]
        if all(g is None for g in gs):
            return
        gs = [None if g is None else _aggregate(g) for g in gs]
        for k, g in zip(out_keys, gs, strict=True):
            if g is not None and k in sources:
                pending[k] = [g]
        outs_v: tuple[Any, ...] = outs or ()  # several outputs are always kept
        if raw:
            gs = [value_of(g) for g in gs]
            args = tuple([value_of(a) for a in args])
            outs_v = tuple(o._value for o in outs_v)
        if op.fill_zeros:
            gs = [np.zeros_like(value_of(o)) if g is None else g
                  for g, o in zip(gs, outs_v, strict=True)]
        g, out = tuple(gs), outs_v
    parts = op.vjp_parts
    if parts is None:
        cts = call_rule(op, op.vjp, g, out, args, params)  # type: ignore[arg-type]
        if not isinstance(cts, (tuple, list)):
            cts = (cts,)
        if len(cts) != len(args):
            raise RuleError(op.name, "vjp", "count", f"the VJP rule returned {len(cts)} "
                            f"cotangents for {len(args)} inputs")
    for i, key, shape, dtype in inputs:
        if live is not None and key not in live:
            continue
        if parts is None:
            ct = cts[i]
        else:  # per-input rules: only the inputs that need a cotangent
            rule = parts[i]
            ct = None if rule is None else call_rule(op, rule, g, out, args, params)
        if ct is None:
            continue
        if shape is None:  # the node kept the input: its value has the shape and dtype
            shape, dtype = _shape_dtype(value_of(args[i]))
        cv = ct._value if type(ct) is Tensor else ct
        try:
            fits = cv.shape == shape and cv.dtype == dtype
        except AttributeError:
            fits = False
        if not fits:  # a Python number, an unknown dtype, or a wrong cotangent
            ct = fit_number(op, i, ct, shape, dtype)
        lst = pending.setdefault(key, [])
        lst.append(ct)
        if len(lst) >= _EARLY_AGGREGATE:
            lst[:] = [_aggregate(lst)]
