"""Ops that draw their own shapes (a ``shapes=`` callable) meet the strata's forms too.

Before, the sampler called an op's shapes callable with the draw alone, so the long axis,
the plain vector and the 4-d array of the strata (``FORMS``) never reached the 64 registry
ops declared that way: a reduction, a softmax or a matrix op whose rule was wrong only on
an axis of more than 4 entries, only on 1-d inputs or only at 4 dimensions passed at
every seed (found by planting such bugs in correct rules, below).  A callable that takes a
``form`` keyword now gets the stratum's; one of the draw alone is called as before.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
import pytest

import gradcheck as gc
import gradcheck.numpy as gnp
from gradcheck.checker.api import _stratum_seed
from gradcheck.checker.explore import draw_one
from gradcheck.checker.sampling import FORMS, LONG, Stratum, examples, takes_form
from gradcheck.ops.linalg import matrix_shapes, square_shapes
from gradcheck.ops.reduce import REDUCE_PARAMS, reducible_shapes

SEEDS = range(6)


def _axes(axis: Any, ndim: int) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(ndim))
    return tuple(a % ndim for a in (axis if isinstance(axis, tuple) else (axis,)))


def _sum(name: str, factor: Any) -> gc.Op:
    """sum over ``axis`` whose VJP is multiplied by ``factor(x, axes)`` (1 where right)."""
    def vjp(g: Any, out: Any, x: Any, axis: Any = None, keepdims: bool = False) -> Any:
        shape = np.shape(x)
        axes = _axes(axis, len(shape))
        kept = tuple(1 if i in axes else d for i, d in enumerate(shape))
        return gnp.broadcast_to(gnp.reshape(g, kept), shape) * factor(x, axes)

    return gc.define_op(
        name, lambda x, axis=None, keepdims=False: np.sum(x, axis=axis, keepdims=keepdims),
        vjp=vjp, jvp=lambda ts, out, x, axis=None, keepdims=False:
        gnp.sum(ts[0], axis=axis, keepdims=keepdims),
        shapes=reducible_shapes, params=REDUCE_PARAMS, register=False)


def _sin(name: str, factor: Any, shapes: Any) -> gc.Op:
    """sin of a matrix, whose VJP is multiplied by ``factor(x)`` (1 where it is right)."""
    return gc.define_op(name, np.sin, vjp=lambda g, out, x: g * gnp.cos(x) * factor(x),
                        jvp=lambda ts, out, x: ts[0] * gnp.cos(x), shapes=shapes,
                        register=False)


def _long_reduced(x: Any, axes: tuple[int, ...]) -> float:
    """A kernel unrolled 4 wide: wrong when a reduced axis has more than 4 entries."""
    return 1.01 if any(np.shape(x)[a] > 4 for a in axes) else 1.0


PLANTED = {
    "sum_long_axis": _sum("sum_long_axis", _long_reduced),
    "sum_vector": _sum("sum_vector", lambda x, axes: 1.01 if np.ndim(x) == 1 and np.size(x)
                       else 1.0),
    "sum_deep": _sum("sum_deep", lambda x, axes: 1.01 if np.ndim(x) >= 4 else 1.0),
    "square_long": _sin("square_long", lambda x: 1.01 if np.shape(x)[-1] >= 5 else 1.0,
                        square_shapes),
    "matrix_long": _sin("matrix_long", lambda x: 1.01 if max(np.shape(x)[-2:]) >= 5 else 1.0,
                        matrix_shapes),
    "square_deep": _sin("square_deep", lambda x: 1.01 if np.ndim(x) >= 4 else 1.0,
                        square_shapes),
}


@pytest.mark.parametrize("bug", sorted(PLANTED))
def test_a_rule_wrong_only_on_some_own_shapes_is_found(bug: str) -> None:
    missed = [s for s in SEEDS if gc.check(PLANTED[bug], seed=s, dtypes=["float64"],
                                           paths=["vjp"]).passed]
    # the long reduction is missed where the stratum's axis reduces the short axis only
    assert len(missed) <= (len(SEEDS) // 2 if bug == "sum_long_axis" else 0), missed


def _shapes_at(op: gc.Op, k: int, seed: int = 0) -> list[tuple[int, ...]]:
    stratum = replace(Stratum.number(k), turn=k + seed)
    example = draw_one(examples(op, stratum=stratum), _stratum_seed(seed, k))
    assert example is not None
    return example.shapes


OWN = sorted(op.name for op in gc.default_registry if takes_form(op.meta.get("shapes")))


def test_the_registry_drawers_take_the_form() -> None:
    # the shared drawers and every family's own
    for name in ("mean", "var", "linalg.cholesky", "linalg.qr", "linalg.solve", "matmul",
                 "nn.softmax", "nn.embedding", "einsum", "take", "diagonal", "nn.conv2d",
                 "nn.max_pool2d"):
        assert name in OWN


@pytest.mark.parametrize("name", OWN)
def test_every_own_drawer_gives_the_strata_forms(name: str) -> None:
    op = gc.default_registry.get(name)
    forms = {form: [_shapes_at(op, k, seed) for seed in range(3)] for k, form in FORMS.items()}
    for shapes in forms["long"]:  # one axis of 5 or more entries
        assert max(max(s, default=0) for s in shapes) >= LONG[0], shapes
    for shapes in forms["vector"]:  # one plain batch-free input (a vector where allowed:
        # conv and pool take images, a single one of one channel and one spatial axis)
        assert min(len(s) for s in shapes if s) <= 2 or \
            all(sum(d > 1 for d in s) <= 1 for s in shapes), shapes
    for shapes in forms["deep"]:  # 4 dimensions (conv1d takes 3 at most)
        assert max(len(s) for s in shapes) >= (3 if name == "nn.conv1d" else 4), shapes


def test_a_shapes_callable_of_the_draw_alone_still_works() -> None:
    seen: list[tuple[int, ...]] = []

    def shapes(draw: Any) -> list[tuple[int, ...]]:
        seen.append((2, 3))
        return [(2, 3)]

    op = _sin("old_drawer", lambda x: 1.0, shapes)
    assert not takes_form(shapes)
    assert gc.check(op, seed=0, dtypes=["float64"]).passed
    assert seen and all(_shapes_at(op, k) == [(2, 3)] for k in range(8))


def test_a_shapes_callable_taking_keywords_gets_the_form() -> None:
    forms: list[Any] = []

    def shapes(draw: Any, **options: Any) -> list[tuple[int, ...]]:
        forms.append(options.get("form"))
        return [(5,)] if options.get("form") == "long" else [(2, 3)]

    op = _sin("keyword_drawer", lambda x: 1.0, shapes)
    assert takes_form(shapes) and takes_form(lambda draw, form=None: [])
    assert not takes_form(lambda draw, form, /: [])
    assert [_shapes_at(op, k) for k in FORMS] == [[(5,)], [(2, 3)], [(2, 3)]]
    assert set(forms) == {"long", "vector", "deep"}  # none when the stratum has no form
