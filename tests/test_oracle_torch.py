"""PyTorch functions checked with ``gradcheck.check``, and PyTorch as a reference.

The broken ``torch.autograd.Function`` s live here (never in the shipped registry); each row
says which finding the checker must report.  Facts about the installed PyTorch (2.13) are
recorded where a test depends on them.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from gradcheck.checker.api import check
from gradcheck.checker.report import Report
from gradcheck.oracles import get_oracle
from gradcheck.oracles.targets import framework_of

pytestmark = pytest.mark.torch
torch: Any = get_oracle("torch").load()  # Unavailable, with the install hint, when missing

X = np.array([-1.3, -0.4, 0.2, 0.9, 1.7])
RNG = np.random.default_rng(0)
A, B, C = RNG.normal(size=(3, 4)), RNG.normal(size=(4,)), RNG.normal(size=(3, 1))


def _kinds(report: Report) -> set[tuple[str, str]]:
    return {(f.kind, f.path) for f in report.findings}


class Sin(torch.autograd.Function):
    """sin with a backward and a forward-mode ``jvp``, both right."""

    @staticmethod
    def forward(x: Any) -> Any:
        return torch.sin(x)

    @staticmethod
    def setup_context(ctx: Any, inputs: Any, output: Any) -> None:
        ctx.save_for_backward(inputs[0])
        ctx.save_for_forward(inputs[0])

    @staticmethod
    def backward(ctx: Any, g: Any) -> Any:
        (x,) = ctx.saved_tensors
        return g * torch.cos(x)

    @staticmethod
    def jvp(ctx: Any, t: Any) -> Any:
        (x,) = ctx.saved_tensors
        return t * torch.cos(x)


class WrongSignBelowZero(Sin):
    @staticmethod
    def backward(ctx: Any, g: Any) -> Any:
        (x,) = ctx.saved_tensors
        return torch.where(x < 0, -g, g) * torch.cos(x)


class AffineInGrad(Sin):
    @staticmethod
    def backward(ctx: Any, g: Any) -> Any:
        (x,) = ctx.saved_tensors
        return (g + 0.5) * torch.cos(x)


class JvpDisagrees(Sin):
    @staticmethod
    def jvp(ctx: Any, t: Any) -> Any:
        (x,) = ctx.saved_tensors
        return -t * torch.cos(x)


class DetachedBackward(Sin):
    """The backward is right but cut from the graph: its own derivative (the double
    backward) misses ``cos``'s derivative."""

    @staticmethod
    def backward(ctx: Any, g: Any) -> Any:
        (x,) = ctx.saved_tensors
        return g * torch.cos(x.detach())


class SquaredGrad(Sin):
    @staticmethod
    def backward(ctx: Any, g: Any) -> Any:
        (x,) = ctx.saved_tensors
        return g * g * torch.cos(x)


class Scale(torch.autograd.Function):
    """``x * b`` with ``b`` broadcast over the rows of ``x``; no forward-mode rule."""

    @staticmethod
    def forward(x: Any, b: Any) -> Any:
        return x * b

    @staticmethod
    def setup_context(ctx: Any, inputs: Any, output: Any) -> None:
        ctx.save_for_backward(*inputs)

    @staticmethod
    def backward(ctx: Any, g: Any) -> Any:
        x, b = ctx.saved_tensors
        return g * b, torch.sum(g * x, dim=tuple(range(g.ndim - b.ndim)))


class NoReduction(Scale):
    @staticmethod
    def backward(ctx: Any, g: Any) -> Any:
        x, b = ctx.saved_tensors
        return g * b, g * x


class WrongAxis(Scale):
    @staticmethod
    def backward(ctx: Any, g: Any) -> Any:
        x, b = ctx.saved_tensors
        return g * b, torch.sum(g * x, dim=0)


@torch.library.custom_op("gradcheck_test::softsq", mutates_args=())
def softsq(x: torch.Tensor) -> torch.Tensor:
    return torch.log1p(x * x)


def _softsq_context(ctx: Any, inputs: Any, output: Any) -> None:
    ctx.save_for_backward(inputs[0])


def _softsq_backward(ctx: Any, g: Any) -> Any:
    (x,) = ctx.saved_tensors
    return g * 2 * x / (1 + x * x)


softsq.register_autograd(_softsq_backward, setup_context=_softsq_context)


def _plain(x: Any, y: Any) -> Any:
    return torch.tanh(x) * y + torch.exp(-x * x)


#: (target, inputs, why it is right)
CORRECT = [
    (torch.sin, (X,), "a torch op"),
    (_plain, (A, B), "a plain function of tensors, broadcasting"),
    (Sin.apply, (X,), "an autograd.Function with backward and jvp"),
    (Scale.apply, (A, B), "an autograd.Function reducing over broadcast rows"),
    (torch.sin, (torch.tensor(X),), "inputs given as torch tensors"),
]


