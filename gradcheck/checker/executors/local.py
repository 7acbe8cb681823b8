"""The default executor: worker processes of this machine.

Workers start fresh with ``spawn``: each imports the user's modules first (so user ops exist
there too), ignores SIGINT (a Ctrl-C reaches the whole process group; the parent decides)
and dies with its parent.  Each report travels back as its JSON, keyed by the unit's index,
so the results are byte-identical to running the units in this process.  A worker still busy
past the timeout (an op that swallows the timer's exception, a hang in C code) is killed and
replaced, and its unit reported as timed out; a worker that dies has its unit reported as
such.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import signal
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from multiprocessing import resource_tracker
from multiprocessing.connection import Connection, wait
from typing import Any

from gradcheck.checker.executors.unit import (
    ONE_THREAD,
    Unit,
    contain_worker,
    error_report,
    import_all,
    run_unit,
    settle_heap,
)
from gradcheck.checker.report import Report

__all__ = ["run_local", "KILL_GRACE", "timed_out_report", "died_report"]

#: At most this many extra seconds (and at least 1, or the timeout if shorter) a worker gets
#: past the timeout before it is killed: its own timer should have fired first; this catches
#: an op that swallows the timer's exception, or a hang in C code, which no timer interrupts.
KILL_GRACE = 10.0

Done = Callable[[int, Report], None]


def grace(timeout: float) -> float:
    """Seconds past ``timeout`` before a unit's process is killed."""
    return min(KILL_GRACE, max(1.0, timeout))


def timed_out_report(unit: Unit) -> Report:
    """The report of a unit whose process was killed past its timeout and grace."""
    name, options = unit
    return error_report(name, f"{name}: check timed out after {options['timeout']:g} s and "
                        "did not stop (worker killed)", stats={"timed_out": True}, **options)


def died_report(unit: Unit, exitcode: int | None) -> Report:
    """The report of a unit whose process died under it."""
    name, options = unit
    why = f"killed by {signal.Signals(-exitcode).name}" if exitcode is not None and \
        exitcode < 0 else f"exit code {exitcode}"
    return error_report(name, f"{name}: check failed: its worker process died ({why})",
                        **options)


def _worker(spec: str | None, imports: tuple[str, ...], tasks: Connection, results: Connection,
            parent: int) -> None:
    contain_worker(parent)
    registry, failure = import_all(spec, imports)
    settled = False
    while True:
        try:
            task = tasks.recv()
        except EOFError:  # the parent is gone
            return
        if task is None:
            return
        index, unit = task
        results.send((index, None))  # started: the timeout counts from here, not from spawn
        results.send((index, run_unit(registry, failure, unit)))
        if not settled:  # (after the answer: the sweep does not wait for it)
            settle_heap()
            settled = True


@dataclass
class _Worker:
    """A worker process with its own pipes (a worker killed mid-message breaks only its
    own), and the unit it is on."""

    process: Any
    tasks: Connection
    results: Connection
    task: tuple[int, Unit] | None = None
    started: float | None = None


@contextmanager
def sigint_blocked() -> Iterator[None]:
    """SIGINT blocked (not lost: it is delivered after), so a process started here inherits
    the block and a Ctrl-C while it boots cannot print its traceback.

    multiprocessing's resource tracker is started first: the first spawned process starts it,
    and starting it *unblocks* SIGINT (CPython 3.11 blocks and then unblocks the signals it
    ignores, instead of restoring the mask), so that first worker booted with SIGINT
    deliverable and a Ctrl-C while it imported printed a KeyboardInterrupt traceback."""
    if os.name == "posix":
        resource_tracker.ensure_running()  # blocks the signals itself while it spawns
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def _start(ctx: Any, spec: str | None, imports: tuple[str, ...]) -> _Worker:
    task_out, task_in = ctx.Pipe(duplex=False)
    result_out, result_in = ctx.Pipe(duplex=False)
    process = ctx.Process(target=_worker, args=(spec, imports, task_out, result_in, os.getpid()),
                          daemon=True)
    try:
        with sigint_blocked():
            process.start()
        task_out.close()  # the worker's ends: closed here, so a dead worker reads as EOF
        result_in.close()
    except BaseException:  # a Ctrl-C held back while it started: no worker is left behind
        if process.pid is not None:
            process.kill()
            process.join(timeout=5)
        raise
    return _Worker(process, task_in, result_out)


