"""Sweeps: check many ops, one report each, whatever any single op does.

Anything an op raises -- ``SystemExit`` and its own ``KeyboardInterrupt`` included -- becomes
an ``error`` finding of that op and the sweep goes on; only the user's Ctrl-C (a real SIGINT)
or a SIGTERM / SIGHUP ends a sweep, and then no worker process is left behind.  A hang
becomes an ``error`` finding after the per-op ``timeout``.

With ``jobs=N`` (or ``isolate=True``) the ops run in N worker processes, started fresh with
``spawn``: each imports ``imports`` first (so user ops exist there too), ignores SIGINT (a
Ctrl-C reaches the whole process group; the parent decides) and dies with its parent.  Each
report travels back as its JSON, so the results are byte-identical to ``jobs=1``.  A worker
still busy past the timeout (an op that swallows the timer's exception, a hang in C code) is
killed and replaced, and its op reported as timed out.
"""

from __future__ import annotations

import importlib
import multiprocessing as mp
import os
import platform
import signal
import sys
import time
import traceback
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from typing import Any

import numpy as np

from gradcheck.checker.api import check
from gradcheck.checker.dotted import load_function
from gradcheck.checker.report import Finding, Report, Results
from gradcheck.checker.timeout import Terminated, interrupted, stop_signals
from gradcheck.engine import Op, Registry, default_registry

__all__ = ["run_sweep", "DEFAULT_TIMEOUT", "error_report"]

#: Seconds one op may take in a sweep unless ``timeout`` says otherwise.
DEFAULT_TIMEOUT = 600.0
#: At most this many extra seconds (and at least 1, or the timeout if shorter) a worker gets
#: past the timeout before it is killed: its own timer should have fired first; this catches
#: an op that swallows the timer's exception, or a hang in C code, which no timer interrupts.
KILL_GRACE = 10.0

Progress = Callable[[Report], None]


def error_report(name: str, message: str, tb: str | None = None,
                 stats: Mapping[str, Any] | None = None, **options: Any) -> Report:
    """A report whose only finding is an ``error`` (the op could not be checked)."""
    report = Report(op=name, seed=int(options.get("seed", 0)), mode=options.get("mode", "fast"))
    report.findings = [Finding(name, "all", "all", "error", message, traceback=tb)]
    report.stats = dict(stats or {})
    return report


def _check_one(registry: Registry, name: str, options: dict[str, Any]) -> Report:
    try:
        if "function" in options:  # a suite's [[function]] row: a function by dotted path
            options = dict(options)
            target = load_function(options.pop("function"), name)
            return check(target, name=name, **options)
        return check(name, registry=registry, **options)
    except Terminated:
        raise
    except KeyboardInterrupt:
        if interrupted():  # the user's Ctrl-C ends the sweep; the op's own raise does not
            raise
        return error_report(name, f"{name}: check raised KeyboardInterrupt (the op raised it; "
                            "the sweep goes on)", traceback.format_exc(), **options)
    except BaseException as e:  # noqa: BLE001 - a sweep survives anything one op does
        return error_report(name, f"{name}: check raised {type(e).__name__}: {e}",
                            traceback.format_exc(), **options)


def _registry_spec(registry: Registry | str | None, needed: bool = True) -> str | None:
    """An importable ``module:attribute`` naming ``registry`` (None for the default, or for
    one no module holds when no worker process has to import it)."""
    if registry is None or registry is default_registry:
        return None
    if isinstance(registry, str):
        return registry
    for mod_name, module in sorted(sys.modules.items()):
        for attr, value in vars(module).items() if module is not None else ():
            if value is registry:
                return f"{mod_name}:{attr}"
    if not needed:
        return None
    raise ValueError(f"run_sweep: registry {registry.name!r} is not an attribute of any "
                     "imported module, so worker processes cannot import it; pass "
                     "'module:attribute' or use jobs=1")


def _load_registry(spec: str | None) -> Registry:
    import importlib

    if spec is None:
        import gradcheck  # noqa: F401 - registers the shipped ops

        return default_registry
    module, _, attr = spec.partition(":")
    found = getattr(importlib.import_module(module), attr)
    if not isinstance(found, Registry):
        raise TypeError(f"run_sweep: {spec} is a {type(found).__name__}, not a Registry")
    return found


