"""``gradcheck report RESULTS.json --html OUT.html``: re-render old results and judge them.

Reports are a pure function of the JSON results, so any results file -- from a
past run, from CI, from the pytest plugin -- renders to the same page it did then.
The exit code is the run's verdict (as ``gradcheck run`` gives it): by default the
results' own policy (their ``fail_on`` and suite exceptions), or ``--fail-on``.
"""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path
from typing import Any

from gradcheck.checker.policy import VerdictPolicy
from gradcheck.checker.report import Results
from gradcheck.cli.run import UsageError, check_output_paths, parse_fail_on, write_outputs
from gradcheck.cli.show import load_results
from gradcheck.cli.terminal import Terminal

__all__ = ["add_parser", "run_report", "results_policy"]


def add_parser(subparsers: Any) -> None:
    """Register ``gradcheck report`` on the CLI's subparsers."""
    parser = subparsers.add_parser(
        "report", help="render a results file as the HTML report (and print its summary)",
        description="Render RESULTS.json (written by 'gradcheck run' or 'pytest "
                    "--gradcheck-report') as the self-contained HTML report.  Exit code: "
                    "0 when no finding fails, 1 when one does (judged by the policy the "
                    "results record, or by --fail-on), 2 for a usage error.")
    parser.add_argument("results", type=Path, metavar="RESULTS.json")
    parser.add_argument("--html", type=Path, metavar="OUT.html",
                        help="where to write the page (default: RESULTS with .html)")
    parser.add_argument("--fail-on", metavar="KINDS",
                        help="finding kinds that make the exit code 1, as for 'gradcheck run' "
                             "(default: the fail_on the results record)")
    parser.add_argument("--quiet", action="store_true", help="do not print the summary")
    parser.set_defaults(handler=run_report)


def results_policy(results: Results, path: Path, fail_on: str | None) -> VerdictPolicy:
    """The policy the run recorded in its results (its fail_on, suite exceptions and
    max failure rate), so the verdict is the run's; ``--fail-on`` replaces only the kinds.
    A recorded policy that is not one is a usage error naming the file."""
    try:
        policy = VerdictPolicy.from_config(results.config)
    except ValueError as error:
        raise UsageError(f"{path} is not a gradcheck results file: {error}") from None
    if fail_on is None:
        return policy
    return replace(policy, fail_on=parse_fail_on(fail_on))


def run_report(args: argparse.Namespace, terminal: Terminal, registry: Any = None) -> int:
    """Write the HTML page for a results file; the exit code is the results' verdict."""
    results = load_results(args.results)
    html = args.html if args.html is not None else args.results.with_suffix(".html")
    if html.resolve() == args.results.resolve():
        raise UsageError(f"--html {html}: the same file as RESULTS.json {args.results}")
    check_output_paths({"--html": html})
    policy = results_policy(results, args.results, args.fail_on)
    write_outputs(results, None, html)
    if not args.quiet:
        terminal.summary(results, policy)
        terminal.findings(results, policy)
    terminal.line(f"report: {html}")
    return policy.exit_code(results)
