"""Index-driven ops (gradcheck/ops/indexing.py): take, scatter_add, triu/tril, diagonal,
trace, einsum, with the checks of tests/op_harness.py (as for tests/test_ops_shape.py)."""

from __future__ import annotations

from collections.abc import Callable
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
import gradcheck.nn as gnn
import gradcheck.numpy as gnp
from gradcheck.ops import indexing

r = normal_data(8)


def add_at(axis: int | None) -> Callable[..., np.ndarray]:
    """numpy reference for scatter_add(x, indices, updates, axis)."""
    def reference(x: np.ndarray, indices: np.ndarray, updates: np.ndarray) -> np.ndarray:
        out = x.copy()
        if axis is None:
            flat = out.reshape(-1)
            np.add.at(flat, indices, updates)
            return out
        np.add.at(out, (slice(None),) * (axis % x.ndim) + (indices,), updates)
        return out
    return reference


def scatter_case(id: str, x: np.ndarray, idx: Any, u: np.ndarray, axis: int | None) -> ModuleCase:
    return ModuleCase(id, lambda np_, a, i, b: gnp.scatter_add(a, i, b, axis=axis),
                      (x, np.array(idx), u), nondiff=(1,), reference=add_at(axis))


def einsum_case(id: str, subscripts: str, *shapes: tuple[int, ...]) -> ModuleCase:
    return ModuleCase(f"einsum-{id}", lambda np_, *xs: np_.einsum(subscripts, *xs),
                      tuple(r(*s) for s in shapes))