def _names(ops: Iterable[str | Op], registry: Registry,
           per_op: Mapping[str, Mapping[str, Any]]) -> list[str]:
    names: dict[str, None] = {}
    for op in ops:
        if isinstance(op, Op):
            names[op.name] = None
        elif "function" in per_op.get(op, {}):  # a function row: its name is its own
            names[op] = None
        else:
            for found in registry.select([op]):
                names[found.name] = None
    return list(names)


def run_sweep(ops: Iterable[str | Op], *, jobs: int = 1, progress: Progress | None = None,
              registry: Registry | str | None = None, timeout: float | None = DEFAULT_TIMEOUT,
              imports: Iterable[str] = (), isolate: bool | None = None,
              per_op: Mapping[str, Mapping[str, Any]] | None = None,
              **options: Any) -> Results:
    """Check every op in ``ops`` (names, patterns such as ``'linalg.*'``, families, or Ops)
    with the :func:`~gradcheck.check` ``options``; ``progress(report)`` is called as each
    op finishes.  Returns :class:`~gradcheck.checker.report.Results` sorted by op name.

    ``imports`` are modules imported first, here and in every worker (they register user
    ops).  ``per_op`` maps an op name to options that replace ``options`` for that op (a
    suite's rows; options with a ``function``, a dotted path such as ``"tf.math.sin"``, check
    that function under the given name).  ``isolate=True`` runs the ops in worker processes even with ``jobs=1``,
    so that nothing an op does (``os._exit``, ignoring its timeout, crashing the
    interpreter) stops the sweep; by default only ``jobs > 1`` uses workers."""
    if not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"run_sweep: jobs must be a positive integer, got {jobs!r}")
    imports = tuple(imports)
    for module in imports:
        importlib.import_module(module)
    reg = _load_registry(registry) if isinstance(registry, str) else \
        (registry or default_registry)
    names = _names(ops, reg, per_op or {})
    options = {**options, "timeout": timeout}
    tasks = [(name, {**options, **(per_op or {}).get(name, {})}) for name in names]
    workers = isolate if isolate is not None else (jobs > 1 and len(names) > 1)
    spec = _registry_spec(registry, needed=workers and bool(tasks))
    with stop_signals():
        if workers and tasks:
            reports = _parallel(tasks, spec, imports, jobs, progress)
        else:
            reports = []
            for name, task_options in tasks:
                reports.append(_check_one(reg, name, task_options))
                if progress is not None:
                    progress(reports[-1])
    config = {k: (list(v) if isinstance(v, (list, tuple)) else v)
              for k, v in sorted(options.items())}
    config["ops"] = sorted(names)
    if spec is not None:
        config["registry"] = spec
    environment = {"python": platform.python_version(), "numpy": np.__version__,
                   "platform": platform.system(), **_versions(options.get("references", ()))}
    return Results(sorted(reports, key=lambda r: r.op), config, environment)


# -- worker processes ------------------------------------------------------------------------
Task = tuple[str, dict[str, Any]]


