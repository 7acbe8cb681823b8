"""A suite's ``[[function]]`` rows before the sweep: each target is found now (a misspelt
one is a usage error before any checking starts), and a row whose framework is not
installed becomes a report of ``unavailable`` cells with the install hint instead of a task.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from gradcheck.checker.dotted import load_function, root_module
from gradcheck.checker.report import Cell, Report
from gradcheck.cli.suites import PATHS, PlannedOp

__all__ = ["FunctionTargetError", "is_function", "split_available", "unavailable_report"]


class FunctionTargetError(ValueError):
    """A row's target cannot be found (the message names the row and the missing part)."""


def is_function(planned: PlannedOp) -> bool:
    return "function" in planned.settings


def _framework_status(module: str) -> str | None:
    """None when ``module`` is a framework gradcheck knows and it is installed (or not a
    framework at all); the oracle's "unavailable: ... install ..." text otherwise."""
    from gradcheck.oracles import get_oracle
    from gradcheck.oracles.targets import FRAMEWORKS

    for framework, prefixes in FRAMEWORKS.items():
        if module in prefixes:
            return get_oracle(framework).status()
    return None


def split_available(planned: Sequence[PlannedOp]) -> tuple[list[PlannedOp], dict[str, str]]:
    """``(checkable, unavailable)``: the function rows whose targets load, and for each row
    whose framework is missing the reason.  A target that does not exist, or whose module
    raises when imported, raises :class:`FunctionTargetError`."""
    status: dict[str, str | None] = {}
    ready: list[PlannedOp] = []
    missing: dict[str, str] = {}
    for p in planned:
        path = str(p.settings["function"])
        module = root_module(path)
        if module not in status:
            status[module] = _framework_status(module)
        if status[module] is not None:
            missing[p.name] = str(status[module])
            continue
        try:
            load_function(path, f"[[function]] {p.name!r}")
        except ImportError as error:
            raise FunctionTargetError(f"[[function]] {p.name!r}: cannot import {path!r}: "
                                      f"{error}") from None
        except ValueError as error:
            raise FunctionTargetError(str(error)) from None
        except Exception as error:  # noqa: BLE001 - the user's module: any error is theirs
            raise FunctionTargetError(f"[[function]] {p.name!r}: importing {path!r} raised "
                                      f"{type(error).__name__}: {error}") from None
        except SystemExit as error:  # a script imported as a module
            raise FunctionTargetError(f"[[function]] {p.name!r}: importing {path!r} called "
                                      f"sys.exit({error.code!r}) (guard a script's main code "
                                      "with if __name__ == '__main__')") from None
        ready.append(p)
    return ready, missing


def unavailable_report(planned: PlannedOp, why: str, settings: Mapping[str, Any]) -> Report:
    """The report of a row whose framework is not installed: every path ``unavailable``."""
    merged: dict[str, Any] = {**settings, **planned.settings}
    report = Report(op=planned.name, family=root_module(str(merged["function"])),
                    seed=int(merged.get("seed", 0)), mode=str(merged.get("mode", "fast")),
                    dtypes=list(merged.get("dtypes") or ["float64"]))
    report.cells = [Cell(path, root_module(str(merged["function"])), "unavailable", note=why)
                    for path in merged.get("paths") or PATHS]
    return report
