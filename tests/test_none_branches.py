"""Rules meet None where an input is a constant (a JVP's tangent) or an output is unused (a
VJP's cotangent, with ``fill_zeros=False``): the linearity check runs those branches, by
giving one input's tangent (one output's cotangent) at a time and adding the results.
Before, the check always gave every direction, so a rule wrong only in a None branch passed
in fast and full mode (found by a new user's exploration)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import gradcheck as gc
import gradcheck.numpy as gnp
from gradcheck.extend import unbroadcast


def _mul(factor: float) -> Any:
    def jvp(ts: Any, out: Any, x: Any, y: Any) -> Any:
        tx, ty = ts
        if tx is None:
            return x * ty * factor  # x held fixed
        return tx * y if ty is None else tx * y + x * ty

    return gc.define_op(f"mul_none_{factor}", lambda x, y: x * y,
                        vjp=(lambda g, out, x, y: unbroadcast(g * y, x),
                             lambda g, out, x, y: unbroadcast(g * x, y)),
                        jvp=jvp, register=False)


def _sincos(factor: float) -> Any:
    def vjp(g: Any, out: Any, x: Any) -> Any:
        g0, g1 = g
        if g1 is None:  # only the sine is used
            return g0 * gnp.cos(x) * factor
        if g0 is None:
            return -g1 * gnp.sin(x)
        return g0 * gnp.cos(x) - g1 * gnp.sin(x)

    return gc.define_op(f"sincos_none_{factor}", lambda x: (np.sin(x), np.cos(x)), vjp=vjp,
                        jvp=lambda ts, out, x: (ts[0] * gnp.cos(x), -ts[0] * gnp.sin(x)),
                        nout=2, fill_zeros=False, register=False)


def _kinds(report: Any) -> list[str]:
    return [f"{f.kind}:{f.path}" for f in report.findings]


@pytest.mark.parametrize("mode", ["fast", "full"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_jvp_rule_wrong_only_for_a_none_tangent_is_found(seed: int, mode: str) -> None:
    x, y = gc.tensor(np.array([2.0])), gc.tensor(np.array([3.0]))
    with gc.ForwardAccumulator(y, np.ones(1)) as acc:  # x a constant: its tangent is None
        z = _mul(1.5)(x, y)
    assert acc.jvp(z).numpy()[0] == 3.0  # the planted bug is real (d(xy)/dy = x = 2)
    report = gc.check(_mul(1.5), inputs=["real", "real"], seed=seed, mode=mode, examples=3)
    assert "nonlinear:jvp" in _kinds(report)
    (finding,) = [f for f in report.findings if f.kind == "nonlinear"]
    assert "one input at a time" in finding.message and "None tangent" in finding.message


@pytest.mark.parametrize("seed", [0, 1])
def test_a_vjp_rule_wrong_only_for_a_none_cotangent_is_found(seed: int) -> None:
    grad = gc.grad(lambda a: gnp.sum(_sincos(1.5)(a)[0]))(np.array([0.5]))
    assert not np.isclose(gc.tensor(grad).numpy()[0], np.cos(0.5))  # the bug is real
    report = gc.check(_sincos(1.5), inputs=["real"], seed=seed, examples=3)
    assert "nonlinear:vjp" in _kinds(report)
    (finding,) = [f for f in report.findings if f.kind == "nonlinear"]
    assert "one output at a time" in finding.message


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_rules_right_in_their_none_branches_pass(seed: int) -> None:
    assert gc.check(_mul(1.0), inputs=["real", "real"], seed=seed, examples=3).passed
    assert gc.check(_sincos(1.0), inputs=["real"], seed=seed, examples=3).passed

