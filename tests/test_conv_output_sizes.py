"""The drawers' output sizes (``conv._out_size``, ``conv._pool_out``) are worked out axis by
axis with their answers kept, since drawing one backprop example asks for thousands of them.
They must say exactly what :func:`conv.geometry` says: its output size, or None where it
refuses the parameters with a ValueError (and its TypeError for a value that is no int)."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from gradcheck.ops import conv

SIZES = [(h, w) for h in range(1, 12) for w in (1, 2, 5, 9)]
KERNELS = [(1, 1), (2, 3), (3, 1), (3, 3)]
PADDINGS: list[Any] = [*conv.PADDINGS, 0, 2, (1, 2), ((0, 3), (2, 0)), "valid", "FULL",
                       -1, ((1, 0), (0, 2), (0, 0)), [[0, 0], [1, 0], [0, 2], [0, 0]]]
STEPS: list[Any] = [*conv.STRIDES, 3, [1, 2, 1, 1], 0, (1, 2, 3)]


def _geometry_out(size: Any, kernel: Any, **params: Any) -> Any:
    try:
        return conv.geometry("", size, kernel, **params).out
    except ValueError:
        return None


def test_conv_output_sizes_are_the_geometrys():
    for size, kernel, padding, strides, dilations in itertools.product(
            SIZES, KERNELS, PADDINGS, STEPS, [*conv.DILATIONS, 3]):
        params = {"strides": strides, "padding": padding, "dilations": dilations}
        assert conv._out_size(size, kernel, **params) == _geometry_out(size, kernel, **params), \
            (size, kernel, params)


def test_pool_output_sizes_are_the_geometrys():
    for size, ksize, padding, strides in itertools.product(
            SIZES, [1, 2, 3, (2, 1), [1, 3, 2, 1], 0], ["VALID", "SAME", 1, "same"],
            [1, 2, (2, 1), [1, 2, 2, 1], 0]):
        try:
            want = conv._pool_geometry("", size, ksize, strides, padding).out
        except ValueError:
            want = None
        assert conv._pool_out(size, ksize, strides, padding) == want, (size, ksize, strides)


@pytest.mark.parametrize("bad", [True, 1.0, "2"])
def test_a_value_that_is_no_int_is_still_refused_after_its_int_was_kept(bad):
    assert conv._out_size((4, 4), (2, 2), 1, "VALID", 1) == (3, 3)  # 1 is kept first
    with pytest.raises(TypeError, match="strides must be a positive int"):
        conv._out_size((4, 4), (2, 2), bad, "VALID", 1)
    with pytest.raises(TypeError, match="ksize must be a positive int"):
        conv._pool_out((4, 4), bad, 1, "VALID")
