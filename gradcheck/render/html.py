"""The self-contained HTML consistency report, a pure function of the JSON results.

``render_html`` first round-trips the results through their JSON form, so a live
``Results`` object and one re-read from disk render to the same bytes; then it
builds plain view objects (everything the page shows, already formatted) and
hands them to ``templates/report.html``.  The Jinja2 environment escapes every
value by construction; the only markup inserted unescaped is the SVG that
``plots.convergence_svg`` produced (matplotlib escapes the text it contains).

Verdicts come from :class:`VerdictPolicy` rebuilt from the results' own config, through
the status vocabulary of ``render/verdict.py`` that the terminal and the pytest plugin use.
The page leads with the verdict: counts and the ops that did not pass come first.  Plots
are drawn only for ops that did not pass (a passing op's slopes are listed as text), which
keeps the full-registry report small and fast to load.
"""

from __future__ import annotations

import json
import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup

from gradcheck.checker.convergence import slopes
from gradcheck.checker.policy import VerdictPolicy
from gradcheck.checker.report import STATUSES, Cell, Finding, Report, Results
from gradcheck.checker.seeds import by_op, multi_seed, op_status_over_seeds
from gradcheck.render.atomic import atomic_write_text
from gradcheck.render.plots import convergence_svg
from gradcheck.render.run_info import environment_box, exception_rows, fact, run_box
from gradcheck.render.verdict import (
    CELL_MEANING,
    OP_STATUSES,
    PATH_ORDER,
    REFERENCE_ORDER,
    STATUS_MEANING,
    attribution_text,
    count_statuses,
    finding_tag,
    findings_by_op,
    message_text,
    op_status,
    path_rank,
    reference_rank,
    seed_list,
    seed_rows,
    values_text,
)

__all__ = [
    "render_html",
    "write_html",
    "fmt_num",
    "fmt_ratio",
    "pretty",
    "LEAK_KINDS",
    "PATH_ORDER",
    "REFERENCE_ORDER",
]

#: Finding kinds the "leaks only" filter keeps.
LEAK_KINDS = frozenset({"value_leak", "dependence_leak"})
#: How many ops the "did not pass" list above the fold shows before pointing to the matrix.
TOP_FAILURES = 25
#: Op statuses whose detail section draws the convergence plot and lists every check.
_PLOTTED = frozenset({"fail", "error", "allowed"})

# Shown in a cell with no error/tolerance ratio; the symbol repeats the colour's
# meaning for readers who cannot tell the colours apart.
_STATUS_TEXT = {
    "pass": ("✓", "pass"),
    "skipped": ("–", "skip"),
    "unsupported": ("∅", "unsup"),
    "unavailable": ("?", "n/a"),
    "warn": ("!", "warn"),
    "undecided": ("≟", "undec"),
    "fail": ("✗", "fail"),
    "error": ("⚠", "error"),
}
# Colour of a finding tag's badge (the tags reuse the cell colours).
_BADGE = {"fail": "fail", "error": "error", "allowed": "allowed", "warn": "warn",
          "ignored": "skipped", "info": "unavailable"}


@dataclass
class Column:
    """One matrix column: a path checked against a reference."""

    path: str
    reference: str


@dataclass
class CellView:
    """A matrix cell as shown: formatted numbers and its hover text."""

    path: str
    reference: str
    status: str
    symbol: str
    text: str
    title: str
    abs_err: str
    tolerance: str
    ratio: str
    examples: int
    note: str


@dataclass
class FindingView:
    """A finding with its numbers formatted and its payloads pretty-printed."""

    finding: Finding
    tag: str
    badge: str
    short: str
    blame: str
    values: str
    allowed: str
    ratio: str
    abs_err: str
    rel_err: str
    tolerance: str
    counterexample: str
    details: str


@dataclass
class OpView:
    """One op: its matrix row and its detail section."""

    report: Report
    anchor: str
    label: str
    status: str
    failed: bool
    leak: bool
    ratio: float
    ratio_text: str
    ratio_key: str
    cells: list[CellView | None]
    findings: list[FindingView]
    checks: list[CellView]
    plot: Markup
    slopes: str
    stats: str


@dataclass
class Trouble:
    """One op that did not pass, as the list above the fold shows it: its root finding."""

    op: OpView
    first: FindingView | None
    more: int


