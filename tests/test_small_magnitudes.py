"""The small strata reach below their magnitude, a decade at a time, off round numbers: a
rule that switches to a wrong series below a threshold is found at every seed."""

import numpy as np
import pytest

import gradcheck as gc
import gradcheck.numpy as gnp
from gradcheck.checker.sampling import OFF_ROUND, _decades, _regions


def _sinc_like(threshold: float, sign: float):
    """sin(x)/x with its series 1 - x²/6 below ``threshold``; the series' derivative has
    the given sign (-1: right, +1: the bug)."""
    def f(x):
        x = np.asarray(x)
        s = np.where(abs(x) < threshold, 1.0, x)
        return np.where(abs(x) < threshold, 1 - x * x / 6, np.sin(s) / s)

    def d(x):
        small = gnp.abs(x) < threshold
        s = gnp.where(small, gnp.ones_like(x), x)
        return gnp.where(small, sign * x / 3, (gnp.cos(s) * s - gnp.sin(s)) / (s * s))

    return gc.define_op(f"sinc_below_{threshold:g}", f, vjp=lambda g, out, x: g * d(x),
                        jvp=lambda ts, out, x: ts[0] * d(x), register=False)


@pytest.mark.parametrize("threshold", [1e-3, 1e-4, 1e-6])
def test_a_wrong_series_below_a_threshold_is_found_at_every_seed(threshold):
    wrong = _sinc_like(threshold, +1.0)
    assert not any(gc.check(wrong, seed=s, dtypes=["float64"]).passed for s in range(3))


def test_the_right_series_passes():
    # (a smaller threshold makes the closed form cancel catastrophically just above it:
    # (x cos x - sin x) / x² loses 2e-6 of its digits at x = 1e-5, which is found; in
    # float32 it loses every digit near 3e-4, see below)
    assert gc.check(_sinc_like(1e-3, -1.0), seed=0, dtypes=["float64"]).passed


def test_a_closed_form_cancelling_just_above_the_threshold_is_found():
    # at 1e-4 the closed form's numerator x cos x - sin x (about -3e-13 from terms of 1e-4)
    # keeps 8 digits fewer: the first derivative is still within the numeric reference's
    # error, but the two Hessian-vector orders amplify that loss differently, far beyond
    # rounding (it was found at 6 of 12 seeds before the strata reached 4-d arrays at 0.1,
    # whose small decades land just above 1e-4 at most seeds)
    report = gc.check(_sinc_like(1e-4, -1.0), seed=0, dtypes=["float64"])
    assert not report.passed
    assert {(f.kind, f.reference) for f in report.failures} == {("mismatch", "self")}
    assert {f.path for f in report.failures} <= {"hvp_fwd_rev", "hvp_rev_rev", "hvp_rev_fwd",
                                                 "double_vjp"}


@pytest.mark.parametrize("seed", range(3))
def test_a_float64_threshold_kept_in_float32_is_found(seed):
    # the same op in float32: x cos x - sin x (about -x³/3 = -1e-11 at x = 3e-4) is below
    # the rounding of its terms (3e-4 * 6e-8), so the closed form just above the threshold
    # is noise; the batched strata's 2-d arrays at magnitude 0.1 reach it
    assert not gc.check(_sinc_like(1e-4, -1.0), seed=seed, dtypes=["float32"]).passed


def test_small_arrays_keep_both_signs_and_reach_a_decade_down():
    x = _decades(_regions(np.zeros(3), (0.0,), 1e-3, 0), 1e-3, (0.0,))
    assert x[0] == -OFF_ROUND * 1e-3 and x[1] > 0 and x[2] < 0
    assert 1e-5 < abs(x[2]) < 1e-4
    big = _decades(_regions(np.zeros(10), (0.0,), 1e-3, 0), 1e-3, (0.0,))
    # one entry in each of six decades below 1e-3
    assert sorted(np.floor(np.log10(np.abs(big[1:7]))).tolist()) == [-9, -8, -7, -6, -5, -4]
