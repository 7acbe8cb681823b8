"""``custom_gradient``: a function that supplies its own VJP.

The decorated function returns ``(y, grad_fn)``.  Its body runs unseen by
tracers; the call is then shown to them as a one-off op whose VJP calls
``grad_fn``.  Tapes use that VJP (to any order, when ``grad_fn`` computes what it
needs from the inputs with engine ops); forward accumulators transpose it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from gradcheck.engine import state
from gradcheck.engine.op import Op
from gradcheck.engine.pytree import flatten, unflatten
from gradcheck.engine.tensor import Tensor, value_of

__all__ = ["custom_gradient"]


def custom_gradient(f: Callable[..., Any]) -> Callable[..., Any]:
    """Decorate ``f(*x) -> (y, grad_fn)``; ``grad_fn(*dy)`` returns one gradient per input.

    Inputs and outputs may be nested lists, tuples and dicts of tensors.  As in
    TensorFlow, ``grad_fn`` receives one upstream gradient per output leaf and
    returns a gradient per input leaf (a single value when there is one input).

    The body of ``f`` runs unseen by tapes and accumulators, so:

    - **Higher order**: ``grad_fn`` is differentiated again only through what it
      computes from the inputs (``x``) with engine ops.  A value computed in the body
      (``e = gnp.exp(x)`` below) is a constant to an outer tape: a ``grad_fn`` that
      reads it gets a wrong second derivative.  Recompute it in ``grad_fn``, as here.
    - **Inputs are the positional arguments.**  A tensor a tape or accumulator tracks
      passed by keyword is a TypeError naming the keyword (its gradient would be
      lost): pass it positionally.  Keyword arguments are for constants (axes, flags).
    - **Captured tensors get no gradient.**  A tracked tensor ``f`` reads from an
      enclosing scope is a TypeError naming it when ``f`` holds it directly (one of
      its free variables); one reached otherwise (a global, an attribute, an item of
      a captured container) cannot be seen and silently gets no gradient through
      ``f``, as in TensorFlow without ``variables``.  Pass such tensors as arguments.

    >>> import gradcheck as gc, gradcheck.numpy as gnp
    >>> @gc.custom_gradient
    ... def log1pexp(x):
    ...     def grad_fn(dy):  # from x, with engine ops: differentiable again
    ...         return dy * (1 - 1 / (1 + gnp.exp(x)))
    ...     return gnp.log(1 + gnp.exp(x)), grad_fn
    >>> x = gc.tensor(0.0)
    >>> with gc.GradientTape() as outer:
    ...     outer.watch(x)
    ...     with gc.GradientTape() as inner:
    ...         inner.watch(x)
    ...         y = log1pexp(x)
    ...     g = inner.gradient(y, x)
    >>> float(g), float(outer.gradient(g, x))  # sigmoid(0), sigmoid'(0)
    (0.5, 0.25)
    """

    @functools.wraps(f)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        tracers = state.visible()
        if tracers:
            _refuse_unseen_inputs(f, args, kwargs, tracers)
        with state.only(()):
            returned = f(*args, **kwargs)
        result, grad_fn = _y_and_grad_fn(f, returned)
        in_leaves, _ = flatten(args)
        out_leaves, out_tree = flatten(result)
        n_in = len(in_leaves)

        def vjp(g: Any, out: Any, *inputs: Any) -> tuple[Any, ...]:
            gs = g if len(out_leaves) > 1 else (g,)
            grads = grad_fn(*gs)
            leaves = flatten(grads)[0] if isinstance(grads, (list, tuple, dict)) else [grads]
            if len(leaves) != n_in:
                raise TypeError(f"custom_gradient {f.__name__!r}: grad_fn returned "
                                f"{len(leaves)} gradients for {n_in} inputs")
            return tuple(leaves)

        op = Op(name=f"custom_gradient({f.__name__})", forward=_no_forward, vjp=vjp, jvp=None,
                nout=len(out_leaves), nin=n_in, family="custom",
                transpose_jvp_reason="custom_gradient supplies only a VJP")
        outs = tuple(Tensor(np.asarray(value_of(o))) for o in out_leaves)
        if any(type(a) is Tensor for a in in_leaves):
            packed = outs[0] if len(outs) == 1 else outs
            for tracer in state.visible():
                tracer.record(op, tuple(in_leaves), packed, {})
        return unflatten(out_tree, list(outs))

    return wrapped


def _y_and_grad_fn(f: Callable[..., Any], returned: Any) -> tuple[Any, Callable[..., Any]]:
    """``returned`` as ``(y, grad_fn)``, or a TypeError naming ``f`` and what it returned."""
    name = getattr(f, "__name__", "f")
    if not (isinstance(returned, (tuple, list)) and len(returned) == 2):
        what = (f"a {type(returned).__name__} of {len(returned)}"
                if isinstance(returned, (tuple, list)) else
                f"a {type(returned).__name__}")
        raise TypeError(f"custom_gradient {name!r}: the function must return (y, grad_fn); it "
                        f"returned {what}")
    if not callable(returned[1]):
        raise TypeError(f"custom_gradient {name!r}: the function must return (y, grad_fn); "
                        f"got a {type(returned[1]).__name__} as grad_fn")
    return returned[0], returned[1]


def _refuse_unseen_inputs(f: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any],
                          tracers: tuple[Any, ...]) -> None:
    """Raise TypeError for a tracked tensor ``f`` reads but its op would not have as an input:
    one passed by keyword, or one of its free variables (its gradient would silently be
    lost).  Captures reached otherwise cannot be seen (see ``custom_gradient``)."""
    def tracked(value: Any) -> bool:
        return any(type(leaf) is Tensor and any(t.watched(leaf) for t in tracers)
                   for leaf in flatten(value)[0])

    name = getattr(f, "__name__", "f")
    for key, value in kwargs.items():
        if tracked(value):
            raise TypeError(f"custom_gradient {name!r}: keyword argument {key!r} is a tensor a "
                            "tape or accumulator tracks, but grad_fn returns gradients for the "
                            "positional arguments only; pass it positionally")
    code, cells = getattr(f, "__code__", None), getattr(f, "__closure__", None)
    if code is None or not cells:
        return
    inputs = {id(leaf) for leaf in flatten(args)[0]}
    for var, cell in zip(code.co_freevars, cells, strict=True):
        try:
            value = cell.cell_contents
        except ValueError:  # a cell not filled yet
            continue
        if type(value) is Tensor and id(value) not in inputs and tracked(value):
            raise TypeError(f"custom_gradient {name!r} reads the tracked tensor {var!r} from an "
                            "enclosing scope: its gradient through the function would be lost; "
                            "pass it as an argument (and return its gradient from grad_fn)")


def _no_forward(*args: Any) -> Any:
    raise RuntimeError("a custom_gradient op is evaluated by its Python function, not re-run")
