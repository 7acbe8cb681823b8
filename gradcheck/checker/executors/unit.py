"""One unit of a sweep's work -- an op at a seed, with its check options -- and what every
executor shares to run one: the registry named for other processes, the check that turns
anything an op does into a report, and the containment of a worker process.

A unit's report travels between processes as its JSON text, so where it ran never shows in
the results.
"""

from __future__ import annotations

import gc
import importlib
import os
import signal
import sys
import traceback
from collections.abc import Mapping
from typing import Any

from gradcheck.checker.api import check
from gradcheck.checker.dotted import load_function
from gradcheck.checker.report import Finding, Report
from gradcheck.checker.threads import ONE_THREAD
from gradcheck.checker.timeout import Terminated, interrupted
from gradcheck.engine import Registry, default_registry

__all__ = ["Unit", "error_report", "check_unit", "registry_spec", "load_registry",
           "import_all", "run_unit", "settle_heap", "contain_worker", "ONE_THREAD"]

#: ``(op name, check options)``; the options hold the unit's ``seed``.
Unit = tuple[str, dict[str, Any]]



def error_report(name: str, message: str, tb: str | None = None,
                 stats: Mapping[str, Any] | None = None, **options: Any) -> Report:
    """A report whose only finding is an ``error`` (the op could not be checked)."""
    report = Report(op=name, seed=int(options.get("seed", 0)), mode=options.get("mode", "fast"))
    report.findings = [Finding(name, "all", "all", "error", message, traceback=tb)]
    report.stats = dict(stats or {})
    return report


def check_unit(registry: Registry, name: str, options: dict[str, Any]) -> Report:
    """``check(name, **options)``; whatever it raises becomes the op's ``error`` report,
    except the user's own Ctrl-C and a stop signal, which end the sweep."""
    try:
        if "function" in options:  # a suite's [[function]] row: a function by dotted path
            options = dict(options)
            target = load_function(options.pop("function"), name)
            report = check(target, name=name, **options)
        else:
            report = check(name, registry=registry, **options)
        return report.complete()  # a unit's report is whole when the unit ends
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


def registry_spec(registry: Registry | str | None, needed: bool = True) -> str | None:
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


def load_registry(spec: str | None) -> Registry:
    """The registry ``spec`` names (see :func:`registry_spec`), imported here."""
    if spec is None:
        import gradcheck  # noqa: F401 - registers the shipped ops

        return default_registry
    module, _, attr = spec.partition(":")
    found = getattr(importlib.import_module(module), attr)
    if not isinstance(found, Registry):
        raise TypeError(f"run_sweep: {spec} is a {type(found).__name__}, not a Registry")
    return found


def import_all(spec: str | None, imports: tuple[str, ...]) -> tuple[Registry | None, str]:
    """Import the user's modules and the registry in a worker: ``(registry, "")``, or
    ``(None, why)`` when that fails (every unit then says why it was not checked)."""
    try:
        for module in imports:
            importlib.import_module(module)
        return load_registry(spec), ""
    except BaseException as e:  # noqa: BLE001 - reported on every unit, never raised
        return None, f"the worker process could not start: {type(e).__name__}: {e}"


def run_unit(registry: Registry | None, failure: str, unit: Unit) -> str:
    """The JSON text of a unit's report (its ``error`` report when the worker could not
    import what it needs)."""
    name, options = unit
    report = check_unit(registry, name, options) if registry is not None else \
        error_report(name, f"{name}: {failure}", **options)
    return report.to_json()


def settle_heap() -> None:
    """Collect a worker's garbage once, then move what is left out of the cycle collector's
    view (``gc.freeze``).  Called after a worker's first unit, when the frameworks it checks
    against are imported: their modules, classes and functions (half a million objects with
    TensorFlow, torch and JAX) live as long as the process, yet every full collection walked
    them all again.  One registry op in three with the frameworks imported: 10.48-10.62 s
    of CPU, 10.07-10.08 s frozen.  Only a worker process, which is the sweep's own, freezes:
    the library never does it in the caller's."""
    gc.collect()
    gc.freeze()


def contain_worker(parent: int) -> None:
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
