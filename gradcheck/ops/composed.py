"""numpy functions written with registered ops, with no rules of their own.

Each is exact as a composition: ``take_along_axis`` is advanced indexing (``getitem``, whose
VJP adds repeated indices back), ``sort`` is ``take_along_axis`` at ``argsort``'s positions
(a constant permutation, as autograd's and JAX's sorts are differentiated), and ``diff`` is
slices subtracted.  So every derivative, to any order, is the ops' own, already checked, and
these need no registry entries (``gradcheck.check`` takes them as functions).  Without a
tensor among the arguments each is numpy's own function.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from gradcheck.engine.tensor import Tensor, value_of
from gradcheck.ops.binary import subtract
from gradcheck.ops.rules import shape_of
from gradcheck.ops.shape import broadcast_to, concatenate, getitem, reshape

__all__ = ["take_along_axis", "argsort", "sort", "diff"]

#: Names exported in gradcheck.numpy.
NUMPY = ["take_along_axis", "argsort", "sort", "diff"]

#: numpy's "no value given" for ``diff``'s prepend and append (None is a value there).
_NOT_GIVEN = object()


def _axis(name: str, axis: Any, ndim: int) -> int:
    """``axis`` as a non-negative int, or numpy's error naming the function."""
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise np.exceptions.AxisError(f"{name}: axis {axis} is out of bounds for an array of "
                                      f"dimension {ndim}")
    return axis % ndim


def take_along_axis(arr: Any, indices: Any, axis: Any = -1) -> Any:
    """numpy.take_along_axis: ``arr`` picked at integer ``indices`` along ``axis`` (None: of
    the flattened array), the other axes broadcast.  ``indices`` are not differentiated;
    repeated ones add their cotangents."""
    if not isinstance(arr, Tensor):
        return np.take_along_axis(arr, np.asarray(value_of(indices)), axis)
    idx = np.asarray(value_of(indices))
    if idx.dtype.kind not in "iu":
        raise IndexError(f"take_along_axis: indices must be integers, got dtype {idx.dtype}")
    if axis is None:
        arr, axis = reshape(arr, (-1,)), 0
    shape = shape_of(arr)
    if idx.ndim != len(shape):
        raise ValueError(f"take_along_axis: indices ({idx.ndim} dimensions) and arr "
                         f"({len(shape)} dimensions) must have the same number of dimensions")
    ax = _axis("take_along_axis", axis, len(shape))
    # numpy's own construction: an arange along every other axis, broadcast against indices
    index = tuple(idx if i == ax else
                  np.arange(n).reshape((1,) * i + (n,) + (1,) * (len(shape) - i - 1))
                  for i, n in enumerate(shape))
    return getitem(arr, index=index)


def argsort(a: Any, axis: Any = -1, kind: Any = None, order: Any = None, *,
            stable: Any = None) -> np.ndarray:
    """numpy.argsort of the values: integer positions, a constant (not differentiated)."""
    return np.argsort(np.asarray(value_of(a)), axis=axis, kind=kind, order=order,
                      stable=stable)


def sort(a: Any, axis: Any = -1, kind: Any = None, order: Any = None, *,
         stable: Any = None) -> Any:
    """numpy.sort along ``axis`` (None: the flattened array).  Each output entry has the
    derivative of the input entry ``argsort`` puts there, so at ties, where sort is not
    differentiable, the sort's own order (stable with ``stable=True``) decides."""
    if not isinstance(a, Tensor):
        return np.sort(a, axis=axis, kind=kind, order=order, stable=stable)
    if order is not None:
        raise ValueError("sort: order= sorts structured arrays, which have no derivative")
    if axis is None:
        a, axis = reshape(a, (-1,)), -1
    axis, ndim = operator.index(axis), len(shape_of(a))
    if not -ndim <= axis < ndim:  # numpy's error and words (a 0-d input has no axis)
        raise np.exceptions.AxisError(axis, ndim)
    return take_along_axis(a, argsort(a, axis, kind, stable=stable), axis)


def _edge(value: Any, shape: tuple[int, ...], ax: int) -> Any:
    """A ``prepend`` or ``append`` value as numpy's diff takes it: a scalar is broadcast to
    one slice along the axis; a tensor stays one (it is differentiated)."""
    if not isinstance(value, Tensor):
        value = np.asarray(value)
    if len(shape_of(value)) == 0:
        return broadcast_to(value, shape[:ax] + (1,) + shape[ax + 1:])
    return value


def diff(a: Any, n: Any = 1, axis: Any = -1, prepend: Any = _NOT_GIVEN,
         append: Any = _NOT_GIVEN) -> Any:
    """numpy.diff: the ``n``-th differences along ``axis``, after joining ``prepend`` and
    ``append`` (differentiated too when they are tensors)."""
    given = {k: v for k, v in (("prepend", prepend), ("append", append)) if v is not _NOT_GIVEN}
    if not any(isinstance(v, Tensor) for v in (a, *given.values())):
        return np.diff(a, n, axis, **given)
    n = operator.index(n)
    if n < 0:
        raise ValueError(f"diff: order n must be non-negative, got {n}")
    shape = shape_of(a)
    if not shape:
        raise ValueError("diff: the input must have at least one dimension, got a 0-d array")
    ax = _axis("diff", axis, len(shape))
    if given:
        pieces = [_edge(prepend, shape, ax)] if "prepend" in given else []
        pieces.append(a)
        pieces += [_edge(append, shape, ax)] if "append" in given else []
        a = concatenate(pieces, axis=ax)
    lead = (slice(None),) * ax
    for _ in range(n):
        a = subtract(getitem(a, index=lead + (slice(1, None),)),
                     getitem(a, index=lead + (slice(None, -1),)))
    return a
