"""Sweeps: many ops, one report each; exceptions and hangs become error findings."""

from __future__ import annotations

import subprocess
import sys

import broken_ops
import pytest
from broken_ops import BROKEN, HANGING

from gradcheck.checker import Results, run_sweep
from gradcheck.checker.executors import local as local_module

GOOD_AND_BAD = ["sign_error", "reads_dummy", "affine_vjp", "in_place"]


def test_sweep_reports_every_op_in_name_order_with_progress() -> None:
    seen = []
    results = run_sweep(list(reversed(GOOD_AND_BAD)), registry=BROKEN, seed=2, examples=2,
                        progress=lambda r: seen.append(r.op))
    assert [r.op for r in results.reports] == sorted(GOOD_AND_BAD)
    assert sorted(seen) == sorted(GOOD_AND_BAD)
    assert not results.passed
    assert results.config["ops"] == sorted(GOOD_AND_BAD) and results.config["seed"] == 2
    assert Results.from_json(results.to_json()).to_json() == results.to_json()


def test_patterns_and_families_select_ops() -> None:
    results = run_sweep(["hidden_*", "wrong_dtype"], registry=BROKEN, examples=1)
    assert [r.op for r in results.reports] == ["hidden_shape", "wrong_dtype"]


def test_an_exception_or_a_hang_does_not_stop_the_sweep() -> None:
    results = run_sweep(["crash", "spin"], registry=HANGING, timeout=1.0, examples=1)
    by_op = {r.op: r for r in results.reports}
    assert by_op["crash"].findings[0].kind == "error"
    assert "this op always fails" in by_op["crash"].findings[0].message
    assert by_op["spin"].findings[0].kind == "error"
    assert "timed out after 1 s" in by_op["spin"].findings[0].message


def test_worker_processes_give_identical_results() -> None:
    one = run_sweep(GOOD_AND_BAD, registry=BROKEN, seed=5, examples=3, jobs=1)
    two = run_sweep(GOOD_AND_BAD, registry=BROKEN, seed=5, examples=3, jobs=2)
    assert one.to_json() == two.to_json()


def test_stuck_and_dying_workers_are_replaced(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(local_module, "KILL_GRACE", 0.5)
    results = run_sweep(["stuck", "die", "crash"], registry=HANGING, timeout=1.0, jobs=2,
                        examples=1)
    by_op = {r.op: r.findings[0].message for r in results.reports}
    assert "worker killed" in by_op["stuck"]
    assert "worker process died" in by_op["die"]
    assert "this op always fails" in by_op["crash"]


def test_registry_must_be_importable_for_workers() -> None:
    from gradcheck.engine import Registry

    local = Registry("local")
    for name in ("sign_error", "affine_vjp"):
        local.add(BROKEN.get(name))
    with pytest.raises(ValueError, match="cannot import it"):
        run_sweep(["sign_error", "affine_vjp"], registry=local, jobs=2)
    # in this process (jobs=1) no worker has to import it
    results = run_sweep(["sign_error"], registry=local, examples=1, paths=["vjp"])
    assert [r.op for r in results.reports] == ["sign_error"] and "registry" not in results.config


def test_a_registry_can_be_named_for_workers() -> None:
    results = run_sweep(["sign_error", "affine_vjp"], registry="broken_ops:BROKEN", jobs=2,
                        examples=1, paths=["vjp"])
    assert results.config["registry"] == "broken_ops:BROKEN"
    assert [r.op for r in results.reports] == ["affine_vjp", "sign_error"]
    assert broken_ops.BROKEN.get("sign_error").family == "broken"


def test_per_op_options_and_isolated_workers_give_the_same_results() -> None:
    kwargs = {"registry": BROKEN, "seed": 3, "examples": 1, "paths": ["vjp", "jvp"],
              "per_op": {"sign_error": {"paths": ["vjp"]}}}
    here = run_sweep(["sign_error", "affine_vjp"], **kwargs)
    by_op = {r.op: r for r in here.reports}
    assert {c.path for c in by_op["sign_error"].cells} == {"vjp"}
    assert {c.path for c in by_op["affine_vjp"].cells} == {"vjp", "jvp"}
    isolated = run_sweep(["sign_error", "affine_vjp"], isolate=True, **kwargs)
    assert isolated.to_json() == here.to_json()


def test_timed_out_reports_say_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(local_module, "KILL_GRACE", 0.5)
    results = run_sweep(["stuck", "spin"], registry=HANGING, timeout=1.0, jobs=2, examples=1)
    assert all(r.stats.get("timed_out") is True for r in results.reports)


def test_results_record_gradcheck_and_reference_versions() -> None:
    from importlib.metadata import version

    from gradcheck.checker.runner import run_sweep

    results = run_sweep(["sin"], examples=1, paths=["vjp"],
                        references=["numeric", "autograd"])
    assert results.environment["gradcheck"] == version("gradcheck")
    assert results.environment["autograd"] == version("autograd")


def test_draws_ignore_the_literals_of_the_modules_a_process_loaded() -> None:
    # Hypothesis mixes literals of loaded local modules into its draws; the same seed must
    # draw the same examples in a pytest process and in a fresh worker
    from hypothesis.internal.conjecture import providers

    from gradcheck.checker.explore import _same_in_every_process

    with _same_in_every_process():
        assert len(providers._get_local_constants()) == 0
    assert providers._get_local_constants is not None


def test_one_draw_is_seeded_distinct_and_survives_a_rejecting_strategy() -> None:
    from hypothesis import strategies as st

    from gradcheck.checker.explore import draw_examples, draw_one

    floats = st.lists(st.floats(-1e3, 1e3), min_size=1, max_size=6)
    assert draw_one(floats, 5) == draw_one(floats, 5)
    assert len({tuple(draw_one(floats, s)) for s in range(10)}) > 5
    # a strategy that rejects half of what it draws: a fresh attempt, then an example
    assert all(draw_one(st.integers(0, 9).filter(lambda n: n % 2), s) % 2 for s in range(20))
    assert draw_one(st.integers().filter(lambda n: False), 1) is None  # never a made-up one
    # the same example as drawn in a fresh process (no literals of loaded modules mixed in)
    code = ("from hypothesis import strategies as st\n"
            "from gradcheck.checker.explore import draw_one\n"
            "print(draw_one(st.lists(st.floats(-1e3, 1e3), min_size=1, max_size=6), 5))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == str(draw_one(floats, 5))
    assert draw_examples(floats, 3, 5)  # a seeded run still draws the random stream


def test_the_stream_starts_with_the_example_a_seeded_run_draws_first() -> None:
    from hypothesis import strategies as st

    from gradcheck.checker.explore import draw_examples, stream_start

    for strategy in (st.lists(st.floats(-1e3, 1e3), min_size=1, max_size=6),
                     st.integers(0, 9).filter(lambda n: n % 2)):
        for seed in (0, 7):
            assert stream_start(strategy, 1, seed) == draw_examples(strategy, 1, seed)
            assert stream_start(strategy, 3, seed) == draw_examples(strategy, 3, seed)


def test_without_hypothesis_internals_draws_come_from_seeded_runs(monkeypatch) -> None:
    from hypothesis import strategies as st

    from gradcheck.checker import explore

    def moved(*args, **kwargs):
        raise explore._Unavailable

    floats = st.lists(st.floats(-1e3, 1e3), min_size=1, max_size=6)
    monkeypatch.setattr(explore, "_direct", moved)
    assert explore.draw_one(floats, 5) == explore.draw_examples(floats, 3, 5)[-1]
    assert explore.stream_start(floats, 1, 5) == explore.draw_examples(floats, 1, 5)
