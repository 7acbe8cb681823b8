"""The ``gradcheck`` command: ``run``, ``list``, ``show`` and ``report``.

Exit codes: 0 when nothing fails, 1 when a finding fails (see ``--fail-on``), 2 for a
usage error (a bad option, an unknown op, suite or file), 130 when interrupted.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from gradcheck import __version__
from gradcheck.cli import listing, report_cmd, run, show
from gradcheck.cli.run import UsageError
from gradcheck.cli.suites import SuiteError
from gradcheck.cli.terminal import Terminal
from gradcheck.engine import UnknownOpError

__all__ = ["main", "build_parser", "EXIT_OK", "EXIT_FAILED", "EXIT_USAGE", "EXIT_INTERRUPTED"]

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130  # the shell's convention for SIGINT


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every subcommand."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("-v", "--verbose", action="store_true",
                        help="per-example detail: every finding with its numbers, "
                             "counterexample and traceback")
    common.add_argument("--no-color", action="store_true",
                        help="plain uncolored line-oriented output (the default when stdout "
                             "is not a terminal)")
    parser = argparse.ArgumentParser(
        prog="gradcheck",
        description="Check derivative rules along every path (VJP, JVP, double-VJP, second "
                    "order) against numeric Jacobians, each other, autograd and TensorFlow.")
    parser.add_argument("--version", action="version", version=f"gradcheck {__version__}")
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    original = subparsers.add_parser

    def add_parser(name: str, **kwargs: object) -> argparse.ArgumentParser:
        # Every subcommand takes -v and --no-color after its name.
        return original(name, parents=[common], **kwargs)  # type: ignore[arg-type]

    subparsers.add_parser = add_parser  # type: ignore[method-assign]
    for module in (run, listing, show, report_cmd):
        module.add_parser(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``gradcheck`` command line and return its exit code."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:  # argparse: 0 for --help, 2 for a usage error
        return int(exit_.code or 0)
    terminal = Terminal(plain=True if args.no_color else None, verbose=args.verbose)
    try:
        return int(args.handler(args, terminal))
    except (UsageError, SuiteError, UnknownOpError) as error:
        terminal.error(str(error))
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("gradcheck: interrupted; no results or report were written", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # The reader went away (``gradcheck list | head``): not an error of ours.  Point
        # stdout at devnull so the interpreter's final flush does not fail again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK
