"""Every check meets a long axis, a plain vector and a 4-d array, at every seed.

Before, no drawn dimension was longer than 4 and no default array had more than 3
dimensions, so a VJP right only on the first 4 entries of an axis (a kernel unrolled 4
wide), or wrong only at 4 or more dimensions, passed at every seed in both modes; one wrong
only on non-empty 1-d arrays passed at some (found by planting bugs in correct rules).  And
a ``params`` callable that offered no choice at one drawn shape (every axis of a 0-d array)
stopped the whole check.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
import pytest

import gradcheck as gc
import gradcheck.numpy as gnp
from gradcheck.checker.api import DEFAULT_EXAMPLES, RANDOM_EXTRA, _stratum_seed
from gradcheck.checker.explore import draw_one
from gradcheck.checker.sampling import LONG, Stratum, draw_shapes


def _sin(name: str, factor: Any, **meta: Any) -> gc.Op:
    """sin whose VJP is multiplied by ``factor(x)`` (1 where it is right)."""
    return gc.define_op(name, np.sin, vjp=lambda g, out, x: g * gnp.cos(x) * factor(x),
                        jvp=lambda ts, out, x: ts[0] * gnp.cos(x), register=False, **meta)


def _first_four(x: Any) -> Any:
    """A kernel unrolled 4 wide: only the first 4 entries of the last axis get a cotangent."""
    a = np.asarray(x)
    return (np.arange(a.shape[-1]) < 4).astype(a.dtype) if a.ndim else 1.0


PLANTED = {
    "first_four": _sin("sin_first_four", _first_four),
    "first_four_core": _sin("sin_first_four_core", _first_four, shapes="(...,n)"),
    "vector": _sin("sin_vector", lambda x: 1.01 if np.ndim(x) == 1 and np.size(x) else 1.0),
    "deep": _sin("sin_deep", lambda x: 1.01 if np.ndim(x) >= 4 else 1.0),
}


@pytest.mark.parametrize("seed", range(10))
@pytest.mark.parametrize("bug", sorted(PLANTED))
def test_a_rule_wrong_only_on_some_shapes_is_found_at_every_seed(bug: str, seed: int) -> None:
    report = gc.check(PLANTED[bug], seed=seed, dtypes=["float64"], paths=["vjp"])
    assert not report.passed


@pytest.mark.parametrize("bug", ["first_four", "first_four_core", "vector"])
def test_full_mode_finds_them_too(bug: str) -> None:
    # (full mode's three strata have no 4-d array: see test_the_strata_reach_every_form)
    missed = [s for s in range(3) if gc.check(PLANTED[bug], seed=s, mode="full",
                                              dtypes=["float64"], paths=["vjp"]).passed]
    assert missed == []


def _strata_shapes(signature: str, count: int, seed: int) -> list[list[tuple[int, ...]]]:
    out = []
    for k in range(count):
        stratum = replace(Stratum.number(k), turn=k + seed)
        shapes = draw_one(draw_shapes(signature, stratum.family, stratum.form),
                          _stratum_seed(seed, k))
        assert shapes is not None
        out.append(shapes)
    return out


#: Signatures, and the dimensions of the first input of the vector form (no batch).
SIGNATURES = {"(...)": 1, "(...),(...)": 1, "(...,n)": 1, "(...,n),(...,n)": 1,
              "(...,n,n)": 2, "(...,m,k),(...,k,n)": 2}


@pytest.mark.parametrize("signature", sorted(SIGNATURES))
@pytest.mark.parametrize("mode", ["fast", "full"])
def test_the_strata_reach_every_form(signature: str, mode: str) -> None:
    count = DEFAULT_EXAMPLES[mode] - RANDOM_EXTRA
    for seed in range(20):
        firsts = [shapes[0] for shapes in _strata_shapes(signature, count, seed)]
        assert any(max(s, default=0) >= LONG[0] for s in firsts), (seed, firsts)
        plain = SIGNATURES[signature]
        assert any(len(s) == plain and min(s) >= 2 for s in firsts), (seed, firsts)
        if mode == "fast":
            assert any(len(s) >= 4 for s in firsts), (seed, firsts)


@pytest.mark.parametrize("signature", sorted(SIGNATURES))
def test_a_long_axis_is_the_only_long_one_and_the_array_stays_small(signature: str) -> None:
    # full mode's Jacobian grows with the array: the long stratum's has one long axis (a
    # square core two) beside short ones, no more entries than the usual strata draw
    square = "n,n" in signature
    for seed in range(20):
        (shapes,) = _strata_shapes(signature, 1, seed)
        for s in shapes:
            assert sum(d > 4 for d in s) <= (2 if square else 1), (seed, shapes)
            assert int(np.prod(s)) <= (3 * 8 * 8 if square else 3 * 4 * 8), (seed, shapes)


EVERY_AXIS = {"axis": lambda shapes: list(range(len(shapes[0])))}


def _sum(x: Any, axis: int = 0) -> Any:
    return gnp.sum(x, axis=axis)


@pytest.mark.parametrize("mode", ["fast", "full"])
def test_a_shape_where_a_params_callable_has_no_choice_is_drawn_again(mode: str) -> None:
    # a 0-d stratum offers no axis: it is drawn again, and the check runs all its examples
    report = gc.check(_sum, inputs=["real"], params=EVERY_AXIS, mode=mode)
    assert report.passed, report.findings
    assert report.stats["examples"]["float64"] >= DEFAULT_EXAMPLES[mode]


def test_a_rule_checked_on_the_shapes_drawn_again_is_still_judged() -> None:
    op = gc.define_op("sum_wrong_on_2d", lambda x, axis=0: np.sum(x, axis=axis),
                      vjp=lambda g, out, x, axis=0: gnp.broadcast_to(
                          gnp.expand_dims(g, axis), np.shape(x)) * (1.01 if np.ndim(x) > 1
                                                                     else 1.0),
                      params=EVERY_AXIS, register=False)
    assert not gc.check(op, seed=0, dtypes=["float64"], paths=["vjp"]).passed


def test_fixed_shapes_where_a_params_callable_has_no_choice_say_so() -> None:
    report = gc.check(_sum, inputs=["real"], params=EVERY_AXIS, shapes="()")
    (error,) = [f for f in report.findings if f.kind == "error"]
    assert "param 'axis': no choices for shapes [()]" in error.message


def _sum_wrong_at_axis_3() -> gc.Op:
    def vjp(g: Any, out: Any, x: Any, axis: int = 0) -> Any:
        scale = 1.5 if axis == 3 else 1.0
        if np.ndim(x) == 0:  # (numpy sums a 0-d array over axis 0)
            return g * scale
        return gnp.broadcast_to(gnp.expand_dims(g, axis), np.shape(x)) * scale

    return gc.define_op("sum_wrong_at_axis_3", lambda x, axis=0: np.sum(x, axis=axis),
                        vjp=vjp, params={"axis": [0, 3]}, register=False)


@pytest.mark.parametrize("seed", range(4))
def test_a_choice_only_4d_arrays_offer_is_checked_at_every_seed(seed: int) -> None:
    # the strata made to take a choice go through the forms: axis=3 fits the deep one
    report = gc.check(_sum_wrong_at_axis_3(), seed=seed, dtypes=["float64"], paths=["vjp"])
    assert {f.kind for f in report.failures} == {"mismatch"}
