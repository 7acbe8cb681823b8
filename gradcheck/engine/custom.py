"""``custom_gradient``: a function that supplies its own VJP.

The decorated function returns ``(y, grad_fn)``.  Its body runs unseen by
tracers; the call is then shown to them as a one-off op whose VJP calls
``grad_fn``.  Tapes use that VJP (to any order, when ``grad_fn`` is written
with engine ops); forward accumulators transpose it.
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

    >>> import gradcheck as gc, gradcheck.numpy as gnp
    >>> @gc.custom_gradient
    ... def log1pexp(x):
    ...     e = gnp.exp(x)
    ...     return gnp.log(1 + e), lambda dy: dy * (1 - 1 / (1 + e))
    """

    @functools.wraps(f)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        with state.only(()):
            result, grad_fn = f(*args, **kwargs)
        if not callable(grad_fn):
            raise TypeError(f"custom_gradient {f.__name__!r}: the function must return "
                            f"(y, grad_fn); got a {type(grad_fn).__name__} as grad_fn")
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


def _no_forward(*args: Any) -> Any:
    raise RuntimeError("a custom_gradient op is evaluated by its Python function, not re-run")
