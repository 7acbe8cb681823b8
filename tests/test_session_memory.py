"""A finished example frees what its checks kept as soon as it ends, without waiting for
Python's cycle collector: a linearization's function calls back into its session, and
the collector counts objects, not bytes (at 10^6 elements each example kept hundreds of
MB of path values, probes and directions until it ran)."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import bench_scripts
import numpy as np
import pytest
from broken_ops import BROKEN

import gradcheck.numpy as gnp
from gradcheck.checker import check
from gradcheck.checker.compare import Linearization
from gradcheck.checker.session import Session


@pytest.fixture
def alive(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[weakref.ref[object]]]:
    """Weak references to every session and linearization made while the cycle collector
    is off: any still alive afterwards is held by a cycle (or by the report)."""
    made: list[weakref.ref[object]] = []
    for cls in (Session, Linearization):
        init = cls.__init__

        def tracked(self: object, *args: object, _init=init, **kwargs: object) -> None:
            _init(self, *args, **kwargs)
            made.append(weakref.ref(self))

        monkeypatch.setattr(cls, "__init__", tracked)
    gc.collect()
    was = gc.isenabled()
    gc.disable()
    try:
        yield made
    finally:
        if was:
            gc.enable()


def _living(made: list[weakref.ref[object]]) -> list[str]:
    return [type(r()).__name__ for r in made if r() is not None]


def test_a_check_leaves_no_session_or_linearization_alive(alive):
    x = np.random.default_rng(0).uniform(-2, 2, 50)
    report = check(lambda a: gnp.tanh(a) * a, inputs=(x,), examples=2)
    assert report.passed
    assert alive, "no session was made: the fixture tracks nothing"
    assert _living(alive) == []
    made = len(alive)
    assert report.convergence["series"]  # the plot's own session, made when first read
    assert len(alive) > made and _living(alive) == []


@pytest.mark.autograd
def test_a_reference_frameworks_session_is_freed_too(alive):
    report = check("sin", seed=0, examples=2, references=["numeric", "autograd"])
    assert report.passed
    assert "autograd" in {c["reference"] for c in report.to_dict()["cells"]}
    assert _living(alive) == []


def test_a_failing_check_frees_its_sessions_while_it_shrinks_and_keeps_the_directions(alive):
    """Passing comparisons drop their directions with their example; a finding keeps the
    ones that reproduce it."""
    report = check("sign_error", registry=BROKEN, seed=0, examples=2)
    assert not report.passed
    assert _living(alive) == []
    finding = next(f for f in report.findings if f.kind == "mismatch")
    drawn = {"tangent", "cotangent"} & set(finding.counterexample)
    assert drawn and all(np.size(finding.counterexample[k]) for k in drawn), \
        finding.counterexample


def test_the_memory_benchmark_sees_a_check_give_back_what_it_used():
    """``bench/check_memory.py`` in this process, at 10^5 elements (800 KB): numpy's memory
    still allocated after the check, its report kept and no collection run, is a small part
    of the check's peak (before the fix: 99 of 111 MB)."""
    got = bench_scripts.load("check_memory").measure("gradcheck", 100_000, traced=True)
    assert got["traced_peak"] > 8 * 0.8, got  # many arrays of the input's size were alive
    assert got["traced_left"] < 0.2 * got["traced_peak"], got
    assert gc.isenabled()


def _traced_peak(run) -> float:
    import tracemalloc
    tracemalloc.start()
    try:
        run()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_checks_peak_memory_does_not_grow_with_its_examples():
    """A passing comparison's directions (arrays the size of the inputs and outputs) are
    dropped with its example: before, every example's stayed until the check ended, and at
    10^5 elements the peak went from 70 MB at 2 examples to 116 MB at 8."""
    x = np.random.default_rng(0).uniform(-2, 2, 100_000)

    def at(examples: int) -> float:
        return _traced_peak(lambda: check(lambda a: gnp.tanh(a), inputs=(x,),
                                          examples=examples))

    at(2)  # first calls' caches
    two, eight = at(2), at(8)
    assert eight < 1.3 * two, (two / 1e6, eight / 1e6)
