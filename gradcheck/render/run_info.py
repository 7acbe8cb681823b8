"""The run's facts for the top of the HTML report: settings, environment, suite exceptions.

All of it read from the results' ``config`` and ``environment`` (a report is a pure function
of the JSON): what the JSON does not record is said to be missing, never looked up.
"""

from __future__ import annotations

import json
from typing import Any

from gradcheck.checker.references import INTERNAL, known_references
from gradcheck.checker.report import Results

__all__ = ["run_box", "environment_box", "exception_rows", "fact", "FRAMEWORKS"]

#: Config keys the Run box leaves out: they have their own tables (or are the op list).
_OWN_TABLES = ("exceptions", "skipped", "ops")
#: Reference frameworks whose versions the Environment box reports: every plugged-in one.
FRAMEWORKS = tuple(r for r in known_references() if r not in INTERNAL)


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _flatten(mapping: dict[str, Any], prefix: str = "") -> list[tuple[str, str]]:
    """``{"versions": {"numpy": "2.1"}}`` -> ``[("versions.numpy", "2.1")]``."""
    items: list[tuple[str, str]] = []
    for key, value in mapping.items():
        if isinstance(value, dict) and value:
            items += _flatten(value, f"{prefix}{key}.")
        else:
            items.append((f"{prefix}{key}", _text(value)))
    return items


def fact(results: Results, name: str) -> str:
    """A run setting from the config, else the distinct values the reports carry."""
    if name in results.config:
        return _text(results.config[name])
    values: set[str] = set()
    for report in results.reports:
        value = getattr(report, name)
        values.update(value if isinstance(value, list) else [str(value)])
    return ", ".join(sorted(values)) or "—"


def run_box(config: dict[str, Any]) -> list[tuple[str, str]]:
    """The run's settings, one line each; lists joined, the op list as a count."""
    items = []
    for key, value in config.items():
        if key in _OWN_TABLES or key in ("seed", "mode", "dtypes"):
            continue
        if isinstance(value, list) and all(not isinstance(v, (list, dict)) for v in value):
            items.append((key, ", ".join(str(v) for v in value) or "—"))
        elif isinstance(value, dict):
            items += _flatten(value, f"{key}.")
        else:
            items.append((key, _text(value)))
    if isinstance(config.get("ops"), list):
        items.append(("ops checked", str(len(config["ops"]))))
    return items


def environment_box(results: Results) -> list[tuple[str, str]]:
    """What the results record of the environment, then the versions of gradcheck and of
    every reference framework the run used: ``not recorded`` where the JSON lacks one (a
    report is a pure function of the JSON: nothing is looked up at render time)."""
    env = results.environment
    items = _flatten(env)
    recorded = {key.rsplit(".", 1)[-1] for key, _ in items}
    used = [r for r in results.config.get("references", []) if r in FRAMEWORKS]
    used += sorted({c.reference for r in results.reports for c in r.cells
                    if c.reference in FRAMEWORKS} - set(used))
    for name in ("gradcheck", *used):
        if name not in recorded:
            items.append((name, "not recorded"))
    return items


def exception_rows(config: dict[str, Any]) -> list[tuple[str, str, str]]:
    """The suite's exceptions as rows of op, what is allowed, and why."""
    rows = []
    for op, row in sorted(dict(config.get("exceptions", {})).items()):
        row = row if isinstance(row, dict) else {}
        allow = ", ".join(str(a) for a in row.get("allow", ())) or "—"
        settings = row.get("settings") or {}
        if settings:
            allow += " (settings: " + ", ".join(f"{k}={_text(v)}"
                                                for k, v in sorted(settings.items())) + ")"
        rows.append((op, allow, str(row.get("reason", ""))))
    return rows