@pytest.mark.parametrize(("fn", "inputs", "why"), CORRECT, ids=[c[2] for c in CORRECT])
def test_correct_functions_pass(fn: Any, inputs: Any, why: str) -> None:
    report = check(fn, inputs=inputs, examples=2)
    assert framework_of(fn) == "torch" and report.family == "torch"
    failing = [f for f in report.findings if f.kind != "unsupported"]
    assert report.passed and not failing, [f.message for f in failing]


def test_a_function_without_a_jvp_has_no_forward_mode_in_torchs_words() -> None:
    report = check(Scale.apply, inputs=(A, B), examples=1)
    (why,) = {f.message for f in report.findings if f.kind == "unsupported" and
              f.path == "jvp"}
    assert "You must implement the jvp function" in why
    assert report.op == "Scale.apply"


def test_a_custom_op_has_no_forward_mode_and_torch_says_nothing() -> None:
    # Measured with PyTorch 2.13: forward AD through a torch.library custom op whose
    # derivative is given by register_autograd yields no tangent (forward_ad's tangent is
    # None) and torch.func.jvp fills in zeros without an error -- a silently zero JVP,
    # attributed to torch.  Its reverse-mode paths are right.
    report = check(softsq, inputs=(X,), examples=2)
    assert report.family == "torch"
    assert ("silently_zero", "jvp") in _kinds(report), sorted(_kinds(report))
    for path in ("vjp", "double_vjp", "hvp_rev_rev"):
        cell = report.cell(path, "numeric")
        assert cell is not None and cell.status == "pass", path


#: (broken function, inputs, the (kind, path) the checker must report, what is broken)
BROKEN = [
    (WrongSignBelowZero.apply, (X,), ("mismatch", "vjp"), "wrong sign for x < 0"),
    (AffineInGrad.apply, (X,), ("nonlinear", "vjp"), "backward affine in grad_output"),
    (JvpDisagrees.apply, (X,), ("mismatch", "jvp"), "jvp disagrees with backward"),
    (DetachedBackward.apply, (X,), ("mismatch", "hvp_rev_rev"), "wrong double backward"),
    (WrongAxis.apply, (A, C), ("shape", "vjp"), "reduces over the wrong broadcast axis"),
]


@pytest.mark.parametrize(("fn", "inputs", "finding", "why"), BROKEN, ids=[b[3] for b in BROKEN])
def test_broken_functions_are_caught(fn: Any, inputs: Any, finding: tuple[str, str],
                                     why: str) -> None:
    report = check(fn, inputs=inputs, examples=2)
    assert not report.passed
    assert finding in _kinds(report), sorted(_kinds(report))


def test_a_missing_broadcast_reduction_is_done_by_torch_itself() -> None:
    # PyTorch 2.13's engine sums a custom backward's gradient to its input's shape when the
    # input is expandable to it (validate_outputs), so forgetting that reduction is harmless
    report = check(NoReduction.apply, inputs=(A, B), examples=2)
    assert report.passed and not {k for k, _ in _kinds(report)} - {"unsupported"}


def test_a_backward_quadratic_in_grad_output_leaks_the_dummy_by_value() -> None:
    # torch.autograd.functional.jvp's construction differentiates the backward with respect
    # to its grad_output: here that derivative reads the dummy, so the JVP depends on it
    report = check(SquaredGrad.apply, inputs=(X,), examples=2)
    assert ("value_leak", "double_vjp") in _kinds(report), sorted(_kinds(report))


@pytest.mark.parametrize("op", ["sin", "exp", "tanh", "sum", "linalg.inv", "elu", "abs",
                                "nn.relu", "dot", "max"])
def test_torch_reference_agrees_on_registry_ops(op: str) -> None:
    report = check(op, references=["numeric", "self", "torch"], examples=2)
    cells = [c for c in report.cells if c.reference == "torch"]
    assert cells and all(c.status == "pass" for c in cells), \
        [(c.path, c.status, c.note) for c in cells]
    assert report.passed


def test_torch_reverse_over_forward_of_det_is_a_finding_attributed_to_torch() -> None:
    # Measured with PyTorch 2.13: the reverse-mode derivative of torch.linalg.det's
    # forward-mode tangent disagrees with the numeric derivative (and with torch's own
    # reverse-over-reverse); JAX and the engine agree with the numeric one.
    report = check("linalg.det", references=["numeric", "self", "torch"], examples=2)
    wrong = {(f.kind, f.path, f.reference) for f in report.findings}
    assert ("mismatch", "hvp_rev_fwd", "numeric") in wrong
    assert all(f.message.startswith("torch's linalg.det") for f in report.findings)


def test_a_correct_autograd_function_passes_at_20_examples() -> None:
    # each example draws new directions (and dummies) at the given point
    report = check(Sin.apply, inputs=(X,), examples=20)
    assert report.passed and not [f for f in report.findings if f.kind != "unsupported"]