@dataclass
class SeedRow:
    """One op and finding kind over the seeds, as the seed table shows it."""

    tag: str
    badge: str
    op: str
    kind: str
    failed: str
    rate: str
    behaviour: str
    seeds: str
    first_seed: int
    first_anchor: str
    where: str
    message: str
    counterexample: str


@dataclass
class Page:
    """Everything the template shows."""

    title: str
    verdict: str
    facts: list[tuple[str, str]]
    config: list[tuple[str, str]]
    environment: list[tuple[str, str]]
    summary: list[tuple[str, str, int]]
    meanings: list[tuple[str, str]]
    troubles: list[Trouble]
    more_troubles: int
    exceptions: list[tuple[str, str, str]]
    skipped: list[tuple[str, str]]
    groups: list[tuple[str, int]]
    columns: list[Column]
    families: list[str]
    ops: list[OpView] = field(default_factory=list)
    seed_rows: list[SeedRow] = field(default_factory=list)
    seed_text: str = ""
    statuses: tuple[str, ...] = STATUSES
    status_text: dict[str, tuple[str, str]] = field(default_factory=lambda: dict(_STATUS_TEXT))
    cell_meaning: dict[str, str] = field(default_factory=lambda: dict(CELL_MEANING))
    #: The cell statuses shown whose meaning the legend spells out.
    explained: list[str] = field(default_factory=list)


def fmt_num(value: float) -> str:
    """An error or tolerance: three significant digits in scientific notation."""
    if math.isnan(value):
        return "n/a"
    if math.isinf(value):
        return "∞" if value > 0 else "-∞"
    return f"{value:.2e}"


def fmt_ratio(value: float) -> str:
    """An error/tolerance ratio, short enough for a matrix cell."""
    if math.isnan(value):
        return ""
    if math.isinf(value):
        return "∞"
    if value == 0 or 1e-3 <= abs(value) < 1e4:
        return f"{value:.3g}"
    return f"{value:.1e}"


def pretty(value: Any, indent: int = 0) -> str:
    """JSON text with one line per list of numbers, so arrays read as rows."""
    pad = "  " * indent
    if isinstance(value, dict):
        if not value:
            return "{}"
        items = [
            f"{pad}  {json.dumps(k, ensure_ascii=False)}: {pretty(v, indent + 1)}"
            for k, v in value.items()
        ]
        return "{\n" + ",\n".join(items) + f"\n{pad}}}"
    if isinstance(value, list) and any(isinstance(v, (list, dict)) for v in value):
        items = [f"{pad}  {pretty(v, indent + 1)}" for v in value]
        return "[\n" + ",\n".join(items) + f"\n{pad}]"
    if isinstance(value, list) and value and all(_is_complex_text(v) for v in value):
        return "[" + ", ".join(value) + "]"  # complex numbers read as numbers: [1.5-0.2j]
    return value if _is_complex_text(value) else json.dumps(value, ensure_ascii=False)


def _is_complex_text(value: Any) -> bool:
    """Whether ``value`` is a complex number as the JSON results write it (``"1.5-0.2j"``)."""
    if not isinstance(value, str) or not value.endswith("j"):
        return False
    try:
        complex(value)
    except ValueError:
        return False
    return True


def _columns(reports: list[Report]) -> list[Column]:
    pairs = {(c.path, c.reference) for r in reports for c in r.cells}
    ordered = sorted(pairs, key=lambda p: (path_rank(p[0]), reference_rank(p[1])))
    return [Column(path, reference) for path, reference in ordered]


def _cell_view(report: Report, cell: Cell) -> CellView:
    if cell.status not in _STATUS_TEXT:
        raise ValueError(
            f"op {report.op!r}: cell {cell.path} vs {cell.reference} has status "
            f"{cell.status!r}; expected one of {', '.join(STATUSES)}"
        )
    symbol, short = _STATUS_TEXT[cell.status]
    lines = [f"{cell.path} vs {cell.reference}: {cell.status}"]
    if not math.isnan(cell.max_abs_err) or not math.isnan(cell.tolerance):
        lines += [
            f"max_abs_err = {fmt_num(cell.max_abs_err)}",
            f"tolerance = {fmt_num(cell.tolerance)}",
        ]
    if not math.isnan(cell.ratio):
        lines.append(f"error/tolerance = {fmt_ratio(cell.ratio)}")
    lines.append(f"examples = {cell.examples}")
    if cell.note:
        lines.append(f"note: {cell.note}")
    return CellView(
        path=cell.path,
        reference=cell.reference,
        status=cell.status,
        symbol=symbol,
        text=fmt_ratio(cell.ratio) or short,
        title="\n".join(lines),
        abs_err=fmt_num(cell.max_abs_err),
        tolerance=fmt_num(cell.tolerance),
        ratio=fmt_ratio(cell.ratio) or "n/a",
        examples=cell.examples,
        note=cell.note,
    )


