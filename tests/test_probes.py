"""Probes shared between numeric calls along one line, and a kink test without retries."""

from __future__ import annotations

import numpy as np
import pytest

import gradcheck as gc
import gradcheck.numpy as gnp
from gradcheck.checker.compare import same_line
from gradcheck.checker.numeric import (
    count_evaluations,
    directional_derivative,
    is_jump,
    is_kink,
    refined_derivative,
)
from gradcheck.checker.probes import Probes

X = np.random.default_rng(1).standard_normal(1000)
U = np.random.default_rng(2).standard_normal(1000)


def test_shared_probes_give_the_same_bits_with_fewer_calls():
    alone = directional_derivative(np.tanh, [X], 0, [U])
    counted, probes = count_evaluations(np.tanh), Probes()
    shared = directional_derivative(counted, [X], 0, [U], probes=probes)
    assert np.array_equal(alone.value, shared.value)
    assert np.array_equal(alone.error, shared.error)
    first = counted.calls
    again = directional_derivative(counted, [X], 0, [U], probes=probes)
    assert counted.calls == first  # every probe and the sample were kept
    assert np.array_equal(again.value, alone.value) and again.evaluations == 0


def test_a_kink_test_after_a_derivative_reuses_its_first_steps():
    plain = count_evaluations(np.tanh)
    assert not is_kink(plain, [X], 0, [U], shrinks=0)
    counted, probes = count_evaluations(np.tanh), Probes()
    directional_derivative(counted, [X], 0, [U], probes=probes)
    before = counted.calls
    assert not is_kink(counted, [X], 0, [U], shrinks=0, probes=probes)
    # the central tableau ran all six rows here: each side's steps were all its own
    assert counted.calls - before < plain.calls
    assert probes.reused > 0


def test_shared_probes_still_find_a_kink_and_a_jump():
    x = X.copy()
    x[7] = 0.0
    relu = count_evaluations(lambda a: np.maximum(a, 0.0))
    probes = Probes()
    directional_derivative(relu, [x], 0, [np.abs(U) + 0.5], probes=probes)
    assert is_kink(relu, [x], 0, [np.abs(U) + 0.5], probes=probes)
    step = count_evaluations(lambda a: (a > 0).astype(float))
    probes = Probes()
    directional_derivative(step, [x], 0, [np.abs(U) + 0.5], probes=probes)
    assert is_jump(step, [x], 0, [np.abs(U) + 0.5], probes=probes)


def test_a_refinement_shares_probes_too():
    f = count_evaluations(lambda a: np.maximum(a, 1e-7) * 2.0)
    x, u = np.array([1e-7 + 1e-9, 0.5]), np.array([1.0, 1.0])
    alone = refined_derivative(lambda a: np.maximum(a, 1e-7) * 2.0, [x], 0, [u])
    probes = Probes()
    shared = refined_derivative(f, [x], 0, [u], probes=probes)
    assert (alone is None) == (shared is None)
    if alone is not None:
        assert np.array_equal(alone.value, shared.value)
    calls = f.calls
    refined_derivative(f, [x], 0, [u], probes=probes)
    assert f.calls == calls


def test_kept_values_are_read_only_and_the_budget_holds():
    probes = Probes(budget=3 * X.nbytes)
    counted = count_evaluations(np.tanh)
    directional_derivative(counted, [X], 0, [U], probes=probes)
    assert probes.nbytes <= 3 * X.nbytes
    assert probes.sample is not None and not probes.sample[0].flags.writeable
    with pytest.raises(ValueError):
        probes.sample[0][0] = 1.0
    nothing = Probes(budget=0)
    directional_derivative(np.tanh, [X], 0, [U], probes=nothing)
    assert nothing.sample is None and nothing.nbytes == 0


def test_same_line_compares_values():
    assert same_line([U], [U.copy()])
    assert not same_line([U], [U + 1.0])
    assert not same_line([U], [U, U])
    assert not same_line([U], [U[:10]])


@pytest.mark.parametrize("shrinks", [-1, 1.5, True, "2"])
def test_bad_shrinks_is_refused(shrinks):
    with pytest.raises(ValueError, match="is_kink: shrinks"):
        is_kink(np.tanh, [X], 0, [U], shrinks=shrinks)


def test_no_retries_cost_one_round():
    once, full = count_evaluations(np.tanh), count_evaluations(np.tanh)
    x, u = np.random.default_rng(3).standard_normal(10_000), \
        np.random.default_rng(4).standard_normal(10_000)
    assert not is_kink(once, [x], 0, [u], shrinks=0)
    assert not is_kink(full, [x], 0, [u])
    assert once.calls <= 13 < full.calls  # f(x) and at most six steps a side


def test_a_given_point_check_spends_less_on_its_kink_test():
    # tanh at a given 10^4-element point: the kink test shares the derivative's probes and
    # makes no retries (118 evaluations before, 96 after)
    x = np.random.default_rng(1).standard_normal(10_000)
    report = gc.check(lambda a: gnp.tanh(a), inputs=(x,), examples=2)
    assert report.passed
    assert report.stats["evaluations"]["forward"] <= 28
