"""Shape ops (gradcheck/ops/shape.py) with the checks of tests/op_harness.py: forward vs
numpy, and every derivative path by ``gradcheck.check`` at the case's point (float64 and
float32) and on inputs drawn from each op's declared metadata (also against autograd).

A case is one function written once for numpy and gradcheck.numpy: see op_harness.ModuleCase.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest
from op_harness import (
    EXACT,
    ModuleCase,
    PathChecks,
    SampledMetadataChecks,
    normal_data,
    registered_in,
)

import gradcheck as gc
import gradcheck.numpy as gnp
from gradcheck.ops import shape as shape_ops

r = normal_data(7)


# -- the case table --------------------------------------------------------------------------
def _weighted_pieces(np_: Any, pieces: Sequence[Any]) -> Any:
    """Split pieces joined back with distinct weights, so each piece's gradient shows."""
    return np_.concatenate([np_.reshape(p, (-1,)) * (k + 1.0) for k, p in enumerate(pieces)])


CASES = [
    ModuleCase("reshape-flat", lambda np_, x: np_.reshape(x, (-1,)), (r(2, 3),)),
    ModuleCase("reshape-0d", lambda np_, x: np_.reshape(x, (1, 1)), (r(),)),
    ModuleCase("reshape-zero-size", lambda np_, x: np_.reshape(x, (3, 0)), (r(0, 3),)),
    ModuleCase("transpose-default", lambda np_, x: np_.transpose(x), (r(2, 3, 4),)),
    ModuleCase("transpose-permutation", lambda np_, x: np_.transpose(x, (2, 0, 1)),
               (r(2, 3, 4),)),
    ModuleCase("transpose-negative-axes", lambda np_, x: np_.transpose(x, (-1, 0, -2)),
               (r(2, 3, 4),)),
    ModuleCase("transpose-0d", lambda np_, x: np_.transpose(x), (r(),)),
    ModuleCase("moveaxis-int", lambda np_, x: np_.moveaxis(x, 0, -1), (r(2, 3, 4),)),
    ModuleCase("moveaxis-tuples", lambda np_, x: np_.moveaxis(x, (0, -1), (-1, 1)), (r(2, 3, 4),)),
    ModuleCase("squeeze-all", lambda np_, x: np_.squeeze(x), (r(1, 3, 1),)),
    ModuleCase("squeeze-negative-axis", lambda np_, x: np_.squeeze(x, -1), (r(1, 3, 1),)),
    ModuleCase("squeeze-tuple", lambda np_, x: np_.squeeze(x, (0, 2)), (r(1, 3, 1),)),
    ModuleCase("squeeze-zero-size", lambda np_, x: np_.squeeze(x, 0), (r(1, 0),)),
    ModuleCase("expand_dims-negative", lambda np_, x: np_.expand_dims(x, -1), (r(2, 3),)),
    ModuleCase("expand_dims-tuple", lambda np_, x: np_.expand_dims(x, (0, 3)), (r(2, 3),)),
    ModuleCase("expand_dims-0d", lambda np_, x: np_.expand_dims(x, 0), (r(),)),
    ModuleCase("broadcast_to-grow", lambda np_, x: np_.broadcast_to(x, (2, 3, 4)), (r(3, 1),)),
    ModuleCase("broadcast_to-0d", lambda np_, x: np_.broadcast_to(x, (2, 3)), (r(),)),
    ModuleCase("broadcast_to-same", lambda np_, x: np_.broadcast_to(x, (2, 3)), (r(1, 3),)),
    ModuleCase("concatenate-axis0", lambda np_, a, b: np_.concatenate([a, b]), (r(2, 3), r(1, 3))),
    ModuleCase("concatenate-negative-axis", lambda np_, a, b, c: np_.concatenate([a, b, c], -1),
               (r(2, 1), r(2, 3), r(2, 0))),
    ModuleCase("concatenate-none", lambda np_, a, b: np_.concatenate((a, b), axis=None),
               (r(2, 2), r(3,))),
    ModuleCase("stack-axis0", lambda np_, a, b: np_.stack([a, b]), (r(2, 3), r(2, 3))),
    ModuleCase("stack-negative-axis", lambda np_, a, b, c: np_.stack([a, b, c], axis=-1),
               (r(2, 3), r(2, 3), r(2, 3))),
    ModuleCase("stack-0d", lambda np_, a, b: np_.stack([a, b]), (r(), r())),
    ModuleCase("split-sections",
               lambda np_, x: _weighted_pieces(np_, np_.split(x, 3, axis=-1)), (r(2, 6),)),
    ModuleCase("split-indices",
               lambda np_, x: _weighted_pieces(np_, np_.split(x, [1, 3, 9])), (r(4, 2),)),
    ModuleCase("split-array_split",
               lambda np_, x: _weighted_pieces(np_, np_.array_split(x, 3, 1)), (r(2, 5),)),
    ModuleCase("getitem-basic", lambda np_, x: x[1:, ::-2, 0], (r(3, 4, 2),)),
    ModuleCase("getitem-int-negative", lambda np_, x: x[-1], (r(3, 4),)),
    ModuleCase("getitem-none-ellipsis", lambda np_, x: x[None, ..., 1, None], (r(2, 3, 4),)),
    ModuleCase("getitem-repeated-array", lambda np_, x: x[np.array([0, 2, 0, -3])], (r(3, 2),)),
    ModuleCase("getitem-list", lambda np_, x: x[[1, 1, 0]], (r(3,),)),
    ModuleCase("getitem-two-arrays", lambda np_, x: x[np.array([0, 1, 0]), np.array([2, 2, 2])],
               (r(2, 3),)),
    ModuleCase("getitem-separated-arrays",
               lambda np_, x: x[np.array([[1, 0]]), :, np.array([1, 1])], (r(2, 3, 2),)),
    ModuleCase("getitem-slice-then-array", lambda np_, x: x[::-1, np.array([1, 1, 0])], (r(2, 3),)),
    ModuleCase("getitem-bool-full", lambda np_, x: x[np.array([[True, False, True], [False] * 3])],
               (r(2, 3),)),
    ModuleCase("getitem-bool-axis0", lambda np_, x: x[np.array([True, False, True])], (r(3, 2),)),
    ModuleCase("getitem-0d-empty-tuple", lambda np_, x: x[()], (r(),)),
    ModuleCase("getitem-0d-newaxis", lambda np_, x: x[None], (r(),)),
    ModuleCase("getitem-zero-size", lambda np_, x: x[:, 1:], (r(0, 3),)),
    ModuleCase("getitem-empty-array", lambda np_, x: x[np.array([], dtype=np.int64)], (r(3, 2),)),
    ModuleCase("pad-constant", lambda np_, x: np_.pad(x, 1, "constant"), (r(2, 3),)),
    ModuleCase("pad-constant-values",
               lambda np_, x: np_.pad(x, ((0, 2), (1, 0)), "constant", constant_values=2.5),
               (r(2, 3),)),
    ModuleCase("pad-reflect", lambda np_, x: np_.pad(x, ((1, 2), (2, 1)), mode="reflect"),
               (r(3, 3),)),
    ModuleCase("pad-reflect-wide", lambda np_, x: np_.pad(x, 5, mode="reflect"), (r(3,),)),
    ModuleCase("pad-reflect-size1", lambda np_, x: np_.pad(x, (2, 1), mode="reflect"), (r(1,),)),
    ModuleCase("pad-edge", lambda np_, x: np_.pad(x, (2, 1), mode="edge"), (r(2, 2),)),
    ModuleCase("pad-symmetric", lambda np_, x: np_.pad(x, 3, mode="symmetric"), (r(2,),)),
    ModuleCase("pad-wrap", lambda np_, x: np_.pad(x, ((0, 0), (4, 1)), mode="wrap"), (r(2, 3),)),
    ModuleCase("pad-0d", lambda np_, x: np_.pad(x, 2, "constant"), (r(),)),
    ModuleCase("tile-int", lambda np_, x: np_.tile(x, 2), (r(2, 3),)),
    ModuleCase("tile-more-reps", lambda np_, x: np_.tile(x, (2, 1, 3)), (r(2, 3),)),
    ModuleCase("tile-fewer-reps", lambda np_, x: np_.tile(x, (3,)), (r(2, 2, 2),)),
    ModuleCase("tile-zero", lambda np_, x: np_.tile(x, (0, 2)), (r(2, 3),)),
    ModuleCase("tile-0d", lambda np_, x: np_.tile(x, (2, 2)), (r(),)),
    ModuleCase("repeat-flat", lambda np_, x: np_.repeat(x, 2), (r(2, 3),)),
    ModuleCase("repeat-per-element", lambda np_, x: np_.repeat(x, np.array([0, 3, 1]), axis=-1),
               (r(2, 3),)),
    ModuleCase("repeat-0d", lambda np_, x: np_.repeat(x, 3), (r(),)),
    ModuleCase("flip-all", lambda np_, x: np_.flip(x), (r(2, 3),)),
    ModuleCase("flip-axes", lambda np_, x: np_.flip(x, (0, -1)), (r(2, 3, 2),)),
    ModuleCase("roll-flat", lambda np_, x: np_.roll(x, 4), (r(2, 3),)),
    ModuleCase("roll-axis", lambda np_, x: np_.roll(x, -1, axis=-1), (r(2, 3),)),
    ModuleCase("roll-tuple", lambda np_, x: np_.roll(x, (1, 5), axis=(0, 1)), (r(2, 3),)),
]

