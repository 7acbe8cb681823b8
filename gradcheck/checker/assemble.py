"""From outcomes of many examples to a report's cells and findings."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gradcheck.checker.compare import Outcome
from gradcheck.checker.examine import ExampleResult
from gradcheck.checker.paths import PATHS
from gradcheck.checker.report import FAILURE_KINDS, WARNING_KINDS, Cell, Finding, severity_of
from gradcheck.checker.sampling import Example
from gradcheck.checker.session import STRUCTURE

__all__ = ["CellStats", "Collector", "finding", "counterexample", "sort_findings", "undecided"]

#: A fast failure worth shrinking: failures and warnings (info kinds are not shrunk).
SHRINKABLE = FAILURE_KINDS | WARNING_KINDS


def _jsonable(arrays: Any) -> Any:
    if isinstance(arrays, (list, tuple)):
        return [_jsonable(a) for a in arrays]
    return np.asarray(arrays).tolist()


def counterexample(example: Example, outcome: Outcome) -> dict[str, Any]:
    """What reproduces a finding: the example and the directions the check used."""
    out = example.describe()
    for name, value in sorted(outcome.directions.items()):
        out[name] = _jsonable(value)
    return out


def finding(op: str, outcome: Outcome, example: Example, **details: Any) -> Finding:
    """A :class:`Finding` from the outcome of one example; a failed comparison carries the
    two values where the error is worst (``analytic``: what the path gave; ``numeric``: what
    it is compared with — the numeric derivative, the other side of an identity, or the
    other implementation)."""
    v = outcome.verdict
    if v is not None and not v.passed and outcome.kind is not None:
        details = {"analytic": v.got, "numeric": v.expected, **details}
    return Finding(
        op=op, path=outcome.path, reference=outcome.reference, kind=outcome.kind or "mismatch",
        message=outcome.message,
        max_abs_err=v.max_abs_err if v else math.nan,
        max_rel_err=v.max_rel_err if v else math.nan,
        tolerance=v.tolerance if v else math.nan,
        counterexample=counterexample(example, outcome),
        worst_index=outcome.worst_index, traceback=outcome.traceback,
        details={**outcome.details, **details, "dtype": example.dtype},
        attributed_to=outcome.side or outcome.details.get("attributed_to", ""))


_ORDER = {"failure": 0, "warning": 1, "info": 2}


def sort_findings(findings: list[Finding]) -> list[Finding]:
    """Failures first, then by path order, reference and kind: a deterministic order."""
    def key(f: Finding) -> tuple[Any, ...]:
        path = PATHS.index(f.path) if f.path in PATHS else -1
        return (_ORDER[severity_of(f.kind)], path, f.reference, f.kind)
    return sorted(findings, key=key)


def undecided(outcome: Outcome, outcomes: list[Outcome]) -> str:
    """For a failing identity the numeric reference did not decide (it names suspects, and
    did not conclusively reject every one of them at this example), what is known, for its
    cell's note; "" for any other outcome."""
    suspects = outcome.details.get("suspects") if outcome.kind is not None else None
    if outcome.reference != "self" or not suspects:
        return ""
    rejected = {o.path for o in outcomes if o.reference == "numeric" and o.side == outcome.side
                and o.kind is not None and not o.details.get("inconclusive")}
    if set(suspects) <= rejected:
        return ""  # the numeric reference rejects both: both are known wrong
    likelier = outcome.details.get("likelier")
    told = f"{likelier} is the likelier culprit" if likelier else "both are suspects"
    return (f"undecided: the numeric reference cannot tell which of {' and '.join(suspects)} "
            f"is wrong ({told})")