CASES = [
    ModuleCase("take-flat", lambda np_, x, i: np_.take(x, i), (r(2, 3), np.array([5, 0, 5, -1])),
               nondiff=(1,)),
    ModuleCase("take-axis0-repeated", lambda np_, x, i: np_.take(x, i, axis=0),
               (r(3, 2), np.array([0, 0, 2, 0])), nondiff=(1,)),
    ModuleCase("take-negative-axis-2d-indices", lambda np_, x: np_.take(x, [[1, -1], [0, 0]], -1),
               (r(2, 3),)),
    ModuleCase("take-0d-index", lambda np_, x: np_.take(x, np.array(1), axis=1), (r(2, 3),)),
    ModuleCase("take-0d-input", lambda np_, x: np_.take(x, [0, 0, -1]), (r(),)),
    ModuleCase("take-empty-indices", lambda np_, x: np_.take(x, np.array([], dtype=int), axis=0),
               (r(3, 2),)),
    ModuleCase("take-zero-size-axis", lambda np_, x: np_.take(x, [1, 1], axis=1), (r(0, 3),)),
    ModuleCase("take-wrap", lambda np_, x: np_.take(x, [5, -7, 1], axis=0, mode="wrap"),
               (r(3, 2),)),
    ModuleCase("take-clip", lambda np_, x: np_.take(x, [5, -7, 1], axis=1, mode="clip"),
               (r(2, 3),)),
    scatter_case("scatter_add-axis0-repeated", r(3, 2), [0, 2, 0, 0], r(4, 2), 0),
    scatter_case("scatter_add-negative-axis", r(2, 3), [[2, 2], [0, -1]], r(2, 2, 2), -1),
    scatter_case("scatter_add-flat", r(2, 3), [5, 5, 0], r(3), None),
    scatter_case("scatter_add-broadcast-updates", r(3, 2), [1, 1], r(2), 0),
    scatter_case("scatter_add-0d-input", r(), [0, 0, -1], r(3), None),
    scatter_case("scatter_add-empty", r(2, 3), np.zeros(0, dtype=int), r(2, 0), 1),
    ModuleCase("triu-main", lambda np_, x: np_.triu(x), (r(3, 4),)),
    ModuleCase("triu-batched-k1", lambda np_, x: np_.triu(x, 1), (r(2, 3, 3),)),
    ModuleCase("triu-zero-size", lambda np_, x: np_.triu(x, -1), (r(0, 3),)),
    ModuleCase("tril-negative-k", lambda np_, x: np_.tril(x, k=-1), (r(3, 4),)),
    ModuleCase("tril-1d", lambda np_, x: np_.tril(x, 1), (r(3),)),
    ModuleCase("diagonal-main", lambda np_, x: np_.diagonal(x), (r(3, 4),)),
    ModuleCase("diagonal-offset", lambda np_, x: np_.diagonal(x, 1), (r(3, 4),)),
    ModuleCase("diagonal-negative-offset", lambda np_, x: np_.diagonal(x, -2), (r(4, 3),)),
    ModuleCase("diagonal-inner-axes", lambda np_, x: np_.diagonal(x, 0, 1, 2), (r(2, 3, 3),)),
    ModuleCase("diagonal-reversed-negative-axes", lambda np_, x: np_.diagonal(x, 1, -1, 0),
               (r(3, 2, 4),)),
    ModuleCase("diagonal-empty", lambda np_, x: np_.diagonal(x, 5), (r(3, 4),)),
    ModuleCase("trace-main", lambda np_, x: np_.trace(x), (r(3, 3),)),
    ModuleCase("trace-offset", lambda np_, x: np_.trace(x, 1), (r(3, 4),)),
    ModuleCase("trace-batched", lambda np_, x: np_.trace(x, 0, 1, 2), (r(2, 3, 3),)),
    ModuleCase("trace-negative-axes", lambda np_, x: np_.trace(x, -1, -1, 0), (r(3, 2, 3),)),
    ModuleCase("trace-empty", lambda np_, x: np_.trace(x, 9), (r(3, 4),)),
    einsum_case("matmul", "ij,jk->ik", (2, 3), (3, 4)),
    einsum_case("implicit", "ij,jk", (2, 3), (3, 4)),
    einsum_case("implicit-mixed-case", "ba,aC", (2, 3), (3, 4)),
    einsum_case("trace", "ii", (3, 3)),
    einsum_case("diagonal", "ii->i", (3, 3)),
    einsum_case("transpose", "ij->ji", (2, 3)),
    einsum_case("sum", "ij->", (2, 3)),
    einsum_case("sum-axis", "ij->i", (2, 3)),
    einsum_case("batched", "bij,bjk->bik", (2, 2, 3), (2, 3, 2)),
    einsum_case("ellipsis-broadcast", "...ij,...jk->...ik", (2, 1, 2, 3), (4, 3, 2)),
    einsum_case("ellipsis-implicit", "...ij,jk", (2, 2, 3), (3, 2)),
    einsum_case("ellipsis-last", "i...,i->...", (3, 2, 2), (3,)),
    einsum_case("outer", "i,j->ij", (2,), (3,)),
    einsum_case("three-operands", "ij,jk,kl->il", (2, 3), (3, 2), (2, 2)),
    einsum_case("repeated-batched", "iij,jk->ik", (2, 2, 3), (3, 2)),
    einsum_case("repeated-both", "ii,ii->", (3, 3), (3, 3)),
    einsum_case("repeated-summed", "iij->", (2, 2, 3)),
    einsum_case("size1-broadcast", "ij,ij->ij", (1, 3), (2, 3)),
    einsum_case("summed-only-here", "ij,k->ik", (2, 3), (2,)),
    einsum_case("zero-size", "ij,jk->ik", (2, 0), (0, 3)),
    einsum_case("scalar-operand", "ij,->ji", (2, 3), ()),
    ModuleCase("einsum-interleaved", lambda np_, a, b: np_.einsum(a, [0, 1], b, [1, 2], [0, 2]),
               (r(2, 3), r(3, 2))),
    ModuleCase("einsum-interleaved-implicit", lambda np_, a, b: np_.einsum(a, [30, 0], b, [0, 1]),
               (r(2, 3), r(3, 4))),
]

INDEXING_OPS = ["take", "scatter_add", "triu", "tril", "diagonal", "trace", "einsum"]


class TestIndexingOps(PathChecks, SampledMetadataChecks):
    cases = CASES
    forward_tolerance = EXACT
    sampled_ops = INDEXING_OPS
    sampled_examples = 4
    sampled_autograd_examples = 3  # as for the shape ops


def test_every_registered_indexing_op_has_cases() -> None:
    assert registered_in(indexing) == set(INDEXING_OPS)
    assert set(INDEXING_OPS) <= {c.id.split("-")[0] for c in CASES}


# -- semantics -------------------------------------------------------------------------------
def test_take_repeated_indices_accumulate() -> None:
    x = gc.tensor([1.0, 2.0, 3.0])
    with gc.GradientTape() as tape:
        tape.watch(x)
        y = gnp.sum(gnp.take(x, np.array([2, 2, -1, 0])))
    np.testing.assert_array_equal(np.asarray(tape.gradient(y, x)), [1.0, 0.0, 3.0])