SHAPE_OPS = ["reshape", "transpose", "moveaxis", "squeeze", "expand_dims", "broadcast_to",
             "concatenate", "stack", "getitem", "scatter_index", "pad", "tile", "repeat",
             "flip", "roll"]


class TestShapeOps(PathChecks, SampledMetadataChecks):
    cases = CASES
    forward_tolerance = EXACT
    sampled_ops = SHAPE_OPS
    sampled_examples = 4
    # the only autograd comparison of these ops (the cases are functions): more draws, so
    # that parameters autograd supports come up
    sampled_autograd_examples = 3
    sampled_without_autograd = {
        "repeat": "autograd's repeat rule takes a scalar count only; drawn counts are often "
                  "arrays (unsupported, so nothing would be compared)",
        "tile": "autograd's tile rule is wrong when reps are fewer than the input's axes "
                "(a finding about autograd: tests/test_references.py)"}


def test_every_registered_shape_op_has_cases() -> None:
    assert registered_in(shape_ops) == set(SHAPE_OPS)
    covered = {c.id.split("-")[0] for c in CASES}
    # scatter_index is getitem's VJP, so every getitem case runs it; it is also swept above
    assert set(SHAPE_OPS) - {"scatter_index"} <= covered


# -- indexing semantics ------------------------------------------------------------------------
def test_repeated_indices_accumulate() -> None:
    x = gc.tensor([1.0, 2.0, 3.0])
    with gc.GradientTape() as tape:
        tape.watch(x)
        y = x[np.array([0, 0, 2, 0, -1])]
    np.testing.assert_array_equal(np.asarray(tape.gradient(y, x)), [3.0, 0.0, 2.0])