def _sort_key(ratio: float) -> str:
    """The ratio as JavaScript's ``Number()`` reads it; empty (sorted last) when nan."""
    if math.isnan(ratio):
        return ""
    if math.isinf(ratio):
        return "Infinity" if ratio > 0 else "-Infinity"
    return repr(ratio)


def _anchor(index: int, op: str) -> str:
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", op).strip("-")[:40]
    return f"op-{index}-{slug}" if slug else f"op-{index}"


def _op_view(index: int, report: Report, columns: list[Column],
             policy: VerdictPolicy, seeds: bool = False) -> OpView:
    checks = [_cell_view(report, c) for c in report.cells]
    by_pair = {(view.path, view.reference): view for view in checks}
    ratios = [x.ratio for x in report.cells] + [f.ratio for f in report.findings]
    worst = max((r for r in ratios if not math.isnan(r)), default=math.nan)
    status = op_status(report, policy)
    group = findings_by_op([report], policy, include_info=True)
    fitted = slopes(report.convergence) if report.convergence else {}
    slope_text = ", ".join(f"{path} {'n/a' if math.isnan(v) else f'{v:.2f}'}"
                           for path, v in sorted(fitted.items(), key=lambda i: path_rank(i[0])))
    return OpView(
        report=report,
        anchor=_anchor(index, report.op),
        label=f"{report.op} · seed {report.seed}" if seeds else report.op,
        status=status,
        failed=status in ("fail", "error"),
        leak=any(f.kind in LEAK_KINDS for f in report.findings),
        ratio=worst,
        ratio_text=fmt_ratio(worst) or "—",
        ratio_key=_sort_key(worst),
        cells=[by_pair.get((col.path, col.reference)) for col in columns],
        findings=[_finding_view(f, policy) for f, _ in group[0].findings] if group else [],
        checks=checks if status != "pass" else [],  # a passing op's cells: in its matrix row
        # Plots only where a derivative may be wrong (a passing or merely warned op's
        # slopes are listed as text): the full-registry page stays small and fast.
        plot=Markup(convergence_svg(report.convergence, key=report.op)
                    if status in _PLOTTED else ""),
        slopes=slope_text,
        stats=pretty(report.stats) if report.stats else "",
    )


def _finding_view(finding: Finding, policy: VerdictPolicy) -> FindingView:
    tag = finding_tag(finding, policy)
    allowance = policy.allowed(finding)
    return FindingView(
        finding=finding,
        tag=tag,
        badge=_BADGE[tag],
        short=message_text(finding),
        blame=attribution_text(finding),
        values=values_text(finding),
        allowed=(allowance.reason or "no reason given") if allowance is not None else "",
        ratio=fmt_ratio(finding.ratio),
        abs_err=fmt_num(finding.max_abs_err),
        rel_err=fmt_num(finding.max_rel_err),
        tolerance=fmt_num(finding.tolerance),
        counterexample=pretty(finding.counterexample) if finding.counterexample else "",
        details=pretty(finding.details) if finding.details else "",
    )


def _seed_rows(results: Results, policy: VerdictPolicy, ops: list[OpView]) -> list[SeedRow]:
    anchors = {(op.report.op, op.report.seed): op.anchor for op in ops}
    rows = []
    for tag, sf in seed_rows(results, policy):
        f = sf.first
        rows.append(SeedRow(
            tag=tag, badge=_BADGE[tag], op=sf.op, kind=sf.kind,
            failed=f"{len(sf.seeds)} of {len(sf.checked)}", rate=f"{sf.rate:.0%}",
            behaviour=sf.behaviour, seeds=seed_list(sf.seeds), first_seed=sf.seeds[0],
            first_anchor=anchors.get((sf.op, sf.seeds[0]), ""),
            where=f"{f.path} vs {f.reference}" if f.path not in ("", "all") else "whole check",
            message=message_text(f),
            counterexample=pretty(f.counterexample) if f.counterexample else ""))
    return rows


