"""gnp.where with the condition alone is numpy's: the indices of the nonzero entries.

So are gnp.nonzero, gnp.argwhere and gnp.flatnonzero, of tensors and of arrays: integer
constants, never recorded on a tape.  With x but no y, gnp.where raises numpy's ValueError.
"""

from typing import Any

import numpy as np
import pytest

import gradcheck as gc
import gradcheck.numpy as gnp
from gradcheck.engine.tensor import value_of

A = np.array([[0.0, 1.5, 0.0], [-2.0, 0.0, 3.0]])
CONDITIONS = {"float": A, "bool": A > 0, "int": (A != 0).astype(np.int64),
              "1-d": np.array([0.0, 4.0, 0.0, 1.0]), "empty": np.zeros((0, 2))}


def _same_indices(got: Any, want: Any) -> None:
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            _same_indices(g, w)
        return
    assert type(got) is np.ndarray, type(got)
    assert got.dtype == want.dtype and got.dtype.kind == "i"
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("kind", list(CONDITIONS))
@pytest.mark.parametrize("name", ["where", "nonzero", "argwhere", "flatnonzero"])
@pytest.mark.parametrize("wrap", [np.asarray, gc.tensor], ids=["array", "tensor"])
def test_indices_as_numpy(name: str, kind: str, wrap: Any) -> None:
    cond = CONDITIONS[kind]
    _same_indices(getattr(gnp, name)(wrap(cond)), getattr(np, name)(cond))


def test_where_of_a_list_holding_tensors() -> None:
    rows = [gc.tensor(A[0]), gc.tensor(A[1])]
    _same_indices(gnp.where(rows), np.where(A))


def test_numpy_functions_on_a_tensor_give_the_same_indices() -> None:
    t = gc.tensor(A)
    for name in ("where", "nonzero", "argwhere", "flatnonzero"):
        _same_indices(getattr(np, name)(t), getattr(np, name)(A))


def test_where_of_a_scalar_is_numpys_error() -> None:
    with pytest.raises(ValueError, match="0d arrays"):
        gnp.where(gc.tensor(np.float64(1.0)))


def test_indices_under_a_tape_are_constants_and_index_the_differentiable_value() -> None:
    x = gc.tensor(A)
    with gc.GradientTape() as tape:
        tape.watch(x)
        rows, cols = gnp.where(x * x)
        assert type(rows) is np.ndarray and type(cols) is np.ndarray
        y = gnp.sum(x[rows, cols] ** 2)
    (g,) = tape.gradient(y, [x])
    np.testing.assert_allclose(value_of(g), 2 * A)


def test_three_arguments_still_differentiate() -> None:
    x = gc.tensor(A)
    with gc.GradientTape() as tape:
        tape.watch(x)
        y = gnp.sum(gnp.where(A > 0, x * 3.0, x))
    (g,) = tape.gradient(y, [x])
    np.testing.assert_allclose(value_of(g), np.where(A > 0, 3.0, 1.0))


@pytest.mark.parametrize("call", [lambda c, x: gnp.where(c, x), lambda c, x: np.where(c, x)],
                         ids=["gnp", "numpy on a tensor"])
def test_x_without_y_is_a_value_error(call: Any) -> None:
    with pytest.raises(ValueError, match="either both or neither of x and y"):
        call(A > 0, gc.tensor(A))
