"""Helpers for writing derivative rules, built from registered ops.

Everything here is differentiable again (it calls ops), so rules written with
it support higher order.  Rules may receive tensors or raw arrays.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gradcheck.engine.tensor import Tensor, value_of

__all__ = ["shape_of", "dtype_of", "unbroadcast", "fit", "cast_cotangent", "zeros_like_rule",
           "zero_vjp", "zero_jvp", "normalize_axis", "reduction_axes"]


def shape_of(x: Any) -> tuple[int, ...]:
    return np.shape(value_of(x))


def dtype_of(x: Any) -> np.dtype:
    v = value_of(x)
    return v.dtype if hasattr(v, "dtype") else np.asarray(v).dtype


def unbroadcast(g: Any, like: Any) -> Any:
    """Sum ``g`` over the dimensions broadcasting added to ``like``; cast to its dtype."""
    # the common case, on every binary op's rules: nothing to do (read the arrays directly)
    gv = g._value if type(g) is Tensor else g
    lv = like._value if type(like) is Tensor else like
    if (type(gv) is np.ndarray and type(lv) is np.ndarray and gv.shape == lv.shape
            and gv.dtype == lv.dtype):
        return g
    shape, gshape = shape_of(like), shape_of(g)
    if gshape == shape and dtype_of(g) == dtype_of(like):
        return g
    from gradcheck.ops.reduce import sum as sum_
    from gradcheck.ops.shape import reshape

    if gshape != shape:
        lead = len(gshape) - len(shape)
        axes = tuple(range(lead)) + tuple(
            i + lead for i, d in enumerate(shape) if d == 1 and gshape[i + lead] != 1
        )
        if axes:
            g = sum_(g, axis=axes)
        if shape_of(g) != shape:
            g = reshape(g, shape)
    if dtype_of(g) != dtype_of(like):
        g = cast_cotangent(g, dtype_of(like))
    return g


def cast_cotangent(g: Any, dtype: Any) -> Any:
    """``g`` cast to ``dtype``; a complex ``g`` for a real input gives its real part, the
    transpose of embedding the reals in the complex numbers (README "Complex numbers")."""
    from gradcheck.ops.elementwise import astype

    if dtype_of(g).kind == "c" and np.dtype(dtype).kind != "c":
        from gradcheck.ops.complex import real

        g = real(g)
        if dtype_of(g) == np.dtype(dtype):
            return g
    return astype(g, dtype)


def fit(t: Any, out: Any) -> Any:
    """Broadcast a tangent contribution to ``out``'s shape and cast it to its dtype."""
    tv = t._value if type(t) is Tensor else t
    ov = out._value if type(out) is Tensor else out
    if (type(tv) is np.ndarray and type(ov) is np.ndarray and tv.shape == ov.shape
            and tv.dtype == ov.dtype):
        return t
    if shape_of(t) == shape_of(out) and dtype_of(t) == dtype_of(out):
        return t
    from gradcheck.ops.elementwise import astype
    from gradcheck.ops.shape import broadcast_to

    if shape_of(t) != shape_of(out):
        t = broadcast_to(t, shape_of(out))
    if dtype_of(t) != dtype_of(out):
        t = astype(t, dtype_of(out))
    return t


def zeros_like_rule(x: Any) -> Any:
    from gradcheck.ops.elementwise import zeros_like

    return zeros_like(x)


def zero_vjp(g: Any, out: Any, *inputs: Any, **params: Any) -> tuple[Any, ...]:
    """VJP of an op whose derivative is zero almost everywhere (floor, sign, ...)."""
    return tuple(zeros_like_rule(x) for x in inputs)


def zero_jvp(tangents: Any, out: Any, *inputs: Any, **params: Any) -> Any:
    return zeros_like_rule(out)


def normalize_axis(axis: Any, ndim: int) -> tuple[int, ...]:
    """``axis`` (None, int or tuple, negatives allowed) as a sorted tuple of axes.

    Every axis must name one of the ``ndim`` dimensions: a 0-d array has none, so any axis
    is out of bounds there (numpy's ``AxisError``).  Reductions read an int axis on a 0-d
    array as numpy's do: :func:`reduction_axes`.
    """
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    out = []
    for a in axes:
        if not -ndim <= a < ndim:
            raise np.exceptions.AxisError(int(a), ndim)
        out.append(int(a) % ndim)
    return tuple(sorted(out))


def reduction_axes(axis: Any, ndim: int) -> tuple[int, ...]:
    """The axes a numpy reduction (``np.sum``, ``np.max``, ...) reduces for ``axis``.

    As :func:`normalize_axis`, except that on a 0-d array an int axis 0 or -1 reduces
    nothing: numpy keeps ``np.sum(np.float64(2), axis=-1)`` working for backward
    compatibility, so the forwards take it and the rules must too.  A tuple naming an axis
    is still out of bounds there, as in numpy.
    """
    if ndim == 0 and isinstance(axis, (int, np.integer)) and axis in (0, -1):
        return ()
    return normalize_axis(axis, ndim)
