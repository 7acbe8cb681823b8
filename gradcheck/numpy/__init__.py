"""A numpy-compatible namespace of registered ops: ``import gradcheck.numpy as gnp``.

Functions keep numpy's names and signatures (``axis=``, ``keepdims=``,
broadcasting; parameters may be passed positionally as in numpy), so numpy
code runs on the engine by swapping the import.  Constants and dtypes are
numpy's own.  ``gnp.array`` and ``gnp.asarray`` of plain values make a plain
(constant) array; of a tensor, or of lists holding tensors, a differentiable
tensor.  Use ``gradcheck.tensor`` for values to differentiate.
"""

from typing import Any

import numpy as _np
from numpy import (  # noqa: F401 - numpy's own: constants, dtypes, array creation
    arange,
    e,
    empty,
    eye,
    float32,
    float64,
    full,
    full_like,
    inf,
    int64,
    linspace,
    nan,
    newaxis,
    ones,
    ones_like,
    pi,
    zeros,
    zeros_like,
)

from gradcheck.engine.tensor import Tensor as _Tensor
from gradcheck.engine.tensor import value_of as _value_of
from gradcheck.numpy import fft, linalg  # noqa: F401
from gradcheck.ops import exports as _exports
from gradcheck.ops.binary import where as _where_op
from gradcheck.ops.shape import reshape as _reshape
from gradcheck.ops.shape import stack as _stack

globals().update(_exports("NUMPY"))


def array(object: Any, dtype: Any = None, *, copy: Any = True, order: Any = "K",  # noqa: A002
          subok: bool = False, ndmin: int = 0, like: Any = None) -> Any:
    """numpy.array; a tensor, or nested lists and tuples holding tensors, give a tensor
    built with the ops (stack, astype), so the derivative flows through the entries."""
    return _built(_np.array, object, dtype=dtype, copy=copy, order=order, subok=subok,
                  ndmin=ndmin, like=like)


def asarray(a: Any, dtype: Any = None, order: Any = None, *, copy: Any = None,
            like: Any = None) -> Any:
    """numpy.asarray; a tensor is returned as it is (cast to ``dtype`` if given), and lists
    holding tensors give a tensor, as in :func:`array`."""
    return _built(_np.asarray, a, dtype=dtype, order=order, copy=copy, like=like)


def _built(numpy_fn: Any, obj: Any, **kwargs: Any) -> Any:
    """``numpy_fn(obj, **kwargs)``: numpy's array if ``obj`` holds no tensor, else a tensor
    of numpy's shape and dtype whose entries keep their derivatives."""
    if not _holds_tensor(obj):
        return numpy_fn(obj, **kwargs)
    ref = numpy_fn(_values(obj), **kwargs)  # numpy's shape, dtype and errors
    out = _stacked(obj, ref.dtype)
    return out if out.shape == ref.shape else _reshape(out, ref.shape)


def _holds_tensor(x: Any) -> bool:
    if type(x) is _Tensor:
        return True
    return isinstance(x, (list, tuple)) and any(_holds_tensor(v) for v in x)


def _values(x: Any) -> Any:
    """``x`` with every tensor replaced by its array, in nested lists and tuples."""
    if isinstance(x, (list, tuple)):
        return [_values(v) for v in x]
    return _value_of(x)


def _stacked(x: Any, dtype: Any) -> Any:
    """``x`` as one array of ``dtype``: tensors cast with ``astype``, lists stacked."""
    if type(x) is _Tensor:
        return x if x.dtype == dtype else x.astype(dtype)
    if _holds_tensor(x):
        return _stack([_stacked(v, dtype) for v in x])
    return _np.asarray(x, dtype=dtype)


_NOT_GIVEN: Any = object()


def where(condition: Any, x: Any = _NOT_GIVEN, y: Any = _NOT_GIVEN, /) -> Any:
    """numpy.where: with ``x`` and ``y``, the differentiable op (``x`` where ``condition``
    holds, ``y`` elsewhere); with ``condition`` alone, :func:`nonzero` of it."""
    if x is not _NOT_GIVEN and y is not _NOT_GIVEN:
        return _where_op(condition, x, y)
    if x is _NOT_GIVEN and y is _NOT_GIVEN:
        return nonzero(condition)
    raise ValueError("gnp.where: either both or neither of x and y must be given (got x "
                     "only)")


def nonzero(a: Any) -> Any:
    """numpy.nonzero of the values: integer index arrays, constants (not differentiated)."""
    return _np.nonzero(_np.asarray(_values(a)))


def argwhere(a: Any) -> Any:
    """numpy.argwhere of the values: integer indices, a constant (not differentiated)."""
    return _np.argwhere(_np.asarray(_values(a)))


def flatnonzero(a: Any) -> Any:
    """numpy.flatnonzero of the values: integer indices, a constant (not differentiated)."""
    return _np.flatnonzero(_np.asarray(_values(a)))


__all__ = sorted(_exports("NUMPY")) + [
    "nonzero", "argwhere", "flatnonzero",
    "fft", "linalg", "array", "asarray", "e", "pi", "inf", "nan", "newaxis", "float32",
    "float64", "int64", "arange", "empty", "eye", "full", "full_like", "linspace", "ones",
    "ones_like", "zeros", "zeros_like",
]
