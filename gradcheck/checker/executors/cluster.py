"""A Dask distributed cluster as executor: ``run_sweep(..., scheduler="tcp://host:8786")``.

Each unit is one Dask task, keyed by the sweep and the unit's index, so a result is recorded
once per unit whatever Dask does: when a worker dies mid-run, the scheduler runs its units
again elsewhere, and a unit whose workers keep dying (``distributed.scheduler.allowed-failures``,
3 by default) becomes that unit's ``error`` report.  A task the cluster drops (the client
lost its connection to the scheduler, which forgets its tasks) is submitted again once the
client has reconnected: it says nothing about the op.  On the worker, the unit runs in a
contained process of its own (:mod:`.child`), so timeouts and crashes read exactly as on
local worker processes.

The user's ``--import`` modules (and the modules of ``module:function`` targets) reach the
workers by name: a top-level module that is one ``.py`` file is uploaded
(``Client.upload_file``) when some worker cannot import it; a package must be installed (or
on the ``PYTHONPATH``) where the workers run.  So must the registry's module when it is not
one file.  Error tracebacks name the files where the unit ran.
"""

from __future__ import annotations

import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from gradcheck.checker.executors.unit import Unit, error_report
from gradcheck.checker.report import Report

__all__ = ["run_dask", "check_address", "ExecutorError", "UNAVAILABLE", "CONNECT_TIMEOUT",
           "LOST_RETRIES"]

#: What a sweep says when Dask distributed is not installed.
UNAVAILABLE = "unavailable: pip install gradcheck[distributed]"
#: Seconds to wait for the scheduler before giving up.
CONNECT_TIMEOUT = 20
#: Times a unit's task may be lost with the client's connection (and submitted again)
#: before the sweep ends with :class:`ExecutorError`.
LOST_RETRIES = 3


class ExecutorError(RuntimeError):
    """The executor cannot run at all (not installed, scheduler unreachable): nothing ran."""


def _task(spec: str | None, imports: tuple[str, ...], unit: Unit, sweep: str) -> str:
    from gradcheck.checker.executors.child import run_contained

    return run_contained(spec, imports, unit, sweep)


def _end_sweep(sweep: str) -> int:
    from gradcheck.checker.executors.child import end_children

    return end_children(sweep)


def _importable(name: str) -> bool:
    """On a worker: whether it can import module ``name`` as it is."""
    import importlib.util

    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def _single_files(modules: list[str]) -> list[tuple[str, str]]:
    """``(name, file)`` of the top-level modules among ``modules`` that are one ``.py`` file
    each (uploaded to workers that cannot import them; packages must be installed there)."""
    out = []
    for name in modules:
        path = getattr(sys.modules.get(name), "__file__", None)
        if "." not in name and path and path.endswith(".py") and \
                Path(path).name != "__init__.py" and "site-packages" not in Path(path).parts:
            out.append((name, path))
    return out


def _target_modules(units: list[Unit]) -> list[str]:
    """The modules of ``[[function]]`` rows' ``module:function`` targets, which workers must
    import as they do the ``--import`` modules."""
    targets = {str(options["function"]) for _, options in units if "function" in options}
    return sorted({t.partition(":")[0] for t in targets if ":" in t})


def check_address(address: str) -> None:
    """:class:`ExecutorError` unless ``address`` is a scheduler address Dask can dial
    (``tcp://host:8786``, ``host:8786``, ``tls://...``), or Dask is not installed.

    Checked before a ``Client`` exists: a Client that fails on a malformed address is left
    half-made, and closing it when it is collected hangs the process for 40 s."""
    try:
        import distributed  # noqa: F401 - itself first: its submodules may be imported already
        from distributed.comm.addressing import parse_address, parse_host_port
        from distributed.comm.registry import backends
    except ImportError:
        raise ExecutorError(f"--scheduler {address}: Dask distributed is {UNAVAILABLE}") \
            from None
    example = "give the scheduler's address, such as tcp://host:8786"
    try:
        scheme, location = parse_address(address)
        if scheme not in backends:
            raise ValueError(f"unknown protocol {scheme!r} (known: {', '.join(backends)})")
        if scheme in ("tcp", "tls", "ws", "wss", "ucx"):
            host, port = parse_host_port(location)
            if not host or not port:
                raise ValueError(f"no host or port in {location!r}")
    except (ValueError, TypeError) as error:
        raise ExecutorError(f"--scheduler {address}: not a Dask scheduler address: {error}; "
                            f"{example}") from None


