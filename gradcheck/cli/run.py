"""``gradcheck run``: check ops (by name, pattern, family, ``--all`` or a suite) and report.

The sweep runs first; the JSON results and the HTML report are rendered only when it
has finished and are written atomically, together, before the summary is printed: a run
ended during its sweep (Ctrl-C, a signal, a closed output) writes no file, one ended later
has written them all, and none leaves half a report.  The exit code says whether any
finding's kind is one ``--fail-on`` names.
"""

from __future__ import annotations

import argparse
import importlib
import os
import signal
import sys
import tempfile
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from fnmatch import fnmatch
from pathlib import Path
from typing import Any

from gradcheck.checker.policy import Allowance, VerdictPolicy
from gradcheck.checker.report import (
    FAILURE_KINDS,
    KINDS,
    WARNING_KINDS,
    Finding,
    Report,
    Results,
)
from gradcheck.cli.functions import (
    FunctionTargetError,
    is_function,
    split_available,
    unavailable_report,
)
from gradcheck.cli.suites import (
    DTYPES,
    MODES,
    PATHS,
    REFERENCES,
    PlannedOp,
    Suite,
    load_suite,
    suite_names,
)
from gradcheck.cli.terminal import Terminal
from gradcheck.engine import Registry, default_registry

__all__ = [
    "UsageError",
    "DEFAULT_JSON",
    "DEFAULT_HTML",
    "FAIL_ON_GROUPS",
    "add_parser",
    "add_check_options",
    "check_settings",
    "parse_fail_on",
    "failing_findings",
    "exit_code",
    "sweep",
    "write_outputs",
    "recording_outputs",
    "output_paths",
    "check_output_paths",
    "import_modules",
    "on_path",
    "plan_ops",
    "check_kwargs",
    "add_scale_options",
    "scale_settings",
    "unit_count",
    "check_executor",
    "run_command",
]

#: Where ``gradcheck run`` writes unless told otherwise (``reports/`` is git-ignored).
DEFAULT_JSON = Path("reports") / "results.json"
DEFAULT_HTML = Path("reports") / "index.html"

#: Words ``--fail-on`` accepts besides single finding kinds.
FAIL_ON_GROUPS: dict[str, frozenset[str]] = {
    "failures": FAILURE_KINDS,
    "warnings": WARNING_KINDS,
    "leaks": frozenset({"value_leak", "dependence_leak"}),
    "all": frozenset(KINDS),
    "none": frozenset(),
}


class UsageError(ValueError):
    """A command-line argument is wrong; the CLI prints the message and exits with 2."""


# -- options shared by run, show and the pytest plugin ----------------------------------


def _csv(value: str) -> list[str]:
    return [part.strip() for part in value.split(",") if part.strip()]


def _choices(value: str, allowed: Sequence[str], option: str) -> list[str]:
    items = _csv(value)
    if items == ["all"]:
        return list(allowed)
    bad = [v for v in items if v not in allowed]
    if bad or not items:
        raise UsageError(f"{option}: unknown value(s) {', '.join(map(repr, bad)) or '(empty)'}; "
                         f"expected a comma-separated list of {', '.join(allowed)} (or 'all')")
    return list(dict.fromkeys(items))


def parse_fail_on(value: str) -> frozenset[str]:
    """``--fail-on`` text (kinds and the words of :data:`FAIL_ON_GROUPS`) to a set of kinds."""
    kinds: set[str] = set()
    if not _csv(value):
        raise UsageError(f"--fail-on: empty ({value!r}); give finding kinds or a word such as "
                         "failures, or 'none' for an exit code that never fails")
    for item in _csv(value):
        if item in FAIL_ON_GROUPS:
            kinds |= FAIL_ON_GROUPS[item]
        elif item in KINDS:
            kinds.add(item)
        else:
            raise UsageError(f"--fail-on: unknown kind {item!r}; expected finding kinds "
                             f"({', '.join(KINDS)}) or {', '.join(FAIL_ON_GROUPS)}")
    return frozenset(kinds)


