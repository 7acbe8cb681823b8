"""The one convergence-slope fitter (gradcheck/checker/convergence.py)."""

from __future__ import annotations

import math

import pytest

from gradcheck.checker.api import check
from gradcheck.checker.convergence import slope, slopes

STEPS = [0.1 / 4.0**k for k in range(16)]  # 4x per step, as the checker's 1e-1..1e-10 grid


def curve(truncation: float, rounding: float, offset: float = 0.0) -> list[float]:
    """A central difference's error: ``truncation h**2 + rounding / h + offset``."""
    return [truncation * h**2 + rounding / h + offset for h in STEPS]


def test_slope_ignores_the_rounding_branch() -> None:
    # Falls 16x per 4x step, then rounding takes over at the small steps: still 2.
    data = {"steps": STEPS, "series": {"vjp": curve(1.0, 1e-16)}}
    assert slope(data, "vjp") == pytest.approx(2.0, abs=0.05)


def test_recorded_rounding_estimate_is_used() -> None:
    errors = curve(1.0, 1e-16)
    data = {"steps": STEPS, "series": {"vjp": errors},
            "rounding": {"vjp": [1e-16 / h for h in STEPS]}}
    assert slope(data, "vjp") == pytest.approx(2.0, abs=0.05)
    # Rounding recorded as dominating every step: no truncation part, no slope.
    data["rounding"] = {"vjp": [10 * e for e in errors]}
    assert math.isnan(slope(data, "vjp"))


def test_rounding_everywhere_has_no_slope() -> None:
    # A linear op: the error is rounding at every step (rising as h falls) or exactly zero.
    data = {"steps": STEPS, "series": {"vjp": curve(0.0, 1e-16), "jvp": [0.0] * 16,
                                       "hvp_rev_rev": [5.6e-17 if k % 3 else 0.0
                                                       for k in range(16)]}}
    assert all(math.isnan(s) for s in slopes(data).values())


def test_a_wrong_derivative_levels_off() -> None:
    data = {"steps": STEPS, "series": {"vjp": curve(1.0, 1e-16, offset=1e-3)}}
    assert abs(slope(data, "vjp")) < 0.2


def test_json_strings_and_missing_series() -> None:
    data = {"steps": STEPS, "series": {"vjp": ["nan", *curve(1.0, 1e-16)[1:]]}}
    assert slope(data, "vjp") == pytest.approx(2.0, abs=0.05)
    assert math.isnan(slope(data, "jvp"))
    assert slopes({}) == {}


def test_cholesky_reads_two_and_matmul_reads_n_a() -> None:
    """The registry's own data: cholesky's table falls 16x per 4x step (slope 2, not the
    1.29 of a fit that ran into rounding); matmul is linear (n/a, not -0.99)."""
    cholesky = check("linalg.cholesky", seed=0, examples=1).convergence
    assert set(cholesky["rounding"]) == set(cholesky["series"])
    assert all(s == pytest.approx(2.0, abs=0.1) for s in slopes(cholesky).values())
    matmul = check("matmul", seed=0, examples=1).convergence
    assert matmul["series"] and all(math.isnan(s) for s in slopes(matmul).values())
