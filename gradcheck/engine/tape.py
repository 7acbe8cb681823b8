"""Reverse mode: ``GradientTape`` records ops on watched tensors and backpropagates.

The backward pass is one iterative sweep over the record, last node first (no recursion),
so a chain of any length fits.  Rules run with only lower-level tracers
visible; when none is, they get raw numpy arrays, which is the fast path.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from gradcheck.engine import state
from gradcheck.engine.op import Op, RuleError, call_rule
from gradcheck.engine.primitives import add_cotangents
from gradcheck.engine.pytree import flatten, unflatten
from gradcheck.engine.tensor import Tensor, is_float, value_of

__all__ = ["GradientTape", "check_cotangent"]

# Pending cotangents of one tensor are summed early once this many pile up.
_EARLY_AGGREGATE = 32


# One recorded op call: (op, inputs, outputs, params, tracked), where ``tracked`` are the
# positions of the inputs that need a cotangent.  A plain tuple: one is made per op call.
_Node = tuple[Op, tuple[Any, ...], tuple[Tensor, ...], dict[str, Any], tuple[int, ...]]


def _aggregate(cotangents: list[Any]) -> Any:
    """The sum of one tensor's cotangents, as ops (an outer tape differentiates it)."""
    total = cotangents[0]
    for c in cotangents[1:]:
        total = add_cotangents(total, c)
    return total


