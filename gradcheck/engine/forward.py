"""Forward mode: ``ForwardAccumulator`` pushes tangents through ops as they run.

Each op's JVP comes from its own rule when it has one.  Otherwise (or for
every op, with ``force_transpose=True``) it is computed the way TensorFlow's
forwardprop does it: run the op's VJP rule with a dummy cotangent on an inner
tape, then differentiate that with respect to the dummy ("calling gradients
twice").  The JVP computation is visible to outer tracers only, so nested
accumulators give higher-order JVPs and an accumulator around a tape gives
forward-over-reverse Hessian-vector products.
"""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np

from gradcheck.engine import state
from gradcheck.engine.op import Op, RuleError, annotate, call_rule, refuse_complex
from gradcheck.engine.pytree import flatten, unflatten
from gradcheck.engine.tape import (
    GradientTape,
    check_cotangent,
    fit_number,
    unshared,
    user_value,
)
from gradcheck.engine.tensor import Tensor, is_float, value_of

__all__ = ["ForwardAccumulator", "transpose_jvp"]


class ForwardAccumulator:
    """Computes JVPs of everything computed from ``primals`` while it is active.

    >>> import gradcheck as gc, gradcheck.numpy as gnp
    >>> x = gc.tensor(0.5)
    >>> with gc.ForwardAccumulator(x, gc.tensor(2.0)) as acc:
    ...     y = gnp.exp(x)
    >>> round(float(acc.jvp(y)), 6)  # 2 * exp(0.5)
    3.297443

    ``force_transpose=True`` computes every JVP by transposing the op's VJP,
    ignoring native JVP rules, so the two can be compared.

    Each primal is given once (a repeated primal is an error: give the sum of its
    tangents).  Tangents are cast to their primals' dtypes (a complex tangent for a real
    primal is an error).  The accumulator holds the tangent arrays it is given, uncopied,
    while it lives (do not write into them meanwhile); the JVPs it returns never share
    memory with them (``jvp`` copies one that would).
    """

    def __init__(self, primals: Any, tangents: Any, *, force_transpose: bool = False) -> None:
        self.force_transpose = force_transpose
        self.level: float = state.new_level()  # set again on entry: see gradcheck.engine.state
        # Every tangent is kept on its tensor (``Tensor._tangents``, by this accumulator's
        # ``_key``), so it is freed with the tensor.  The primals' entries are removed when
        # the accumulator goes.
        self._key = self.level
        watched: list[Tensor] = []
        self._given: list[np.ndarray] = []  # the tangents given as arrays (see ``jvp``)
        weakref.finalize(self, _forget, watched, self._key)
        ps, _ = flatten(primals)
        ts, _ = flatten(tangents)
        if len(ps) != len(ts):
            raise ValueError(f"ForwardAccumulator: {len(ps)} primals but {len(ts)} tangents")
        seen: dict[int, int] = {}  # id of each primal given so far: its position
        for i, (p, t) in enumerate(zip(ps, ts, strict=False)):
            if type(p) is not Tensor:
                raise TypeError(f"ForwardAccumulator: primal {i} is a {type(p).__name__}, "
                                "not a gradcheck.Tensor")
            if not is_float(p):
                raise ValueError(f"ForwardAccumulator: primal {i} has dtype {p.dtype}; only "
                                 "floating-point tensors have tangents")
            if id(p) in seen:  # the second tangent would silently replace the first
                raise ValueError(f"ForwardAccumulator: primal {i} is the same tensor as primal "
                                 f"{seen[id(p)]}: a primal is given twice; give it once, with "
                                 "the sum of its tangents")
            seen[id(p)] = i
            if t is None:
                continue
            if np.shape(value_of(t)) != p.shape:
                raise ValueError(f"ForwardAccumulator: tangent {i} has shape "
                                 f"{np.shape(value_of(t))}, primal {i} has shape {p.shape}")
            t = user_value(t, p.dtype, f"ForwardAccumulator: tangent {i}", f"primal {i}")
            if type(t) is not Tensor:
                self._given.append(t)
            _keep(p, self._key, t)
            watched.append(p)

    def __enter__(self) -> ForwardAccumulator:
        self.level = state.new_level()
        state.push(self)
        return self

    def __exit__(self, *exc: object) -> None:
        state.pop(self)

    def jvp(self, primals: Any, unconnected_gradients: str = "none") -> Any:
        """The tangents of ``primals`` (same nesting); None (or zeros) where unconnected.

        A tangent that is, or is a view of, a tangent array the accumulator was given is
        copied, so the caller's arrays and the JVPs never share memory."""
        if unconnected_gradients not in ("none", "zero"):
            raise ValueError("ForwardAccumulator.jvp: unconnected_gradients must be 'none' "
                             f"or 'zero', got {unconnected_gradients!r}")
        leaves, tree = flatten(primals)
        out = []
        for p in leaves:
            t = self._tangent(p)
            if t is None and unconnected_gradients == "zero":
                t = np.zeros_like(value_of(p))
            else:
                t = unshared(t, self._given)
            out.append(None if t is None else (t if type(t) is Tensor else Tensor(t)))
        return unflatten(tree, out)

    def watched(self, t: Any) -> bool:
        """True when ``t`` has a tangent in this accumulator (a primal, or computed from one)."""
        return self._tangent(t) is not None

    def _tangent(self, x: Any) -> Any:
        """The tangent of ``x`` in this accumulator (None: it has none)."""
        kept = x._tangents if type(x) is Tensor else None
        return None if kept is None else kept.get(self._key)

    def record(self, op: Op, args: tuple[Any, ...], outs: Any, params: dict[str, Any]) -> None:
        key = self._key
        # the common cases inline (an op's only input is a tensor; of two, one may not be)
        if len(args) == 1:
            kept = args[0]._tangents
            t = None if kept is None else kept.get(key)
            if t is None:
                return
            tangents: tuple[Any, ...] = (t,)
        elif len(args) == 2:
            a, b = args
            ka = a._tangents if type(a) is Tensor else None
            kb = b._tangents if type(b) is Tensor else None
            tangents = (None if ka is None else ka.get(key),
                        None if kb is None else kb.get(key))
        else:
            tangents = tuple([self._tangent(a) for a in args])
        nondiff = op.nondiff_argnums
        if nondiff:
            tangents = tuple([None if i in nondiff else t for i, t in enumerate(tangents)])
        if len(tangents) > 1 or nondiff:
            for t in tangents:
                if t is not None:
                    break
            else:
                return
        # an integer or bool output (numpy's dtype=int, a comparison) has no tangent: its
        # derivative is zero, as on a tape, so no rule runs for it
        if op.nout == 1:
            if outs._value.dtype.kind not in "fc":
                return
        elif not any(o._value.dtype.kind in "fc" for o in outs):
            return
        if not op.complex_rules:
            # every input: a complex constant beside a real tangent makes the rules wrong too
            refuse_complex(op, args, range(len(args)), "ForwardAccumulator")
        below = state.current
        if op.jvp is not None and not self.force_transpose and \
                (not below or below[0].level >= self.level):
            # no tracer below this one would see the rule: it runs on raw arrays, which no
            # tracer sees either, so there is nothing to hide
            result = _raw_jvp(op, tangents, outs, args, params)
        else:
            saved = state.hide_from(self.level)
            try:
                if op.jvp is None or self.force_transpose:
                    outs_t = outs if type(outs) is tuple else (outs,)
                    result = transpose_jvp(op, list(tangents), outs_t, args, params,
                                           self.level - 1)
                else:  # tracers below this one see the rule's ops: higher order
                    result = call_rule(op, op.jvp, tangents, outs, args, params)
            finally:
                state.swap(saved)
        if op.nout == 1:
            if result is not None:
                rv = result._value if type(result) is Tensor else result
                ov = outs._value
                if not (type(rv) is np.ndarray and rv.shape == ov.shape
                        and rv.dtype == ov.dtype):
                    result = fit_number(op, 0, result, ov.shape, ov.dtype, "output tangent")
                if outs._tangents is None:
                    outs._tangents = {key: result}
                else:
                    outs._tangents[key] = result
            return
        if not isinstance(result, (tuple, list)) or len(result) != op.nout:
            raise RuleError(op.name, "jvp", "count", f"the JVP rule must return {op.nout} tangents")
        for k, (o, t) in enumerate(zip(outs, result, strict=False)):
            if t is None or not is_float(o):
                continue
            _keep(o, key, fit_number(op, k, t, o.shape, o.dtype, "output tangent"))


