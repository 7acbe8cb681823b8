"""Two false failures of correct ops at a seed: hypot, whose inputs shared the small strata's
decades at the same positions (both inputs at the cone's apex), and linalg.expm, whose
forward is accurate norm-wise only (its finite differences are off beyond the numeric
reference's entrywise rounding estimate on small entries: it declares accuracy="normwise",
and no tolerance factor)."""

import numpy as np
import pytest

import gradcheck as gc
from gradcheck.checker.sampling import DECADES, _decades, _regions


def _assert_passes(report):
    assert report.passed, gc.checker.format_failure(report)


def test_hypot_is_not_put_at_its_apex():
    _assert_passes(gc.check("hypot", seed=3))


@pytest.mark.parametrize("seed", [3, 15])
def test_expm_full_mode(seed):
    _assert_passes(gc.check("linalg.expm", seed=seed, mode="full"))


def _small(shift, size=10, points=(0.0,)):
    x = _regions(np.zeros(size), points, 1e-3, 0)
    return _decades(x, 1e-3, points, shift=shift)[1:1 + DECADES]


def test_inputs_never_share_a_decade_at_a_position():
    decades = [np.floor(np.log10(np.abs(_small(shift)))) for shift in range(3)]
    for a in range(3):
        for b in range(a):
            assert not np.any(decades[a] == decades[b]), (a, b, decades)


@pytest.mark.parametrize("shift", range(3))
def test_every_input_reaches_every_decade_and_both_signs(shift):
    x = _small(shift)
    assert sorted(np.floor(np.log10(np.abs(x))).tolist()) == [-9, -8, -7, -6, -5, -4]
    assert np.all(np.sign(x) == np.where(np.arange(DECADES) % 2, -1.0, 1.0))
    two = _decades(_regions(np.zeros(2), (0.0,), 1e-3, 0), 1e-3, (0.0,), shift=shift)
    assert two[0] < 0 < two[1]