def test_repeated_indices_accumulate_in_two_dimensions() -> None:
    x = gc.tensor(np.zeros((2, 3)))
    _, vjp_fn = gc.vjp(lambda a: a[np.array([1, 1, 0]), np.array([2, 2, 2])], x)
    want = np.zeros((2, 3))
    want[1, 2], want[0, 2] = 1.0 + 10.0, 100.0
    np.testing.assert_array_equal(np.asarray(vjp_fn(np.array([1.0, 10.0, 100.0]))[0]), want)


def test_boolean_mask_gradient_is_the_mask() -> None:
    mask = np.array([[True, False], [False, True], [True, True]])
    x = gc.tensor(r(3, 2))
    with gc.GradientTape() as tape:
        tape.watch(x)
        y = gnp.sum(x[mask])
    np.testing.assert_array_equal(np.asarray(tape.gradient(y, x)), mask.astype(float))


def test_index_can_be_an_integer_tensor() -> None:
    x = gc.tensor([1.0, 2.0, 3.0])
    np.testing.assert_array_equal(np.asarray(x[gc.tensor(np.array([2, 0]))]), [3.0, 1.0])


def test_scatter_index_is_getitems_transpose() -> None:
    index = (np.array([0, 0, 1]), slice(None, None, -1))
    g = r(3, 4)
    out = shape_ops.scatter_index(g, shape=(2, 4), index=index)
    want = np.zeros((2, 4))
    np.add.at(want, index, g)
    np.testing.assert_array_equal(out, want)


