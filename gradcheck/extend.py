"""For op authors: define an op with its rules, and say how other frameworks compute it.

>>> import numpy as np
>>> import gradcheck.numpy as gnp
>>> from gradcheck.extend import define_linear, unbroadcast
>>> scaled_add = define_linear(
...     "scaled_add_doc", lambda x, y: x + 2.0 * y,
...     vjp=(lambda g, out, x, y: unbroadcast(g, x),
...          lambda g, out, x, y: unbroadcast(2.0 * g, y)),
...     register=False)
>>> scaled_add(np.ones(2), np.ones(2))
array([3., 3.])

Rules are written with registered ops (``gradcheck.numpy``), so they can be
differentiated again.  The helpers here cover the common cases:

``zero_vjp`` / ``zero_jvp``
    the rules of an op whose derivative is zero almost everywhere (floor, sign);
``define_linear``
    a linear op: only its VJP (the transpose) is written, its JVP is the op itself;
``unbroadcast`` / ``fit``
    sum a cotangent back to an input's shape / broadcast a tangent to the output's;
``custom_gradient``
    a function that supplies its own VJP, without declaring an op;
``api`` / ``formula`` / ``NoEquivalent``
    an op's ``equivalents=`` in other frameworks: their API by dotted name, a formula where
    the framework has no API (the report says so), or "cannot compute this case".
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from gradcheck.engine.custom import custom_gradient
from gradcheck.engine.op import Op, RuleError, define_op
from gradcheck.ops.refs import NoEquivalent, api, formula
from gradcheck.ops.rules import dtype_of, fit, shape_of, unbroadcast, zero_jvp, zero_vjp

__all__ = ["define_op", "define_linear", "Op", "RuleError", "zero_vjp", "zero_jvp",
           "unbroadcast", "fit", "shape_of", "dtype_of", "custom_gradient", "api", "formula",
           "NoEquivalent"]


def define_linear(name: str, forward: Callable[..., Any],
                  vjp: Callable[..., Any] | Sequence[Callable[..., Any] | None],
                  **options: Any) -> Op:
    """A linear op (JAX's ``deflinear``): its VJP is its transpose, its JVP is the op itself
    applied to the tangents.  ``options`` are :func:`define_op`'s keywords and metadata."""
    if "jvp" in options or "linear" in options:
        raise TypeError(f"define_linear {name!r}: a linear op's JVP is the op itself; "
                        "use define_op to give another one")
    return define_op(name, forward, vjp, None, linear=True, **options)
