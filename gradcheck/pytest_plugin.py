"""pytest plugin: gradient checks of your own ops inside your own test suite.

Loaded through the ``pytest11`` entry point in every pytest run, so importing this
module imports nothing but pytest; gradcheck itself is imported on first use, and
a run that uses none of this pays nothing.  It offers:

* the ``gradcheck`` fixture: ``gradcheck.check(op, **kw)`` returns the ``Report``,
  ``gradcheck.assert_ok(op, **kw)`` also fails the test on a failing finding;
* the marker ``@pytest.mark.gradcheck(ops=[...], paths=..., references=...)``: after
  the test body passes, those ops are checked and the test fails with the findings;
* ``pytest --gradcheck``: one test item per registered op -- ops registered by your
  own modules (imported by your conftest) included -- with ids ``gradcheck::NAME``;
  with ``--gradcheck-seeds 0:20`` each item (and each marker's op) is checked at every
  seed, and fails when a finding kind fails at more than ``--gradcheck-max-failure-rate``
  of them (default 0: any seed), listing the failing seeds and the first one's findings;
* ``--gradcheck-report=PATH``: every report of the session as JSON at PATH plus the
  HTML page beside it (PATH with ``.html``), written once at the end, also under
  pytest-xdist (workers send their reports to the controller through ``workeroutput``).

A failure shows the findings (op, path, error vs tolerance, counterexample), never the
plugin's own frames.  A misused marker is an error at collection: an unknown option or op,
or values ``gradcheck.check`` refuses when it builds the op's target (inputs, params, wrt,
outputs, shapes, name, framework); other values it refuses (examples=0, an unknown path)
fail the test with its message.  The summary line counts what the JSON holds, in the
status words of the CLI and the HTML report.  pytest-xdist workers use one BLAS thread, as
the CLI's workers do (unless the user chose otherwise).
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Generator, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from gradcheck.checker.report import Report

__all__ = ["GradcheckFixture", "GradcheckItem", "GradcheckFailure", "format_failure"]

_MODES = ("fast", "full")
_WORKER_KEY = "gradcheck_reports"
#: What the CLI's worker processes pin, so checks in parallel do not oversubscribe the cores.
_ONE_THREAD = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_setupnodes(config: pytest.Config, specs: Any) -> None:
    """pytest-xdist, on the controller, before it starts the workers: one BLAS thread per
    worker, as the CLI's workers have, unless the user set a count.

    Workers inherit this environment.  It has to be set here, in the parent: a worker has
    imported numpy -- which reads these variables once, when it loads BLAS -- before any
    hook of ours runs in it (loading this plugin imports the gradcheck package).  Workers
    are as many processes as cores, so BLAS threads on top oversubscribe the machine.
    """
    for name in _ONE_THREAD:
        os.environ.setdefault(name, "1")


@dataclass
class _Session:
    """The plugin's state for one pytest session (kept in ``config.stash``)."""

    options: dict[str, Any]
    report_path: Path | None
    collect: bool
    patterns: list[str]
    seeds: list[int] | None = None
    max_failure_rate: float = 0.0
    reports: list[dict[str, Any]] = field(default_factory=list)

    def record(self, report: Report) -> None:
        # now, while the target is as it was checked: the plot data only a report file shows
        self.reports.append(report.to_dict(convergence=self.report_path is not None))


_STATE = pytest.StashKey[_Session]()


def pytest_addoption(parser: pytest.Parser) -> None:
    """The ``gradcheck`` option group (every option has the ``--gradcheck`` prefix)."""
    group = parser.getgroup("gradcheck", "gradient checks of registered ops (gradcheck)")
    group.addoption("--gradcheck", action="store_true", default=False,
                    help="collect one test item per registered op (ids gradcheck::NAME)")
    group.addoption("--gradcheck-ops", default=None, metavar="PATTERNS",
                    help="with --gradcheck: only these ops (comma-separated names, globs "
                         "such as 'linalg.*', or families)")
    group.addoption("--gradcheck-seed", type=int, default=0, metavar="SEED",
                    help="seed of every gradient check (default 0)")
    group.addoption("--gradcheck-seeds", default=None, metavar="SEEDS",
                    help="check each op of --gradcheck and of the markers at every seed: "
                         "'0:20' (0 to 19), '0,3,7' or both (replaces --gradcheck-seed)")
    group.addoption("--gradcheck-max-failure-rate", type=float, default=0.0, metavar="R",
                    help="with --gradcheck-seeds: an op fails only when a finding kind "
                         "fails at more than this share of its seeds (default 0: any)")
    group.addoption("--gradcheck-mode", choices=_MODES, default="fast",
                    help="fast (random projections, default) or full (whole Jacobians)")
    group.addoption("--gradcheck-references", default=None, metavar="REFS",
                    help="comma-separated references: numeric, autograd, tensorflow")
    group.addoption("--gradcheck-examples", type=int, default=None, metavar="N",
                    help="examples (sampled inputs) per op and dtype")
    group.addoption("--gradcheck-report", default=None, metavar="PATH",
                    help="write every report of the session as JSON to PATH and as HTML "
                         "beside it (PATH with .html), once at the end")