def _raw_jvp(op: Op, tangents: tuple[Any, ...], outs: Any, args: tuple[Any, ...],
             params: dict[str, Any]) -> Any:
    """An op's JVP on raw arrays: the fast path, when no tracer sees the rule's ops."""
    out = tuple(o._value for o in outs) if op.nout > 1 else outs._value
    if len(args) == 1:
        t, a = tangents[0], args[0]
        raw_t: tuple[Any, ...] = (t._value if type(t) is Tensor else t,)
        raw_args: tuple[Any, ...] = (a._value if type(a) is Tensor else a,)
    elif len(args) == 2:
        (t, u), (a, b) = tangents, args
        raw_t = (t._value if type(t) is Tensor else t, u._value if type(u) is Tensor else u)
        raw_args = (a._value if type(a) is Tensor else a, b._value if type(b) is Tensor else b)
    else:
        raw_t = tuple([t._value if type(t) is Tensor else t for t in tangents])
        raw_args = tuple([a._value if type(a) is Tensor else a for a in args])
    parts = op.jvp_parts
    try:
        if parts is None:
            return op.jvp(raw_t, out, *raw_args, **params)  # type: ignore[misc]
        # per-input rules, called directly: the sum of the inputs' contributions
        total = None
        for rule, t in zip(parts, raw_t, strict=True):
            if rule is not None and t is not None:
                term = rule(t, out, *raw_args, **params)
                total = term if total is None else total + term
        return total
    except Exception as exc:
        annotate(exc, op, op.jvp)  # type: ignore[arg-type]
        raise