def run_local(units: list[Unit], spec: str | None, imports: tuple[str, ...], jobs: int,
              done: Done) -> dict[int, Report]:
    """Run ``units`` in ``jobs`` worker processes; ``done(index, report)`` as each ends.
    Returns the reports by unit index."""
    saved = {k: os.environ.get(k) for k in ONE_THREAD}
    os.environ.update({k: v for k, v in ONE_THREAD.items() if saved[k] is None})
    try:  # spawned workers read the environment when they start
        return _run_workers(units, spec, imports, jobs, done)
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)


def _gone(w: _Worker) -> Report | None:
    """The error report of a worker's unit when the worker must be replaced: it died, or it
    is still busy past the unit's timeout and its grace."""
    if w.task is None:
        return None
    unit = w.task[1]
    timeout = unit[1].get("timeout")
    if timeout is not None and w.started is not None and \
            time.monotonic() - w.started > timeout + grace(timeout):
        return timed_out_report(unit)
    if w.process.is_alive():
        return None
    return died_report(unit, w.process.exitcode)


def _run_workers(units: list[Unit], spec: str | None, imports: tuple[str, ...], jobs: int,
                 done: Done) -> dict[int, Report]:
    ctx = mp.get_context("spawn")
    workers: list[_Worker] = []
    todo = list(reversed(list(enumerate(units))))
    reports: dict[int, Report] = {}

    def finish(index: int, report: Report) -> None:
        if index not in reports:  # each unit once, whatever reaches us twice
            reports[index] = report
            done(index, report)

    finished = False
    try:
        for _ in range(min(jobs, len(units))):
            # one by one: a Ctrl-C while the second starts must find the first in the list
            # (or the first, never killed, reads its parent's closed pipe and prints why)
            workers.append(_start(ctx, spec, imports))
        while len(reports) < len(units):
            for w in workers:
                if w.task is None and todo:
                    w.task, w.started = todo.pop(), None
                    _send(w, w.task)
            wait([w.results for w in workers] + [w.process.sentinel for w in workers],
                 timeout=0.2)
            for w in workers:
                for index, text in _answers(w):
                    if w.task is None or w.task[0] != index:
                        continue
                    if text is None:
                        w.started = time.monotonic()
                    else:
                        w.task = None
                        finish(index, Report.from_json(text))
            for i, w in enumerate(workers):
                report = _gone(w)
                if report is not None:
                    assert w.task is not None
                    index = w.task[0]
                    _end(w)
                    workers[i] = _start(ctx, spec, imports)
                    finish(index, report)
        finished = True
    finally:
        _stop(workers, gently=finished)
    return reports


def _send(w: _Worker, task: Any) -> None:
    try:
        w.tasks.send(task)
    except OSError:  # the worker died: _gone reports its unit
        pass


def _answers(w: _Worker) -> Iterator[tuple[int, str | None]]:
    """What the worker has sent so far (nothing more once its pipe breaks)."""
    try:
        while w.results.poll():
            yield w.results.recv()
    except (EOFError, OSError):  # it died, maybe mid-message: _gone says so
        return


def _end(w: _Worker) -> None:
    if w.process.is_alive():
        w.process.kill()
    w.process.join(timeout=5)
    w.tasks.close()
    w.results.close()


def _stop(workers: list[_Worker], gently: bool) -> None:
    """End every worker: ask them to exit after a finished sweep, kill them otherwise (an
    interrupt, a signal, a broken pipe); either way none outlives this call."""
    try:
        if gently:
            for w in workers:
                _send(w, None)
            for w in workers:
                w.process.join(timeout=5)
    finally:
        for w in workers:
            _end(w)
