"""The torch_audit suite: its rows load and cover what the audit promises, and a small sample
of them, checked exactly as a sweep checks them, reports torch 2.13's measured behaviour
(the whole suite is not run here: ``gradcheck run --suite torch_audit --jobs 2``)."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from gradcheck.checker.executors.unit import check_unit
from gradcheck.cli.suites import load_suite
from gradcheck.engine import default_registry

pytestmark = pytest.mark.torch

WRAPPERS = "gradcheck.suites.torch_wrappers."


@pytest.fixture(scope="module")
def planned() -> dict[str, Any]:
    checked, skipped = load_suite("torch_audit").plan()
    assert not skipped
    return {p.name: p for p in checked}


def _area(target: str) -> str:
    if target.startswith("torch.nn.functional."):
        return "nn"
    if target.startswith("torch.linalg.") or target.startswith(WRAPPERS + "solve"):
        return "linalg"
    if target.startswith(WRAPPERS) and "fft" in target:
        return "fft"
    return "other"


def test_the_suite_covers_at_least_150_torch_functions(planned: dict[str, Any]) -> None:
    targets = {p.settings["function"] for p in planned.values()}
    assert len(planned) >= 150 and len(targets) >= 150
    areas = Counter(_area(t) for t in targets)
    assert areas["nn"] >= 40 and areas["linalg"] >= 10 and areas["fft"] >= 8
    # activations on both sides of their kink, reductions at exact zeros
    for act in ("elu", "selu", "leaky_relu", "gelu", "softplus", "relu"):
        assert {f"torch.nn.functional.{act}, x < 0", f"torch.nn.functional.{act}, x > 0"} \
            <= set(planned)
    assert "torch.prod, exact zeros" in planned
    # index inputs are held fixed
    gather = planned[WRAPPERS + "gather"].settings
    assert gather["wrt"] == [0] and gather["inputs"][1]["domain"] == "indices"


def _check(planned: dict[str, Any], name: str) -> Any:
    p = planned[name]
    return check_unit(default_registry, name, dict(p.settings))


def _kinds(report: Any) -> set[tuple[str, str]]:
    return {(f.kind, f.path) for f in report.findings}


def test_a_correct_torch_function_passes(planned: dict[str, Any]) -> None:
    report = _check(planned, "torch.nn.functional.elu, x < 0")
    assert report.passed and not report.findings, report.findings


@pytest.mark.parametrize("name", ["torch.aminmax", "torch.cummax",
                                  "torch.nn.functional.adaptive_max_pool1d"])
def test_a_max_next_to_a_near_tie_is_judged(planned: dict[str, Any], name: str) -> None:
    # seed 0 draws a row whose max is 3.5e-8 from its runner-up: torch's rules are right,
    # and the numeric reference must say so from smaller steps ("cannot be judged" before)
    report = _check(planned, name)
    assert report.passed and not report.findings, report.findings


def test_logcumsumexp_leaks_the_dummy_and_its_forward_ad_is_wrong(planned: dict[str, Any]) -> None:
    kinds = _kinds(_check(planned, "torch.logcumsumexp"))
    assert {("value_leak", "double_vjp"), ("mismatch", "jvp")} <= kinds


def test_hardsigmoid_has_no_double_backward_and_a_float32_slope(planned: dict[str, Any]) -> None:
    kinds = _kinds(_check(planned, "torch.nn.functional.hardsigmoid, x > 0"))
    assert {("unsupported", "double_vjp"), ("mismatch", "vjp"), ("mismatch", "jvp")} <= kinds


def test_bessel_j0_is_silently_zero(planned: dict[str, Any]) -> None:
    kinds = _kinds(_check(planned, "torch.special.bessel_j0"))
    assert {("silently_zero", "vjp"), ("silently_zero", "jvp")} <= kinds


def test_cdist_has_no_forward_ad(planned: dict[str, Any]) -> None:
    report = _check(planned, "torch.cdist")
    assert {("unsupported", "jvp"), ("unsupported", "double_vjp")} <= _kinds(report)
    assert report.passed  # unsupported is information, not a failure


def test_a_custom_ops_forward_mode_is_silently_zero(planned: dict[str, Any]) -> None:
    report = _check(planned, WRAPPERS + "log1p_square")
    assert ("silently_zero", "jvp") in _kinds(report)
    assert not any(f.path == "vjp" for f in report.findings)  # its backward is right


def test_scatter_reduce_prod_has_a_silently_zero_forward_mode(planned: dict[str, Any]) -> None:
    report = _check(planned, WRAPPERS + "scatter_reduce, reduce=prod")
    assert ("silently_zero", "jvp") in _kinds(report)
    assert not any(f.path == "vjp" for f in report.findings)


def _readme_torch() -> Any:
    import bench_scripts

    return bench_scripts.load("readme_torch")


def test_the_readme_files_a_comparison_that_cannot_be_judged_apart_from_wrong_ones() -> None:
    readme = _readme_torch()
    unjudged = {"kind": "mismatch", "path": "jvp", "reference": "numeric",
                "details": {"inconclusive": True}, "max_abs_err": 0.0, "tolerance": 1e-12}
    wrong = {"kind": "mismatch", "path": "vjp", "reference": "numeric", "details": {},
             "max_abs_err": 2e-9, "tolerance": 1e-12}
    cats = readme.categorize([{"op": "torch.a", "findings": [unjudged]},
                              {"op": "torch.b", "findings": [wrong]}])
    assert [op for op, _ in cats["cannot be judged"]] == ["torch.a"]
    assert cats["forward AD wrong"] == [] and cats["paths inconsistent only"] == []
    assert [op for op, _ in cats["backward wrong"]] == ["torch.b"]
