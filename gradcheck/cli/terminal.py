"""Terminal output of the CLI: rich tables and progress bars, or plain lines for logs.

:class:`Terminal` picks its style once: rich (colors, a live progress bar, boxed
tables) when stdout is a terminal, plain line-oriented text -- no escape codes, one
fact per line, easy to grep -- when it is not (CI logs) or with ``--no-color``.
Every method takes ``Results``/``Report`` values only, like the HTML renderer, and
judges them with :class:`VerdictPolicy` in the status words of ``render/verdict.py``:
one line per op (each op listed once), a table of only the ops that did not pass in a
terminal, findings grouped per op root cause first, lines that fit 80 columns without
splitting a word.
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import IO, Any

from rich import box
from rich.console import Console
from rich.padding import Padding
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from gradcheck.checker.policy import VerdictPolicy
from gradcheck.checker.report import Finding, Report, Results
from gradcheck.checker.seeds import by_op, multi_seed, op_status_over_seeds
from gradcheck.render.html import fmt_num, fmt_ratio, pretty
from gradcheck.render.verdict import (
    CELL_MEANING,
    OP_STATUSES,
    STATUS_MEANING,
    attribution_text,
    count_statuses,
    finding_tag,
    findings_by_op,
    interleave,
    message_text,
    op_status,
    path_rank,
    reference_rank,
    seed_list,
    seed_rows,
    values_text,
)

__all__ = ["Terminal", "path_statuses", "ordered_paths", "op_line", "elide", "STATUS_STYLE",
           "seed_rows", "seed_list"]  # the last two re-exported from render.verdict

#: Symbol and rich style per cell status; the symbol repeats what the color says.
STATUS_STYLE: dict[str, tuple[str, str]] = {
    "pass": ("✓", "green"),
    "skipped": ("–", "dim"),
    "unsupported": ("∅", "dim"),
    "unavailable": ("?", "dim"),
    "warn": ("!", "yellow"),
    "undecided": ("≟", "red"),
    "fail": ("✗", "bold red"),
    "error": ("⚠", "bold magenta"),
}
#: Rich style per op status and finding tag (the same words everywhere).
TAG_STYLE = {"fail": "bold red", "error": "bold magenta", "allowed": "cyan", "warn": "yellow",
             "pass": "green", "ignored": "dim", "info": "dim"}
# Which status a path shows when its references disagree: anything bad first, then a
# pass (one reference agreeing is news), then the reasons nothing ran.
_AGGREGATE = ("error", "fail", "undecided", "warn", "pass", "unsupported", "unavailable",
              "skipped")
_FINDING_STATUS = {"failure": "fail", "warning": "warn"}
_DEFAULT_POLICY = VerdictPolicy()
_OP_WIDTH = 28  # widest op name a rich table shows before eliding its middle
_WORD_WIDTH = 24  # a table column is at least as wide as its longest word, up to this


def ordered_paths(reports: Iterable[Report]) -> list[str]:
    """Every path the reports mention: the engine's paths in order, then the others."""
    seen = {c.path for r in reports for c in r.cells} | {f.path for r in reports
                                                         for f in r.findings if f.path}
    return sorted(seen, key=path_rank)


def path_statuses(report: Report, policy: VerdictPolicy = _DEFAULT_POLICY) -> dict[str, str]:
    """One status per path: the worst over its references and its findings, in the words of
    ``policy``: with ``--fail-on dependence_leak`` a dependence leak reads ``fail``, and a
    mismatch the policy does not fail on reads ``warn`` (one it allows still reads ``fail``:
    the op reads ``ALLOWED``).  A failing identity whose cell reads ``undecided`` (the
    numeric reference cannot tell which of its two paths is wrong) reads ``undecided``."""
    words: dict[str, set[str]] = {}
    for finding in report.findings:
        if finding.path:
            word = _finding_word(finding, policy)
            cell = report.cell(finding.path, finding.reference)
            if word == "fail" and cell is not None and cell.status == "undecided":
                word = "undecided"
            words.setdefault(finding.path, set()).add(word)
    found: dict[str, set[str]] = {}
    for cell in report.cells:
        status = cell.status
        if status in ("fail", "undecided") and words.get(cell.path) and \
                not words[cell.path] & {"fail", "undecided"}:
            status = "warn"  # the findings behind the cell, as the policy reads them
        found.setdefault(cell.path, set()).add(status)
    for path, said in words.items():
        found.setdefault(path, set()).update(said - {""})
    return {path: next(s for s in _AGGREGATE if s in statuses or s == "skipped")
            for path, statuses in found.items()}


