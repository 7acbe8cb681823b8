"""``gradcheck show OP``: one op in depth.

What the registry says about the op, every (path, reference) cell with its error,
tolerance and ratio, every finding with its counterexample, and the convergence of
the numeric reference as a small table: error against finite-difference step, with
the fitted slope beside the expected one (a right derivative shows the expected
slope; a wrong one levels off).
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path
from typing import Any

from gradcheck.checker.convergence import slopes
from gradcheck.checker.policy import VerdictPolicy
from gradcheck.checker.report import KINDS, Report, Results
from gradcheck.cli.listing import op_info
from gradcheck.cli.run import (
    UsageError,
    add_check_options,
    check_kwargs,
    check_settings,
    import_modules,
    parse_fail_on,
)
from gradcheck.cli.terminal import Terminal
from gradcheck.engine import Registry, default_registry
from gradcheck.render.html import fmt_num
from gradcheck.render.verdict import path_rank

__all__ = ["add_parser", "run_show", "convergence_rows", "load_report", "op_reports"]


def add_parser(subparsers: Any) -> None:
    """Register ``gradcheck show`` on the CLI's subparsers."""
    parser = subparsers.add_parser(
        "show", help="one op in depth: every path's numbers, counterexamples, convergence",
        description="Check one op (or read it from a results file with --results) and show "
                    "every path against every reference, each finding with its minimal "
                    "counterexample, and the convergence of the numeric reference.")
    parser.add_argument("op", help="the op's name (or its short name)")
    parser.add_argument("--results", type=Path, metavar="RESULTS.json",
                        help="show the op from a results file instead of checking it again "
                             "(--seed then picks one of its seeds; default: the first that "
                             "fails, else the first)")
    parser.add_argument("--import", dest="imports", action="append", default=[],
                        metavar="MODULE", help="import this module first (registers your ops)")
    parser.add_argument("--fail-on", metavar="KINDS",
                        help="finding kinds that make the exit code 1, as for run (default: "
                             "failures; with --results, the policy the results record)")
    add_check_options(parser)
    parser.set_defaults(handler=run_show)


def load_report(path: Path, name: str, seed: int | None = None,
                policy: VerdictPolicy | None = None) -> Report:
    """The report of op ``name`` in a results file (exact name, or a unique short name) at
    ``seed``; without one, its first seed that fails under ``policy``, else its first."""
    return _pick_seed(op_reports(load_results(path), path, name), path, seed,
                      policy or VerdictPolicy())


def op_reports(results: Results, path: Path, name: str) -> list[Report]:
    """Every report (one per seed, in seed order) of op ``name`` in ``results``: the exact
    name, or a short name that only one op there has."""
    ops = sorted({r.op for r in results.reports})
    exact = [op for op in ops if op == name]
    short = [op for op in ops if op.rsplit(".", 1)[-1] == name]
    found = exact or short
    if len(found) != 1:
        what = f"is ambiguous (it may be {', '.join(found)})" if found else "is not"
        raise UsageError(f"op {name!r} {what} in {path} (ops there: "
                         f"{', '.join(ops) or 'none'})")
    return sorted((r for r in results.reports if r.op == found[0]), key=lambda r: r.seed)


def _pick_seed(reports: list[Report], path: Path, seed: int | None,
               policy: VerdictPolicy) -> Report:
    if seed is not None:
        chosen = [r for r in reports if r.seed == seed]
        if not chosen:
            raise UsageError(f"--seed {seed}: {path} has no report of {reports[0].op} at that "
                             f"seed (its seeds: {', '.join(str(r.seed) for r in reports)})")
        return chosen[0]
    return next((r for r in reports if policy.report_fails(r)), reports[0])


def load_results(path: Path) -> Results:
    """Read a results file; a missing or malformed one is a usage error naming the file."""
    try:
        results = Results.from_json(path.read_text(encoding="utf-8"))
        _check_reports(results)
    except OSError as error:
        raise UsageError(f"cannot read results file {str(path)!r}: {error.strerror}") from None
    except (ValueError, KeyError, TypeError) as error:
        reason = str(error).removeprefix("not a gradcheck results file: ")
        raise UsageError(f"{path} is not a gradcheck results file: {reason}") from None
    return results


def _check_reports(results: Results) -> None:
    """What rendering and judging rely on: each report's seed is a non-negative integer and
    each finding's kind is a known one (ValueError naming the report otherwise)."""
    for i, report in enumerate(results.reports):
        where = f"report {i + 1} ({report.op!r})"
        seed = report.seed
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
            raise ValueError(f"{where}: seed must be a non-negative integer, got {seed!r}")
        for j, finding in enumerate(report.findings):
            if finding.kind not in KINDS:
                raise ValueError(f"{where}: finding {j + 1}: unknown kind {finding.kind!r}; "
                                 f"expected one of {', '.join(KINDS)}")


