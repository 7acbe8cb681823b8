"""The one verdict policy: which findings fail a run, and which a suite allows (with a reason).

The CLI's exit code, the terminal summary, the HTML report and the pytest plugin all ask this
module, so the three can never disagree.  A results file carries its policy (``fail_on`` and
the suite's ``exceptions``) in its ``config``, so an old run re-renders with its own verdict.

An ``allow`` entry of a suite row is a finding kind (``"mismatch"``: that kind, whoever it is
attributed to) or ``"<side>:<kind>"`` (``"tensorflow:mismatch"``: only that kind when it is
attributed to that side, e.g. a framework's wrong derivative, so the op's own mismatches still
fail).  An allowed finding is never hidden: it shows in every report, marked allowed, with its
reason.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from difflib import get_close_matches
from typing import Any

from gradcheck.checker.report import FAILURE_KINDS, KINDS, Finding, Report, Results

__all__ = ["Allowance", "VerdictPolicy", "parse_allow", "parse_fail_on_kinds", "known_sides",
           "CHECKER_SIDES"]


#: Sides a finding can carry besides the references (its ``attributed_to``, else its
#: ``reference``): the checker's own checks, and the numeric reference's verdict when two
#: sides disagree.  ``all`` is an op that could not be checked at all.
CHECKER_SIDES = ("structure", "linearity", "dummy", "neither", "undecided", "all")


def known_sides(wanted: tuple[str, ...] = ()) -> tuple[str, ...]:
    """Every side an ``allow`` entry may name: the references (``numeric``, ``self`` and
    the external ones, e.g. ``tensorflow``; a package installed since they were read is
    found when ``wanted`` names it) and :data:`CHECKER_SIDES`."""
    from gradcheck.checker.references import known_references

    return (*known_references(wanted), *CHECKER_SIDES)


def _did_you_mean(word: str, known: Iterable[str]) -> str:
    close = get_close_matches(word, list(known), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def parse_allow(entries: Iterable[str], where: str = "allow") -> frozenset[str]:
    """Validate ``allow`` entries (``kind`` or ``side:kind``); a bad one raises ValueError
    naming ``where`` and the entry, so a misspelt side cannot silently allow nothing."""
    out = set()
    for entry in entries:
        if not isinstance(entry, str):
            raise ValueError(f"{where}: entries are strings, got {entry!r}")
        side, colon, kind = entry.rpartition(":")
        if kind not in KINDS:
            raise ValueError(f"{where}: unknown finding kind {kind!r} in {entry!r}"
                             f"{_did_you_mean(kind, KINDS)}; expected one of "
                             f"{', '.join(KINDS)}, optionally as 'side:kind'")
        if colon:
            sides = known_sides((side,))
            if side not in sides:
                references = [s for s in sides if s not in CHECKER_SIDES]
                raise ValueError(f"{where}: unknown side {side!r} in {entry!r}"
                                 f"{_did_you_mean(side, sides)}; a side is a reference "
                                 f"({', '.join(references)}) or one of the checker's own "
                                 f"({', '.join(CHECKER_SIDES)})")
        out.add(entry)
    return frozenset(out)


def parse_fail_on_kinds(kinds: Any, where: str = "fail_on") -> frozenset[str]:
    """A recorded ``fail_on`` (a list of finding kinds), validated: ValueError naming
    ``where`` for anything else, so a corrupt results file is never judged by a guess."""
    if not isinstance(kinds, list) or not all(isinstance(k, str) for k in kinds):
        raise ValueError(f"{where} must be a list of finding kinds, got {kinds!r}")
    bad = [k for k in kinds if k not in KINDS]
    if bad:
        raise ValueError(f"{where}: unknown finding kind(s) {', '.join(map(repr, bad))}; "
                         f"expected some of {', '.join(KINDS)}")
    return frozenset(kinds)


@dataclass(frozen=True)
class Allowance:
    """What a suite row allows for one op, and why."""

    entries: frozenset[str]
    reason: str = ""

    def covers(self, finding: Finding) -> bool:
        side = finding.attributed_to or finding.reference
        return finding.kind in self.entries or f"{side}:{finding.kind}" in self.entries


@dataclass(frozen=True)
class VerdictPolicy:
    """Findings whose kind is in ``fail_on`` fail, unless ``allow[op]`` covers them.  Over
    many seeds, a failing kind fails its op when its failure rate (the share of the op's
    seeds at which it is found) exceeds ``max_failure_rate`` (default 0: any seed)."""

    fail_on: frozenset[str] = FAILURE_KINDS
    allow: Mapping[str, Allowance] = field(default_factory=dict)
    max_failure_rate: float = 0.0

    def allowed(self, finding: Finding) -> Allowance | None:
        """The allowance covering ``finding`` (a failing kind a suite row allows), or None."""
        a = self.allow.get(finding.op)
        return a if a is not None and a.covers(finding) else None

    def fails(self, finding: Finding) -> bool:
        return finding.kind in self.fail_on and self.allowed(finding) is None

    def failing(self, report: Report) -> list[Finding]:
        return [f for f in report.findings if self.fails(f)]

    def report_fails(self, report: Report) -> bool:
        return any(self.fails(f) for f in report.findings)

    def status(self, report: Report) -> str:
        """``"fail"``, ``"allowed"`` (only allowed failures), ``"warn"`` or ``"pass"``."""
        if self.report_fails(report):
            return "fail"
        if any(f.kind in self.fail_on for f in report.findings):
            return "allowed"
        return "warn" if report.warnings else "pass"

    def exit_code(self, results: Results) -> int:
        """0 when nothing fails, 1 when a finding fails (over seeds: at a failure rate
        above ``max_failure_rate``)."""
        if self.max_failure_rate > 0:
            from gradcheck.checker.seeds import failing_over_seeds

            return int(bool(failing_over_seeds(results.reports, self)))
        return int(any(self.report_fails(r) for r in results.reports))

    def to_config(self) -> dict[str, Any]:
        """What a results file records of the policy."""
        return {"fail_on": sorted(self.fail_on),
                "exceptions": {op: {"allow": sorted(a.entries), "reason": a.reason}
                               for op, a in sorted(self.allow.items())}}

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> VerdictPolicy:
        """The policy a results file was judged by (the default where it records none);
        ValueError naming the key when what it records is not a policy."""
        fail_on = parse_fail_on_kinds(config["fail_on"], "config.fail_on") \
            if "fail_on" in config else FAILURE_KINDS
        exceptions = config.get("exceptions", {})
        if not isinstance(exceptions, Mapping) or \
                not all(isinstance(row, Mapping) for row in exceptions.values()):
            raise ValueError(f"config.exceptions must map op names to tables, got "
                             f"{exceptions!r}")
        allow = {op: Allowance(parse_allow(row.get("allow", ()), f"config.exceptions.{op}.allow"),
                               str(row.get("reason", "")))
                 for op, row in dict(exceptions).items() if row.get("allow")}
        rate = config.get("max_failure_rate", 0.0)
        if isinstance(rate, bool) or not isinstance(rate, (int, float)) or not 0 <= rate < 1:
            raise ValueError(f"config.max_failure_rate must be a number from 0 to below 1, "
                             f"got {rate!r}")
        return cls(fail_on, allow, float(rate))
