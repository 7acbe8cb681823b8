"""A max whose runner-up is 3.5e-8 away (the 1e-8 decade of a drawn array): every default
numeric step crosses the switch on one side.  The derivative there is still plain (the max
is one entry's), so the numeric reference must find it from smaller steps, not report a
comparison that cannot be judged."""

from __future__ import annotations

import numpy as np
import pytest

from gradcheck.checker import numeric

ROW = np.array([-3.1622776601683797e-07, 3.16227766016838e-08, -3.162277660168379e-09,
                -6.422618821160208e-05])


def _max(a: np.ndarray) -> np.ndarray:
    return np.max(a, axis=-1, keepdims=True)


def _basis(k: int) -> np.ndarray:
    u = np.zeros_like(ROW)
    u[k] = 1.0
    return u


def test_a_tableau_and_its_finer_one_disagreeing_have_not_converged() -> None:
    # the default steps cross the switch backward; the finer tableau (near 0) does not
    d = numeric.directional_derivative(_max, [ROW], 0, _basis(1))
    assert not d.converged
    assert float(d.error.max()) > 0.1


@pytest.mark.parametrize("k,slope", [(1, 1.0), (2, 0.0), (0, 0.0)])
def test_smaller_steps_find_the_derivative_next_to_a_near_tie(k: int, slope: float) -> None:
    found = numeric.refined_derivative(_max, [ROW], 0, _basis(k))
    assert found is not None and found.converged
    assert float(found.value[0]) == pytest.approx(slope, abs=1e-9)
    assert float(found.error.max()) < 1e-6


def test_a_kink_test_whose_sides_rest_on_their_error_estimates_looks_closer() -> None:
    # at the sample itself the max is differentiable: no kink, from steps that tell
    assert not numeric.is_kink(_max, [ROW], 0, _basis(1))
    # on the tie itself the sides differ (one entry's slope forward, none backward)
    tie = ROW.copy()
    tie[2] = tie[1]
    assert numeric.is_kink(_max, [tie], 0, _basis(1))
    # a switch 5e-10 away along u, under every default step: no kink at the sample (it is
    # one entry's slope on both sides, from steps that stay on its branch)...
    near = ROW.copy()
    near[1] = near[2] + 1e-9
    u = _basis(1) - _basis(2)
    assert not numeric.is_kink(_max, [near], 0, u)
    # ... and the refined derivative is that slope
    found = numeric.refined_derivative(_max, [near], 0, u)
    assert found is not None and float(found.value[0]) == pytest.approx(1.0, abs=1e-6)