def convergence_rows(convergence: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    """Headers and rows of the convergence table: one row per step, one column per series,
    then the fitted slope (over the steps where truncation dominates; "n/a" where rounding
    dominates every step, as for a linear op) and the expected one."""
    steps = [float(h) for h in convergence.get("steps", [])]
    series = {name: [float(v) for v in values]
              for name, values in dict(convergence.get("series", {})).items()}
    names = sorted(series, key=path_rank)
    rows = [[fmt_num(h)] + [fmt_num(series[n][i]) for n in names] for i, h in enumerate(steps)]
    fitted = slopes(convergence)
    rows.append(["fitted slope"] + ["n/a" if math.isnan(fitted[n]) else f"{fitted[n]:.2f}"
                                    for n in names])
    expected = convergence.get("expected_slope")
    if expected is not None:
        rows.append(["expected slope"] + [f"{float(expected):.2f}"] * len(names))
    return ["step"] + names, rows


def _header(terminal: Terminal, report: Report, registry: Registry) -> None:
    terminal.line(f"{report.op}", style="bold")
    if report.op in registry:
        info = op_info(registry.get(report.op))
        for label, value in (("family", info["family"]), ("doc", info["doc"]),
                             ("domain", ", ".join(info["domain"])), ("shapes", info["shapes"]),
                             ("kinks", info["kinks"] or "none"), ("rules", info["rules"]),
                             ("references", ", ".join(info["references"]))):
            if value:
                terminal.line(f"  {label}: {value}")
    terminal.line(f"  checked with seed {report.seed}, mode {report.mode}, dtypes "
                  f"{', '.join(report.dtypes) or 'default'}")
    if report.tolerance_reason:
        terminal.line(f"  wider tolerance: {report.tolerance_reason}")
    if report.overrides_text:
        terminal.line(f"  {report.overrides_text}")


def run_show(args: argparse.Namespace, terminal: Terminal,
             registry: Registry | None = None) -> int:
    """Print one op in depth; exit 1 when one of its findings fails (by ``--fail-on``, or
    for an op read from a results file by the policy those results record)."""
    registry = default_registry if registry is None else registry
    import_modules(args.imports)
    if args.results is not None:
        report, policy, judged = _from_results(args)
    else:
        policy = VerdictPolicy(parse_fail_on(args.fail_on or "failures"))
        name = registry.get(args.op).name  # UnknownOpError (with suggestions) if unknown
        from gradcheck.checker.api import check

        report = check(name, **check_kwargs(check_settings(args)))
        judged = [report]
    terminal.verbose = True  # show is the in-depth view: every finding in full
    _header(terminal, report, registry)
    terminal.line("")
    if report.cells:
        terminal.cells(report)
    else:
        terminal.line("no cells: nothing was compared")
    results = Results(reports=[report])
    terminal.findings(results, policy)
    if report.convergence:
        headers, rows = convergence_rows(report.convergence)
        terminal.line("")
        terminal.table("convergence of the numeric reference (max abs error per step)",
                       headers, rows)
        fitted = next(row for row in rows if row[0] == "fitted slope")
        if "n/a" in fitted[1:]:
            terminal.line("n/a: the error is rounding at every step (the path is linear along "
                          "this direction), so there is no truncation part to fit")
    if report.stats:
        terminal.line("")
        terminal.line("stats: " + ", ".join(f"{k}={v}" for k, v in sorted(report.stats.items())))
    terminal.line("")
    terminal.totals(results, policy)
    code = policy.exit_code(Results(reports=judged))
    if len(judged) > 1:
        rate = f", max failure rate {policy.max_failure_rate:g}" \
            if policy.max_failure_rate else ""
        terminal.line(f"{report.op} was checked at seeds "
                      f"{', '.join(str(r.seed) for r in judged)}; this is seed {report.seed} "
                      f"(--seed SEED shows another).  Over all {len(judged)} seeds it "
                      f"{'fails' if code else 'passes'}{rate}: exit code {code}")
    return code


_OPTION = {"dtypes": "--dtype"}  # a check setting's option, where the two names differ


def _from_results(args: argparse.Namespace) -> tuple[Report, VerdictPolicy, list[Report]]:
    """``(report, policy, every seed's report)`` of ``args.op`` in ``--results``: judged by
    the policy the results record (its allowances and failure rate), ``--fail-on`` replacing
    only its kinds.  Options that say how to check again are a usage error here: the file
    holds checks already made (``--seed`` picks one of its seeds)."""
    from gradcheck.cli.report_cmd import results_policy

    given = [_OPTION.get(key, f"--{key}") for key in check_settings(args) if key != "seed"]
    if given:
        raise UsageError(f"--results {args.results}: shows checks already made, so "
                         f"{', '.join(given)} would change nothing; drop "
                         f"{'it' if len(given) == 1 else 'them'}, or drop --results to "
                         "check the op again")
    results = load_results(args.results)
    policy = results_policy(results, args.results, args.fail_on)
    reports = op_reports(results, args.results, args.op)
    return _pick_seed(reports, args.results, args.seed, policy), policy, reports
