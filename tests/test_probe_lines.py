"""Probes kept for every line a linearization was differentiated along (a full Jacobian's
columns too), under one budget; and a shrinking search that asks about one example once."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from gradcheck.checker.compare import Linearization
from gradcheck.checker.explore import shrink
from gradcheck.checker.probes import Budget
from gradcheck.checker.sampling import Example

X = np.random.default_rng(3).standard_normal(6)
A = np.random.default_rng(4).standard_normal(6)
B = np.random.default_rng(5).standard_normal(6)


def _lin(x: np.ndarray = X) -> Linearization:
    return Linearization("tanh", lambda xs: [np.tanh(xs[0])], [x], [x.shape])


def test_a_kink_test_along_an_earlier_line_reuses_its_probes():
    lin = _lin()
    lin.derivative([A])
    lin.derivative([B])  # the last line is B now
    before = lin.calls.calls
    assert not lin.is_kink([A], shrinks=0)
    reused = lin.calls.calls - before
    fresh = _lin()
    fresh.derivative([B])
    before = fresh.calls.calls
    assert not fresh.is_kink([A], shrinks=0)
    assert reused < fresh.calls.calls - before


def test_a_kink_test_along_a_jacobian_column_reuses_the_column_probes():
    lin, fresh = _lin(), _lin()
    lin.jacobian()
    fresh.jacobian()
    fresh._lines.clear()  # what the Jacobian's columns kept is gone
    column = lin._column(2)
    before, fresh_before = lin.calls.calls, fresh.calls.calls
    assert not lin.is_kink(column, shrinks=0)
    assert not fresh.is_kink(column, shrinks=0)
    assert lin.calls.calls - before < fresh.calls.calls - fresh_before


def test_the_same_values_whatever_is_reused():
    lin, fresh = _lin(), _lin()
    lin.derivative([A])
    lin.jacobian()
    lin.derivative([B])
    fresh.derivative([B])
    ours, theirs = lin.derivative([B]), fresh.derivative([B])
    assert all(np.array_equal(a, b) for a, b in zip(ours, theirs, strict=True))
    assert lin.is_kink([A]) == fresh.is_kink([A])


def test_old_lines_make_room_when_the_budget_runs_low():
    lin = _lin()
    lin._budget = Budget(8 * X.nbytes)  # about one line's sample and probes
    for k in range(6):
        lin.derivative([np.roll(A, k)])
        assert lin._budget.left >= 0
        kept = sum(p.nbytes for _, p in lin._lines.values())
        assert kept == lin._budget.total - lin._budget.left
    assert len(lin._lines) < 6  # the oldest went
    assert lin._budget.total == 8 * X.nbytes


def _example(k: int) -> Example:
    return Example([np.full(2, float(k))], {}, "float64", 1.0, 0, [(2,)])


def test_a_shrinking_search_asks_about_each_example_once():
    asked: list[float] = []

    def shows(ex: Example):
        asked.append(float(ex.args[0][0]))
        return ("found", ex) if ex.args[0][0] >= 3 else None

    strategy = st.integers(0, 10).map(_example)
    found, calls = shrink(strategy, 30, 1, shows, budget=200)
    assert found is not None and found[1].args[0][0] == 3.0  # shrunk to the smallest
    assert len(asked) == len(set(asked))  # Hypothesis' replay of 3 was answered from memory
    assert calls > len(asked)  # and still counted against the budget
