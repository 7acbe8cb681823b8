"""Sweeps: check many ops at many seeds, one report each, whatever any single op does.

A sweep's unit of work is one op at one seed (an op's dtypes stay in one check: its report
judges them together, with the references run once, in float64).  Anything an op raises --
``SystemExit`` and its own ``KeyboardInterrupt`` included -- becomes an ``error`` finding of
that unit and the sweep goes on; only the user's Ctrl-C (a real SIGINT) or a SIGTERM /
SIGHUP ends a sweep, and then no worker process is left behind.  A hang becomes an ``error``
finding after the per-op ``timeout``.

Where units run is the executor's business (:mod:`gradcheck.checker.executors`): this
process (``jobs=1``), N worker processes of this machine (``jobs=N`` or ``isolate=True``),
or a Dask cluster (``scheduler="tcp://host:8786"``).  Every executor hands back reports by
unit, and the results are ordered by (op, seed), never by completion, so they are
byte-identical whatever the executor and the number of jobs.
"""

from __future__ import annotations

import importlib
import platform
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from gradcheck.checker.executors.cluster import ExecutorError, run_dask
from gradcheck.checker.executors.local import KILL_GRACE, run_local
from gradcheck.checker.executors.unit import (
    Unit,
    check_unit,
    error_report,
    load_registry,
    registry_spec,
)
from gradcheck.checker.report import Report, Results
from gradcheck.checker.timeout import stop_signals
from gradcheck.engine import Op, Registry, default_registry

__all__ = ["run_sweep", "DEFAULT_TIMEOUT", "KILL_GRACE", "error_report", "ExecutorError",
           "sweep_units", "sweep_environment"]

#: Seconds one op may take in a sweep unless ``timeout`` says otherwise.
DEFAULT_TIMEOUT = 600.0

Progress = Callable[[Report], None]


def _names(ops: Iterable[str | Op], registry: Registry,
           per_op: Mapping[str, Mapping[str, Any]] | None = None) -> list[str]:
    names: dict[str, None] = {}
    for op in ops:
        if isinstance(op, Op):
            names[op.name] = None
        elif "function" in (per_op or {}).get(op, {}):  # a [[function]] row: its own name
            names[op] = None
        else:
            for found in registry.select([op]):
                names[found.name] = None
    return list(names)


def sweep_units(names: Sequence[str], options: Mapping[str, Any],
                per_op: Mapping[str, Mapping[str, Any]] | None = None,
                seeds: Sequence[int] | None = None) -> list[Unit]:
    """The units of a sweep in (op, seed) order: every op at every seed.  An op's seeds are
    its ``per_op`` ``seeds``, else ``seeds``, else its one ``seed`` (default 0)."""
    units = []
    for name in sorted(names):
        settings = {**options, **(per_op or {}).get(name, {})}
        chosen = settings.pop("seeds", None) or seeds or [settings.get("seed", 0)]
        for seed in sorted(set(int(s) for s in chosen)):
            units.append((name, {**settings, "seed": seed}))
    return units


