"""Verdicts at and next to kinks: a comparison whose numeric error estimate is of the order
of the values compared is inconclusive, never a pass.

Found by a user checking real torch functions: torch.clamp failed at 5 of 8 seeds where a
stratum put x = lo = hi (a kink the fast direction did not see), the verdict at a given kink
depended on the seed, and a wrong relu rule passed at x = 1e-5 (the numeric steps crossed 0
and their error estimate widened the tolerance).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import gradcheck as gc
import gradcheck.numpy as gnp
from gradcheck.checker import numeric
from gradcheck.checker.api import check
from gradcheck.checker.report import Report
from gradcheck.oracles import get_oracle

torch: Any = get_oracle("torch").load()


def _t(value: Any) -> Any:
    return torch.tensor(value, dtype=torch.float64)


def _kinds(report: Report) -> set[tuple[str, str]]:
    return {(f.kind, f.path) for f in report.findings}


# -- the numeric pieces, on plain numpy ---------------------------------------------------------
def _relu(x: np.ndarray) -> np.ndarray:
    return np.maximum(x, 0.0)


def test_refined_derivative_stays_on_one_side_of_a_nearby_kink() -> None:
    x = np.array([1e-5])
    coarse = numeric.directional_derivative(_relu, [x], 0, [np.ones(1)])
    refined = numeric.refined_derivative(_relu, [x], 0, [np.ones(1)])
    assert abs(coarse.value[0] - 1.0) + coarse.error[0] > 1e-2  # the default steps cross 0
    assert refined is not None
    assert refined.value[0] == pytest.approx(1.0, abs=1e-9)
    assert refined.error[0] < 1e-8


def test_refined_derivative_gives_up_on_the_kink_itself() -> None:
    # at |x| = 0 every step straddles the kink: central differences agree on 0 (abs) ...
    # but on x = lo = hi of a clamp along a skewed direction the one-sided slopes differ
    # and nothing converges to a derivative; the caller then tests for a kink
    f = lambda x: np.abs(x - 0.3) + 0.5 * x  # noqa: E731
    found = numeric.refined_derivative(f, [np.array([0.3])], 0, [np.ones(1)])
    assert found is None or abs(found.value[0] - 0.5) < 1e-9  # the mean slope, not a pass


def test_is_jump_sees_a_step_and_not_a_smooth_function() -> None:
    step = lambda x: (x > 0).astype(np.float64)  # noqa: E731
    assert numeric.is_jump(step, [np.array([0.0])], 0, [np.ones(1)])
    assert numeric.is_jump(step, [np.array([1e-9])], 0, [np.ones(1)])
    assert not numeric.is_jump(np.sin, [np.array([0.7, -2.0])], 0, [np.ones(2)])
    assert not numeric.is_jump(np.exp, [np.array([30.0])], 0, [np.ones(1)])
    assert not numeric.is_jump(step, [np.array([0.5])], 0, [np.ones(1)])


# -- bug 1: clamp with tensor bounds, drawn inputs ----------------------------------------------
@pytest.mark.parametrize("seed", [0, 1, 3, 4, 7])  # the seeds that raised a false mismatch
def test_clamp_with_tensor_bounds_passes_where_strata_tie_its_arguments(seed: int) -> None:
    report = check(torch.clamp, inputs=["real", "real", "real"], seed=seed)
    assert report.passed, [f.message for f in report.findings]


def test_clamp_at_x_equal_lo_equal_hi_is_a_kink_not_a_mismatch() -> None:
    # the counterexample of seed 0: the random direction and the failing column (x) are
    # linear on both sides; hi's column is not
    report = check(torch.clamp, inputs=[_t([-1.1, 1.1, -0.667]), _t([-1.1]), _t(-1.1)],
                   seed=0)
    assert not any(kind == "mismatch" for kind, _ in _kinds(report)), report.findings
    assert any(kind == "nondifferentiable" for kind, _ in _kinds(report))


# -- bug 2: a given point on a kink gives the same verdict at every seed -------------------------
def test_clamp_on_its_kink_is_never_a_pass_and_does_not_depend_on_the_seed() -> None:
    kinds = []
    for seed in range(4):
        report = check(torch.clamp, inputs=[_t(-1.1)] * 3, seed=seed, examples=3)
        assert not report.passed
        assert not any(kind == "mismatch" for kind, _ in _kinds(report)), report.findings
        kinds.append({kind for kind, _ in _kinds(report)})
    assert all(k == kinds[0] for k in kinds), kinds
    assert "nondifferentiable" in kinds[0]


def test_maximum_at_a_tie_is_not_a_pass() -> None:
    for seed in range(2):
        report = check(torch.maximum, inputs=[_t(1.0), _t(1.0)], seed=seed, examples=3)
        assert not report.passed
        assert ("nondifferentiable" in {kind for kind, _ in _kinds(report)})


# -- bug 3: a wrong rule next to a kink ----------------------------------------------------------
class _BadRelu(torch.autograd.Function):
    """relu whose backward is 1.5 times too large."""

    @staticmethod
    def forward(x: Any) -> Any:
        return x.clamp(min=0)

    @staticmethod
    def setup_context(ctx: Any, inputs: Any, output: Any) -> None:
        ctx.save_for_backward(inputs[0])

    @staticmethod
    def backward(ctx: Any, g: Any) -> Any:
        (x,) = ctx.saved_tensors
        return g * 1.5 * (x > 0)


def test_a_wrong_relu_rule_fails_a_step_away_from_its_kink() -> None:
    report = check(_BadRelu.apply, inputs=[_t([1e-5])], paths=["vjp"])
    assert not report.passed
    assert ("mismatch", "vjp") in _kinds(report)
    # with steps that stay right of 0 the numeric derivative is exact: a plain mismatch,
    # 1.5 against 1, not an inconclusive comparison
    finding = next(f for f in report.findings if f.kind == "mismatch")
    assert not finding.details.get("inconclusive"), finding.message
    assert finding.max_abs_err == pytest.approx(0.5)


def test_the_right_relu_rule_passes_a_step_away_from_its_kink() -> None:
    report = check(torch.relu, inputs=[_t([1e-5])], paths=["vjp"])
    assert report.passed, [f.message for f in report.findings]


@pytest.mark.parametrize(("target", "point"), [
    ("abs", np.zeros(3)), ("abs", np.array(0.0)),
    (lambda x: gnp.maximum(x, 0.0), np.zeros(2))])
def test_a_given_point_on_a_symmetric_kink_is_reported_not_passed(target, point):
    # abs at 0: central differences give 0, as the rule does, so every comparison agreed and
    # the point passed; a given point is all there is, so its kinks are looked for
    report = gc.check(target, inputs=[point], seed=0)
    assert not report.passed
    assert {f.kind for f in report.findings} == {"nondifferentiable", "error"}


@pytest.mark.parametrize("point", [np.array([0.3, -1.2]), np.array(2.0)])
def test_a_given_smooth_point_still_passes(point):
    assert gc.check("abs", inputs=[point], seed=0).passed
    assert gc.check(lambda x: gnp.maximum(x, 0.0) * x, inputs=[point], seed=0).passed
