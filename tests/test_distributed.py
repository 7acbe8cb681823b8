"""Sweeps on a Dask distributed cluster: a ``LocalCluster`` of two worker processes on this
machine gives byte-for-byte the results of local worker processes, and a worker killed
mid-sweep loses nothing and counts nothing twice."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import gradcheck.numpy as gnp
from gradcheck.checker import run_sweep
from gradcheck.checker.report import Report
from gradcheck.domains import REAL
from gradcheck.engine import Registry
from gradcheck.extend import define_op

distributed = pytest.importorskip("distributed", reason="needs gradcheck[distributed]")

#: Ops whose checks take a while (their forward sleeps), so a worker can be killed mid-unit.
SLOW = Registry("slow")


def _slow_sin(x: Any) -> Any:
    time.sleep(0.02)
    return np.sin(x)


for _name in ("slow_a", "slow_b"):
    define_op(_name, _slow_sin, vjp=lambda g, out, x: (g * gnp.cos(x),),
              jvp=lambda ts, out, x: ts[0] * gnp.cos(x), family="slow", inputs=(REAL,),
              shapes="(...)", registry=SLOW)

SMALL = {"examples": 1, "paths": ["vjp", "jvp"], "references": ["numeric"],
         "dtypes": ["float64"]}
BROKEN = ["sign_error", "affine_vjp", "reads_dummy"]


@pytest.fixture(scope="module")
def cluster() -> Iterator[Any]:
    with distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                                  dashboard_address=":0") as local:
        yield local


def test_cluster_results_equal_local_processes(cluster: Any) -> None:
    seen: list[tuple[str, int]] = []
    kwargs: dict[str, Any] = {"registry": "broken_ops:BROKEN", "seeds": [0, 1], **SMALL}
    on_cluster = run_sweep(BROKEN, scheduler=cluster.scheduler_address,
                           progress=lambda r: seen.append((r.op, r.seed)), **kwargs)
    local = run_sweep(BROKEN, jobs=2, **kwargs)
    assert on_cluster.to_json() == local.to_json()
    assert sorted(seen) == sorted((op, s) for op in BROKEN for s in (0, 1))
    assert [(r.op, r.seed) for r in on_cluster.reports] == sorted(seen)
    assert not on_cluster.passed  # the broken ops are found on the cluster too
    # the sweep's contained processes ended with it (a new sweep reads edited modules anew)
    from gradcheck.checker.executors.child import end_children

    client = distributed.Client(cluster.scheduler_address, set_as_default=False)
    try:
        assert set(client.run(end_children).values()) == {0}
    finally:
        client.close()


def test_ops_that_crash_hang_or_exit_read_as_on_local_processes(
        cluster: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    # each unit runs in a contained process on the worker: the op that exits kills that
    # process only, the timer stops a spin, a blocked timer is killed after its grace
    from gradcheck.checker.executors import local

    monkeypatch.setattr(local, "KILL_GRACE", 0.5)
    kwargs: dict[str, Any] = {"registry": "broken_ops:HANGING", "timeout": 1.0, **SMALL}
    ops = ["crash", "die", "spin", "stuck"]
    on_cluster = run_sweep(ops, scheduler=cluster.scheduler_address, **kwargs)
    by_op = {r.op: r.findings[0].message for r in on_cluster.reports}
    assert "this op always fails" in by_op["crash"]
    assert "its worker process died (exit code 3)" in by_op["die"]
    assert "timed out after 1 s" in by_op["spin"]
    assert "did not stop (worker killed)" in by_op["stuck"]
    assert on_cluster.to_json() == run_sweep(ops, jobs=2, **kwargs).to_json()


@pytest.mark.slow  # ~20 s: the nanny restarts the killed worker, its units run again
def test_a_worker_killed_mid_sweep_loses_and_doubles_nothing(cluster: Any) -> None:
    client = distributed.Client(cluster.scheduler_address, set_as_default=False)
    try:
        pids_before = set(client.run(os.getpid).values())
        killed: list[int] = []

        def kill_a_busy_worker(report: Report) -> None:
            if killed:
                return
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:  # a worker that is running a unit now
                busy = [w for w, tasks in client.processing().items() if tasks]
                if busy:
                    pid = client.run(os.getpid, workers=busy[:1])[busy[0]]
                    os.kill(pid, signal.SIGKILL)
                    killed.append(pid)
                    return
                time.sleep(0.05)

        seen: list[tuple[str, int]] = []

        def progress(report: Report) -> None:
            seen.append((report.op, report.seed))
            kill_a_busy_worker(report)

        kwargs: dict[str, Any] = {"registry": "test_distributed:SLOW", "seeds": [0, 1, 2],
                                  **SMALL}
        on_cluster = run_sweep(["slow_a", "slow_b"], scheduler=cluster.scheduler_address,
                               progress=progress, **kwargs)
        assert killed and killed[0] in pids_before
        units = [(op, s) for op in ("slow_a", "slow_b") for s in (0, 1, 2)]
        assert sorted(seen) == units  # every unit reported once
        assert [(r.op, r.seed) for r in on_cluster.reports] == units
        assert on_cluster.passed, [f.message for r in on_cluster.reports for f in r.findings]
        local = run_sweep(["slow_a", "slow_b"], jobs=1, **kwargs)
        assert on_cluster.to_json() == local.to_json()
        client.wait_for_workers(2, timeout=60)  # the nanny restarts the killed worker
    finally:
        client.close()


def test_an_interrupt_cancels_the_rest_and_leaves_no_process(cluster: Any) -> None:
    from gradcheck.checker.executors.child import end_children

    def interrupt(report: Report) -> None:
        raise KeyboardInterrupt  # as a Ctrl-C while the client waits

    with pytest.raises(KeyboardInterrupt):
        run_sweep(["slow_a", "slow_b"], registry="test_distributed:SLOW", seeds=[0, 1, 2, 3],
                  scheduler=cluster.scheduler_address, progress=interrupt, **SMALL)
    client = distributed.Client(cluster.scheduler_address, set_as_default=False)
    try:
        deadline = time.monotonic() + 30
        while any(client.processing().values()) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not any(client.processing().values())  # the rest was cancelled
        assert set(client.run(end_children).values()) == {0}  # contained processes ended
    finally:
        client.close()


def test_an_unreachable_scheduler_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from gradcheck.checker.executors import cluster as cluster_module
    from gradcheck.checker.runner import ExecutorError

    monkeypatch.setattr(cluster_module, "CONNECT_TIMEOUT", 1)
    with pytest.raises(ExecutorError, match="cannot reach the Dask scheduler"):
        run_sweep(["sin"], scheduler="tcp://127.0.0.1:9", **SMALL)


def _dropping(monkeypatch: pytest.MonkeyPatch, drop: Any) -> list[str]:
    """Make the executor's client cancel the tasks ``drop(key)`` picks as it submits them, as
    the scheduler forgets a client's tasks when their connection drops."""
    from gradcheck.checker.executors import cluster as executor

    dropped: list[str] = []
    connect = executor.connect

    def connect_dropping(address: str) -> Any:
        client = connect(address)
        submit = client.submit

        def dropping(*args: Any, **kwargs: Any) -> Any:
            future = submit(*args, **kwargs)
            if drop(kwargs["key"]):
                dropped.append(kwargs["key"])
                client.cancel([future])
            return future
        client.submit = dropping
        return client
    monkeypatch.setattr(executor, "connect", connect_dropping)
    return dropped


def test_a_task_the_cluster_drops_is_run_again_not_reported(
        cluster: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    dropped = _dropping(monkeypatch, lambda key: key.endswith("-1"))  # unit 1, first try
    kwargs: dict[str, Any] = {"registry": "broken_ops:BROKEN", **SMALL}
    on_cluster = run_sweep(BROKEN, scheduler=cluster.scheduler_address, **kwargs)
    assert len(dropped) == 1
    assert on_cluster.to_json() == run_sweep(BROKEN, **kwargs).to_json()
    assert not any(f.kind == "error" for r in on_cluster.reports for f in r.findings)


def test_a_task_lost_again_and_again_ends_the_sweep_with_no_report(
        cluster: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from gradcheck.checker.executors.cluster import LOST_RETRIES, ExecutorError

    dropped = _dropping(monkeypatch, lambda key: key.split("-")[2] == "0")  # every try
    with pytest.raises(ExecutorError, match="lost unit 0's task"):
        run_sweep(["sign_error"], scheduler=cluster.scheduler_address,
                  registry="broken_ops:BROKEN", **SMALL)
    assert len(dropped) == LOST_RETRIES + 1
