"""Function transformations on top of the tape and the accumulator.

``vjp``, ``jvp`` (native rules, or the double-VJP trick with a chosen dummy),
``grad``, ``hvp`` in three nestings and ``jacobian``.  Functions take and
return tensors or arrays (or nested structures of them).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from gradcheck.engine import state
from gradcheck.engine.forward import ForwardAccumulator
from gradcheck.engine.pytree import flatten, unflatten
from gradcheck.engine.tape import GradientTape
from gradcheck.engine.tensor import Tensor, tensor, value_of

__all__ = ["vjp", "jvp", "grad", "hvp", "jacobian", "double_vjp"]


def _as_tensors(primals: tuple[Any, ...]) -> tuple[Tensor, ...]:
    return tuple(p if type(p) is Tensor else tensor(p) for p in primals)


def vjp(f: Callable[..., Any], *primals: Any) -> tuple[Any, Callable[..., tuple[Any, ...]]]:
    """``(f(*primals), vjp_fn)``; ``vjp_fn(cotangent)`` gives one cotangent per primal.

    ``vjp_fn`` can be called many times, and is differentiable again when
    called under an outer tape.
    """
    xs = _as_tensors(primals)
    tape = GradientTape(persistent=True)
    with tape:
        tape.watch(list(xs))
        out = f(*xs)

    def vjp_fn(cotangent: Any) -> tuple[Any, ...]:
        grads = tape.gradient(out, list(xs), output_gradients=cotangent,
                              unconnected_gradients="zero")
        return tuple(grads)

    return out, vjp_fn


def jvp(f: Callable[..., Any], primals: Any, tangents: Any, method: str = "native",
        dummy: Any = None) -> tuple[Any, Any]:
    """``(f(*primals), J @ tangents)``.

    ``method="native"`` uses a :class:`ForwardAccumulator` (each op's JVP rule,
    transposing its VJP only where it has none); ``method="transpose"`` forces
    the per-op transpose for every op; ``method="double_vjp"`` transposes the
    VJP of the whole function with a ``dummy`` cotangent (default zeros), the
    "calling gradients twice" trick: right only if every VJP is linear in its
    cotangent.
    """
    primals, tangents = tuple(primals), tuple(tangents)
    if len(primals) != len(tangents):
        raise ValueError(f"jvp: {len(primals)} primals but {len(tangents)} tangents")
    if method == "double_vjp":
        return double_vjp(f, primals, tangents, dummy=dummy)
    if method not in ("native", "transpose"):
        raise ValueError(f"jvp: method must be 'native', 'transpose' or 'double_vjp', "
                         f"got {method!r}")
    xs = _as_tensors(primals)
    with ForwardAccumulator(list(xs), list(tangents),
                            force_transpose=method == "transpose") as acc:
        out = f(*xs)
    return out, acc.jvp(out, unconnected_gradients="zero")


def double_vjp(f: Callable[..., Any], primals: Any, tangents: Any, dummy: Any = None,
               recorder: GradientTape | None = None) -> tuple[Any, Any]:
    """JVP as the transpose of the VJP in a dummy cotangent ``v``: d/dv <J^T v, u>.

    ``dummy`` is the value of ``v`` (default zeros, as in the seed thread); an integer or
    bool output gets none (its entry of ``dummy`` is ignored) and a zero tangent.
    ``recorder``, when given, is a tape created *before* this call; it is made
    to watch ``v`` and sees the whole computation, so afterwards
    ``recorder.watched(t)`` tells whether a result ``t`` was computed from the
    dummy: the engine's own record of a dependence leak.
    """
    xs = _as_tensors(tuple(primals))
    outer = GradientTape(persistent=True)
    inner = GradientTape()
    if recorder is not None:
        state.push(recorder)
    try:
        with outer:
            with inner:
                inner.watch(list(xs))
                out = f(*xs)
            out_leaves, tree = flatten(out)
            values = [None] * len(out_leaves) if dummy is None else flatten(dummy)[0]
            if len(values) != len(out_leaves):
                raise ValueError(f"double_vjp: {len(values)} dummies for {len(out_leaves)} "
                                 "outputs")
            # an integer or bool output is not differentiated: it gets no dummy
            live = [_inexact(o) for o in out_leaves]
            vs = [tensor(np.zeros_like(value_of(o)) if v is None else v,
                         dtype=np.asarray(value_of(o)).dtype)  # (o may be a Python float)
                  for v, o, d in zip(values, out_leaves, live, strict=True) if d]
            outer.watch(vs)
            if recorder is not None:
                recorder.watch(vs)
            grads = inner.gradient([o for o, d in zip(out_leaves, live, strict=True) if d],
                                   list(xs), output_gradients=vs, unconnected_gradients="zero")
        transposed = iter(outer.gradient(grads, vs, output_gradients=list(tangents),
                                         unconnected_gradients="zero"))
    finally:
        if recorder is not None:
            state.pop(recorder)
    # the others' tangents are zeros in their own dtype, as the native JVP gives them
    result = [next(transposed) if d else Tensor(np.zeros_like(value_of(o)))
              for o, d in zip(out_leaves, live, strict=True)]
    return out, unflatten(tree, result)


def _inexact(x: Any) -> bool:
    """Whether an output is floating or complex: the only kinds that are differentiated."""
    return np.asarray(value_of(x)).dtype.kind in "fc"


def grad(f: Callable[..., Any], argnum: int = 0) -> Callable[..., Any]:
    """The gradient of a scalar-valued ``f`` with respect to argument ``argnum``."""

    def gradfun(*args: Any) -> Any:
        if not -len(args) <= argnum < len(args):
            raise IndexError(f"grad: argnum={argnum}, but {getattr(f, '__name__', 'f')} was "
                             f"called with {len(args)} argument{'s' * (len(args) != 1)}")
        xs = list(_as_tensors(args))
        with GradientTape() as tape:
            tape.watch(xs[argnum])
            out = f(*xs)
        if np.ndim(value_of(out)) != 0:
            raise ValueError(f"grad: {getattr(f, '__name__', 'f')} must return a scalar, "
                             f"got shape {np.shape(value_of(out))}")
        return tape.gradient(out, xs[argnum], unconnected_gradients="zero")

    return gradfun


def hvp(f: Callable[..., Any], primals: Any, tangents: Any, mode: str = "fwd_over_rev",
        cotangent: Any = None) -> tuple[Any, ...]:
    """Hessian-vector product of ``<cotangent, f(x)>`` (cotangent defaults to ones).

    ``mode`` picks the nesting: ``"fwd_over_rev"`` (accumulator around a tape),
    ``"rev_over_rev"`` (tape around a tape) or ``"rev_over_fwd"`` (tape around
    an accumulator).  Returns one array per primal.
    """
    xs = list(_as_tensors(tuple(primals)))
    ts = list(tangents)

    def weighted(*args: Any) -> Any:
        out = f(*args)
        w = np.ones_like(value_of(out)) if cotangent is None else cotangent
        return out, w

    if mode == "fwd_over_rev":
        with ForwardAccumulator(xs, ts) as acc:
            with GradientTape() as tape:
                tape.watch(xs)
                out, w = weighted(*xs)
            g = tape.gradient(out, xs, output_gradients=w, unconnected_gradients="zero")
        return tuple(acc.jvp(g, unconnected_gradients="zero"))
    if mode == "rev_over_rev":
        with GradientTape() as outer:
            outer.watch(xs)
            with GradientTape() as inner:
                inner.watch(xs)
                out, w = weighted(*xs)
            g = inner.gradient(out, xs, output_gradients=w, unconnected_gradients="zero")
        return tuple(outer.gradient(g, xs, output_gradients=[tensor(t) for t in ts],
                                    unconnected_gradients="zero"))
    if mode == "rev_over_fwd":
        with GradientTape() as outer:
            outer.watch(xs)
            with ForwardAccumulator(xs, ts) as acc:
                out, w = weighted(*xs)
            t_out = acc.jvp(out, unconnected_gradients="zero")
        return tuple(outer.gradient(t_out, xs, output_gradients=w,
                                    unconnected_gradients="zero"))
    raise ValueError(f"hvp: mode must be 'fwd_over_rev', 'rev_over_rev' or 'rev_over_fwd', "
                     f"got {mode!r}")


def jacobian(f: Callable[..., Any], x: Any, mode: str = "rev") -> np.ndarray:
    """The full Jacobian of ``f`` at ``x``, shaped ``f(x).shape + x.shape``."""
    x = x if type(x) is Tensor else tensor(x)
    if mode == "rev":
        out, vjp_fn = vjp(f, x)
        out_shape = np.shape(value_of(out))
        rows = [value_of(vjp_fn(e.reshape(out_shape))[0]) for e in _basis(out_shape, x.dtype)]
        return np.array(rows).reshape(out_shape + x.shape)
    if mode == "fwd":
        cols = [value_of(jvp(f, (x,), (e.reshape(x.shape),))[1])
                for e in _basis(x.shape, x.dtype)]
        out_shape = np.shape(cols[0]) if cols else np.shape(value_of(f(x)))
        jac = np.array(cols).reshape(x.shape + out_shape) if cols else \
            np.zeros(x.shape + out_shape)
        return np.moveaxis(jac, list(range(x.ndim)), list(range(-x.ndim, 0))) if x.ndim else jac
    raise ValueError(f"jacobian: mode must be 'rev' or 'fwd', got {mode!r}")


def _basis(shape: tuple[int, ...], dtype: Any) -> list[np.ndarray]:
    n = int(np.prod(shape))
    return list(np.eye(n, dtype=dtype)) if n else []