def pytest_configure(config: pytest.Config) -> None:
    """Register the marker and set up the session state."""
    config.addinivalue_line(
        "markers",
        "gradcheck(ops, paths=None, references=None, **options): after the test body "
        "passes, check these ops and fail on a failing finding",
    )
    seed = config.getoption("gradcheck_seed")
    if seed < 0:
        raise pytest.UsageError(f"--gradcheck-seed must be a non-negative integer, got {seed}")
    options: dict[str, Any] = {"seed": seed, "mode": config.getoption("gradcheck_mode")}
    references = config.getoption("gradcheck_references")
    if references:
        options["references"] = _references(references)
    examples = config.getoption("gradcheck_examples")
    if examples is not None:
        if examples < 1:
            raise pytest.UsageError(f"--gradcheck-examples must be positive, got {examples}")
        options["examples"] = examples
    report = config.getoption("gradcheck_report")
    report_path = Path(report) if report else None
    if report_path is not None and not hasattr(config, "workerinput"):  # xdist: the controller
        _check_report_path(report_path)
    patterns = config.getoption("gradcheck_ops")
    config.stash[_STATE] = _Session(
        options=options,
        report_path=report_path,
        collect=config.getoption("gradcheck"),
        patterns=[p.strip() for p in patterns.split(",") if p.strip()] if patterns else [],
        seeds=_seeds(config.getoption("gradcheck_seeds")),
        max_failure_rate=_rate(config.getoption("gradcheck_max_failure_rate")),
    )


def _check_report_path(path: Path) -> None:
    """Before any test runs: ``--gradcheck-report`` names the JSON file, the HTML page goes
    beside it (PATH with ``.html``), and both can be written -- else a usage error now, not
    a crash after the whole session."""
    if path.suffix.lower() in (".html", ".htm"):
        raise pytest.UsageError(f"--gradcheck-report={path}: give the JSON file's path (such as "
                                f"{path.with_suffix('.json')}); the HTML report is written "
                                "beside it, with .html")
    from gradcheck.cli.run import UsageError, check_output_paths

    try:
        check_output_paths({"--gradcheck-report": path,
                            "--gradcheck-report (its HTML page)": path.with_suffix(".html")})
    except UsageError as error:
        raise pytest.UsageError(str(error)) from None


def _seeds(text: str | None) -> list[int] | None:
    if text is None:
        return None
    from gradcheck.checker.seeds import parse_seeds

    try:
        return parse_seeds(text, "--gradcheck-seeds")
    except ValueError as error:
        raise pytest.UsageError(str(error)) from None


def _rate(value: float) -> float:
    if not 0 <= value < 1:
        raise pytest.UsageError(f"--gradcheck-max-failure-rate: expected a share of seeds "
                                f"from 0 to below 1, got {value}")
    return value


def _references(text: str) -> list[str]:
    """``--gradcheck-references``: external references added to the checker's own."""
    from gradcheck.checker.references import INTERNAL, known_references

    names = [r.strip() for r in text.split(",") if r.strip()]
    unknown = [r for r in names if r not in known_references()]
    if unknown:
        raise pytest.UsageError(f"--gradcheck-references: unknown reference(s) "
                                f"{', '.join(map(repr, unknown))}; known: "
                                f"{', '.join(known_references())}")
    return list(dict.fromkeys([*INTERNAL, *names]))


def _state(config: pytest.Config) -> _Session:
    return config.stash[_STATE]


# -- checking ----------------------------------------------------------------------------


def _check(state: _Session, target: Any, kwargs: dict[str, Any],
           where: str | None = None) -> Report:
    """``gradcheck.check`` with the session's options, its report recorded.  ``where``
    names the test and marker the options come from: an argument ``check`` refuses (it
    raises only for its arguments; a failed check is a report) fails that test with
    ``check``'s own message, not a traceback through this plugin."""
    from gradcheck.checker.api import check

    try:
        report = check(target, **{**state.options, **kwargs})
    except (ValueError, TypeError) as error:
        if where is None:
            raise
        raise pytest.fail.Exception(f"{where} op {_op_label(target)}: {error}",
                                    pytrace=False) from None
    state.record(report)
    return report


