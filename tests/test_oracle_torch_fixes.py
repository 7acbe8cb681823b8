"""PyTorch functions whose outputs are not float64 tensors, and torch's errors as findings.

Each row is a correct function unless it says otherwise; what PyTorch (2.13) does is
recorded where a test depends on it.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from gradcheck.checker.api import check
from gradcheck.checker.report import Report
from gradcheck.oracles import framework_target, get_oracle
from gradcheck.oracles.torch import TorchProblem

pytestmark = pytest.mark.torch
torch: Any = get_oracle("torch").load()

X = np.array([-1.3, -0.4, 0.2, 0.9, 1.7])


def _kinds(report: Report) -> set[tuple[str, str]]:
    return {(f.kind, f.path) for f in report.findings}


#: (function with an integer output beside its values, check arguments, what it is)
INTEGER_OUTPUTS = [
    (torch.sort, {"shapes": "(n)"}, "sort: values and indices"),
    (torch.max, {"shapes": "(3,4)", "params": {"dim": 0}}, "max with dim: values, indices"),
    (torch.topk, {"shapes": "(5)", "params": {"k": 2}}, "topk"),
    (torch.kthvalue, {"shapes": "(5)", "params": {"k": 2}}, "kthvalue"),
]


@pytest.mark.parametrize(("fn", "options", "why"), INTEGER_OUTPUTS,
                         ids=[r[2] for r in INTEGER_OUTPUTS])
def test_integer_outputs_are_held_out_of_every_path(fn: Any, options: dict[str, Any],
                                                    why: str) -> None:
    # torch.func.vjp refuses integer outputs ("All outputs of f must be floating-point");
    # the hvp paths built on it hold them out, as the vjp path always did
    report = check(fn, inputs=["real"], examples=2, **options)
    assert report.passed and not report.findings, [f.message for f in report.findings]
    for path in ("hvp_fwd_rev", "hvp_rev_fwd"):
        cell = report.cell(path, "numeric")
        assert cell is not None and cell.status == "pass", path


def test_an_integer_output_alone_is_nothing_to_differentiate() -> None:
    # argmax has no floating output: nothing is compared, so it is an error, never a pass
    # (it passed before, comparing zeros with zeros, where JAX's argmax was an error)
    report = check(torch.argmax, inputs=["real"], examples=2)
    assert not report.passed
    assert any(f.kind == "error" and "nothing to differentiate" in f.message
               for f in report.findings), [f.message for f in report.findings]


def _item(x: Any) -> Any:
    return torch.sin(x).sum().item()  # a Python float: cut from the graph


def _float32(x: Any) -> Any:
    return torch.sin(x.float())


def test_a_python_float_output_is_float64() -> None:
    problem = TorchProblem(_item, (X,), (0,), "item")
    (out,) = problem.forward(problem.primals)
    assert out.dtype == np.float64  # torch.as_tensor would make it float32


def test_a_python_float_output_is_silently_zero_and_no_dtype_finding() -> None:
    report = check(_item, inputs=["real"], examples=2)
    kinds = _kinds(report)
    assert ("silently_zero", "vjp") in kinds, sorted(kinds)
    assert not {k for k, _ in kinds} - {"silently_zero"}, sorted(kinds)


def test_derivatives_with_respect_to_a_float32_outputs_cotangent_are_float32() -> None:
    problem = TorchProblem(_float32, (X,), (0,), "float32")
    (out,) = problem.forward(problem.primals)
    dummy = np.ones_like(out)
    assert out.dtype == dummy.dtype == np.float32
    (u,) = problem.double_vjp(problem.primals, [np.ones_like(X)], [dummy])[0]
    assert u.dtype == np.float32
    _, (second,) = problem.hvp_rev_rev(problem.primals, [dummy], [np.ones_like(X)])
    assert second.dtype == np.float32


def test_a_function_computing_in_float32_passes() -> None:
    report = check(_float32, inputs=["real"], examples=2)
    assert report.passed and not report.findings, [f.message for f in report.findings]


class ComplexGradient(torch.autograd.Function):
    """x * (1 + 2j) for real x, whose backward forgets to take the real part (broken)."""

    @staticmethod
    def forward(x: Any) -> Any:
        return x * (1 + 2j)

    @staticmethod
    def setup_context(ctx: Any, inputs: Any, output: Any) -> None:
        pass

    @staticmethod
    def backward(ctx: Any, g: Any) -> Any:
        return g * (1 - 2j)

    @staticmethod
    def jvp(ctx: Any, t: Any) -> Any:
        return t * (1 + 2j)


def test_a_complex_gradient_for_a_real_input_is_a_dtype_finding() -> None:
    # PyTorch 2.13 rejects it with an internal assertion ("Expected
    # isFloatingType(grad.scalar_type()) || (input_is_complex == grad_is_complex)")
    report = check(ComplexGradient.apply, inputs=["real"], examples=2)
    (finding,) = [f for f in report.findings if f.path == "vjp"]
    assert finding.kind == "dtype"
    assert "returned a complex gradient for a real input" in finding.message
    assert "Could this error message be improved" not in finding.message
    assert "error" not in {f.kind for f in report.findings}


def test_float32_for_a_torch_function_says_it_is_checked_in_float64() -> None:
    target = framework_target(torch.sin, ["real"])
    assert target.unsupported_dtype("float64") is None
    why = target.unsupported_dtype("float32")
    assert why is not None
    for words in ("sin is a PyTorch function, checked in float64 only", "upcast to float64",
                  "not in float32", "dtypes='float64'"):
        assert words in why, words
    with pytest.raises(ValueError) as refused:
        check(torch.sin, inputs=["real"], dtypes="float32", examples=1)
    assert str(refused.value) == why
