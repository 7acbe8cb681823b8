"""A contained process for each thread of a Dask worker, so an op on a cluster is held to the
same rules as on local worker processes: its timeout works (the timer needs a process's main
thread; Dask runs tasks in threads), an op that exits or crashes kills only this process
(reported as on local workers), and a hang past the timeout and its grace is killed.

The process is started with :mod:`subprocess` (a Dask worker is a daemonic process, which
``multiprocessing`` forbids to have children), reads one pickled unit per line on stdin and
answers on the stdout it had at start (an op's own prints go to stderr).  It lives as long as
its sweep: the sweep ends it (:func:`end_children`), and it dies with its thread
(``PR_SET_PDEATHSIG``); a new sweep starts new ones, so edited op modules are read again.
"""

from __future__ import annotations

import base64
import json
import os
import pickle
import select
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from typing import IO, Any

from gradcheck.checker.executors.local import died_report, grace, timed_out_report
from gradcheck.checker.executors.unit import ONE_THREAD, Unit

__all__ = ["run_contained", "end_children", "READY"]

#: What the process says once it has imported the user's modules and the registry.
READY = "ready"
#: Seconds a new process may take to import everything before its unit is an error.
START_LIMIT = 300.0


@dataclass
class _Child:
    process: subprocess.Popen[bytes]
    out: IO[bytes]
    key: tuple[Any, ...]


_children: dict[int, _Child] = {}  # by thread
_lock = threading.Lock()


def _start(spec: str | None, imports: tuple[str, ...], sweep: str) -> _Child:
    env = {**os.environ, **{k: os.environ.get(k, v) for k, v in ONE_THREAD.items()},
           "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    process = subprocess.Popen(
        [sys.executable, "-m", "gradcheck.checker.executors.child", json.dumps(spec),
         json.dumps(list(imports)), str(os.getpid())],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
    assert process.stdout is not None
    return _Child(process, process.stdout, (spec, imports, sweep))


def _line(child: _Child, deadline: float | None) -> bytes | None:
    """The child's next line, or None when it died or the deadline passed."""
    fd = child.out.fileno()
    while True:
        wait = None if deadline is None else deadline - time.monotonic()
        if wait is not None and wait <= 0:
            return None
        ready, _, _ = select.select([fd], [], [], wait)
        if ready:
            line = child.out.readline()
            return line or None


def _end(child: _Child) -> int | None:
    if child.process.poll() is None:
        child.process.kill()
    try:
        return child.process.wait(timeout=5)
    except subprocess.TimeoutExpired:
        return None


def end_children(sweep: str | None = None) -> int:
    """End this worker's contained processes (of ``sweep``, or all): how many ended."""
    with _lock:
        ending = [(me, c) for me, c in _children.items() if sweep is None or c.key[2] == sweep]
        for me, _ in ending:
            del _children[me]
    for _, child in ending:
        _end(child)
    return len(ending)


def _ready_child(spec: str | None, imports: tuple[str, ...], sweep: str) -> _Child | str:
    """This thread's child for ``spec`` and ``imports`` in ``sweep`` (started if needed),
    or why none could start."""
    me = threading.get_ident()
    with _lock:
        child = _children.get(me)
    if child is not None and (child.process.poll() is not None
                              or child.key != (spec, imports, sweep)):
        _end(child)
        child = None
    if child is None:
        child = _start(spec, imports, sweep)
        line = _line(child, time.monotonic() + START_LIMIT)
        if line is None or line.strip().decode() != READY:
            code = _end(child)
            return f"its worker process did not start (exit code {code})"
        with _lock:
            _children[me] = child
    return child


def run_contained(spec: str | None, imports: tuple[str, ...], unit: Unit, sweep: str) -> str:
    """The JSON text of ``unit``'s report, checked in this thread's contained process for
    ``sweep``."""
    child = _ready_child(spec, imports, sweep)
    if isinstance(child, str):
        name, options = unit
        from gradcheck.checker.executors.unit import error_report

        return error_report(name, f"{name}: check failed: {child}", **options).to_json()
    assert child.process.stdin is not None
    timeout = unit[1].get("timeout")
    try:
        child.process.stdin.write(base64.b64encode(pickle.dumps(unit)) + b"\n")
        child.process.stdin.flush()
    except OSError:
        pass  # it died: the read below says so
    deadline = None if timeout is None else time.monotonic() + timeout + grace(timeout)
    line = _line(child, deadline)
    if line is not None:
        return line.decode()
    if child.process.poll() is None and deadline is not None and time.monotonic() >= deadline:
        _end(child)
        return timed_out_report(unit).to_json()
    return died_report(unit, _end(child)).to_json()


def _main(argv: list[str]) -> None:
    from gradcheck.checker.executors.unit import contain_worker, import_all, run_unit

    answers = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)  # what an op prints must not reach the answers
    spec, imports, parent = json.loads(argv[0]), tuple(json.loads(argv[1])), int(argv[2])
    contain_worker(parent)
    registry, failure = import_all(spec, imports)
    answers.write(READY + "\n")
    answers.flush()
    for line in sys.stdin.buffer:
        unit = pickle.loads(base64.b64decode(line))
        text = run_unit(registry, failure, unit)
        answers.write(json.dumps(json.loads(text)) + "\n")  # one line
        answers.flush()


if __name__ == "__main__":
    _main(sys.argv[1:])