def _op_label(op: Any) -> str:
    """A marker's op as its errors name it: the op name, or the function's name."""
    if isinstance(op, str):
        return repr(op)
    name = getattr(op, "__qualname__", None) or getattr(op, "name", None)
    return name if isinstance(name, str) else repr(op)


def format_failure(report: Report, limit: int = 5) -> str:
    """The failing findings of a report, root cause first: op, path and reference, the
    message, the values at the worst index, error vs tolerance, and the counterexample."""
    from gradcheck.checker.policy import VerdictPolicy
    from gradcheck.render.verdict import attribution_text, findings_by_op, values_text

    policy = VerdictPolicy()
    groups = findings_by_op([report], policy)
    failing = [f for f, tag in (groups[0].findings if groups else ()) if tag in ("fail",
                                                                              "error")]
    lines = [f"gradcheck: {report.op!r} fails {len(failing)} check(s) (seed {report.seed}, "
             f"mode {report.mode}, dtypes {', '.join(report.dtypes) or 'default'})"]
    for f in failing[:limit]:
        extras = "; ".join(e for e in (attribution_text(f), values_text(f)) if e)
        lines.append(f"- {f.path} vs {f.reference} · {f.kind}: {f.message}"
                     + (f" [{extras}]" if extras else ""))
        if not math.isnan(f.ratio):  # a numeric comparison
            lines.append(f"    error {f.max_abs_err:.3g} vs tolerance {f.tolerance:.3g} "
                         f"(ratio {f.ratio:.3g})"
                         + (f", worst index {list(f.worst_index)}"
                            if f.worst_index is not None else ""))
        if f.counterexample:
            text = json.dumps(f.counterexample, separators=(", ", ": "))
            lines.append(f"    counterexample: {text if len(text) <= 600 else text[:600] + ' ...'}")
    if len(failing) > limit:
        lines.append(f"... and {len(failing) - limit} more")
    return "\n".join(lines)


class GradcheckFixture:
    """What the ``gradcheck`` fixture gives a test: check ops with the session's options."""

    def __init__(self, state: _Session) -> None:
        self._state = state

    @property
    def options(self) -> dict[str, Any]:
        """The session's defaults (from the ``--gradcheck-*`` options)."""
        return dict(self._state.options)

    def check(self, target: Any, **kwargs: Any) -> Report:
        """``gradcheck.check(target, **kwargs)`` with the session's defaults; the report
        also goes into ``--gradcheck-report``."""
        __tracebackhide__ = True
        return _check(self._state, target, kwargs)

    def assert_ok(self, target: Any, **kwargs: Any) -> Report:
        """Like :meth:`check`, then raise ``AssertionError`` listing the failing findings."""
        __tracebackhide__ = True  # the failure is the findings, not this frame
        report = self.check(target, **kwargs)
        if not report.passed:
            raise AssertionError(format_failure(report))
        return report


@pytest.fixture
def gradcheck(request: pytest.FixtureRequest) -> GradcheckFixture:
    """Check ops from a test: ``gradcheck.check(op)`` / ``gradcheck.assert_ok(op)``."""
    return GradcheckFixture(_state(request.config))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, Any, Any]:
    """Run the test, then the checks its ``gradcheck`` marker asks for (its names and target
    validated at collection); failing findings, or an option value ``check`` refuses, fail
    the test with their account, no plugin traceback."""
    result = yield  # the body failing raises here and skips the checks
    marker = item.get_closest_marker("gradcheck")
    if marker is None:
        return result
    ops, kwargs = _marker_ops(marker)
    state = _state(item.config)
    where = f"{item.nodeid}: @pytest.mark.gradcheck"
    failures = [text for op in ops if (text := _check_seeds(state, op, kwargs, where))]
    if failures:
        pytest.fail("\n".join(failures), pytrace=False)
    return result


