"""Whom a failing identity between two paths is filed under when the numeric reference
passes both at that example (their disagreement is below its tolerance, above rounding):
never the right path alone, and always with what the filing is based on."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

import gradcheck as gc
from gradcheck.checker.checks import _attribute
from gradcheck.checker.compare import Outcome
from gradcheck.checker.tolerances import Verdict


def _decided_or_honest(report: gc.Report) -> list[gc.Finding]:
    """Check every self finding: one the numeric reference did not decide names both paths
    as suspects and says the reference could not tell; returns those undecided ones."""
    undecided = []
    for f in report.failures:
        if f.reference != "self" or "numeric_rejects" in f.details:
            continue
        other = f.details["against"]
        assert f.details.get("suspects") is not None, f.message
        assert set(f.details["suspects"]) == {f.path, other}, f.details
        assert "cannot tell which is wrong" in f.message or \
            f"rejects both {f.path} and {other}" in f.message, f.message
        undecided.append(f)
    return undecided


def test_an_exact_jvp_is_not_failed_alone_for_a_vjp_off_by_1e_8() -> None:
    # the VJP is 1e-8 off, the JVP exact: at some examples the numeric reference passes
    # both, yet the adjoint identity (jvp's row) fails; it was filed under jvp as if jvp
    # were wrong
    bad = gc.define_op("exp_vjp_1e8", np.exp, vjp=lambda g, o, x: g * o * (1.0 + 1e-8),
                       jvp=lambda ts, o, x: ts[0] * o, register=False)
    report = gc.check(bad, seed=0)
    assert not report.passed
    undecided = _decided_or_honest(report)
    (jvp,) = [f for f in report.failures if f.path == "jvp"]
    assert jvp in undecided and "vjp" in jvp.details["suspects"]
    assert "jvp and vjp are both suspects" in jvp.message or \
        "vjp is the likelier culprit" in jvp.message
    assert jvp.details["shrunk"] is True  # the search still finds and shrinks it


@pytest.mark.torch
def test_a_right_torch_double_vjp_is_not_failed_alone_for_a_jvp_off_by_1e_7() -> None:
    from gradcheck.oracles import get_oracle

    torch = get_oracle("torch").load()

    class Cube(torch.autograd.Function):
        @staticmethod
        def forward(x: Any) -> Any:
            return x ** 3

        @staticmethod
        def setup_context(ctx: Any, inputs: Any, output: Any) -> None:
            ctx.save_for_backward(inputs[0])
            ctx.save_for_forward(inputs[0])

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            (x,) = ctx.saved_tensors
            return 3 * x ** 2 * g

        @staticmethod
        def jvp(ctx: Any, t: Any) -> Any:
            (x,) = ctx.saved_tensors
            return 3 * x ** 2 * t * (1 + 1e-7)

    report = gc.check(Cube.apply, inputs=["real"], seed=0, framework="torch")
    assert not report.passed
    _decided_or_honest(report)
    assert "jvp" in {f.path for f in report.failures if f.reference == "numeric"}


def _session(ratios: dict[str, float | None], references: tuple[str, ...] = ("numeric",),
             inconclusive: str = "") -> Any:
    """A stand-in session holding the numeric checks of some paths: a ratio above 1 fails,
    None is no check."""
    outcomes = []
    for path, ratio in ratios.items():
        if ratio is None:
            continue
        verdict = Verdict(ratio * 1e-9, ratio, 1e-9)
        outcomes.append(Outcome(path, "numeric", None if ratio <= 1 else "mismatch", verdict,
                                details={"inconclusive": True} if path == inconclusive
                                else {}))
    return SimpleNamespace(outcomes=outcomes, options=SimpleNamespace(references=references))


def test_the_path_far_farther_from_the_numeric_reference_is_the_likelier_culprit() -> None:
    filed, other, said, details = _attribute(_session({"jvp": 0.004, "vjp": 0.6}),
                                             "jvp", "vjp")
    assert (filed, other) == ("vjp", "jvp")
    assert "cannot tell which is wrong" in said and "vjp is the likelier culprit" in said
    assert "jvp still a suspect" in said and "0.6 for vjp" in said
    assert details["likelier"] == "vjp" and details["suspects"] == ["vjp", "jvp"]


@pytest.mark.parametrize("ratios", [{"jvp": 0.02, "vjp": 0.04},  # comparable
                                    {"jvp": 1e-4, "vjp": 0.01}])  # both tiny
def test_without_evidence_both_paths_are_suspects(ratios: dict[str, float]) -> None:
    filed, other, said, details = _attribute(_session(ratios), "jvp", "vjp")
    assert (filed, other) == ("jvp", "vjp")
    assert said.endswith("jvp and vjp are both suspects")
    assert "likelier" not in details and details["suspects"] == ["jvp", "vjp"]


@pytest.mark.parametrize("session", [_session({"jvp": 0.5, "vjp": 3.0}, inconclusive="vjp"),
                                     _session({"jvp": 0.5, "vjp": None}, references=())])
def test_a_numeric_check_that_could_not_judge_decides_nothing(session: Any) -> None:
    filed, _, said, details = _attribute(session, "jvp", "vjp")
    assert filed == "jvp" and "did not judge both paths" in said
    assert "numeric_rejects" not in details and details["suspects"] == ["jvp", "vjp"]


def test_a_rejected_path_is_still_the_one_filed() -> None:
    filed, other, said, details = _attribute(_session({"jvp": 0.5, "vjp": 3.0}), "jvp", "vjp")
    assert (filed, other) == ("vjp", "jvp") and said.endswith("vjp is wrong")
    assert details == {"numeric_supports": "jvp", "numeric_rejects": "vjp"}
