"""One vocabulary of statuses for every front end: terminal, HTML report and pytest plugin.

Each op gets exactly one status, so counts partition the ops ("3 fail, 1 error" never
overlap); each finding gets one tag.  Both come from :class:`VerdictPolicy`, the one verdict
policy, so the exit code, the terminal, the HTML page and the pytest plugin always agree.
Allowed findings are never hidden: they carry the tag ``allowed`` and the suite's reason.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from gradcheck.checker.paths import PATHS
from gradcheck.checker.policy import VerdictPolicy
from gradcheck.checker.references import INTERNAL, known_references
from gradcheck.checker.report import Finding, Report, Results
from gradcheck.checker.seeds import SeedFinding, seed_findings

__all__ = [
    "OP_STATUSES",
    "STATUS_MEANING",
    "CELL_MEANING",
    "FINDING_TAGS",
    "op_status",
    "finding_tag",
    "count_statuses",
    "OpFindings",
    "findings_by_op",
    "interleave",
    "values_text",
    "attribution_text",
    "message_text",
    "path_rank",
    "reference_rank",
    "PATH_ORDER",
    "REFERENCE_ORDER",
    "seed_rows",
    "seed_list",
]

#: Op statuses, worst first.  Every op has exactly one.
OP_STATUSES = ("fail", "error", "allowed", "warn", "pass")
#: What each op status means, said once in every front end.
STATUS_MEANING = {
    "fail": "a derivative is wrong or unusable",
    "error": "the check itself could not run",
    "allowed": "fails, but its suite allows it (reason shown)",
    "warn": "correct, but wasteful (the double-VJP needs its dummy fed)",
    "pass": "nothing found",
}
#: What a path's cell status means where its word alone could mislead.
CELL_MEANING = {
    "undecided": "an identity between two paths fails and the numeric reference cannot tell "
                 "which of them is wrong (a failure, not known to be this path's)",
}
#: Finding tags: the op statuses, plus info (never fails) and ignored (a failure kind that
#: ``--fail-on`` leaves out).
FINDING_TAGS = ("fail", "error", "allowed", "warn", "ignored", "info")

#: The checker's paths in order (its path table's): a path's error makes the later ones
#: wrong too.
PATH_ORDER = PATHS
#: References in order: the numeric derivative first, it is the root of every verdict, then
#: the plugged-in frameworks, then the identities between paths.
REFERENCE_ORDER = ("numeric", *(r for r in known_references() if r not in INTERNAL), "self")


def op_status(report: Report, policy: VerdictPolicy) -> str:
    """One of :data:`OP_STATUSES`: ``error`` when every failing finding is an ``error``
    (nothing could be judged), else the policy's status."""
    failing = policy.failing(report)
    if failing and all(f.kind == "error" for f in failing):
        return "error"
    return policy.status(report)


def finding_tag(finding: Finding, policy: VerdictPolicy) -> str:
    """One of :data:`FINDING_TAGS` for ``finding`` under ``policy``."""
    if policy.fails(finding):
        return "error" if finding.kind == "error" else "fail"
    if finding.kind in policy.fail_on:
        return "allowed"
    if finding.severity == "warning":
        return "warn"
    return "ignored" if finding.severity == "failure" else "info"


def count_statuses(results: Results, policy: VerdictPolicy) -> dict[str, int]:
    """How many ops have each status (the counts add up to the number of ops)."""
    counts = dict.fromkeys(OP_STATUSES, 0)
    for report in results.reports:
        counts[op_status(report, policy)] += 1
    return counts


def path_rank(path: str) -> tuple[int, int, int, str]:
    """Sort key of a path: the checker's paths in order (the root cause first), then
    identities between them, then the others; a prefixed path of older results
    (``framework.path``) after its own kind."""
    prefix, _, rest = path.rpartition(".")
    base = rest if prefix and rest in PATH_ORDER else path
    late = int(base != path)
    if base in PATH_ORDER:
        return (late, 0, PATH_ORDER.index(base), base)
    return (late, 1 if "(" in base else 2, 0, base)


def reference_rank(reference: str) -> tuple[int, str]:
    """Sort key of a reference: the numeric derivative first, then the frameworks."""
    if reference in REFERENCE_ORDER:
        return (REFERENCE_ORDER.index(reference), "")
    return (len(REFERENCE_ORDER), reference)


_TAG_RANK = {tag: i for i, tag in enumerate(("fail", "error", "allowed", "warn", "ignored",
                                               "info"))}
_STATUS_RANK = {status: i for i, status in enumerate(OP_STATUSES)}


@dataclass(frozen=True)
class OpFindings:
    """One op's findings as a list shows them: root cause first."""

    report: Report
    status: str
    findings: tuple[tuple[Finding, str], ...]  # (finding, tag)

    @property
    def worst_ratio(self) -> float:
        ratios = [f.ratio for f, _ in self.findings if not math.isnan(f.ratio)]
        return max(ratios, default=math.nan)


