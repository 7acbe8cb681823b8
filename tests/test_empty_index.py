"""An empty index list selects nothing, as in numpy (``x[[]]`` has shape ``(0,) + rest``)."""

from __future__ import annotations

import numpy as np

import gradcheck as gc
import gradcheck.numpy as gnp
from gradcheck.engine import tensor


def test_empty_list_index_has_numpys_shape() -> None:
    x = np.arange(6.0).reshape(2, 3)
    assert tensor(x)[[]].shape == x[[]].shape == (0, 3)


def test_empty_list_index_gradient_is_zero_where_nothing_was_selected() -> None:
    x = np.arange(6.0).reshape(2, 3)
    g = gc.grad(lambda v: gnp.sum(v[[]]) + gnp.sum(v[[0]] ** 2))(x)
    np.testing.assert_array_equal(np.asarray(g), [[0.0, 2.0, 4.0], [0.0, 0.0, 0.0]])