def _int_at_least(low: int, what: str) -> Callable[[str], int]:
    """An argparse type: an integer of at least ``low`` (``what`` names it in errors)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"expected {what}, got {value}")
        return value

    return parse


_positive_int = _int_at_least(1, "a positive integer")
_seed = _int_at_least(0, "a non-negative integer")


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected seconds, got {text!r}") from None
    if not value > 0:  # nan too; inf is no limit
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds (inf: no "
                                         f"limit), got {text}")
    return value


def add_check_options(parser: argparse.ArgumentParser) -> None:
    """The options that say how ops are checked (shared by ``run`` and ``show``).

    Each defaults to None, so a suite's own settings apply unless one is given.
    """
    group = parser.add_argument_group("how to check")
    group.add_argument("--paths", metavar="PATHS",
                       help=f"comma-separated derivative paths ({', '.join(PATHS)}; "
                            "default all)")
    group.add_argument("--references", metavar="REFS",
                       help=f"comma-separated references ({', '.join(REFERENCES)})")
    group.add_argument("--mode", choices=MODES, help="fast: random projections (default); "
                       "full: whole Jacobians")
    group.add_argument("--seed", type=_seed, help="seed of every random choice (default 0)")
    group.add_argument("--examples", type=_positive_int, metavar="N",
                       help="examples (sampled inputs) per op and dtype")
    group.add_argument("--dtype", metavar="DTYPES",
                       help=f"comma-separated dtypes ({', '.join(DTYPES)})")
    group.add_argument("--timeout", type=_seconds, metavar="SECONDS",
                       help="time limit per op; an op over it becomes an 'error' finding "
                            "(inf: no limit)")


def check_settings(args: argparse.Namespace) -> dict[str, Any]:
    """The check settings given explicitly on the command line (validated)."""
    settings: dict[str, Any] = {}
    if args.paths is not None:
        settings["paths"] = _choices(args.paths, PATHS, "--paths")
    if args.references is not None:
        settings["references"] = _choices(args.references, REFERENCES, "--references")
    if args.dtype is not None:
        settings["dtypes"] = _choices(args.dtype, DTYPES, "--dtype")
    for key in ("mode", "seed", "examples", "timeout"):
        if getattr(args, key) is not None:
            settings[key] = getattr(args, key)
    return settings


def _rate(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a failure rate, got {text!r}") from None
    if not 0 <= value < 1:
        raise argparse.ArgumentTypeError(f"expected a failure rate from 0 to below 1 "
                                         f"(0.1: up to 10% of seeds may fail), got {text}")
    return value


def add_scale_options(parser: argparse.ArgumentParser) -> None:
    """``run``'s options for sweeps at scale: many seeds, many machines."""
    group = parser.add_argument_group("many seeds, many machines")
    group.add_argument("--seeds", metavar="SEEDS",
                       help="check every op at each of these seeds: a range '0:20' (0 to 19), "
                            "a list '0,3,7', or both; the report gives each op's failure rate "
                            "per finding kind, and whether it is consistent or flaky")
    group.add_argument("--max-failure-rate", type=_rate, default=0.0, metavar="R",
                       help="over many seeds, a finding kind fails an op only when it is found "
                            "at more than this share of its seeds (default 0: any seed fails)")
    group.add_argument("--scheduler", metavar="ADDRESS",
                       help="run the checks on a Dask distributed cluster, e.g. "
                            "tcp://host:8786 (needs pip install gradcheck[distributed])")