def _contain_worker(parent: int) -> None:
    """A worker ignores SIGINT (the parent, which got it too, ends the sweep and its workers)
    and dies with its parent, even one killed by SIGKILL (Linux: PR_SET_PDEATHSIG)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})  # blocked while it started
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # 1: PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass
    if os.getppid() != parent:  # the parent died before that took effect
        os._exit(1)


def _worker(spec: str | None, imports: tuple[str, ...], tasks: Connection, results: Connection,
            parent: int) -> None:
    _contain_worker(parent)
    registry: Registry | None = None
    failure = ""
    try:
        for module in imports:
            importlib.import_module(module)
        registry = _load_registry(spec)
    except BaseException as e:  # noqa: BLE001 - every op then says why it was not checked
        failure = f"the worker process could not start: {type(e).__name__}: {e}"
    while True:
        try:
            task = tasks.recv()
        except EOFError:  # the parent is gone
            return
        if task is None:
            return
        name, options = task
        results.send((name, None))  # started: the timeout counts from here, not from spawn
        report = _check_one(registry, name, options) if registry is not None else \
            error_report(name, f"{name}: {failure}", **options)
        results.send((name, report.to_json()))


@dataclass
class _Worker:
    """A worker process with its own pipes (a worker killed mid-message breaks only its
    own), and the task it is on."""

    process: Any
    tasks: Connection
    results: Connection
    task: Task | None = None
    started: float | None = None


@contextmanager
def _sigint_blocked() -> Iterator[None]:
    """SIGINT blocked (not lost: it is delivered after), so a process started here inherits
    the block and a Ctrl-C while it boots cannot print its traceback."""
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
        with _sigint_blocked():
            process.start()
    except BaseException:  # a Ctrl-C held back while it started: no worker is left behind
        if process.pid is not None:
            process.kill()
            process.join(timeout=5)
        raise
    task_out.close()  # the worker's ends: closed here, so a dead worker reads as EOF
    result_in.close()
    return _Worker(process, task_in, result_out)


#: Worker processes run side by side: a multithreaded BLAS in each would oversubscribe the
#: cores (and is slower than one thread on the small matrices checks use anyway).
ONE_THREAD = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def _parallel(tasks: list[Task], spec: str | None, imports: tuple[str, ...], jobs: int,
              progress: Progress | None) -> list[Report]:
    saved = {k: os.environ.get(k) for k in ONE_THREAD}
    os.environ.update({k: v for k, v in ONE_THREAD.items() if saved[k] is None})
    try:  # spawned workers read the environment when they start
        return _run_workers(tasks, spec, imports, jobs, progress)
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)


def _gone(w: _Worker) -> Report | None:
    """The error report of a worker's op when the worker must be replaced: it died, or it
    is still busy past the op's timeout and its grace."""
    if w.task is None:
        return None
    name, options = w.task
    timeout = options.get("timeout")
    if timeout is not None and w.started is not None:
        grace = min(KILL_GRACE, max(1.0, timeout))
        if time.monotonic() - w.started > timeout + grace:
            return error_report(name, f"{name}: check timed out after {timeout:g} s and did "
                                "not stop (worker killed)", stats={"timed_out": True}, **options)
    if w.process.is_alive():
        return None
    code = w.process.exitcode
    why = f"killed by {signal.Signals(-code).name}" if code is not None and code < 0 \
        else f"exit code {code}"
    return error_report(name, f"{name}: check failed: its worker process died ({why})",
                        **options)


def _run_workers(tasks: list[Task], spec: str | None, imports: tuple[str, ...], jobs: int,
                 progress: Progress | None) -> list[Report]:
    ctx = mp.get_context("spawn")
    workers: list[_Worker] = []
    todo = list(reversed(tasks))
    reports: dict[str, Report] = {}

    def finish(report: Report) -> None:
        reports[report.op] = report
        if progress is not None:
            progress(report)

    finished = False
    try:
        workers += [_start(ctx, spec, imports) for _ in range(min(jobs, len(tasks)))]
        while len(reports) < len(tasks):
            for w in workers:
                if w.task is None and todo:
                    w.task, w.started = todo.pop(), None
                    _send(w, w.task)
            wait([w.results for w in workers] + [w.process.sentinel for w in workers],
                 timeout=0.2)
            for w in workers:
                for name, text in _answers(w):
                    if w.task is None or w.task[0] != name:
                        continue
                    if text is None:
                        w.started = time.monotonic()
                    else:
                        w.task = None
                        finish(Report.from_json(text))
            for i, w in enumerate(workers):
                report = _gone(w)
                if report is not None:
                    _end(w)
                    workers[i] = _start(ctx, spec, imports)
                    finish(report)
        finished = True
    finally:
        _stop(workers, gently=finished)
    return [reports[name] for name, _ in tasks]


def _send(w: _Worker, task: Task | None) -> None:
    try:
        w.tasks.send(task)
    except OSError:  # the worker died: _gone reports its task
        pass


def _answers(w: _Worker) -> Iterator[tuple[str, str | None]]:
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


def _versions(references: Iterable[str]) -> dict[str, str]:
    """gradcheck's version and each external reference's, read from the installed packages'
    metadata (nothing is imported); "not installed" for a framework that is missing."""
    from importlib.metadata import PackageNotFoundError, version

    from gradcheck.checker.references import INTERNAL, get_reference

    def installed(*names: str) -> str:
        for name in names:
            try:
                return version(name)
            except PackageNotFoundError:
                continue
        return "not installed"

    out = {"gradcheck": installed("gradcheck")}
    for name in references:
        if name not in INTERNAL:
            dists = getattr(get_reference(name), "distributions", (name,))
            out[name] = installed(*dists)
    return out