def _verdict(results: Results, policy: VerdictPolicy, counts: dict[str, int],
             n: int) -> str:
    if multi_seed(results.reports):  # one verdict per op over its seeds
        groups = by_op(results.reports)
        over = [op_status_over_seeds(g, policy) for g in groups.values()]
        bad = sum(s in ("fail", "error") for s in over)
        return (f"{bad} of {len(groups)} ops fail" if bad else f"all {len(groups)} ops pass") \
            + f" over their seeds ({n} checks)"
    bad = counts["fail"] + counts["error"]
    return (f"{bad} of {n} ops fail" if bad
            else f"all {n} ops pass" + (" (some allowed or warned)" if counts["pass"] < n
                                        else ""))


def _page(results: Results) -> Page:
    reports = sorted(results.reports, key=lambda r: (r.op, r.seed))
    columns = _columns(reports)
    policy = VerdictPolicy.from_config(results.config)
    seeds = multi_seed(reports)
    ops = [_op_view(i, r, columns, policy, seeds) for i, r in enumerate(reports)]
    counts = count_statuses(results, policy)
    summary = [("ops", "ops", len(ops))] + [(s, s, counts[s]) for s in OP_STATUSES]
    groups: list[tuple[str, int]] = []
    for col in columns:
        if groups and groups[-1][0] == col.path:
            groups[-1] = (col.path, groups[-1][1] + 1)
        else:
            groups.append((col.path, 1))
    verdict = _verdict(results, policy, counts, len(ops))
    if seeds:
        summary[0] = ("ops", "checks (op × seed)", len(ops))
    rank = {s: i for i, s in enumerate(OP_STATUSES)}
    troubled = sorted((op for op in ops if op.status != "pass"),
                      key=lambda op: (rank[op.status], op.report.op))
    troubles = [Trouble(op, op.findings[0] if op.findings else None,
                        max(0, len(op.findings) - 1)) for op in troubled[:TOP_FAILURES]]
    return Page(
        title=f"gradcheck report: {verdict}",
        verdict=verdict,
        facts=[
            ("seed", seed_list(sorted({r.seed for r in reports})) if seeds
             else fact(results, "seed")),
            ("mode", fact(results, "mode")),
            ("dtypes", fact(results, "dtypes")),
        ],
        config=run_box(results.config),
        environment=environment_box(results),
        summary=summary,
        meanings=[(s, STATUS_MEANING[s]) for s in OP_STATUSES],
        troubles=troubles,
        more_troubles=len(troubled) - len(troubles),
        exceptions=exception_rows(results.config),
        skipped=sorted((str(k), str(v)) for k, v in
                       dict(results.config.get("skipped", {})).items()),
        groups=groups,
        columns=columns,
        families=sorted({r.family for r in reports}),
        ops=ops,
        seed_rows=_seed_rows(results, policy, ops) if seeds else [],
        seed_text=seed_list(sorted({r.seed for r in reports})) if seeds else "",
        explained=[s for s in CELL_MEANING if any(c.status == s for r in reports
                                                  for c in r.cells)],
    )


def _environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.PackageLoader("gradcheck", "templates"),
        autoescape=jinja2.select_autoescape(["html"], default_for_string=True, default=True),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )


def render_html(results: Results) -> str:
    """The report page for ``results`` as one self-contained HTML string.

    Deterministic: the same results (live or re-read from JSON) give the same text.
    """
    if not isinstance(results, Results):
        raise TypeError(f"render_html: results must be a Results, got {type(results).__name__}")
    # Render what the JSON file would hold, so a re-rendered old run is identical.
    normalized = Results.from_json(results.to_json())
    return _environment().get_template("report.html").render(page=_page(normalized))


def write_html(results: Results, path: str | os.PathLike[str]) -> Path:
    """Render ``results`` and write the page atomically to ``path``; return the path."""
    return atomic_write_text(path, render_html(results))