def _keep(out: Tensor, key: float, tangent: Any) -> None:
    """Keep ``tangent`` on the tensor ``out`` for the accumulator whose ``_key`` is ``key``."""
    if out._tangents is None:
        out._tangents = {key: tangent}
    else:
        out._tangents[key] = tangent


def _forget(primals: list[Tensor], key: float) -> None:
    """Remove a finished accumulator's tangents from its primals."""
    for p in primals:
        if p._tangents is not None:
            p._tangents.pop(key, None)


def transpose_jvp(op: Op, tangents: list[Any], outs: tuple[Tensor, ...], args: tuple[Any, ...],
                  params: dict[str, Any], level: float, dummy: Any = None) -> Any:
    """An op's JVP by transposing its VJP: VJP with a dummy cotangent, then its VJP in the dummy.

    The dummy defaults to ones (TensorFlow's ``unused_forwardprop_aid``); the
    answer must not depend on it when the VJP is linear in its cotangent.  An integer or
    bool output is not differentiated: it gets no dummy, the cotangent a tape gives it
    (zeros, or None for an op with ``fill_zeros=False``) and a zero tangent of its dtype.
    """
    helper = GradientTape(persistent=True)
    helper.level = level
    live = [o._value.dtype.kind in "fc" for o in outs]
    dummies = [Tensor(np.ones_like(o._value) if dummy is None else np.asarray(dummy))
               for o, d in zip(outs, live, strict=True) if d]
    helper.watch(dummies)
    given = iter(dummies)
    cotangents = [next(given) if d else np.zeros_like(o._value) if op.fill_zeros else None
                  for o, d in zip(outs, live, strict=True)]
    with state.only((*state.visible(), helper)):
        g = cotangents[0] if op.nout == 1 else tuple(cotangents)
        out = outs[0] if op.nout == 1 else outs
        cts = call_rule(op, op.vjp, g, out, args, params)  # type: ignore[arg-type]
    if not isinstance(cts, (tuple, list)):
        cts = (cts,)
    if len(cts) != len(args):
        raise RuleError(op.name, "vjp", "count",
                        f"the VJP rule returned {len(cts)} cotangents for {len(args)} inputs")
    targets, weights = [], []
    for i, t in enumerate(tangents):
        if t is not None and cts[i] is not None:
            check_cotangent(op, i, cts[i], args[i])
            targets.append(cts[i])
            weights.append(t)
    if not targets:
        return None if op.nout == 1 else (None,) * op.nout
    transposed = iter(helper.gradient(targets, dummies, output_gradients=weights))
    result = [next(transposed) if d else Tensor(np.zeros_like(o._value))
              for o, d in zip(outs, live, strict=True)]
    return result[0] if op.nout == 1 else tuple(result)