def _finding_word(finding: Finding, policy: VerdictPolicy) -> str:
    if finding.kind == "error":
        return "error"
    if finding.kind in policy.fail_on:  # failing, or allowed by the policy
        return "fail"
    return "warn" if _FINDING_STATUS.get(finding.severity) else ""


def _bad_paths(report: Report, policy: VerdictPolicy = _DEFAULT_POLICY,
               ) -> list[tuple[str, str]]:
    """The paths that did not pass (warn, undecided, fail, error), in path order."""
    statuses = path_statuses(report, policy)
    return [(p, statuses[p]) for p in sorted(statuses, key=path_rank)
            if statuses[p] in ("warn", "undecided", "fail", "error")]


def op_line(report: Report, policy: VerdictPolicy = _DEFAULT_POLICY,
            seed: bool = False) -> str:
    """``FAIL nn.elu double_vjp=fail``: the op's status, its name (``seed=N`` after it in a
    sweep of many seeds), the paths that did not pass.  One line per op, for logs."""
    cells = " ".join(f"{p}={s}" for p, s in _bad_paths(report, policy))
    name = f"{report.op} seed={report.seed}" if seed else report.op
    return f"{op_status(report, policy).upper()} {name} {cells}".rstrip()


def elide(name: str, width: int) -> str:
    """``name`` in at most ``width`` characters: the middle replaced by ``…`` (both ends of
    an op name -- family and short name -- say the most)."""
    if len(name) <= width:
        return name
    head = (width - 1) // 2
    return name[:head] + "…" + name[len(name) - (width - 1 - head):]


def _policy(policy: Any) -> VerdictPolicy:
    if not isinstance(policy, VerdictPolicy):
        raise TypeError(f"expected a VerdictPolicy, got {type(policy).__name__}")
    return policy


