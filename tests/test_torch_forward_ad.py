"""torch's forward mode when ``torch.func`` refuses a function: ``torch.autograd.forward_ad``.

An old-style ``torch.autograd.Function`` (``forward(ctx, x)``, no ``setup_context``) is refused
by every ``torch.func`` transform, yet torch's dual tensors run its ``jvp`` staticmethod (as
``torch.autograd.gradcheck(check_forward_ad=True)`` does).  Its ``jvp`` and the two HVPs that
use forward mode must be checked, and a wrong ``jvp`` found, not called unsupported.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from gradcheck.checker.api import check
from gradcheck.checker.report import Report
from gradcheck.oracles import get_oracle
from gradcheck.oracles.torch import TorchProblem

pytestmark = pytest.mark.torch
torch: Any = get_oracle("torch").load()

X = np.array([-1.3, -0.4, 0.2, 0.9, 1.7])
FORWARD_PATHS = ("jvp", "hvp_fwd_rev", "hvp_rev_fwd")


class OldCube(torch.autograd.Function):
    """``x**3`` written the old way, with a right backward and a right ``jvp``."""

    @staticmethod
    def forward(ctx: Any, x: Any) -> Any:
        ctx.save_for_backward(x)
        ctx.save_for_forward(x)
        return x ** 3

    @staticmethod
    def backward(ctx: Any, g: Any) -> Any:
        (x,) = ctx.saved_tensors
        return 3 * x ** 2 * g

    @staticmethod
    def jvp(ctx: Any, t: Any) -> Any:
        (x,) = ctx.saved_tensors
        return 3 * x ** 2 * t


class OldCubeWrongJvp(OldCube):
    @staticmethod
    def jvp(ctx: Any, t: Any) -> Any:
        (x,) = ctx.saved_tensors
        return 2 * x ** 2 * t  # should be 3 x^2 t


class OldCubeNoJvp(torch.autograd.Function):
    @staticmethod
    def forward(ctx: Any, x: Any) -> Any:
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx: Any, g: Any) -> Any:
        (x,) = ctx.saved_tensors
        return 3 * x ** 2 * g


def _sin_of_cube(x: Any) -> Any:
    """A plain function with an old-style Function inside."""
    return torch.sin(OldCube.apply(x))


def _unsupported(report: Report) -> dict[str, str]:
    return {f.path: f.message for f in report.findings if f.kind == "unsupported"}


@pytest.mark.parametrize("fn", [OldCube.apply, _sin_of_cube], ids=["Function", "composite"])
def test_an_old_style_function_with_a_right_jvp_is_checked_on_forward_mode(fn: Any) -> None:
    report = check(fn, inputs=(X,), examples=2)
    assert report.passed, [f.message for f in report.findings]
    assert not _unsupported(report), _unsupported(report)
    for path in FORWARD_PATHS:
        cell = report.cell(path, "numeric")
        assert cell is not None and cell.status == "pass", (path, cell)


def test_an_old_style_function_with_a_wrong_jvp_is_a_finding_on_the_function() -> None:
    report = check(OldCubeWrongJvp.apply, inputs=(X,), examples=2)
    assert not report.passed
    wrong = {(f.kind, f.path) for f in report.findings if f.attributed_to == ""}
    assert {("mismatch", "jvp"), ("mismatch", "hvp_rev_fwd")} <= wrong, sorted(wrong)
    assert not _unsupported(report), _unsupported(report)


def test_without_a_jvp_forward_mode_is_unsupported_in_forward_ads_words() -> None:
    report = check(OldCubeNoJvp.apply, inputs=(X,), examples=1)
    why = _unsupported(report)
    assert set(why) == set(FORWARD_PATHS), why
    assert all("You must implement the jvp function" in w for w in why.values()), why
    assert report.passed


def test_the_dual_route_computes_torchs_own_values() -> None:
    x, u, v, w = np.array([1.5, -0.7]), np.array([1.0, 2.0]), np.array([0.3, -1.0]), \
        np.array([0.5, 0.25])
    problem = TorchProblem(OldCubeWrongJvp.apply, [x], [0], "OldCubeWrongJvp.apply")
    (jvp,) = problem.jvp([x], [u])
    np.testing.assert_allclose(jvp, 2 * x ** 2 * u, rtol=1e-15)
    # forward over the (right) backward: d/dε of J(x + εu)^T (v + εw)
    (fwd_rev,) = problem.hvp_fwd_rev([x], [v], [u], [w])
    np.testing.assert_allclose(fwd_rev, 6 * x * u * v + 3 * x ** 2 * w, rtol=1e-15)
    # backward of <v, jvp(x, u)> through the (wrong) jvp: wrt x, then wrt u
    (dx,), (du,) = problem.hvp_rev_fwd([x], [u], [v])
    np.testing.assert_allclose(dx, 4 * x * u * v, rtol=1e-15)
    np.testing.assert_allclose(du, 2 * x ** 2 * v, rtol=1e-15)


def test_functions_torch_func_takes_never_run_the_dual_route(monkeypatch: Any) -> None:
    dual_runs: list[str] = []
    original = TorchProblem._func_else_dual

    def spy(self: TorchProblem, func: Any, dual: Any) -> Any:
        return original(self, func, lambda: dual_runs.append(self.name) or dual())

    monkeypatch.setattr(TorchProblem, "_func_else_dual", spy)
    report = check(torch.tanh, inputs=(X,), examples=2)
    assert report.passed and not report.findings, [f.message for f in report.findings]
    assert dual_runs == []
    check(OldCube.apply, inputs=(X,), examples=1)
    assert dual_runs, "the spy saw no refusal: the test would not catch one"