def _check_seeds(state: _Session, target: Any, kwargs: dict[str, Any],
                 where: str | None = None) -> str:
    """Check ``target`` at the session's seeds (or its one seed): the account of what fails
    it, or "" when nothing does (``where`` as for :func:`_check`).  Over seeds, a kind fails
    when its failure rate exceeds ``--gradcheck-max-failure-rate``; the account names the
    failing seeds, the rate and whether it is flaky, then the first failing seed's
    findings."""
    if not state.seeds or "seed" in kwargs:
        report = _check(state, target, kwargs, where)
        return "" if report.passed else format_failure(report)
    from gradcheck.checker.policy import VerdictPolicy
    from gradcheck.checker.seeds import failing_over_seeds

    reports = [_check(state, target, {**kwargs, "seed": seed}, where)
               for seed in state.seeds]
    failing = failing_over_seeds(reports, VerdictPolicy(max_failure_rate=state.max_failure_rate))
    if not failing:
        return ""
    lines = [f"gradcheck: {reports[0].op!r} fails over {len(reports)} seeds"]
    for sf in failing:
        lines.append(f"- {sf.kind} at {len(sf.seeds)} of {len(sf.checked)} seeds "
                     f"({sf.rate:.0%}, {sf.behaviour}): seeds {', '.join(map(str, sf.seeds))}")
    first = min(sf.seeds[0] for sf in failing)
    lines.append(format_failure(next(r for r in reports if r.seed == first)))
    return "\n".join(lines)


def _marker_ops(marker: pytest.Mark) -> tuple[list[Any], dict[str, Any]]:
    """The ops and the check options of a ``gradcheck`` marker."""
    kwargs = dict(marker.kwargs)
    ops = kwargs.pop("ops", None)
    if ops is None and marker.args:
        ops = marker.args[0]
    if ops is None:
        return [], kwargs
    if isinstance(ops, str) or not isinstance(ops, Iterable):
        ops = [ops]
    return list(ops), kwargs


#: The marker options ``gradcheck.check`` builds an op's target from, with ``inputs``.
_TARGET_OPTIONS = ("params", "wrt", "outputs", "shapes", "name", "framework")


def marker_problem(marker: pytest.Mark) -> str | None:
    """What is wrong with a ``gradcheck`` marker, or None: no ops, more than one
    positional argument, an option ``gradcheck.check`` does not take, an op name that
    is not registered (test modules are imported by now, so their ops are), or what
    ``gradcheck.check`` says when it builds an op's target from the marker's options."""
    import inspect

    from gradcheck.checker.api import check

    options = [n for n, p in inspect.signature(check).parameters.items()
               if p.kind is p.KEYWORD_ONLY and n != "registry"]
    if len(marker.args) > 1 or ("ops" in marker.kwargs and marker.args):
        return "takes the ops once: @pytest.mark.gradcheck(ops=[...])"
    ops, kwargs = _marker_ops(marker)
    if not ops:
        return "needs the ops to check: @pytest.mark.gradcheck(ops=[\"my_op\", ...])"
    unknown = sorted(set(kwargs) - set(options))
    if unknown:
        return (f"unknown option(s) {', '.join(map(repr, unknown))}; "
                f"it takes ops and {', '.join(options)}")
    from gradcheck import default_registry
    from gradcheck.checker.targets import as_target

    spec = {k: v for k, v in kwargs.items() if k in _TARGET_OPTIONS}
    for op in ops:
        if isinstance(op, str):
            try:
                default_registry.get(op)
            except KeyError as error:  # UnknownOpError, with its suggestions
                # its message as given: str() of a plain KeyError would add quotes
                return str(error.args[0]) if error.args else f"unknown op {op!r}"
        try:  # as gradcheck.check builds it: cheap, and runs none of the op
            as_target(op, kwargs.get("inputs"), **spec)
        except (ValueError, TypeError) as error:
            return f"op {_op_label(op)}: {error}"
    return None


# -- one item per registered op ----------------------------------------------------------


class GradcheckFailure(AssertionError):
    """An op's check found failing findings; the message lists them."""


class GradcheckItem(pytest.Item):
    """One registered op, checked by ``pytest --gradcheck``."""

    def __init__(self, *, op: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.op = op

    def runtest(self) -> None:
        failure = _check_seeds(_state(self.config), self.op, {})
        if failure:
            raise GradcheckFailure(failure)  # shown by repr_failure

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException],
                     style: Any = None) -> str:
        if isinstance(excinfo.value, GradcheckFailure):
            return str(excinfo.value)  # the findings, not the plugin's traceback
        return str(super().repr_failure(excinfo, style=style))

    def reportinfo(self) -> tuple[Path, int | None, str]:
        # Not the node id itself: pytest would show a domain that ends the id with its dots
        # turned into "::" (``gradcheck::nn::elu``).
        return self.path, None, f"gradcheck of {self.op}"