def test_split_returns_numpy_pieces() -> None:
    x = r(2, 7)
    for got, want in zip(gnp.array_split(gc.tensor(x), 3, axis=1), np.array_split(x, 3, axis=1),
                         strict=True):
        np.testing.assert_array_equal(np.asarray(got), want)
    with pytest.raises(ValueError, match="split: an axis of length 7"):
        gnp.split(x, 3, axis=1)


def test_concatenate_and_stack_take_any_number_of_arrays() -> None:
    arrays = [r(2, 2) for _ in range(5)]
    np.testing.assert_array_equal(np.asarray(gnp.concatenate([gc.tensor(a) for a in arrays])),
                                  np.concatenate(arrays))
    np.testing.assert_array_equal(np.asarray(gnp.stack(arrays[:1], axis=-1)),
                                  np.stack(arrays[:1], axis=-1))


def test_concatenate_mixed_dtypes_gives_each_input_its_dtype() -> None:
    a, b = gc.tensor(r(2), dtype=np.float32), gc.tensor(r(3))
    with gc.GradientTape() as tape:
        tape.watch([a, b])
        y = gnp.sum(gnp.concatenate([a, b]))
    ga, gb = tape.gradient(y, [a, b])
    assert (ga.dtype, gb.dtype) == (np.float32, np.float64)


def test_pad_tangent_ignores_constant_values() -> None:
    x = r(2)
    _, jv = gc.jvp(lambda a: gnp.pad(a, 1, constant_values=5.0), [x], [np.ones(2)])
    np.testing.assert_array_equal(np.asarray(jv), [0.0, 1.0, 1.0, 0.0])


@pytest.mark.parametrize("call, message", [
    (lambda: gnp.pad(r(2), 1, mode="median"), "pad: mode must be one of"),
    (lambda: gnp.pad(r(2), 1.5), "pad: pad_width must be integers"),
    (lambda: gnp.pad(r(2), -1), "pad: pad_width must be non-negative"),
    (lambda: gnp.pad(r(2, 2), (1, 2, 3)), "pad: pad_width"),
    (lambda: gnp.pad(r(2), 1, mode="reflect", constant_values=1.0), "constant_values"),
    (lambda: gnp.split(r(3), 0), "split: the number of sections must be positive"),
    (lambda: gnp.split(r(3), 1, axis=2), "split: axis 2 is out of bounds"),
], ids=["pad-mode", "pad-float-width", "pad-negative", "pad-bad-width", "pad-reflect-constant",
        "split-zero", "split-axis"])
def test_bad_arguments_name_the_op(call: Callable[[], Any], message: str) -> None:
    with pytest.raises((ValueError, TypeError), match=message):
        call()