@dataclass
class CellStats:
    """Accumulates the outcomes of one (path, reference) over examples."""

    worst: Outcome | None = None
    examples: int = 0
    kinds: set[str] = field(default_factory=set)
    #: What is known of its first failing identity the numeric reference did not decide.
    undecided: str = ""

    def add(self, outcome: Outcome, undecided: str = "") -> None:
        """Count ``outcome``; ``undecided`` (see :func:`undecided`) when it is a failure
        that does not show this path wrong."""
        self.examples += 1
        if undecided:
            self.undecided = self.undecided or undecided
        elif outcome.kind is not None:
            self.kinds.add(outcome.kind)
        ratio = outcome.verdict.ratio if outcome.verdict is not None else -1.0
        best = self.worst.verdict.ratio if self.worst and self.worst.verdict else -1.0
        if self.worst is None or ratio > best:
            self.worst = outcome

    def status(self) -> str:
        """The worst of its outcomes: "undecided" when its only failures are identities
        the numeric reference did not decide (still a failure of the check, never a pass)."""
        if "error" in self.kinds:
            return "error"
        if self.kinds & FAILURE_KINDS:
            return "fail"
        if self.undecided:
            return "undecided"
        if self.kinds & WARNING_KINDS:
            return "warn"
        return "pass" if self.examples else "skipped"


@dataclass
class Collector:
    """Cells and first failures of one target, over its dtypes and examples."""

    pairs: list[tuple[str, str]]
    #: External references (their cells gather every outcome of their side).
    sides: tuple[str, ...] = ()
    cells: dict[tuple[str, str], CellStats] = field(default_factory=dict)
    first: dict[tuple[str, str, str, str], tuple[Outcome, Example]] = field(
        default_factory=dict)
    failing_dtypes: dict[tuple[str, str, str, str], list[str]] = field(default_factory=dict)
    structural: dict[tuple[str, str], set[str]] = field(default_factory=dict)
    notes: dict[tuple[str, str], str] = field(default_factory=dict)
    #: Checks (path, reference, side) that saw a nonzero value (a pass, or a failure with
    #: something in it): the others computed nothing at any example.
    nonzero: set[tuple[str, str, str]] = field(default_factory=set)

    def add(self, result: ExampleResult) -> None:
        dtype = result.example.dtype
        for o in result.outcomes:
            column = o.side or o.reference
            if o.reference == STRUCTURE:
                self.structural.setdefault((o.path, o.side), set()).add(o.kind or "")
                if o.kind:
                    self.notes.setdefault((o.path, o.side), o.message)
            elif (o.path, column) in self.pairs:
                self.cells.setdefault((o.path, column), CellStats()).add(
                    o, undecided(o, result.outcomes))
            if not o.details.get("all_zero"):
                self.nonzero.add(o.check)
            if o.kind is None or o.kind == "nondifferentiable":
                continue
            key = o.key
            self.first.setdefault(key, (o, result.example))
            dtypes = self.failing_dtypes.setdefault(key, [])
            if dtype not in dtypes:
                dtypes.append(dtype)

    def silent(self, key: tuple[str, str, str, str]) -> bool:
        """A mismatch whose path was identically zero at every example it was compared."""
        kind, path, ref, side = key
        outcome = self.first[key][0]
        return kind == "mismatch" and bool(outcome.details.get("all_zero")) and \
            (path, ref, side) not in self.nonzero

    def build_cells(self, unsupported: dict[str, str]) -> list[Cell]:
        out = []
        for path, ref in self.pairs:
            if path in unsupported:
                out.append(Cell(path, ref, "unsupported", note=unsupported[path]))
                continue
            stats = self.cells.get((path, ref), CellStats())
            status = stats.status()
            note = stats.undecided if status == "undecided" else ""
            side = ref if ref in self.sides else ""
            broken = set(self.structural.get((path, side), set()))
            if side:
                broken |= self.structural.get(("forward", side), set())
            broken = broken - {""}
            if broken == {"unsupported"}:
                if not stats.examples:
                    status = "unsupported"
                note = self.notes.get((path, side)) or self.notes.get(("forward", side), "")
            elif broken - {"unsupported"}:
                bad = sorted(broken - {"unsupported"})
                status = "error" if bad == ["error"] else "fail"
                note = (self.notes.get((path, side)) or self.notes.get(("forward", side))
                        if side else "") or f"{path} failed structurally: {', '.join(bad)}"
            v = stats.worst.verdict if stats.worst else None
            out.append(Cell(path, ref, status, v.max_abs_err if v else math.nan,
                            v.tolerance if v else math.nan, stats.examples, note))
        return out