def check_cotangent(op: Op, position: int, ct: Any, arg: Any, what: str = "cotangent") -> None:
    """Raise :class:`RuleError` unless ``ct`` has exactly ``arg``'s shape and dtype."""
    cv = ct._value if type(ct) is Tensor else ct
    av = arg._value if type(arg) is Tensor else arg
    try:
        if cv.shape == av.shape and cv.dtype == av.dtype:
            return
    except AttributeError:
        pass
    shape, want = np.shape(value_of(ct)), np.shape(value_of(arg))
    if shape != want:
        raise RuleError(op.name, f"input {position}", "shape",
                        f"the {what} has shape {shape} but the input has shape {want}")
    dt = getattr(value_of(ct), "dtype", None)
    want_dt = getattr(value_of(arg), "dtype", None)
    if dt is not None and want_dt is not None and dt != want_dt:
        raise RuleError(op.name, f"input {position}", "dtype",
                        f"the {what} has dtype {dt} but the input has dtype {want_dt}")


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
        self._tracked: dict[int, Tensor] = {}
        self._watched: set[int] = set()
        self._used = False
        self._recording = False

    # -- recording -----------------------------------------------------
    def __enter__(self) -> GradientTape:
        self._recording = True
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
                self._tracked[id(t)] = t
                self._watched.add(id(t))

    def watched(self, t: Any) -> bool:
        """True when the tape tracks ``t`` (watched, or computed from a watched tensor)."""
        return type(t) is Tensor and id(t) in self._tracked

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
        # a tracked id belongs to a live tensor the tape holds, so no type test is needed
        n = len(args)
        if n == 1:
            positions: tuple[int, ...] = (0,) if id(args[0]) in tracked else ()
        elif n == 2:
            first, second = id(args[0]) in tracked, id(args[1]) in tracked
            positions = ((0, 1) if second else (0,)) if first else ((1,) if second else ())
        else:
            positions = tuple(i for i, a in enumerate(args) if id(a) in tracked)
        nondiff = op.nondiff_argnums
        if nondiff:
            positions = tuple(i for i in positions if i not in nondiff)
        if not positions:
            return
        if type(outs) is tuple:
            for o in outs:
                if o._value.dtype.kind in "fc":
                    tracked[id(o)] = o
        else:
            if outs._value.dtype.kind in "fc":
                tracked[id(outs)] = outs
            outs = (outs,)
        args = args if type(args) is tuple else tuple(args)
        self._nodes.append((op, args, outs, params, positions))

    # -- backward ------------------------------------------------------
    def gradient(self, target: Any, sources: Any, output_gradients: Any = None,
                 unconnected_gradients: str = "none") -> Any:
        """Cotangents of ``sources`` (same nesting) for ``target``, weighted by
        ``output_gradients`` (default ones)."""
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
        self._used = True
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
        all_live = self._watched <= {id(s) for s in source_list}
        nodes = self._nodes
        if not self.persistent:  # the pass consumes the record, freeing each value it is done with
            self._nodes, self._tracked, self._watched = [], {}, set()
        result = _backward(nodes, seeds, source_list, state.below(self.level), all_live,
                           consume=not self.persistent)
        out = []
        for s, g in zip(source_list, result, strict=False):
            if g is None and unconnected_gradients == "zero":
                g = np.zeros_like(s._value)
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
            if g is None or type(t) is not Tensor:
                continue
            if np.shape(value_of(g)) != t.shape:
                raise ValueError(f"GradientTape.gradient: output_gradients[{i}] has shape "
                                 f"{np.shape(value_of(g))}, target {i} has shape {t.shape}")
            if np.iscomplexobj(value_of(g)) and t.dtype.kind != "c":
                # its imaginary part would have nowhere to go: an error, not a silent drop
                raise ValueError(f"GradientTape.gradient: output_gradients[{i}] is complex "
                                 f"but target {i} is real ({t.dtype})")
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
    after it.
    """
    live: set[int] | None = None
    if not all_live:
        live = {id(s) for s in sources}
        for _, args, outs, _, tracked in nodes:
            if any(id(args[i]) in live for i in tracked):
                live.update(id(o) for o in outs)
    pending: dict[int, list[Any]] = {}
    for t, g in seeds:
        if live is None or id(t) in live:
            pending.setdefault(id(t), []).append(g)
    saved = state.swap(visible)
    try:
        raw = not visible
        for node in _drain(nodes) if consume else reversed(nodes):
            outs = node[2]
            if len(outs) == 1 and id(outs[0]) not in pending:
                continue
            _propagate(node, pending, raw, live)
        return [_aggregate(pending[id(s)]) if id(s) in pending else None for s in sources]
    finally:
        state.swap(saved)


def _drain(nodes: list[_Node]) -> Iterator[_Node]:
    """The nodes last to first, each removed from the list as it is handed out."""
    while nodes:
        yield nodes.pop()


def _propagate(node: _Node, pending: dict[int, list[Any]], raw: bool,
               live: set[int] | None) -> None:
    """Call one node's VJP rule and add its cotangents to the inputs' pending lists."""
    op, inputs, outs, params, tracked = node
    args: Any = inputs
    if op.nout == 1:
        lst = pending.pop(id(outs[0]), None)
        if lst is None:
            return
        g = lst[0] if len(lst) == 1 else _aggregate(lst)
        out: Any = outs[0]
        if raw:
            g, out = value_of(g), out._value
            args = tuple([a._value if type(a) is Tensor else a for a in args])
    else:
        gs = [pending.pop(id(o), None) for o in outs]
        if all(g is None for g in gs):
            return
        gs = [None if g is None else _aggregate(g) for g in gs]
        outs_v: tuple[Any, ...] = outs
        if raw:
            gs = [value_of(g) for g in gs]
            args = tuple([value_of(a) for a in args])
            outs_v = tuple(o._value for o in outs)
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
    for i in tracked:
        arg = inputs[i]
        if live is not None and id(arg) not in live:
            continue
        if parts is None:
            ct = cts[i]
        else:  # per-input rules: only the inputs that need a cotangent
            rule = parts[i]
            ct = None if rule is None else call_rule(op, rule, g, out, args, params)
        if ct is None:
            continue
        check_cotangent(op, i, ct, arg)
        lst = pending.setdefault(id(arg), [])
        lst.append(ct)
        if len(lst) >= _EARLY_AGGREGATE:
            lst[:] = [_aggregate(lst)]