def test_scatter_add_accumulates_repeated_indices() -> None:
    out = gnp.scatter_add(np.zeros(3), np.array([1, 1, 1, 0]), np.ones(4))
    np.testing.assert_array_equal(out, [1.0, 3.0, 0.0])


def test_scatter_add_indices_are_not_differentiated() -> None:
    x, u = gc.tensor(np.zeros((2, 2))), gc.tensor(np.ones((3, 2)))
    with gc.GradientTape() as tape:
        tape.watch([x, u])
        y = gnp.sum(gnp.scatter_add(x, np.array([0, 1, 0]), u) * np.array([1.0, 10.0]))
    gx, gu = tape.gradient(y, [x, u])
    np.testing.assert_array_equal(np.asarray(gx), [[1.0, 10.0], [1.0, 10.0]])
    np.testing.assert_array_equal(np.asarray(gu), [[1.0, 10.0]] * 3)


def test_gather_is_take_along_axis_0() -> None:
    x = r(3, 2)
    np.testing.assert_array_equal(np.asarray(gnn.gather(gc.tensor(x), np.array([2, 0, 2]))),
                                  np.take(x, [2, 0, 2], axis=0))


@pytest.mark.parametrize("subscripts, shapes", [
    ("ij,jk", [(2, 3), (3, 4)]),
    ("ba,aC", [(2, 3), (3, 4)]),
    ("Ab,bc", [(2, 3), (3, 4)]),
    ("...ij,jk", [(2, 5, 2, 3), (3, 4)]),
    ("i...,i", [(3, 2, 2), (3,)]),
    ("ii", [(3, 3)]),
    ("...i,...i->...", [(2, 1, 3), (4, 3)]),
    ("i i , j", [(2, 2), (3,)]),
], ids=lambda v: v if isinstance(v, str) else "")
def test_parse_einsum_spells_out_numpy_semantics(subscripts: str, shapes: list[Any]) -> None:
    operands = [r(*s) for s in shapes]
    inputs, output = indexing.parse_einsum(subscripts, shapes)
    assert "..." not in output and all("..." not in t for t in inputs)
    explicit = ",".join(inputs) + "->" + output
    np.testing.assert_allclose(np.einsum(explicit, *operands), np.einsum(subscripts, *operands),
                               rtol=1e-14)


def test_einsum_with_integer_operand_differentiates_the_float_one() -> None:
    x = gc.tensor(r(2, 3))
    counts = np.array([1, 2, 3])
    with gc.GradientTape() as tape:
        tape.watch(x)
        y = gnp.sum(gnp.einsum("ij,j->i", x, counts))
    np.testing.assert_array_equal(np.asarray(tape.gradient(y, x)), np.tile([1.0, 2.0, 3.0], (2, 1)))


@pytest.mark.parametrize("call, message", [
    (lambda: gnp.take(r(3), np.array([0.5])), "take: indices must be integers"),
    (lambda: gnp.take(r(3), [0], mode="nearest"), "take: mode must be"),
    (lambda: gnp.scatter_add(r(3), np.array([0, 1]), r(3)), "scatter_add: updates has shape"),
    (lambda: gnp.scatter_add(r(3), np.array([0]), r(1), axis=1), "scatter_add: axis 1"),
    (lambda: gnp.einsum("ij,jk", r(2, 2)), "einsum: subscripts 'ij,jk' do not fit"),
    (lambda: gnp.einsum("ij,jk", r(2, 2), r(3, 2)), "einsum: subscripts 'ij,jk' do not fit"),
    (lambda: gnp.einsum(r(2), [0.5]), "einsum: sublist labels"),
    (lambda: gnp.einsum(), "einsum: expected subscripts"),
    (lambda: indexing.parse_einsum("ij->i->j", [(2, 2)]), "more than one '->'"),
    (lambda: indexing.parse_einsum("ijk", [(2, 2)]), "einsum: operand term 'ijk'"),
], ids=["take-float-indices", "take-mode", "scatter_add-shape", "scatter_add-axis",
        "einsum-count", "einsum-sizes", "einsum-sublist", "einsum-empty", "einsum-arrows",
        "einsum-rank"])
def test_bad_arguments_name_the_op(call: Callable[[], Any], message: str) -> None:
    with pytest.raises((ValueError, TypeError), match=message):
        call()