def scale_settings(args: argparse.Namespace) -> dict[str, Any]:
    """The seeds the command line asks for: ``--seeds``, or ``--seed`` over a suite's
    ``seeds`` (then ``seeds`` is None)."""
    seeds = getattr(args, "seeds", None)
    if seeds is not None:
        if args.seed is not None:
            raise UsageError("--seed and --seeds cannot be combined: give one")
        from gradcheck.checker.seeds import parse_seeds

        try:
            return {"seeds": parse_seeds(seeds)}
        except ValueError as error:
            raise UsageError(str(error)) from None
    return {"seeds": None} if args.seed is not None else {}


def unit_count(planned: Sequence[PlannedOp]) -> int:
    """How many checks the planned ops make: one per op and seed."""
    return sum(len(p.settings.get("seeds") or [0]) for p in planned)


def add_parser(subparsers: Any) -> None:
    """Register ``gradcheck run`` on the CLI's subparsers."""
    parser = subparsers.add_parser(
        "run", help="check ops and write the JSON results and the HTML report",
        description="Check ops along every derivative path and write reports/results.json "
                    "and reports/index.html (see --json, --html).  Exit code: 0 when no "
                    "finding's kind is in --fail-on, 1 when one is, 2 for a usage error.")
    what = parser.add_argument_group("what to check")
    what.add_argument("--op", action="append", default=[], metavar="OP",
                      help="an op name, a glob such as 'linalg.*', or a family (repeatable)")
    what.add_argument("--all", action="store_true", help="every registered op")
    what.add_argument("--suite", metavar="SUITE",
                      help="a suite file (any .toml path) or the name of a shipped suite "
                           f"({', '.join(suite_names())})")
    what.add_argument("--import", dest="imports", action="append", default=[], metavar="MODULE",
                      help="import this module first, from the current folder or the Python "
                           "path (it registers your own ops; repeatable)")
    add_check_options(parser)
    add_scale_options(parser)
    out = parser.add_argument_group("output")
    out.add_argument("--jobs", type=_positive_int, metavar="N",
                     help="worker processes checking ops side by side (default 1).  Every op "
                          "runs in a worker, so none can stop the run or outlive --timeout; "
                          "the results are identical whatever N (not with --scheduler: the "
                          "cluster's workers run the checks)")
    out.add_argument("--json", type=Path, metavar="PATH",
                     help="write the JSON results here.  When no output option is given, "
                          f"both files are written: {DEFAULT_JSON} and {DEFAULT_HTML}; "
                          "when --json or --html is given, exactly the files named are")
    out.add_argument("--html", type=Path, metavar="PATH", help="write the HTML report here")
    out.add_argument("--no-json", action="store_true",
                     help=f"do not write the JSON results (the default {DEFAULT_JSON})")
    out.add_argument("--no-html", action="store_true",
                     help=f"do not write the HTML report (the default {DEFAULT_HTML})")
    out.add_argument("--no-report", action="store_true",
                     help="write no file at all (cannot be combined with --json or --html)")
    out.add_argument("--fail-on", default="failures", metavar="KINDS",
                     help="comma-separated finding kinds that make the exit code 1, or the "
                          "words failures (default), warnings, leaks, all, none")
    out.add_argument("--top", type=_positive_int, default=10, metavar="N",
                     help="how many of the worst findings to list (default 10)")
    parser.set_defaults(handler=run_command)


# -- choosing ops ------------------------------------------------------------------------


def import_modules(names: Iterable[str]) -> list[str]:
    """Import the modules of ``--import`` (they register ops as a side effect), from the
    Python path or, as ``python -m`` would, the current folder (added to the end of the path,
    so worker processes, which start with this path, find the module too).  A ``.py`` file's
    path is imported as the module it is, its folder added to the path the same way.
    Returns the module names, which is what worker processes import again.

    Whatever importing raises (a missing module, a syntax error, an op registered twice) is
    a usage error naming the option, never a traceback."""
    modules = []
    for given in names:
        name, folder = _module_of(given)
        on_path(folder or os.getcwd())
        try:
            module = importlib.import_module(name)
        except ImportError as error:
            raise UsageError(f"--import {given}: cannot import it: {error}") from None
        except Exception as error:  # noqa: BLE001 - the user's module: any error is theirs
            raise UsageError(f"--import {given}: importing it raised "
                             f"{type(error).__name__}: {error}") from None
        except SystemExit as error:  # a script run as a module: its exit is no result of ours
            raise UsageError(f"--import {given}: importing it called sys.exit({error.code!r}) "
                             "(guard a script's main code with if __name__ == '__main__')"
                             ) from None
        if folder:
            _same_file(given, module)
        modules.append(name)
    return modules


