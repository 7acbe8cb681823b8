"""Many seeds: what one op's checks at several seeds say together.

A gradient check is a random experiment: a tolerance right at one seed may fail at the next,
and a bug may show only in some region.  A sweep at many seeds gives one report per op and
seed; this module groups them per op and finding kind into a :class:`SeedFinding` -- the
seeds at which the kind was found, the failure rate, whether it is consistent (every seed)
or flaky (some seeds), and the finding at the first failing seed, whose counterexample is
the checker's minimal one for that seed.

Everything here is a pure function of the reports, so the JSON results, the terminal and
the HTML page all say the same, and an old run re-renders the same.  The verdict over seeds
is :class:`~gradcheck.checker.policy.VerdictPolicy`'s: a kind fails an op when its failure
rate exceeds ``max_failure_rate`` (default 0: any failing seed fails).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from gradcheck.checker.report import KINDS, Finding, Report

if TYPE_CHECKING:
    from gradcheck.checker.policy import VerdictPolicy

__all__ = ["parse_seeds", "SeedFinding", "by_op", "multi_seed", "seed_findings",
           "summary_dict", "failing_over_seeds", "op_status_over_seeds", "MAX_SEEDS"]

#: More seeds than this in one sweep is surely a typo (``0:1000000``).
MAX_SEEDS = 100_000


def parse_seeds(value: str | int | Sequence[int], where: str = "--seeds") -> list[int]:
    """Seeds from ``"0:20"`` (0 to 19, as Python's ranges), ``"0,3,7"``, a mix
    (``"0:5,9"``), one integer, or a list of integers: sorted, each once.  A bad value
    raises ``ValueError`` naming ``where`` and what is wrong."""
    if isinstance(value, bool):
        raise ValueError(f"{where}: expected seeds such as '0:20' or '0,3,7', got {value!r}")
    if isinstance(value, int):
        items: list[Any] = [value]
    elif isinstance(value, str):
        items = [part.strip() for part in value.split(",")]
    elif isinstance(value, Sequence):
        items = list(value)
    else:
        raise ValueError(f"{where}: expected seeds such as '0:20' or '0,3,7', got {value!r}")
    seeds: set[int] = set()
    for item in items:
        seeds |= _seed_item(item, where)
        if len(seeds) > MAX_SEEDS:
            raise ValueError(f"{where}: more than {MAX_SEEDS} seeds")
    if not seeds:
        raise ValueError(f"{where}: no seed given (expected e.g. '0:20' or '0,3,7')")
    return sorted(seeds)


def _seed_item(item: Any, where: str) -> set[int]:
    if isinstance(item, int) and not isinstance(item, bool):
        if item < 0:
            raise ValueError(f"{where}: seeds are non-negative, got {item}")
        return {item}
    if not isinstance(item, str) or not item:
        raise ValueError(f"{where}: expected a seed or a range 'start:stop', got {item!r}")
    start, colon, stop = item.partition(":")
    try:
        low = int(start)
        high = int(stop) if colon else low + 1
    except ValueError:
        raise ValueError(f"{where}: expected a seed or a range 'start:stop' of non-negative "
                         f"integers, got {item!r}") from None
    if low < 0 or high <= low:
        raise ValueError(f"{where}: {item!r} holds no seed (a range 'start:stop' needs "
                         "0 <= start < stop; stop is not included)")
    if high - low > MAX_SEEDS:
        raise ValueError(f"{where}: {item!r} is more than {MAX_SEEDS} seeds")
    return set(range(low, high))


@dataclass(frozen=True)
class SeedFinding:
    """One op's finding kind over its seeds."""

    op: str
    kind: str
    seeds: tuple[int, ...]  #: the seeds at which it was found
    checked: tuple[int, ...]  #: every seed the op was checked at
    first: Finding  #: the finding at the first of ``seeds`` (its minimal counterexample)

    @property
    def rate(self) -> float:
        """Failure rate: the share of checked seeds at which it was found."""
        return len(self.seeds) / len(self.checked)

    @property
    def consistent(self) -> bool:
        """Found at every seed (a flaky one is found at some only)."""
        return len(self.seeds) == len(self.checked)

    @property
    def behaviour(self) -> str:
        return "consistent" if self.consistent else "flaky"

    def to_dict(self) -> dict[str, Any]:
        f = self.first
        return {"kind": self.kind, "seeds": list(self.seeds), "failed": len(self.seeds),
                "checked": len(self.checked), "rate": round(self.rate, 6),
                "behaviour": self.behaviour,
                "first": {"seed": self.seeds[0], "path": f.path, "reference": f.reference,
                          "message": f.message,
                          "counterexample": Finding.to_dict(f)["counterexample"]}}


def by_op(reports: Iterable[Report]) -> dict[str, list[Report]]:
    """Each op's reports in seed order (ops in name order); two reports of one op at one
    seed are an error (a unit counted twice)."""
    out: dict[str, dict[int, Report]] = {}
    for report in reports:
        seen = out.setdefault(report.op, {})
        if report.seed in seen:
            raise ValueError(f"two reports of {report.op!r} at seed {report.seed}: a unit of "
                             "the sweep was counted twice")
        seen[report.seed] = report
    return {op: [seen[s] for s in sorted(seen)] for op, seen in sorted(out.items())}


def multi_seed(reports: Iterable[Report]) -> bool:
    """Whether the reports are a sweep over seeds: some op checked at more than one seed,
    and no op twice at one seed (a pytest session may check an op at one seed in several
    tests, with different options: those are not summarised over seeds)."""
    seen: dict[str, set[int]] = {}
    for report in reports:
        seeds = seen.setdefault(report.op, set())
        if report.seed in seeds:
            return False
        seeds.add(report.seed)
    return any(len(seeds) > 1 for seeds in seen.values())


def _shown(finding: Finding) -> bool:
    return finding.severity != "info"


def seed_findings(reports: Iterable[Report],
                  counts: Callable[[Finding], bool] = _shown) -> list[SeedFinding]:
    """Per op (by name) and kind (in :data:`KINDS` order), the findings that ``counts``
    (default: failures and warnings, not info), over the seeds."""
    out = []
    for op, group in by_op(reports).items():
        checked = tuple(r.seed for r in group)
        found: dict[str, list[tuple[int, Finding]]] = {}
        for report in group:
            for finding in report.findings:  # a report's findings are root cause first
                if counts(finding):
                    at = found.setdefault(finding.kind, [])
                    if not at or at[-1][0] != report.seed:
                        at.append((report.seed, finding))
        for kind in sorted(found, key=KINDS.index):
            hits = found[kind]
            out.append(SeedFinding(op, kind, tuple(s for s, _ in hits), checked, hits[0][1]))
    return out


def summary_dict(reports: Iterable[Report]) -> dict[str, Any]:
    """What the JSON results say per op over its seeds (policy-free: every failure and
    warning kind found)."""
    reports = list(reports)
    out: dict[str, Any] = {}
    for op, group in by_op(reports).items():
        out[op] = {"seeds": [r.seed for r in group], "findings": []}
    for sf in seed_findings(reports):
        out[sf.op]["findings"].append(sf.to_dict())
    return out


def failing_over_seeds(reports: Iterable[Report], policy: VerdictPolicy) -> list[SeedFinding]:
    """The op and kind pairs that fail under ``policy``: findings it fails, at a rate above
    its ``max_failure_rate``."""
    return [sf for sf in seed_findings(reports, policy.fails)
            if sf.rate > policy.max_failure_rate]


def op_status_over_seeds(reports: Sequence[Report], policy: VerdictPolicy) -> str:
    """One op's status over its seeds (the words of ``render/verdict.py``): ``fail`` or
    ``error`` when a kind fails it, ``allowed`` when it has failing kinds that the suite or
    the rate threshold allow, else ``warn`` or ``pass``."""
    over = failing_over_seeds(reports, policy)
    if over:
        return "error" if all(sf.kind == "error" for sf in over) else "fail"
    if any(f.kind in policy.fail_on for r in reports for f in r.findings):
        return "allowed"
    return "warn" if any(r.warnings for r in reports) else "pass"
