"""The torch reference runs a registry op's numpy equivalent with numpy's arguments
translated: ``axis=None`` and tuples of axes for reductions torch takes one dim (or no None)
for, and an array of polygamma orders.  Where torch then computes a wrong value, that is a
finding attributed to torch, never "unsupported"."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import scipy.special as sp
from op_harness import assert_compared

import gradcheck as gc
from gradcheck.engine import default_registry
from gradcheck.oracles import NoEquivalent, get_oracle
from gradcheck.oracles.torch import TorchNumpy

pytestmark = pytest.mark.torch
torch: Any = get_oracle("torch").load()
TNP = TorchNumpy(torch)
RNG = np.random.default_rng(3)
X = RNG.normal(size=(2, 3))


def _t(a: Any) -> Any:
    return torch.tensor(a, dtype=torch.float64)


CASES = [(x, axis) for x in (X, np.zeros((0, 3)), RNG.normal(size=(2, 3, 2)))
         for axis in (None, -1, (0, -1))] + [(np.float64(0.7), a) for a in (None, 0, -1)]


@pytest.mark.parametrize("x,axis", CASES, ids=[f"{np.shape(x)}-{a}" for x, a in CASES])
@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("name", ["special.logsumexp", "prod"])
def test_reductions_take_numpys_axis(x: Any, axis: Any, keepdims: bool, name: str) -> None:
    fn = TNP.special.logsumexp if name == "special.logsumexp" else TNP.prod
    got = fn(_t(x), axis=axis, keepdims=keepdims).numpy()
    expected = np.asarray(default_registry.get(name)(x, axis=axis, keepdims=keepdims))
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=1e-14)


def test_polygamma_takes_an_array_of_orders() -> None:
    n = np.array([[0, 2, 1], [2, 0, 0]])
    x = np.abs(X) + 0.5
    got = TNP.special.polygamma(torch.from_numpy(n), _t(x)).numpy()
    each = [[torch.special.polygamma(int(k), _t(v)).item()
             for k, v in zip(row, xs, strict=True)] for row, xs in zip(n, x, strict=True)]
    np.testing.assert_array_equal(got, each)  # torch's own value, order by order
    np.testing.assert_allclose(got, sp.polygamma(n, x), rtol=1e-8)
    assert TNP.special.polygamma(2, _t(x)).shape == x.shape
    with pytest.raises(NoEquivalent, match="polygamma.*orders"):
        TNP.special.polygamma(torch.tensor([0.5, 1.0]), _t(x[0, :2]))


@pytest.mark.parametrize("op,params", [("special.logsumexp", {"axis": None}),
                                       ("special.logsumexp", {"axis": None, "keepdims": True}),
                                       ("nn.softmax", {"axis": None}),
                                       ("prod", {"axis": (0, 1)})])
def test_the_torch_reference_computes_numpys_axis_none(op: str, params: dict[str, Any]) -> None:
    report = gc.check(op, inputs=[X], params=params, references=["numeric", "torch"],
                      examples=2, seed=0)
    assert not [f for f in report.findings if f.kind == "unsupported"], report.findings
    assert report.passed, report.findings
    assert_compared(report, "torch")


def test_torchs_polygamma_runs_and_its_inaccuracy_is_torchs_finding() -> None:
    # torch 2.13's trigamma (polygamma(1, .), also order 0's derivative) is accurate to about
    # 1e-10 only: with the orders translated torch computes, and that is a mismatch of torch
    # (its forward against scipy; its derivatives, which the numeric derivative cannot tell
    # apart at that size, undecided), not "unsupported"
    report = gc.check("special.polygamma", inputs=[np.array([[0, 1, 2], [1, 1, 0]]),
                                                   np.abs(X) + 0.5],
                      references=["numeric", "torch"], examples=2, seed=0)
    assert not [f for f in report.findings if f.kind == "unsupported"], report.findings
    assert {f.kind for f in report.failures} == {"mismatch"}
    assert {f.attributed_to for f in report.failures} <= {"torch", "undecided"}
    assert [f for f in report.failures if f.path == "forward" and f.attributed_to == "torch"]


def test_torchs_polygamma_agrees_where_it_is_accurate() -> None:
    report = gc.check("special.polygamma", inputs=[np.array([[2, 3, 2], [3, 2, 3]]),
                                                   np.abs(X) + 0.5],
                      references=["numeric", "torch"], examples=2, seed=0)
    assert report.passed, report.findings
    assert_compared(report, "torch")