def on_path(folder: str) -> None:
    """Make ``folder`` importable (at the end of the path, so it shadows nothing); worker
    processes start with this path, so they import from it too."""
    if folder not in sys.path and not (folder == os.getcwd() and "" in sys.path):
        sys.path.append(folder)


def _module_of(given: str) -> tuple[str, str | None]:
    """``(module name, folder to add to the path or None)`` of an ``--import`` value: a
    module name, or the path of a ``.py`` file (``./my_ops.py``, ``lib/my_ops.py``)."""
    if not given.endswith(".py") and "/" not in given and os.sep not in given:
        if given.startswith(".") or not all(part.isidentifier() for part in given.split(".")):
            raise UsageError(f"--import {given}: not a module name (such as 'my_ops' or "
                             "'mypkg.ops') nor the path of a .py file")
        return given, None
    path = Path(given)
    if path.suffix != ".py" or not path.is_file():
        raise UsageError(f"--import {given}: no such .py file (give a module name such as "
                         "'my_ops', or the path of a .py file)")
    if not path.stem.isidentifier():
        raise UsageError(f"--import {given}: {path.name!r} cannot be imported as a module "
                         "(its name is not a Python identifier); rename it")
    return path.stem, str(path.resolve().parent)


def _same_file(given: str, module: Any) -> None:
    """A file given by path must be the module imported under its name, not another one
    of that name earlier on the path (or imported before)."""
    found = getattr(module, "__file__", None)
    if found is None or Path(found).resolve() != Path(given).resolve():
        raise UsageError(f"--import {given}: the module name {module.__name__!r} is taken by "
                         f"{found or 'a built-in module'}; rename the file")


def plan_ops(args: argparse.Namespace, registry: Registry,
             base: Mapping[str, Any]) -> tuple[list[PlannedOp], list[PlannedOp], Suite | None]:
    """``(checked, skipped, suite)`` from --op, --all and --suite (unknown op names raise
    ``UnknownOpError``, with suggestions)."""
    if args.all and args.suite:
        raise UsageError("--all and --suite cannot be combined (a suite says which ops)")
    if args.all and args.op:
        raise UsageError(f"--all and --op {' --op '.join(args.op)} cannot be combined "
                         "(--all checks every op): give one")
    if args.suite:
        suite = load_suite(args.suite, registry)
        checked, skipped = suite.plan(registry, base)
        if args.op:  # --op narrows a suite to some of its ops and function rows
            wanted = _narrowed(args.op, registry, [p.name for p in checked + skipped
                                                   if is_function(p)])
            checked = [p for p in checked if p.name in wanted]
            skipped = [p for p in skipped if p.name in wanted]
        return checked, skipped, suite
    if args.all:
        return [PlannedOp(op.name, dict(base)) for op in registry], [], None
    if args.op:
        return [PlannedOp(op.name, dict(base)) for op in registry.select(args.op)], [], None
    raise UsageError("nothing to check: give --op OP (repeatable), --all or --suite SUITE")


def _narrowed(patterns: Sequence[str], registry: Registry, functions: Sequence[str]) -> set[str]:
    """The names ``--op`` patterns select: function rows' names (globs allowed) and ops."""
    wanted = {name for name in functions if any(fnmatch(name, p) for p in patterns)}
    for_ops = [p for p in patterns if not any(fnmatch(name, p) for name in functions)]
    if for_ops:  # an unknown name raises UnknownOpError, with suggestions
        wanted |= {op.name for op in registry.select(for_ops)}
    return wanted


