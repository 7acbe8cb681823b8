"""Near zero the numeric reference stays in f's domain and does not trust a tableau whose
steps reach past an input's own size (a singularity at 0 fools its error estimate)."""

import numpy as np
import pytest

import gradcheck as gc
from gradcheck.checker import numeric

X = 2e-5 * np.exp(np.random.default_rng(0).uniform(-1, 1, 12))


def test_a_probe_outside_the_domain_shrinks_the_steps():
    x = np.array([5e-5])  # the default step (~1.2e-4) would probe log at a negative x
    d = numeric.directional_derivative(np.log, [x], 0, [np.ones(1)])
    assert abs(d.value[0] - 1 / x[0]) <= max(d.error[0], 1e-9 / x[0])
    assert d.step < 1e-4


@pytest.mark.parametrize("name", ["log", "reciprocal", "sqrt", "sin", "cos"])
def test_right_rules_pass_at_inputs_smaller_than_the_step(name):
    for mode in ("fast", "full"):
        report = gc.check(name, inputs=[X], mode=mode, dtypes=["float64"])
        assert report.passed, [f.message for f in report.failures]


@pytest.mark.parametrize("rel", [1e-6, 1e-8])
def test_a_small_error_there_is_still_found(rel):
    wrong = gc.define_op("log_off", np.log, vjp=lambda g, out, x: g / x * (1 + rel),
                         jvp=lambda ts, out, x: ts[0] / x, register=False)
    assert not gc.check(wrong, inputs=[X], dtypes=["float64"]).passed


def test_the_finer_tableau_is_counted():
    x = np.array([2e-5, 1.0])
    d = numeric.directional_derivative(lambda a: 1 / a, [x], 0, [np.ones(2)])
    assert d.evaluations > 13  # two tableaus (the coarse one and the finer one)
    assert np.allclose(d.value, -1 / x ** 2, rtol=1e-6)
