"""The ``gradcheck`` command: ``run``, ``list``, ``show`` and ``report``.

Exit codes: 0 when nothing fails, 1 when a finding fails (see ``--fail-on``), 2 for a
usage error (a bad option, an unknown op, suite or file or an output path that cannot be
written), 130 when interrupted (Ctrl-C), 128 + N when ended by signal N (143: SIGTERM), 141
when the output is closed (``gradcheck run | head``).  A run writes its files as soon as its
sweep has finished, before it prints the summary: ended during the sweep it writes none,
ended afterwards it has written them all, and its last line on stderr says which.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from gradcheck import __version__
from gradcheck.checker.timeout import Terminated, stop_signals
from gradcheck.cli import listing, report_cmd, run, show
from gradcheck.cli.run import UsageError, recording_outputs
from gradcheck.cli.suites import SuiteError
from gradcheck.cli.terminal import Terminal
from gradcheck.engine import UnknownOpError

__all__ = ["main", "build_parser", "what_was_written", "EXIT_OK", "EXIT_FAILED", "EXIT_USAGE",
           "EXIT_INTERRUPTED", "EXIT_BROKEN_PIPE"]

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130  # the shell's convention for SIGINT (128 + 2)
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE


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


def cache_dir() -> Path:
    """Where gradcheck keeps files it may reuse: ``$XDG_CACHE_HOME/gradcheck`` (default
    ``~/.cache/gradcheck``)."""
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "gradcheck"


@contextmanager
def hypothesis_storage() -> Iterator[None]:
    """Hypothesis keeps its files (a cache of constants from local source files) under
    :func:`cache_dir`, never in ``.hypothesis/`` of the user's working directory, unless
    ``HYPOTHESIS_STORAGE_DIRECTORY`` says where.  Worker processes inherit the setting."""
    if os.environ.get(_HYPOTHESIS_ENV):
        yield
        return
    from hypothesis.configuration import set_hypothesis_home_dir

    os.environ[_HYPOTHESIS_ENV] = str(cache_dir() / "hypothesis")
    set_hypothesis_home_dir(os.environ[_HYPOTHESIS_ENV])
    try:
        yield
    finally:
        del os.environ[_HYPOTHESIS_ENV]
        set_hypothesis_home_dir(None)  # resolved again, as before, on next use


_HYPOTHESIS_ENV = "HYPOTHESIS_STORAGE_DIRECTORY"


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``gradcheck`` command line and return its exit code."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:  # argparse: 0 for --help, 2 for a usage error
        return int(exit_.code or 0)
    terminal = Terminal(plain=True if args.no_color else None, verbose=args.verbose)
    written: list[Path] = []  # the files the command has completely written, in order
    try:
        with stop_signals(), hypothesis_storage(), recording_outputs(written):
            return int(args.handler(args, terminal))
    except (UsageError, SuiteError, UnknownOpError) as error:
        terminal.error(str(error))
        return EXIT_USAGE
    except KeyboardInterrupt:
        _tell(f"gradcheck: interrupted; {what_was_written(written)}")
        return EXIT_INTERRUPTED
    except Terminated as stop:
        _tell(f"gradcheck: {stop}; {what_was_written(written)}")
        return 128 + stop.signum
    except BrokenPipeError:
        # The reader went away (``gradcheck run | head``): the run ends, as a program killed
        # by SIGPIPE would.  stdout (and stderr, when it is the same pipe: ``2>&1 | head``)
        # point at devnull afterwards, so the interpreter's final flush cannot fail again.
        _silence(sys.stdout)
        if args.command == "run" or written:
            _tell(f"gradcheck: output closed (broken pipe); {what_was_written(written)}")
        _silence(sys.stderr)
        return EXIT_BROKEN_PIPE


def what_was_written(written: Sequence[Path]) -> str:
    """The end of the message of an ended command: which of its files are in place (a run
    writes its reports as soon as its sweep has finished, so an ended run may have)."""
    if not written:
        return "no results or report were written"
    names = [str(path) for path in written]
    listed = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"
    return f"{listed} {'was' if len(names) == 1 else 'were'} written"


def _tell(message: str) -> None:
    """``message`` on stderr, unless stderr is gone too (``2>&1 | head``): then nothing,
    and stderr points at devnull, since there is no one left to tell."""
    try:
        print(message, file=sys.stderr, flush=True)
    except OSError:
        _silence(sys.stderr)


def _silence(stream: Any) -> None:
    """Point ``stream``'s file descriptor at devnull (what it still buffers goes there)."""
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):  # replaced by a test, or already closed
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, fd)
    os.close(devnull)