# -- running -----------------------------------------------------------------------------


def sweep(planned: Sequence[PlannedOp], *, jobs: int, imports: Sequence[str],
          on_report: Callable[[Report], None], scheduler: str | None = None) -> Results:
    """Check the planned ops, each with its own settings and at each of its seeds, in one
    sweep of worker processes (even at ``--jobs 1``: no op can stop the run or outlive its
    ``--timeout``), or on the Dask cluster at ``scheduler``."""
    from gradcheck.checker.runner import ExecutorError, run_sweep

    try:
        return run_sweep([p.name for p in planned], jobs=jobs, progress=on_report,
                         isolate=True, imports=imports, scheduler=scheduler,
                         per_op={p.name: check_kwargs(p.settings) for p in planned})
    except ExecutorError as error:
        raise UsageError(str(error)) from None


def check_kwargs(settings: Mapping[str, Any]) -> dict[str, Any]:
    """Keyword arguments of ``gradcheck.check`` from CLI or suite settings.

    The checker's own references (``numeric``, ``self``) are always kept: ``--references``
    adds external ones (``--references autograd,tensorflow``) and never drops the numeric
    Jacobian.
    """
    kwargs = dict(settings)
    if "references" in kwargs:
        from gradcheck.checker.references import INTERNAL

        kwargs["references"] = list(dict.fromkeys([*INTERNAL, *kwargs["references"]]))
    return kwargs


def failing_findings(results: Results, policy: VerdictPolicy) -> list[Finding]:
    """The findings that fail the run under ``policy``."""
    return [f for r in results.reports for f in r.findings if policy.fails(f)]


def exit_code(results: Results, policy: VerdictPolicy) -> int:
    """0 when nothing fails, 1 when some finding fails."""
    return policy.exit_code(results)


def output_paths(args: argparse.Namespace) -> tuple[Path | None, Path | None]:
    """``(json, html)`` paths to write (None: not written), from the output options.

    Nothing named: both files go to ``reports/`` (less what ``--no-json`` / ``--no-html``
    drop); ``--json`` / ``--html`` named: exactly those files; ``--no-report``: none.  An
    option that contradicts another is a usage error, never silently overruled.
    """
    for no, given in (("--no-report", args.json or args.html), ("--no-json", args.json),
                      ("--no-html", args.html)):
        flag = getattr(args, no[2:].replace("-", "_"))
        if flag and given:
            named = " ".join(f"{o} {p}" for o, p in (("--json", args.json),
                                                      ("--html", args.html)) if p)
            raise UsageError(f"{no} contradicts {named}: give one or the other")
    if args.no_report:
        return None, None
    if args.json or args.html:
        return args.json, args.html
    return (None if args.no_json else DEFAULT_JSON), (None if args.no_html else DEFAULT_HTML)


def check_output_paths(paths: Mapping[str, Path | None]) -> None:
    """Before any work: each output path (by option, or by what it is) must be a file we can
    create or replace, and no two the same, else a usage error naming the option and path.

    A symlink is checked (and later written) as the file it resolves to; a pipe or another
    special file (``/dev/stdout``) only needs to be writable: it is written in place."""
    from gradcheck.render import writes_in_place

    named = [(option, path) for option, path in paths.items() if path is not None]
    for i, (option, path) in enumerate(named):
        for other, earlier in named[:i]:
            if path.resolve() == earlier.resolve():
                raise UsageError(f"{option} {path}: the same file as {other} {earlier}")
        try:
            if path.is_dir():
                raise UsageError(f"{option} {path}: is a directory; give a file name")
            special = writes_in_place(path)
        except OSError as error:  # a symlink loop
            raise UsageError(f"{option} {path}: cannot write there: "
                             f"{error.strerror or error}") from None
        if special:
            if not os.access(path, os.W_OK):
                raise UsageError(f"{option} {path}: the file is not writable")
            continue
        folder = (Path(os.path.realpath(path)) if path.is_symlink() else path).parent
        while not folder.exists() and folder != folder.parent:
            folder = folder.parent  # missing folders are created when the file is written
        if not folder.is_dir():
            raise UsageError(f"{option} {path}: {folder} is not a folder")
        try:  # the only reliable test (root, read-only mounts, /proc): create a file there
            fd, probe = tempfile.mkstemp(prefix=".gradcheck-probe-", dir=folder)
        except OSError as error:
            raise UsageError(f"{option} {path}: cannot write there: "
                             f"{error.strerror or error}") from None
        os.close(fd)
        os.unlink(probe)
        if path.exists() and not os.access(path, os.W_OK):
            raise UsageError(f"{option} {path}: the file is not writable")


