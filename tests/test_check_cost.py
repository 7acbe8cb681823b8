"""What a check costs: evaluations that do not grow with the input, no evaluation made twice
where one value serves two checks, and the convergence data shared without changing it."""

from __future__ import annotations

import json
import pickle

import numpy as np
import pytest

import gradcheck.numpy as gnp
from gradcheck.checker import check, numeric
from gradcheck.checker.convergence import STEPS
from gradcheck.checker.paths import same_bits


def _tanh(a):
    return gnp.tanh(a)


def _counts(n: int, examples: int = 2) -> dict[str, int]:
    x = np.random.default_rng(1).standard_normal(n)
    report = check(_tanh, inputs=(x,), examples=examples)
    assert report.passed
    assert report.convergence  # computed now, when first read: its evaluations join the rest
    return report.stats["evaluations"]


def test_convergence_data_is_computed_when_first_read() -> None:
    """The plot's data takes no part in a verdict: a check leaves it until it is read, and
    every way a report leaves the process (JSON, pickle, copy) reads it."""
    calls = []

    def tanh(a):
        calls.append(1)
        return gnp.tanh(a)

    report = check(tanh, inputs=(np.linspace(-1, 1, 5),), examples=1)
    before = len(calls)
    assert "convergence" not in report.stats["evaluations"]
    assert report.to_dict(convergence=False)["convergence"] == {} and len(calls) == before
    copied = pickle.loads(pickle.dumps(report))
    assert len(calls) > before and copied.convergence["series"]
    assert report.stats["evaluations"]["convergence"] > 0
    assert json.loads(report.to_json())["convergence"] == copied.convergence
    assert check(tanh, inputs=(np.linspace(-1, 1, 5),), examples=1).to_json() == report.to_json()
    # a sweep's unit (any executor, in process too) ends with its report whole
    from gradcheck import default_registry
    from gradcheck.checker.executors.unit import check_unit

    unit = check_unit(default_registry, "sin", {"examples": 1})
    assert unit.stats["evaluations"]["convergence"] > 0
    assert unit.complete() is unit


def test_evaluations_do_not_grow_with_the_input() -> None:
    """Fast mode projects on random directions: no more calls at 3000 elements than at 10
    (a numeric reference's tableau may stop sooner or later, never past its last row)."""
    small, large = _counts(10), _counts(3000)
    assert small.keys() == large.keys()
    assert all(large[k] <= small[k] for k in small)
    assert sum(large.values()) < 250  # 2 examples, convergence data included


def test_each_value_two_checks_need_is_evaluated_once() -> None:
    """Per example: the double-VJP twice (the primary value and its repeat) plus once per
    dummy, the value-leak and dependence-leak checks sharing them; VJP and JVP: the primary
    twice, the numeric reference's probes of G or K (7 when its tableau stops at the rounding
    noise after NOISE_ROWS rows, as tanh's does at these sizes), and 4 linearity calls (the
    second direction shared by the three properties)."""
    per_example = {k: v // 2 for k, v in _counts(3000).items() if k != "convergence"}
    assert per_example["double_vjp"] == 2 + 4
    assert per_example["vjp"] == per_example["jvp"] == 2 + (1 + 2 * numeric.NOISE_ROWS) + 4


def test_convergence_evaluations_are_counted() -> None:
    """Three shared probe sets (f, G and K along their directions), two calls per step and one
    at the point each, besides the session's own primary values."""
    spent = _counts(10)["convergence"]
    probes = 3 * (1 + 2 * len(STEPS))
    assert probes < spent <= probes + 2 * 7


def test_shared_probes_give_each_value_its_own_convergence() -> None:
    """One probe set serving an elementwise value and a projected one gives, bit for bit, what
    separate runs give (the projected one as the convergence of <v, f>)."""
    x, u, v = (np.random.default_rng(k).standard_normal(5) for k in range(3))
    jvp = u / np.cosh(x) ** 2
    wrong = jvp + 1e-3

    def projected(a):
        return np.array([np.sum(v * np.tanh(a))])
    counted = numeric.count_evaluations(np.tanh)
    shared = numeric.convergences(counted, [x], 0, u, [jvp, [np.dot(v, wrong)]],
                                  projections=[None, lambda out: float(np.sum(v * out))])
    alone = [numeric.convergence(np.tanh, [x], 0, u, jvp),
             numeric.convergence(projected, [x], 0, u, np.dot(v, wrong))]
    assert shared == alone
    assert counted.calls == shared[0]["evaluations"] == 1 + 2 * 16
    assert numeric.fitted_slope(shared[0]) == pytest.approx(2.0, abs=0.1)
    assert abs(numeric.fitted_slope(shared[1])) < 0.2


def test_bits_are_compared_word_by_word() -> None:
    """The guard's comparison (its record is now the caller's own array): bits, not values."""
    assert same_bits(np.array([1.0, 2.0]), np.array([1.0, 2.0]))
    assert not same_bits(np.array([0.0]), np.array([-0.0]))
    assert same_bits(np.array([np.nan]), np.array([np.nan]))
    assert not same_bits(np.array([1.0], np.float32), np.array([1.0]))
    assert same_bits(np.arange(6.0).reshape(2, 3).T, np.arange(6.0).reshape(2, 3).T.copy())