def _finding_key(item: tuple[Finding, str]) -> tuple[Any, ...]:
    finding, tag = item
    # Failing findings first; within them the earliest path against the numeric reference,
    # because a wrong VJP makes every path built on it wrong too.
    return (_TAG_RANK[tag] > _TAG_RANK["allowed"], path_rank(finding.path),
            reference_rank(finding.reference), _TAG_RANK[tag], finding.kind, finding.message)


def findings_by_op(reports: Iterable[Report], policy: VerdictPolicy,
                   include_info: bool = False) -> list[OpFindings]:
    """Ops with findings, worst status first (then worst error/tolerance, then name); each
    op's findings root cause first."""
    groups = []
    for report in reports:
        tagged = [(f, finding_tag(f, policy)) for f in report.findings]
        tagged = [(f, t) for f, t in tagged if include_info or t != "info"]
        if tagged:
            groups.append(OpFindings(report, op_status(report, policy),
                                     tuple(sorted(tagged, key=_finding_key))))

    def key(group: OpFindings) -> tuple[Any, ...]:
        ratio = group.worst_ratio
        return (_STATUS_RANK[group.status], math.isnan(ratio),
                -ratio if not math.isnan(ratio) else 0.0, group.report.op)

    return sorted(groups, key=key)


def interleave(groups: Sequence[OpFindings], budget: int) -> list[OpFindings]:
    """At most ``budget`` findings in all, each op's first before any op's second, so every
    op gets a chance to appear; ops with none left are dropped."""
    taken = [0] * len(groups)
    left = budget
    depth = 0
    while left > 0 and any(taken[i] < len(g.findings) for i, g in enumerate(groups)):
        for i, group in enumerate(groups):
            if left > 0 and depth < len(group.findings):
                taken[i] += 1
                left -= 1
        depth += 1
    return [OpFindings(g.report, g.status, g.findings[:n])
            for g, n in zip(groups, taken, strict=True) if n]


def _short(value: Any) -> str:
    if isinstance(value, str):
        value = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}.get(value, value)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return f"{value:.4g}"


def values_text(finding: Finding) -> str:
    """``got -0.79, expected 0.79 at [0, 1]`` from the values a mismatch carries at its
    worst index (``details["analytic"]`` and ``details["numeric"]``); "" without them."""
    details = finding.details or {}
    if "analytic" not in details or "numeric" not in details:
        return ""
    text = f"got {_short(details['analytic'])}, expected {_short(details['numeric'])}"
    if finding.worst_index:  # none for a 0-d value
        text += f" at {list(finding.worst_index)}"
    return text


def message_text(finding: Finding) -> str:
    """The finding's message without what a list line already says before it: ``vjp vs
    numeric · mismatch: vjp disagrees with the numeric derivative: max abs err ...`` reads
    ``vjp vs numeric · mismatch: max abs err ...``."""
    said = f"{finding.path} disagrees with the numeric derivative: "
    if finding.reference == "numeric" and finding.message.startswith(said):
        return finding.message[len(said):]
    return finding.message


def attribution_text(finding: Finding) -> str:
    """Whose derivative a finding blames when not the checked op: ``tensorflow's
    derivative``; "" for the op itself."""
    side = finding.attributed_to
    if not side:
        return ""
    if side == "neither":
        return "neither side agrees with the numeric derivative"
    if side == "undecided":
        return "the numeric derivative cannot tell which side is right"
    return f"{side}'s derivative"


def seed_list(seeds: tuple[int, ...] | list[int]) -> str:
    """``0-3,7,9-11``: seeds with runs folded."""
    parts: list[str] = []
    run: list[int] = []
    for seed in sorted(seeds):
        if run and seed == run[-1] + 1:
            run.append(seed)
            continue
        if run:
            parts.append(f"{run[0]}-{run[-1]}" if len(run) > 2 else
                         ",".join(map(str, run)))
        run = [seed]
    if run:
        parts.append(f"{run[0]}-{run[-1]}" if len(run) > 2 else ",".join(map(str, run)))
    return ",".join(parts)


def seed_rows(results: Results, policy: VerdictPolicy) -> list[tuple[str, SeedFinding]]:
    """``(tag, seed finding)`` per op and finding kind that did not simply pass over the
    seeds, worst first: ``fail``/``error`` (a rate above ``max_failure_rate``), ``allowed``
    (the suite allows it, or its rate is within the threshold) or ``warn``."""
    def shown(f: Finding) -> bool:
        return finding_tag(f, policy) in ("fail", "error", "allowed", "warn")

    rows = []
    for sf in seed_findings(results.reports, shown):
        fails = any(policy.fails(f) for r in results.reports if r.op == sf.op
                    for f in r.findings if f.kind == sf.kind)
        if fails and sf.rate > policy.max_failure_rate:
            tag = "error" if sf.kind == "error" else "fail"
        else:
            tag = "allowed" if sf.kind in policy.fail_on else "warn"
        rows.append((tag, sf))
    rank = {t: i for i, t in enumerate(("fail", "error", "allowed", "warn"))}
    return sorted(rows, key=lambda row: (rank[row[0]], -row[1].rate, row[1].op, row[1].kind))