def write_outputs(results: Results, json_path: Path | None, html_path: Path | None) -> None:
    """Render everything first, then write each file atomically (parents created; a symlink
    is written through), and a pipe such as ``/dev/stdout`` in place, last.

    The writing of files holds back Ctrl-C, SIGTERM and SIGHUP until every file is in place
    (they act right after), so an ended run never leaves a new results file beside the page
    of an older run; each file written is added to :func:`recording_outputs`' list."""
    from gradcheck.render import atomic_write_text, render_html, writes_in_place

    texts: list[tuple[Path, str]] = []
    if json_path is not None:
        texts.append((json_path, results.to_json() + "\n"))
    if html_path is not None:
        texts.append((html_path, render_html(results)))
    written = _WRITTEN.get()
    streams = [(path, text) for path, text in texts if writes_in_place(path)]
    files = [(path, text) for path, text in texts if (path, text) not in streams]
    with _stops_held():
        for path, text in files:
            Path(os.path.realpath(path)).parent.mkdir(parents=True, exist_ok=True)
            atomic_write_text(path, text)
            if written is not None:
                written.append(path)
    # A pipe (--json /dev/stdout) is written last and interruptibly: its reader may be slow
    # or never come, and there is no old file to keep whole.  Our own output goes first.
    for path, text in streams:
        sys.stdout.flush()
        atomic_write_text(path, text)
        if written is not None:
            written.append(path)


#: The list :func:`write_outputs` adds each completely written file to (None: no record).
_WRITTEN: ContextVar[list[Path] | None] = ContextVar("gradcheck_written", default=None)
#: The signals that end a run (see ``gradcheck.checker.timeout.stop_signals``).
_STOPS = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}


@contextmanager
def recording_outputs(written: list[Path]) -> Iterator[None]:
    """In this block :func:`write_outputs` appends each file to ``written`` once the file is
    completely in place, so whatever ends the command afterwards (Ctrl-C, a signal, a closed
    output) can say exactly which files it leaves."""
    token = _WRITTEN.set(written)
    try:
        yield
    finally:
        _WRITTEN.reset(token)


@contextmanager
def _stops_held() -> Iterator[None]:
    """The signals that end a run blocked (not lost: delivered when the block ends)."""
    if threading.current_thread() is not threading.main_thread():
        yield  # no signal reaches another thread
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, _STOPS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def _config(base: Mapping[str, Any], suite: Suite | None, checked: Sequence[PlannedOp],
            skipped: Sequence[PlannedOp], policy: VerdictPolicy) -> dict[str, Any]:
    """What the results file records about the run (nothing that varies between runs),
    including the verdict policy, so ``gradcheck report`` judges it as this run did."""
    config: dict[str, Any] = {**(suite.defaults if suite is not None else {}), **base}
    if config.get("seeds") is None:  # --seed given over a suite's seeds
        config.pop("seeds", None)
    if "seeds" not in config:
        config.setdefault("seed", 0)
    config["fail_on"] = sorted(policy.fail_on)
    if policy.max_failure_rate:
        config["max_failure_rate"] = policy.max_failure_rate
    if suite is not None:
        config["suite"] = suite.name
    exceptions = {p.name: {"reason": p.reason, "allow": sorted(p.allow),
                           "settings": dict(p.settings)}
                  for p in checked if p.reason}
    if exceptions:
        config["exceptions"] = exceptions
    if skipped:
        config["skipped"] = {p.name: p.reason for p in skipped}
    return config