class Terminal:
    """Where the CLI writes: a rich console, or plain lines when ``plain`` is true.

    ``plain=None`` decides from the stream: plain unless it is a terminal, or when
    the ``NO_COLOR`` environment variable is set.
    """

    def __init__(self, *, plain: bool | None = None, verbose: bool = False,
                 file: IO[str] | None = None, width: int | None = None) -> None:
        stream = sys.stdout if file is None else file
        if plain is None:
            is_tty = hasattr(stream, "isatty") and stream.isatty()
            plain = not is_tty or "NO_COLOR" in os.environ
        self.plain = plain
        self.verbose = verbose
        self.file = stream
        self.console = Console(file=stream, no_color=plain, highlight=False, soft_wrap=plain,
                               width=width, force_terminal=False if plain else None,
                               emoji=False)
        self._listed: dict[tuple[str, int], str] = {}  # (op, seed) -> the line printed

    # -- small pieces ------------------------------------------------------------------

    def line(self, text: str = "", style: str | None = None) -> None:
        """One line; ``style`` only applies in rich mode."""
        if self.plain:
            print(text, file=self.file, flush=True)
        else:
            self.console.print(Text(text, style=style or ""))

    def raw(self, text: str) -> None:
        """Text exactly as given (JSON): never wrapped, styled or highlighted."""
        print(text, file=self.file, flush=True)

    def error(self, text: str) -> None:
        """An error for the user, on stderr: ``gradcheck: error: ...``."""
        print(f"gradcheck: error: {text}", file=sys.stderr, flush=True)

    def table(self, title: str, headers: Sequence[str], rows: Iterable[Sequence[Any]],
              styles: Sequence[str | None] | None = None) -> None:
        """A table: boxed in rich mode, tab-free aligned columns in plain mode."""
        rows = [[_cell_text(v) for v in row] for row in rows]
        if self.plain:
            widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(headers)]
            self.line(title)
            self.line("  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)).rstrip())
            for row in rows:
                self.line("  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)).rstrip())
            return
        # No vertical rules, and widths chosen here (rich would fold words): see _fit_widths.
        widths = _fit_widths(headers, rows, self.console.width - 3 * len(headers))
        table = Table(title=title, title_justify="left", header_style="bold",
                      box=box.SIMPLE_HEAD, pad_edge=False)
        for i, header in enumerate(headers):
            style = styles[i] if styles and i < len(styles) else None
            table.add_column(header, style=style or "", width=widths[i], overflow="ellipsis")
        for row in rows:
            table.add_row(*row)
        self.console.print(table)

    # -- progress ----------------------------------------------------------------------

    @contextmanager
    def progress(self, total: int, label: str = "checking",
                 policy: VerdictPolicy = _DEFAULT_POLICY,
                 seeds: bool = False) -> Iterator[Callable[[Report], None]]:
        """A context giving ``done(report)`` to call as each op (at a seed) finishes: one
        bar for every unit of the sweep.

        Rich mode draws a bar; plain mode prints each op's line (:func:`op_line`, with its
        seed when ``seeds``) as it finishes, and :meth:`summary` then does not list it
        again -- unless its status under the summary's policy differs (pass the run's
        ``policy`` here to avoid that).
        """
        if self.plain:
            def done_plain(report: Report) -> None:
                key = (report.op, report.seed)
                self._listed[key] = op_line(report, policy, seed=seeds)
                self.line(self._listed[key])

            yield done_plain
            return
        bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                       TimeElapsedColumn(), TextColumn("{task.fields[last]}"),
                       console=self.console, transient=True)
        with bar:
            task = bar.add_task(label, total=total, last="")

            def done_rich(report: Report) -> None:
                name = f"{report.op} seed={report.seed}" if seeds else report.op
                bar.update(task, advance=1, last=elide(name, _OP_WIDTH))

            yield done_rich

    # -- results -----------------------------------------------------------------------

    def summary(self, results: Results, policy: VerdictPolicy = _DEFAULT_POLICY) -> None:
        """Every op once: plain mode one line per op (those progress has not printed as is);
        rich mode a table of the ops that did not pass (every op with -v).  Then the
        totals and what the statuses mean."""
        policy = _policy(policy)
        reports = sorted(results.reports, key=lambda r: (r.op, r.seed))
        seeds = multi_seed(reports)
        if self.plain:
            for report in reports:
                # Again only if the run's policy (its suite's allowances, --fail-on) changes
                # what progress printed with the default one.
                line = op_line(report, policy, seed=seeds)
                if self._listed.get((report.op, report.seed)) != line:
                    self.line(line)
                    self._listed[(report.op, report.seed)] = line
        else:
            self._summary_table(reports, policy, seeds)
        if seeds:
            self.seeds(results, policy)
        self.totals(results, policy)

    def seeds(self, results: Results, policy: VerdictPolicy = _DEFAULT_POLICY) -> None:
        """Per op and finding kind over the seeds: failures and rate, the failing seeds,
        consistent or flaky, and where the first failing seed found it (its minimal
        counterexample is in the JSON results and the HTML report)."""
        rows = seed_rows(results, _policy(policy))
        if not rows:
            return
        self.table("over the seeds (per op and finding kind)",
                   ["status", "op", "kind", "failed", "rate", "behaviour", "seeds", "first"],
                   [[tag.upper(), sf.op, sf.kind, f"{len(sf.seeds)}/{len(sf.checked)}",
                     f"{sf.rate:.0%}", sf.behaviour, seed_list(sf.seeds),
                     f"seed {sf.seeds[0]}: {_where(sf.first)}"] for tag, sf in rows])

    def _summary_table(self, reports: list[Report], policy: VerdictPolicy,
                       seeds: bool = False) -> None:
        shown = [(r, op_status(r, policy)) for r in reports]
        if not self.verbose:
            shown = [(r, s) for r, s in shown if s != "pass"]
        if not shown:
            return
        rank = {s: i for i, s in enumerate(OP_STATUSES)}
        shown.sort(key=lambda item: (rank[item[1]], item[0].op))
        title = "ops" if self.verbose else "ops that did not pass"
        table = Table(title=title, title_justify="left", header_style="bold", box=None,
                      pad_edge=False)
        names = [elide(f"{r.op} seed={r.seed}" if seeds else r.op, _OP_WIDTH) for r, _ in shown]
        table.add_column("status", no_wrap=True, min_width=7)
        table.add_column("op", no_wrap=True, width=max(len(n) for n in names))
        table.add_column("paths that did not pass", no_wrap=True)
        room = max(12, self.console.width - 7 - len(max(names, key=len)) - 7 - 6)
        table.add_column("err/tol", justify="right", no_wrap=True, min_width=7)
        for (report, status), name in zip(shown, names, strict=True):
            paths = Text()
            for i, (path, s) in enumerate(_bad_paths(report, policy)):
                symbol, style = STATUS_STYLE[s]
                paths.append((" " if i else "") + f"{path} {symbol}", style=style)
            paths.truncate(room, overflow="ellipsis")  # one line per op, whatever the width
            ratios = [f.ratio for f in report.findings if f.kind in policy.fail_on]
            worst = max((r for r in ratios if not math.isnan(r)), default=math.nan)
            table.add_row(Text(status.upper(), style=TAG_STYLE[status]),
                          name, paths, fmt_ratio(worst))
        self.console.print(table)

    def totals(self, results: Results, policy: VerdictPolicy = _DEFAULT_POLICY) -> None:
        """``gradcheck: 155 ops: 3 fail, 1 error, 151 pass`` (the counts partition the
        ops), then what each status shown means."""
        counts = count_statuses(results, _policy(policy))
        n = len(results.reports)
        checks = ""
        if multi_seed(results.reports):  # one status per op over its seeds
            groups = by_op(results.reports)
            counts = dict.fromkeys(OP_STATUSES, 0)
            for group in groups.values():
                counts[op_status_over_seeds(group, policy)] += 1
            checks, n = f" ({n} checks over their seeds)", len(groups)
        parts = [f"{counts[s]} {s}" for s in OP_STATUSES if counts[s]]
        text = (f"gradcheck: {n} op{'' if n == 1 else 's'}{checks}: "
                f"{', '.join(parts) or 'none'}")
        bad = counts["fail"] or counts["error"]
        self.line(text, style="bold red" if bad else "bold green")
        for status in (s for s in OP_STATUSES if counts[s] and s != "pass"):
            self.note(f"{status.upper():7} {STATUS_MEANING[status]}")
        cells = [c for r in results.reports for c in r.cells]
        for status in (s for s in CELL_MEANING if any(c.status == s for c in cells)):
            self.note(f"{status} cell: {CELL_MEANING[status]}")
        if cells:  # what "pass" stands on
            paths = sorted({c.path for c in cells if "(" not in c.path}, key=path_rank)
            refs = sorted({c.reference for c in cells}, key=reference_rank)
            self.note(f"checked {', '.join(paths)} against {', '.join(refs)} "
                      f"({len(cells)} comparisons)")

    def note(self, text: str) -> None:
        """An indented, dimmed line; wrapped lines keep the indent in rich mode."""
        if self.plain:
            self.line(f"  {text}")
        else:
            self.console.print(Padding(Text(text, style="dim"), (0, 0, 0, 2)))

    def findings(self, results: Results, policy: VerdictPolicy = _DEFAULT_POLICY,
                 limit: int = 10) -> None:
        """Findings grouped per op, the worst op first and, within an op, the root cause
        first (``vjp vs numeric`` before the paths built on it).  At most ``limit`` lines,
        each op's first finding before any op's second, so every op gets a chance to
        appear; with -v every finding, in detail."""
        policy = _policy(policy)
        seeds = multi_seed(results.reports)
        reports = results.reports
        if seeds:  # each op's first seed with findings; the seed table has the others
            firsts: dict[str, Report] = {}
            for report in sorted(reports, key=lambda r: (r.op, r.seed)):
                if report.op not in firsts and findings_by_op([report], policy,
                                                              include_info=self.verbose):
                    firsts[report.op] = report
            reports = list(firsts.values())
        groups = findings_by_op(reports, policy, include_info=self.verbose)
        if not groups:
            return
        shown = groups if self.verbose else interleave(groups, limit)
        total = sum(len(g.findings) for g in groups)
        listed = sum(len(g.findings) for g in shown)
        self.line("")
        self.line("findings (root cause first"
                  + ("; each op at its first seed with any):" if seeds else "):"), style="bold")
        for group in shown:
            name = f"{group.report.op} seed={group.report.seed}" if seeds else group.report.op
            if not self.plain:  # a heading per op; plain lines each name their op, for grep
                has = len(next(g for g in groups if g.report is group.report).findings)
                count = f" ({len(group.findings)} of {has} findings)" if has > len(
                    group.findings) else ""
                self.line(f"{group.status.upper()} {name}{count}",
                          style=TAG_STYLE[group.status])
            for finding, _tag in group.findings:
                self.finding(finding, policy, label=name)
        if listed < total:
            ops, more = len(groups) - len(shown), total - listed
            rest = f" ({ops} more op{'s' * (ops > 1)})" if ops else ""
            self.line(f"... and {more} more finding{'s' * (more > 1)}{rest}: -v lists all, "
                      "the HTML report shows every detail")

    def finding(self, finding: Finding, policy: VerdictPolicy = _DEFAULT_POLICY,
                label: str | None = None) -> None:
        """One finding's line: ``FAIL op · path vs reference · kind: message``, then whose
        derivative it blames, the values at the worst index, and the allowance's reason;
        with -v also its numbers, counterexample and traceback.  Rich mode leaves the op
        out (its heading names it) and indents the line."""
        policy = _policy(policy)
        tag = finding_tag(finding, policy)
        extras = [attribution_text(finding), values_text(finding)]
        ratio = fmt_ratio(finding.ratio)
        if (ratio and finding.ratio > 0 and "ratio" not in finding.message
                and "err/tol" not in finding.message):
            extras.append(f"err/tol {ratio}")
        allowance = policy.allowed(finding)
        if allowance is not None:
            extras.append(f"allowed: {allowance.reason or 'no reason given'}")
        where = (f"{finding.path} vs {finding.reference}"
                 if finding.path not in ("", "all") else "whole check")
        what = f"{where} · {finding.kind}: {message_text(finding)}"
        extra = "; ".join(e for e in extras if e)
        what = f"{what} [{extra}]" if extra else what
        if self.plain:
            self.line(f"{tag.upper()} {label or finding.op} · {what}")
        else:
            self.console.print(Padding(Text(f"{tag.upper()} {what}", style=TAG_STYLE[tag]),
                                       (0, 0, 0, 2)))
        if self.verbose:
            self.detail(finding)

    def detail(self, finding: Finding) -> None:
        """The numbers behind a finding, then what reproduces it."""
        self.line(f"    max_abs_err {fmt_num(finding.max_abs_err)}  "
                  f"max_rel_err {fmt_num(finding.max_rel_err)}  "
                  f"tolerance {fmt_num(finding.tolerance)}")
        if finding.worst_index is not None:
            self.line(f"    worst index {list(finding.worst_index)}")
        for title, payload in (("counterexample", finding.counterexample),
                               ("details", finding.details)):
            if payload:
                self.line(f"    {title}:")
                for text in pretty(payload).splitlines():
                    self.line(f"      {text}")
        if finding.traceback:
            self.line("    traceback:")
            for text in finding.traceback.rstrip().splitlines():
                self.line(f"      {text}")

    def cells(self, report: Report) -> None:
        """Every (path, reference) cell of one op with its numbers."""
        rows = []
        for cell in sorted(report.cells, key=lambda c: (path_rank(c.path), c.reference)):
            rows.append([cell.path, cell.reference, cell.status, fmt_num(cell.max_abs_err),
                         fmt_num(cell.tolerance), fmt_ratio(cell.ratio) or "n/a",
                         cell.examples, cell.note])
        self.table(f"{report.op}: every path against every reference",
                   ["path", "reference", "status", "max abs err", "tolerance", "err/tol",
                    "examples", "note"], rows)


def _where(finding: Finding) -> str:
    if finding.path in ("", "all"):
        return finding.message
    return f"{finding.path} vs {finding.reference}"


def _fit_widths(headers: Sequence[str], rows: Sequence[Sequence[str]], room: int) -> list[int]:
    """Column widths that fit ``room``: each column as wide as its longest cell; while too
    wide, the column with the most slack above its longest word gives up a character (text
    then wraps between words), and only when no column has slack left does the widest
    shrink (a word ends in "…"; never split).  The first column, the name, goes last."""
    cols = range(len(headers))
    natural = [max([len(h)] + [len(row[i]) for row in rows]) for i, h in enumerate(headers)]
    # The data's words, not the header's: a header may wrap or end in "…", a value may not.
    word = [max([len(w) for row in rows for w in row[i].split()], default=1) for i in cols]
    width = list(natural)
    while sum(width) > room:
        slack = [(width[i] - word[i], i > 0, i) for i in cols if width[i] > word[i]]
        if slack:
            width[max(slack)[2]] -= 1
            continue
        widest = max((width[i], i > 0, i) for i in cols)
        if widest[0] <= 4:
            break
        width[widest[2]] -= 1
    return width


def _cell_text(value: Any) -> str:
    if isinstance(value, float):
        return fmt_num(value)
    return "" if value is None else str(value)
