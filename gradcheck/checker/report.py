"""Results of a check as plain dataclasses that round-trip through JSON.

A failed check is a result, not an exception: only ``assert_gradients``, the
CLI's exit code and the pytest plugin turn a finding into a failure.  Reports
are the single input of every renderer (terminal, HTML), so an old run can be
re-rendered from its JSON alone.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from gradcheck.checker.complex import format_complex

__all__ = [
    "KINDS",
    "FAILURE_KINDS",
    "WARNING_KINDS",
    "INFO_KINDS",
    "STATUSES",
    "Finding",
    "Cell",
    "Report",
    "Results",
    "severity_of",
]

#: Every finding kind the checker can produce (names are public and fixed).
KINDS = (
    "mismatch",
    "silently_zero",
    "value_leak",
    "dependence_leak",
    "nonlinear",
    "shape",
    "dtype",
    "input_mutated",
    "nondeterministic",
    "nondifferentiable",
    "error",
    "unsupported",
)
#: Kinds that mean a derivative is wrong or unusable.
FAILURE_KINDS = frozenset(
    {"mismatch", "silently_zero", "value_leak", "nonlinear", "shape", "dtype",
     "input_mutated", "nondeterministic", "error"}
)
#: Correct but wasteful: reported apart from failures.
WARNING_KINDS = frozenset({"dependence_leak"})
#: Reported for information, never a failure.
INFO_KINDS = frozenset({"nondifferentiable", "unsupported"})

#: Status of one cell of the consistency matrix, best to worst.  "undecided": an identity
#: between two paths failed and the numeric reference cannot tell which path is wrong (a
#: failure of the check, but not known to be this path's).
STATUSES = ("pass", "skipped", "unsupported", "unavailable", "warn", "undecided", "fail",
            "error")


def severity_of(kind: str) -> str:
    """``"failure"``, ``"warning"`` or ``"info"`` for a finding kind."""
    if kind in FAILURE_KINDS:
        return "failure"
    if kind in WARNING_KINDS:
        return "warning"
    if kind in INFO_KINDS:
        return "info"
    raise ValueError(f"unknown finding kind {kind!r}; expected one of {', '.join(KINDS)}")


def _clean(value: Any) -> Any:
    """Make a value JSON-safe and deterministic (floats stay floats, inf/nan as strings,
    complex numbers as ``"1.5-0.2j"``)."""
    if isinstance(value, complex):
        return format_complex(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return value
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    if hasattr(value, "tolist"):  # numpy scalars and arrays
        return _clean(value.tolist())
    return value


def _unclean(value: Any) -> Any:
    if value == "nan":
        return math.nan
    if value == "inf":
        return math.inf
    if value == "-inf":
        return -math.inf
    return value


def _ratio(err: float, tolerance: float) -> float:
    if not (tolerance > 0) or math.isnan(err):
        return math.nan
    return err / tolerance


def _known_fields(cls: Any, d: dict[str, Any]) -> dict[str, Any]:
    """The entries of ``d`` that are fields of ``cls``; float fields back from JSON strings."""
    kwargs = {}
    for f in fields(cls):
        if f.name in d:
            value = d[f.name]
            kwargs[f.name] = float(_unclean(value)) if f.type == "float" else value
    return kwargs


@dataclass
class Finding:
    """One thing the checker found about one op on one path against one reference.

    ``attributed_to`` names the side at fault when it is not the checked target: a framework
    whose own derivative of the op disagrees with the numeric reference.

    ``counterexample`` holds what reproduces it: the inputs (as nested lists),
    the tangent and/or cotangent, the dtype, the shapes and the seed.
    """

    op: str
    path: str
    reference: str
    kind: str
    message: str
    max_abs_err: float = math.nan
    max_rel_err: float = math.nan
    tolerance: float = math.nan
    counterexample: dict[str, Any] = field(default_factory=dict)
    worst_index: list[int] | None = None
    traceback: str | None = None
    details: dict[str, Any] = field(default_factory=dict)
    #: Whose derivative is wrong: "" for the checked target itself, else the reference
    #: framework the numeric derivative contradicts ("tensorflow", ...), "neither" (it
    #: contradicts both) or "undecided" (it cannot tell).
    attributed_to: str = ""

    @property
    def severity(self) -> str:
        return severity_of(self.kind)

    @property
    def ratio(self) -> float:
        """Error over tolerance (above 1 fails); nan when not a numeric comparison."""
        return _ratio(self.max_abs_err, self.tolerance)

    def to_dict(self) -> dict[str, Any]:
        d = _clean(asdict(self))
        d["severity"] = self.severity
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Finding:
        return cls(**_known_fields(cls, d))


@dataclass
class Cell:
    """One cell of the consistency matrix: an op on a path against a reference."""

    path: str
    reference: str
    status: str
    max_abs_err: float = math.nan
    tolerance: float = math.nan
    examples: int = 0
    note: str = ""

    @property
    def ratio(self) -> float:
        """Error over tolerance (above 1 fails); nan when not a numeric comparison."""
        return _ratio(self.max_abs_err, self.tolerance)

    def to_dict(self) -> dict[str, Any]:
        return _clean(asdict(self))

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Cell:
        return cls(**_known_fields(cls, d))


@dataclass
class Report:
    """Everything one ``gradcheck.check`` call found about one target.

    ``convergence`` (the report's plot data: numeric error against step, per path) takes no
    part in a verdict, so a check may leave it to be computed when it is first read
    (:meth:`defer_convergence`): by ``to_json``, a renderer, or the caller.  A report is
    never copied or pickled without it."""

    op: str
    family: str = ""
    seed: int = 0
    mode: str = "fast"
    dtypes: list[str] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    cells: list[Cell] = field(default_factory=list)
    stats: dict[str, Any] = field(default_factory=dict)
    convergence: dict[str, Any] = field(default_factory=dict)
    tolerance_reason: str = ""
    #: The call's own ``atol`` / ``rtol`` / ``eps`` (``check(..., atol=...)``), when given.
    tolerance_overrides: dict[str, float] = field(default_factory=dict)

    @property
    def overrides_text(self) -> str:
        """``"tolerance overridden: atol=1e-05, eps=1e-06"`` (empty when nothing is)."""
        if not self.tolerance_overrides:
            return ""
        return "tolerance overridden: " + ", ".join(
            f"{k}={v:g}" for k, v in self.tolerance_overrides.items())

    @property
    def failures(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == "failure"]

    @property
    def warnings(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == "warning"]

    @property
    def passed(self) -> bool:
        """True when no finding is a failure (warnings and info do not fail)."""
        return not self.failures

    def failing(self, kinds: frozenset[str] | set[str] | None = None) -> list[Finding]:
        """Findings whose kind is in ``kinds`` (default: the failure kinds)."""
        kinds = FAILURE_KINDS if kinds is None else kinds
        return [f for f in self.findings if f.kind in kinds]

    def cell(self, path: str, reference: str) -> Cell | None:
        for c in self.cells:
            if c.path == path and c.reference == reference:
                return c
        return None

    def defer_convergence(self, compute: Callable[[], dict[str, Any]]) -> None:
        """Let ``compute()`` fill ``convergence`` when it is first read (it may add to
        ``stats`` what it spent); setting ``convergence`` cancels it."""
        self.__dict__["_pending_convergence"] = compute

    def complete(self) -> Report:
        """Compute what the check deferred (the convergence data) now; returns the report."""
        _convergence(self)
        return self

    def __getstate__(self) -> dict[str, Any]:
        self.complete()  # here: another process could not
        return dict(self.__dict__)

    def to_dict(self, convergence: bool = True) -> dict[str, Any]:
        """The report as plain data; ``convergence=False`` leaves the convergence data out
        (and uncomputed, when the check deferred it)."""
        plot = _convergence(self) if convergence else {}  # first: computing it adds to stats
        return {
            "op": self.op,
            "family": self.family,
            "seed": self.seed,
            "mode": self.mode,
            "dtypes": list(self.dtypes),
            "passed": self.passed,
            "tolerance_reason": self.tolerance_reason,
            "tolerance_overrides": dict(self.tolerance_overrides),
            "findings": [f.to_dict() for f in self.findings],
            "cells": [c.to_dict() for c in self.cells],
            "stats": _clean(self.stats),
            "convergence": _clean(plot),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Report:
        return cls(
            op=d["op"],
            family=d.get("family", ""),
            seed=d.get("seed", 0),
            mode=d.get("mode", "fast"),
            dtypes=list(d.get("dtypes", [])),
            findings=[Finding.from_dict(f) for f in d.get("findings", [])],
            cells=[Cell.from_dict(c) for c in d.get("cells", [])],
            stats=d.get("stats", {}),
            convergence=d.get("convergence", {}),
            tolerance_reason=d.get("tolerance_reason", ""),
            tolerance_overrides=dict(d.get("tolerance_overrides", {})),
        )

    def to_json(self, indent: int | None = 2) -> str:
        """Deterministic JSON: the same seed gives byte-identical text."""
        return json.dumps(self.to_dict(), indent=indent, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> Report:
        return cls.from_dict(json.loads(text))


def _convergence(report: Report) -> dict[str, Any]:
    pending = report.__dict__.pop("_pending_convergence", None)
    if pending is not None:
        report.__dict__["_convergence"] = pending()
    value: dict[str, Any] = report.__dict__.get("_convergence", {})
    return value


def _set_convergence(report: Report, value: dict[str, Any]) -> None:
    report.__dict__.pop("_pending_convergence", None)
    report.__dict__["_convergence"] = value


# A property over the dataclass field (set after the class is made, so the field keeps its
# default): reading it computes what a check deferred.
Report.convergence = property(_convergence, _set_convergence)  # type: ignore[assignment]


@dataclass
class Results:
    """A sweep: one report per op, plus how the sweep was run."""

    reports: list[Report] = field(default_factory=list)
    config: dict[str, Any] = field(default_factory=dict)
    environment: dict[str, Any] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return all(r.passed for r in self.reports)

    def to_dict(self) -> dict[str, Any]:
        """The results file: reports in (op, seed) order; when an op was checked at several
        seeds, also ``seed_summary`` (per op and finding kind, see :mod:`.seeds`)."""
        from gradcheck.checker.seeds import multi_seed, summary_dict

        reports = sorted(self.reports, key=lambda r: (r.op, r.seed))
        out = {
            "format": "gradcheck-results/1",
            "config": _clean(self.config),
            "environment": _clean(self.environment),
            "reports": [r.to_dict() for r in reports],
        }
        if multi_seed(reports):
            out["seed_summary"] = _clean(summary_dict(reports))
        return out

    @classmethod
    def from_dict(cls, d: Any) -> Results:
        """Results from their JSON form; anything else (valid JSON of another shape
        included) raises ValueError saying what is wrong, never an AttributeError."""
        bad = "not a gradcheck results file: "
        if not isinstance(d, dict):
            raise ValueError(f"{bad}expected a JSON object, got {_json_type(d)}")
        if d.get("format") != "gradcheck-results/1":
            raise ValueError(f"{bad}format is {d.get('format')!r}, "
                             "expected 'gradcheck-results/1'")
        reports = d.get("reports")
        if not isinstance(reports, list):
            raise ValueError(f"{bad}'reports' must be a list, got {_json_type(reports)}")
        for i, r in enumerate(reports):
            if not isinstance(r, dict) or not isinstance(r.get("op"), str):
                raise ValueError(f"{bad}reports[{i}] must be an object with an 'op' name, "
                                 f"got {_json_type(r)}")
        for key in ("config", "environment"):
            if not isinstance(d.get(key, {}), dict):
                raise ValueError(f"{bad}'{key}' must be an object, got {_json_type(d[key])}")
        return cls(
            reports=[Report.from_dict(r) for r in reports],
            config=d.get("config", {}),
            environment=d.get("environment", {}),
        )

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> Results:
        return cls.from_dict(json.loads(text))


def _json_type(value: Any) -> str:
    """What a JSON value is, in JSON's words (for a results file's error messages)."""
    if value is None:
        return "null"
    names = {bool: "a boolean", int: "a number", float: "a number", str: "a string",
             list: "a list", dict: "an object"}
    return names.get(type(value), type(value).__name__)