def _environment(checked: Sequence[PlannedOp], reports: Sequence[Report]) -> dict[str, str]:
    """The run's environment, with the version of every framework any planned op or row
    used (the references are given per op: a suite's rows, or ``--references``)."""
    from gradcheck.checker.runner import sweep_environment

    references = [r for p in checked for r in p.settings.get("references") or ()]
    return sweep_environment(references, reports)


def check_executor(args: argparse.Namespace) -> None:
    """Before any work: ``--scheduler`` is an address Dask can dial, and not given with
    ``--jobs`` (the cluster's workers say how many checks run side by side)."""
    if args.scheduler is None:
        return
    if args.jobs is not None:
        raise UsageError(f"--jobs {args.jobs} and --scheduler {args.scheduler} cannot be "
                         "combined: on a cluster, its workers run the checks side by side; "
                         "drop --jobs")
    from gradcheck.checker.executors.cluster import ExecutorError, check_address

    try:
        check_address(args.scheduler)
    except ExecutorError as error:
        raise UsageError(str(error)) from None


def run_command(args: argparse.Namespace, terminal: Terminal,
                registry: Registry | None = None) -> int:
    """``gradcheck run``: sweep, print the summary, write the files, return the exit code."""
    registry = default_registry if registry is None else registry
    fail_on = parse_fail_on(args.fail_on)
    check_executor(args)
    json_path, html_path = output_paths(args)
    check_output_paths({"--json": json_path, "--html": html_path})
    imports = import_modules(args.imports)
    base = {**check_settings(args), **scale_settings(args)}
    checked, skipped, suite = plan_ops(args, registry, base)
    if not checked:
        raise UsageError("nothing to check: the selection matches no op")
    if any(is_function(p) for p in checked):
        on_path(os.getcwd())  # a row's 'my_module:fn' is found where --import finds modules
    try:
        ready, missing = split_available([p for p in checked if is_function(p)])
    except FunctionTargetError as error:
        raise UsageError(str(error)) from None
    tasks = [p for p in checked if p.name not in missing]
    # the run's policy before the sweep, so each op's progress line has its final status
    policy = VerdictPolicy(fail_on, {p.name: Allowance(p.allow, p.reason)
                                     for p in checked if p.allow}, args.max_failure_rate)

    reports: list[Report] = []
    units = unit_count(tasks) + len(checked) - len(tasks)
    with terminal.progress(units, policy=policy, seeds=units > len(checked)) as done:
        if tasks:
            reports += sweep(tasks, jobs=args.jobs or 1, imports=imports, on_report=done,
                             scheduler=args.scheduler).reports
        for p in checked:
            if p.name in missing:
                reports.append(unavailable_report(p, missing[p.name], {}))
                done(reports[-1])
    reports.sort(key=lambda r: (r.op, r.seed))
    results = Results(reports=reports, config=_config(base, suite, checked, skipped, policy),
                      environment=_environment(checked, reports))
    # The results are complete: written before anything more is printed, so a reader that
    # goes away now (`| head`) or a Ctrl-C during the summary no longer costs the report.
    write_outputs(results, json_path, html_path)
    terminal.summary(results, policy)
    terminal.findings(results, policy, limit=args.top)
    for p in skipped:
        terminal.line(f"skipped {p.name}: {p.reason}")
    for label, path in (("results", json_path), ("report", html_path)):
        if path is not None:
            terminal.line(f"{label}: {path}")
    return exit_code(results, policy)