def run_sweep(ops: Iterable[str | Op], *, jobs: int = 1, progress: Progress | None = None,
              registry: Registry | str | None = None, timeout: float | None = DEFAULT_TIMEOUT,
              imports: Iterable[str] = (), isolate: bool | None = None,
              per_op: Mapping[str, Mapping[str, Any]] | None = None,
              seeds: Sequence[int] | None = None, scheduler: str | None = None,
              **options: Any) -> Results:
    """Check every op in ``ops`` (names, patterns such as ``'linalg.*'``, families, or Ops)
    with the :func:`~gradcheck.check` ``options``, at each of ``seeds`` (default: the one
    ``seed``); ``progress(report)`` is called as each unit (op at a seed) finishes.  Returns
    :class:`~gradcheck.checker.report.Results` ordered by (op, seed).

    ``imports`` are modules imported first, here and in every worker (they register user
    ops).  ``per_op`` maps an op name to options that replace ``options`` for that op (a
    suite's rows; its ``seeds`` too).  ``isolate=True`` runs the units in worker processes
    even with ``jobs=1``, so that nothing an op does (``os._exit``, ignoring its timeout,
    crashing the interpreter) stops the sweep; by default only ``jobs > 1`` uses workers.
    ``scheduler`` (a Dask scheduler's address) runs them on that cluster instead; without
    Dask distributed installed that raises :class:`ExecutorError` ("unavailable: ...")."""
    if not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"run_sweep: jobs must be a positive integer, got {jobs!r}")
    imports = tuple(imports)
    for module in imports:
        importlib.import_module(module)
    reg = load_registry(registry) if isinstance(registry, str) else \
        (registry or default_registry)
    names = _names(ops, reg, per_op)
    options = {**options, "timeout": timeout}
    units = sweep_units(names, options, per_op, seeds)
    remote = scheduler is not None
    workers = remote or (isolate if isolate is not None else (jobs > 1 and len(units) > 1))
    spec = registry_spec(registry, needed=workers and bool(units))
    reports: dict[int, Report] = {}

    def done(index: int, report: Report) -> None:
        reports[index] = report
        if progress is not None:
            progress(report)

    with stop_signals():
        if remote and units:
            assert scheduler is not None
            run_dask(units, spec, imports, scheduler, done)
        elif workers and units:
            run_local(units, spec, imports, jobs, done)
        else:
            for index, (name, unit_options) in enumerate(units):
                done(index, check_unit(reg, name, unit_options))
    ordered = [reports[i] for i in range(len(units))]
    references = [r for _, unit_options in units for r in unit_options.get("references", ())]
    return Results(ordered, _config(options, names, spec, units),
                   sweep_environment(references, ordered))


def _config(options: Mapping[str, Any], names: list[str], spec: str | None,
            units: list[Unit]) -> dict[str, Any]:
    config = {k: (list(v) if isinstance(v, (list, tuple)) else v)
              for k, v in sorted(options.items())}
    config["ops"] = sorted(names)
    chosen = sorted({u[1]["seed"] for u in units})
    if len(chosen) > 1:
        config["seeds"] = chosen
    if spec is not None:
        config["registry"] = spec
    return config


def sweep_environment(references: Iterable[str] = (),
                      reports: Iterable[Report] = ()) -> dict[str, str]:
    """The versions results depend on: Python, numpy, the platform, gradcheck, and every
    external framework the checks used -- each of ``references`` (the planned ones, every
    op's and row's, not only the run's defaults), each one a report compared with, and the
    framework a report's function is written in (its family: ``torch``, ``keras``...).

    Only package metadata is read, nothing imported; and it depends only on the plan and the
    reports, never on which process checked what, so it is the same at any number of jobs."""
    return {"python": platform.python_version(), "numpy": np.__version__,
            "platform": platform.system(), **_versions(_frameworks(references, reports))}


def _frameworks(references: Iterable[str], reports: Iterable[Report]) -> list[str]:
    """The external frameworks among ``references``, the reports' cells' references and
    the reports' families, in sorted order (a framework's function, a keras layer's too, is
    checked with the framework's name as its family)."""
    from gradcheck.checker.references import INTERNAL, known_references

    known = set(known_references()) - set(INTERNAL)
    names = {r for r in references if r not in INTERNAL}
    for report in reports:
        names |= {c.reference for c in report.cells if c.reference in known}
        if report.family in known:
            names.add(report.family)
    return sorted(names)


def _versions(references: Iterable[str]) -> dict[str, str]:
    """gradcheck's version and each external reference's, read from the installed packages'
    metadata (nothing is imported); "not installed" for a framework that is missing."""
    from importlib.metadata import PackageNotFoundError, version

    from gradcheck.checker.references import INTERNAL, get_reference, known_references

    def installed(*names: str) -> str:
        for name in names:
            try:
                return version(name)
            except PackageNotFoundError:
                continue
        return "not installed"

    known = known_references()
    out = {"gradcheck": installed("gradcheck")}
    for name in references:
        if name not in INTERNAL:
            adapter = get_reference(name) if name in known else None
            out[name] = installed(*getattr(adapter, "distributions", (name,)))
    return out
