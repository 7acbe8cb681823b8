"""Function transformations on top of the tape and the accumulator.

``vjp``, ``jvp`` (native rules, or the double-VJP trick with a chosen dummy),
``grad``, ``hvp`` in three nestings and ``jacobian``.  Functions take and
return tensors or arrays (or nested structures of them).  ``primals`` and
``tangents`` are a tuple or list with one entry per argument of ``f``, as in JAX;
an error from the tape or accumulator a helper runs names the helper.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
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


def _pairs(helper: str, primals: Any, tangents: Any) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    """``primals`` and ``tangents`` as tuples, after checking they are tuples or lists (a bare
    array would be split into its rows, one per argument) of the same length and shapes, with
    no complex tangent for a real primal."""
    for name, value in (("primals", primals), ("tangents", tangents)):
        if not isinstance(value, (tuple, list)):
            raise TypeError(f"{helper}: {name} must be a tuple or list with one entry per "
                            f"argument of f, got a {type(value).__name__}; wrap a single array "
                            "in a tuple: (x,)")
    if len(primals) != len(tangents):
        raise ValueError(f"{helper}: {len(primals)} primals but {len(tangents)} tangents")
    for i, (p, t) in enumerate(zip(primals, tangents, strict=True)):
        if t is None:  # no tangent for this primal
            continue
        if np.shape(value_of(t)) != np.shape(value_of(p)):
            raise ValueError(f"{helper}: tangents[{i}] has shape {np.shape(value_of(t))}, "
                             f"primals[{i}] has shape {np.shape(value_of(p))}")
        if np.iscomplexobj(value_of(t)) and not np.iscomplexobj(value_of(p)):
            raise ValueError(f"{helper}: tangents[{i}] is complex but primals[{i}] is real")
    return tuple(primals), tuple(tangents)


_ENGINE = ("GradientTape", "ForwardAccumulator")
_helper: ContextVar[str | None] = ContextVar("gradcheck_functional_helper", default=None)


@contextmanager
def _named(helper: str) -> Iterator[None]:
    """Re-raise an error of the tape or accumulator the helper runs with the helper's name
    first (the original as its cause).  The outermost helper names it: ``jacobian``, not the
    ``vjp`` it calls."""
    if _helper.get() is not None:
        yield
        return
    token = _helper.set(helper)
    try:
        yield
    except (TypeError, ValueError, RuntimeError) as e:
        if type(e) in (TypeError, ValueError, RuntimeError) and str(e).startswith(_ENGINE):
            raise type(e)(f"{helper}: {e}") from e
        raise
    finally:
        _helper.reset(token)


def vjp(f: Callable[..., Any], *primals: Any) -> tuple[Any, Callable[..., tuple[Any, ...]]]:
    """``(f(*primals), vjp_fn)``; ``vjp_fn(cotangent)`` gives one cotangent per primal.

    ``vjp_fn`` can be called many times, and is differentiable again when
    called under an outer tape.
    """
    xs = _as_tensors(primals)
    tape = GradientTape(persistent=True)
    with _named("vjp"), tape:
        tape.watch(list(xs))
        out = f(*xs)

    def vjp_fn(cotangent: Any) -> tuple[Any, ...]:
        with _named("vjp"):
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
    primals, tangents = _pairs("jvp", primals, tangents)
    if method not in ("native", "transpose", "double_vjp"):
        raise ValueError(f"jvp: method must be 'native', 'transpose' or 'double_vjp', "
                         f"got {method!r}")
    with _named("jvp"):
        if method == "double_vjp":
            return double_vjp(f, primals, tangents, dummy=dummy)
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
    primals, tangents = _pairs("double_vjp", primals, tangents)
    with _named("double_vjp"):
        return _double_vjp(f, primals, tangents, dummy, recorder)


def _double_vjp(f: Callable[..., Any], primals: tuple[Any, ...], tangents: tuple[Any, ...],
                dummy: Any, recorder: GradientTape | None) -> tuple[Any, Any]:
    xs = _as_tensors(primals)
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
        with _named("grad"):
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
    primals, tangents = _pairs("hvp", primals, tangents)
    if mode not in ("fwd_over_rev", "rev_over_rev", "rev_over_fwd"):
        raise ValueError(f"hvp: mode must be 'fwd_over_rev', 'rev_over_rev' or 'rev_over_fwd', "
                         f"got {mode!r}")
    with _named("hvp"):
        return _hvp(f, list(_as_tensors(primals)), list(tangents), mode, cotangent)


def _hvp(f: Callable[..., Any], xs: list[Tensor], ts: list[Any], mode: str,
         cotangent: Any) -> tuple[Any, ...]:
    def weighted(*args: Any) -> Any:
        out = f(*args)
        if cotangent is None:
            return out, np.ones_like(value_of(out))
        if np.shape(value_of(cotangent)) != np.shape(value_of(out)):
            raise ValueError(f"hvp: cotangent has shape {np.shape(value_of(cotangent))}, "
                             f"f's output has shape {np.shape(value_of(out))}")
        return out, cotangent

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
    with GradientTape() as outer:  # rev_over_fwd
        outer.watch(xs)
        with ForwardAccumulator(xs, ts) as acc:
            out, w = weighted(*xs)
        t_out = acc.jvp(out, unconnected_gradients="zero")
    return tuple(outer.gradient(t_out, xs, output_gradients=w, unconnected_gradients="zero"))


def jacobian(f: Callable[..., Any], x: Any, mode: str = "rev") -> Any:
    """The full Jacobian of ``f`` at ``x``, shaped ``f(x).shape + x.shape``.

    For an ``f`` returning a tuple, list or dict of arrays, the same structure holding one
    Jacobian per output (as JAX's ``jacrev``).
    """
    x = x if type(x) is Tensor else tensor(x)
    if mode not in ("rev", "fwd"):
        raise ValueError(f"jacobian: mode must be 'rev' or 'fwd', got {mode!r}")
    with _named("jacobian"):
        return _jacobian_rev(f, x) if mode == "rev" else _jacobian_fwd(f, x)


def _jacobian_rev(f: Callable[..., Any], x: Tensor) -> Any:
    """One VJP per output element: each row is the gradient of one element."""
    out, vjp_fn = vjp(f, x)
    leaves, tree = flatten(out)
    shapes = [np.shape(value_of(o)) for o in leaves]
    zeros = [np.zeros(s, x.dtype) for s in shapes]
    jacs = []
    for i, shape in enumerate(shapes):
        rows = [value_of(vjp_fn([*zeros[:i], e.reshape(shape), *zeros[i + 1:]])[0])
                for e in _basis(shape, x.dtype)]
        jacs.append(np.array(rows).reshape(shape + x.shape))
    return unflatten(tree, jacs)


def _jacobian_fwd(f: Callable[..., Any], x: Tensor) -> Any:
    """One JVP per input element: each column is the tangent of every output."""
    basis = _basis(x.shape, x.dtype)
    if basis:
        cols = [flatten(jvp(f, (x,), (e.reshape(x.shape),))[1]) for e in basis]
        tree = cols[0][1]
        jacs = [np.array([value_of(c[0][i]) for c in cols])
                for i in range(len(cols[0][0]))]
    else:  # an empty x: no columns
        leaves, tree = flatten(f(x))
        jacs = [np.zeros((0, *np.shape(value_of(o)))) for o in leaves]
    # (input elements, *out) -> (*out, *x.shape)
    return unflatten(tree, [np.moveaxis(j.reshape(x.shape + j.shape[1:]), list(range(x.ndim)),
                                        list(range(-x.ndim, 0))) for j in jacs])


def _basis(shape: tuple[int, ...], dtype: Any) -> list[np.ndarray]:
    n = int(np.prod(shape))
    return list(np.eye(n, dtype=dtype)) if n else []