def connect(address: str) -> Any:
    """A ``distributed.Client`` on the scheduler at ``address``, or :class:`ExecutorError`
    saying why not."""
    check_address(address)
    try:
        from distributed import Client
    except ImportError:
        raise ExecutorError(f"--scheduler {address}: Dask distributed is {UNAVAILABLE}") \
            from None

    try:
        return Client(address, timeout=CONNECT_TIMEOUT, set_as_default=False)
    except (OSError, TimeoutError, ValueError) as error:
        raise ExecutorError(f"--scheduler {address}: cannot reach the Dask scheduler: "
                            f"{type(error).__name__}: {error}") from None


def run_dask(units: list[Unit], spec: str | None, imports: tuple[str, ...], address: str,
             done: Callable[[int, Report], None]) -> dict[int, Report]:
    """Run ``units`` on the cluster at ``address``; ``done(index, report)`` once per unit as
    each ends.  Returns the reports by unit index.  An interrupt cancels what is left."""
    client = connect(address)
    from distributed import as_completed

    futures: dict[Any, int] = {}
    reports: dict[int, Report] = {}
    sweep = uuid.uuid4().hex[:12]
    try:
        modules = [*imports, *([spec.partition(":")[0]] if spec else []),
                   *_target_modules(units)]
        for name, path in _single_files(modules):
            # where the workers import it already (a shared folder, one machine), it stays
            # as is: the same file, so the same tracebacks as a local run
            if not all(client.run(_importable, name).values()):
                client.upload_file(path, load=False)
        def submit(index: int, attempt: int = 0) -> Any:
            key = f"gradcheck-{sweep}-{index}" + (f"-retry{attempt}" if attempt else "")
            future = client.submit(_task, spec, imports, units[index], sweep, pure=False,
                                   key=key)
            futures[future] = index
            return future

        for index in range(len(units)):
            submit(index)
        lost: dict[int, int] = {}
        pending = as_completed(list(futures), loop=client.loop)
        for future in pending:
            index = futures[future]
            if index in reports:  # each unit once
                continue
            if future.status == "cancelled":  # not by us: the client lost the scheduler
                lost[index] = lost.get(index, 0) + 1
                _reconnected(client, address, index, lost[index])
                pending.add(submit(index, lost[index]))
                continue
            reports[index] = _report(future, units[index])
            done(index, reports[index])
    finally:
        if len(reports) < len(units):
            client.cancel(list(futures), force=True)
        try:  # the sweep's contained processes end with it
            client.run(_end_sweep, sweep)
        except Exception:  # noqa: BLE001, S110 - a worker gone by now has no process left
            pass
        client.close()
    return reports


def _reconnected(client: Any, address: str, index: int, attempt: int) -> None:
    """Wait for ``client`` to be connected again after the cluster dropped unit ``index``'s
    task; :class:`ExecutorError` when it does not reconnect, or the unit was lost
    :data:`LOST_RETRIES` times (a lost task says nothing about the op, so it is run again,
    never reported as the op's error)."""
    if attempt > LOST_RETRIES:
        raise ExecutorError(f"--scheduler {address}: the cluster lost unit {index}'s task "
                            f"{attempt} times (its connection to the scheduler keeps "
                            "dropping); no report was written")
    deadline = time.monotonic() + CONNECT_TIMEOUT
    while client.status != "running":
        if time.monotonic() > deadline:
            raise ExecutorError(f"--scheduler {address}: lost the connection to the Dask "
                                f"scheduler and could not reconnect within {CONNECT_TIMEOUT}"
                                " s; no report was written")
        time.sleep(0.2)


def _report(future: Any, unit: Unit) -> Report:
    name, options = unit
    try:
        return Report.from_json(future.result())
    except Exception as error:  # noqa: BLE001 - the unit's error, never the sweep's end
        from distributed import KilledWorker

        if isinstance(error, KilledWorker):
            why = ("the cluster's workers running it kept dying (Dask's KilledWorker: "
                   "distributed.scheduler.allowed-failures reached)")
        else:
            why = f"the cluster could not run it: {type(error).__name__}: {error}"
        return error_report(name, f"{name}: check failed: {why}", **options)