class GradcheckCollector(pytest.Collector):
    """The parent of the per-op items, so their ids read ``gradcheck::NAME``."""

    def __init__(self, *, ops: Sequence[str], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.ops = list(ops)

    def collect(self) -> list[pytest.Item]:
        return [GradcheckItem.from_parent(self, name=op, op=op) for op in self.ops]


def _registered_ops(state: _Session) -> list[str]:
    from gradcheck import default_registry

    ops = default_registry.select(state.patterns) if state.patterns else list(default_registry)
    return [op.name for op in ops]


@pytest.hookimpl(tryfirst=True)  # before -k/-m deselection, which then applies to ours too
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config,
                                  items: list[pytest.Item]) -> None:
    """Report misused ``gradcheck`` markers (all of them, before anything runs); with
    ``--gradcheck``, append one item per registered op (every conftest and test module is
    imported by now, so the user's own ops are registered)."""
    problems = [f"{item.nodeid}: @pytest.mark.gradcheck {problem}"
                for item in items for marker in item.iter_markers("gradcheck")
                if (problem := marker_problem(marker)) is not None]
    if problems:
        raise pytest.UsageError("\n".join(problems))
    state = _state(config)
    if not state.collect:
        return
    try:
        ops = _registered_ops(state)
    except KeyError as error:  # UnknownOpError from --gradcheck-ops
        raise pytest.UsageError(f"--gradcheck-ops: {error}") from None
    collector = GradcheckCollector.from_parent(session, name="gradcheck", nodeid="gradcheck",
                                               ops=ops)
    collected: list[pytest.Item | pytest.Collector] = list(collector.collect())
    # Report the collection like any other, so "collected N items" counts these too.
    config.hook.pytest_collectreport(
        report=pytest.CollectReport(collector.nodeid, "passed", None, collected))
    items.extend(item for item in collected if isinstance(item, pytest.Item))


# -- the report at the end of the session ------------------------------------------------


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Workers hand their reports to the controller; the controller (or a run without
    xdist) writes the report files."""
    config = session.config
    state = _state(config)
    workeroutput = getattr(config, "workeroutput", None)
    if workeroutput is not None:
        workeroutput[_WORKER_KEY] = json.dumps(state.reports)
        return
    if state.report_path is not None:
        _write_report(state)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    """pytest-xdist, on the controller: collect a finished worker's reports."""
    output = getattr(node, "workeroutput", None) or {}
    if _WORKER_KEY in output:
        _state(node.config).reports.extend(json.loads(output[_WORKER_KEY]))


def _results(state: _Session) -> Any:
    from gradcheck.checker.report import Report, Results

    # One sorted list whatever the order tests ran in (xdist workers finish in any order).
    texts = sorted({json.dumps(r, sort_keys=True) for r in state.reports})
    reports = [Report.from_dict(json.loads(t)) for t in texts]
    config = {k: v for k, v in state.options.items()}
    config["source"] = "pytest"
    return Results(reports=reports, config=config)


def _environment(state: _Session, reports: Sequence[Report]) -> dict[str, str]:
    """The versions the reports depend on, as ``gradcheck run`` records them: Python, numpy,
    gradcheck and every framework the checks used (the session's references, each report's
    and the framework of each function checked)."""
    from gradcheck.checker.runner import sweep_environment

    return sweep_environment(state.options.get("references") or (), reports)


def _write_report(state: _Session) -> None:
    """Both files, written as ``gradcheck run`` writes its own (missing folders created, a
    symlink written through to where it points)."""
    from gradcheck.cli.run import write_outputs

    assert state.report_path is not None
    results = _results(state)
    results.environment = _environment(state, results.reports)  # only a file records it
    write_outputs(results, state.report_path, state.report_path.with_suffix(".html"))


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int,
                            config: pytest.Config) -> None:
    """One line counting what the JSON holds, in the CLI's status words, and where the
    report is."""
    state = _state(config)
    if not state.reports and state.report_path is None:
        return
    from gradcheck.checker.policy import VerdictPolicy
    from gradcheck.render.verdict import OP_STATUSES, count_statuses

    results = _results(state)
    counts = count_statuses(results, VerdictPolicy())
    parts = ", ".join(f"{counts[s]} {s}" for s in OP_STATUSES if counts[s]) or "none"
    n = len(results.reports)
    line = f"gradcheck: {n} report{'' if n == 1 else 's'}: {parts}"
    merged = len(state.reports) - n
    if merged:
        line += f" ({merged} identical repeated check{'' if merged == 1 else 's'} merged)"
    terminalreporter.section("gradcheck", sep="-")
    if state.report_path is not None:
        line += f"; report: {state.report_path} and {state.report_path.with_suffix('.html')}"
    terminalreporter.write_line(line)
