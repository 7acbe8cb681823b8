"""Many seeds: parsing seed sets, aggregating reports per op and finding kind over seeds,
the verdict policy over seeds, and the plumbing (run_sweep, the CLI, suites)."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from gradcheck.checker import run_sweep
from gradcheck.checker.policy import Allowance, VerdictPolicy
from gradcheck.checker.report import Finding, Report, Results
from gradcheck.checker.seeds import (
    by_op,
    failing_over_seeds,
    op_status_over_seeds,
    parse_seeds,
    seed_findings,
)
from gradcheck.cli import main
from gradcheck.cli.terminal import Terminal, seed_list

# -- parsing -------------------------------------------------------------------------------


@pytest.mark.parametrize(("given", "seeds"), [
    ("0:20", list(range(20))),
    ("0,3,7", [0, 3, 7]),
    ("7, 3,0:2", [0, 1, 3, 7]),
    ("5", [5]),
    (5, [5]),
    ([3, 1, 3], [1, 3]),
    (["0:2", 9], [0, 1, 9]),
])
def test_seed_sets(given: object, seeds: list[int]) -> None:
    assert parse_seeds(given) == seeds  # type: ignore[arg-type]


@pytest.mark.parametrize(("given", "message"), [
    ("5:2", "'5:2' holds no seed"),
    ("3:3", "'3:3' holds no seed"),
    ("-1", "holds no seed"),
    ([-2], "non-negative, got -2"),
    ("a", "expected a seed or a range"),
    ("0:x", "expected a seed or a range"),
    ("", "expected a seed or a range"),
    ([], "no seed given"),
    (True, "expected seeds such as"),
    ("0:1000001", "more than 100000 seeds"),
])
def test_bad_seed_sets_name_the_option(given: object, message: str) -> None:
    with pytest.raises(ValueError, match="^--seeds: ") as error:
        parse_seeds(given)  # type: ignore[arg-type]
    assert message in str(error.value)


def test_seed_lists_fold_runs() -> None:
    assert seed_list([0, 1, 2, 3, 7, 9, 10]) == "0-3,7,9,10"
    assert seed_list((5,)) == "5"


# -- aggregation ---------------------------------------------------------------------------


def _report(op: str, seed: int, *kinds: str) -> Report:
    findings = [Finding(op, "vjp", "numeric", kind, f"{kind} at seed {seed}",
                        counterexample={"seed": seed, "inputs": [[float(seed)]]})
                for kind in kinds]
    return Report(op=op, seed=seed, findings=findings)


def _sweep() -> list[Report]:
    """``flaky`` mismatches at seeds 1 and 3 of 0-4; ``broken`` is wrong at every seed and
    leaks at one; ``fine`` only has info findings."""
    reports = []
    for seed in range(5):
        reports.append(_report("flaky", seed, *(["mismatch"] if seed in (1, 3) else [])))
        reports.append(_report("broken", seed, "mismatch",
                               *(["dependence_leak"] if seed == 2 else [])))
        reports.append(_report("fine", seed, "nondifferentiable"))
    return list(reversed(reports))


def test_findings_per_op_and_kind_over_the_seeds() -> None:
    found = {(sf.op, sf.kind): sf for sf in seed_findings(_sweep())}
    assert set(found) == {("broken", "mismatch"), ("broken", "dependence_leak"),
                          ("flaky", "mismatch")}  # info findings are not failures
    flaky = found[("flaky", "mismatch")]
    assert flaky.seeds == (1, 3) and flaky.checked == (0, 1, 2, 3, 4)
    assert flaky.rate == pytest.approx(0.4) and not flaky.consistent
    assert flaky.behaviour == "flaky"
    assert flaky.first.message == "mismatch at seed 1"  # the first failing seed's finding
    assert flaky.to_dict()["first"]["counterexample"] == {"seed": 1, "inputs": [[1.0]]}
    broken = found[("broken", "mismatch")]
    assert broken.consistent and broken.rate == 1.0 and broken.behaviour == "consistent"
    assert found[("broken", "dependence_leak")].seeds == (2,)


def test_a_unit_counted_twice_is_an_error() -> None:
    with pytest.raises(ValueError, match="'flaky' at seed 1: a unit of the sweep was counted"):
        by_op([_report("flaky", 1), _report("flaky", 1, "mismatch")])


def test_results_are_ordered_by_op_and_seed_with_a_summary() -> None:
    results = Results(reports=_sweep())
    data = json.loads(results.to_json())
    assert [(r["op"], r["seed"]) for r in data["reports"]] == \
        [(op, s) for op in ("broken", "fine", "flaky") for s in range(5)]
    summary = data["seed_summary"]
    assert summary["flaky"]["seeds"] == [0, 1, 2, 3, 4]
    [mismatch] = summary["flaky"]["findings"]
    assert (mismatch["kind"], mismatch["seeds"], mismatch["rate"], mismatch["behaviour"]) == \
        ("mismatch", [1, 3], 0.4, "flaky")
    assert mismatch["first"]["seed"] == 1
    assert summary["fine"]["findings"] == []
    # the same reports in any order give the same bytes; one seed per op has no summary
    assert Results(reports=list(reversed(_sweep()))).to_json() == results.to_json()
    assert Results.from_json(results.to_json()).to_json() == results.to_json()
    assert "seed_summary" not in Results(reports=[_report("a", 0), _report("b", 3)]).to_dict()


# -- the verdict over seeds ----------------------------------------------------------------


def test_any_failing_seed_fails_by_default() -> None:
    results = Results(reports=_sweep())
    policy = VerdictPolicy()
    assert policy.exit_code(results) == 1
    assert {(sf.op, sf.kind) for sf in failing_over_seeds(results.reports, policy)} == \
        {("broken", "mismatch"), ("flaky", "mismatch")}
    groups = by_op(results.reports)
    assert op_status_over_seeds(groups["flaky"], policy) == "fail"
    assert op_status_over_seeds(groups["fine"], policy) == "pass"


def test_a_failure_rate_threshold_lets_rare_failures_pass() -> None:
    results = Results(reports=_sweep())
    at_half = VerdictPolicy(max_failure_rate=0.5)
    assert [(sf.op, sf.kind) for sf in failing_over_seeds(results.reports, at_half)] == \
        [("broken", "mismatch")]
    groups = by_op(results.reports)
    assert op_status_over_seeds(groups["flaky"], at_half) == "allowed"  # 40% <= 50%
    assert op_status_over_seeds(groups["broken"], at_half) == "fail"
    assert at_half.exit_code(results) == 1
    only_flaky = Results(reports=[r for r in _sweep() if r.op != "broken"])
    assert at_half.exit_code(only_flaky) == 0
    assert VerdictPolicy(max_failure_rate=0.3).exit_code(only_flaky) == 1  # 40% > 30%
    # a suite's allowance still applies seed by seed
    allowed = VerdictPolicy(allow={"flaky": Allowance(frozenset({"mismatch"}), "known")})
    assert allowed.exit_code(only_flaky) == 0


def test_the_policy_round_trips_through_the_config() -> None:
    policy = VerdictPolicy.from_config({"max_failure_rate": 0.25})
    assert policy.max_failure_rate == 0.25
    assert VerdictPolicy.from_config({}).max_failure_rate == 0.0


def test_terminal_shows_rate_seeds_and_flakiness() -> None:
    out = io.StringIO()
    terminal = Terminal(plain=True, file=out)
    results = Results(reports=_sweep())
    terminal.summary(results, VerdictPolicy())
    text = out.getvalue()
    assert "FAIL flaky seed=1 vjp=fail" in text
    lines = [line.split() for line in text.splitlines()]
    assert ["FAIL", "flaky", "mismatch", "2/5", "40%", "flaky", "1,3", "seed", "1:", "vjp",
            "vs", "numeric"] in lines
    assert ["FAIL", "broken", "mismatch", "5/5", "100%", "consistent", "0-4", "seed", "0:",
            "vjp", "vs", "numeric"] in lines
    assert "gradcheck: 3 ops (15 checks over their seeds): 2 fail, 1 pass" in text


# -- a real sweep over seeds -----------------------------------------------------------------

OPS = ["sign_error", "affine_vjp"]
SMALL = {"examples": 1, "paths": ["vjp"], "references": ["numeric"], "dtypes": ["float64"]}


def test_sweep_checks_every_op_at_every_seed_whatever_the_jobs() -> None:
    seen: list[tuple[str, int]] = []
    one = run_sweep(OPS, registry="broken_ops:BROKEN", seeds=[2, 0, 1],
                    progress=lambda r: seen.append((r.op, r.seed)), **SMALL)
    assert [(r.op, r.seed) for r in one.reports] == [(op, s) for op in sorted(OPS)
                                                    for s in (0, 1, 2)]
    assert sorted(seen) == [(r.op, r.seed) for r in one.reports]
    assert one.config["seeds"] == [0, 1, 2]
    two = run_sweep(OPS, registry="broken_ops:BROKEN", seeds=[0, 1, 2], jobs=2, **SMALL)
    assert one.to_json() == two.to_json()
    summary = json.loads(one.to_json())["seed_summary"]
    [wrong] = summary["sign_error"]["findings"]
    assert (wrong["kind"], wrong["behaviour"]) == ("mismatch", "consistent")
    # a seed's report is the check at that seed alone
    alone = run_sweep(["sign_error"], registry="broken_ops:BROKEN", seed=1, **SMALL)
    assert alone.reports[0].to_json() == one.reports[4].to_json()


def test_per_op_seeds_replace_the_sweep_s() -> None:
    results = run_sweep(OPS, registry="broken_ops:BROKEN", seeds=[0, 1],
                        per_op={"affine_vjp": {"seeds": [4]}}, **SMALL)
    assert [(r.op, r.seed) for r in results.reports] == \
        [("affine_vjp", 4), ("sign_error", 0), ("sign_error", 1)]


# -- the command line and suites -------------------------------------------------------------



CLI_SMALL = ["--examples", "1", "--paths", "vjp", "--references", "numeric",
             "--dtype", "float64", "--no-color"]


def test_cli_seeds_threshold_and_report(workdir: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["run", "--op", "sin", "--op", "cos", "--seeds", "0:2,5", "--jobs", "2",
                 "--max-failure-rate", "0.2", "--json", "r.json", "--html", "r.html",
                 *CLI_SMALL])
    out = capsys.readouterr().out
    assert code == 0, out
    data = json.loads((workdir / "r.json").read_text())
    assert data["config"]["seeds"] == [0, 1, 5] and data["config"]["max_failure_rate"] == 0.2
    assert "seed" not in data["config"]
    assert [(r["op"], r["seed"]) for r in data["reports"]] == \
        [(op, s) for op in ("cos", "sin") for s in (0, 1, 5)]
    assert set(data["seed_summary"]) == {"cos", "sin"}
    assert "gradcheck: 2 ops (6 checks over their seeds): 2 pass" in out
    assert "PASS sin seed=5" in out


@pytest.mark.parametrize(("argv", "message"), [
    (["--seeds", "3:1"], "--seeds: '3:1' holds no seed"),
    (["--seeds", "0:2", "--seed", "4"], "--seed and --seeds cannot be combined"),
])
def test_cli_seed_usage_errors(workdir: Path, capsys: pytest.CaptureFixture[str],
                               argv: list[str], message: str) -> None:
    assert main(["run", "--op", "sin", *argv, *CLI_SMALL]) == 2
    assert message in capsys.readouterr().err


def test_cli_rejects_a_rate_out_of_range(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--op", "sin", "--max-failure-rate", "1.5"]) == 2
    assert "expected a failure rate from 0 to below 1" in capsys.readouterr().err


def test_cli_scheduler_without_distributed_is_unavailable(
        workdir: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed fails
    code = main(["run", "--op", "sin", "--scheduler", "tcp://127.0.0.1:8786", *CLI_SMALL])
    err = capsys.readouterr().err
    assert code == 2
    assert "unavailable: pip install gradcheck[distributed]" in err
    assert "Traceback" not in err
    assert not (workdir / "reports").exists()


def test_suite_seeds(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (workdir / "s.toml").write_text('[suite]\nops = ["sin"]\nseeds = "3:5"\nexamples = 1\n'
                                    'paths = ["vjp"]\ndtypes = ["float64"]\n')
    assert main(["run", "--suite", "s.toml", "--json", "a.json", "--no-color"]) == 0
    data = json.loads((workdir / "a.json").read_text())
    assert [r["seed"] for r in data["reports"]] == [3, 4]
    # --seed on the command line replaces the suite's seeds
    assert main(["run", "--suite", "s.toml", "--seed", "7", "--json", "b.json"]) == 0
    data = json.loads((workdir / "b.json").read_text())
    assert [r["seed"] for r in data["reports"]] == [7] and "seeds" not in data["config"]
    (workdir / "bad.toml").write_text('[suite]\nops = ["sin"]\nseeds = "x"\n')
    assert main(["run", "--suite", "bad.toml"]) == 2
    assert "bad.toml: [suite] seeds: expected a seed or a range" in capsys.readouterr().err


def test_html_report_has_the_seed_table_escaped() -> None:
    from gradcheck.render import render_html

    reports = _sweep() + [_report("<script>x", s, *(["mismatch"] if s == 4 else []))
                          for s in range(5)]
    page = render_html(Results(reports=reports))
    assert '<section id="seeds"' in page and "Every op was checked at seeds 0-4" in page
    assert 'data-op="flaky" data-kind="mismatch" data-behaviour="flaky"' in page
    assert "2 of 5" in page and "40%" in page and "consistent" in page
    assert "<script>x" not in page and "&lt;script&gt;x" in page
    assert "3 of 4 ops fail over their seeds (20 checks)" in page
    assert render_html(Results.from_json(Results(reports=reports).to_json())) == page
    assert '<section id="seeds"' not in render_html(Results(reports=[_report("a", 0)]))


def test_one_op_twice_at_a_seed_is_not_a_sweep_over_seeds() -> None:
    # a pytest session may check one op at one seed in two tests: reported, not summarised
    reports = [_report("a", 0), _report("a", 0, "mismatch"), _report("a", 1)]
    assert "seed_summary" not in Results(reports=reports).to_dict()


# -- the pytest plugin -----------------------------------------------------------------------

FLAKY_OPS = '''
import numpy as np

import gradcheck.numpy as gnp
from gradcheck import define_op
from gradcheck.domains import REAL


def _scale(x):  # wrong when the first axis has 3 or more entries: found at some seeds
    return 1.5 if np.ndim(x) >= 2 and np.shape(x)[0] >= 3 else 1.0


define_op("mine.flaky_sin", np.sin, vjp=lambda g, out, x: (g * gnp.cos(x) * _scale(x),),
          jvp=lambda ts, out, x: ts[0] * gnp.cos(x) * _scale(x), family="mine",
          inputs=(REAL,), shapes="(...)")
define_op("mine.good_sin", np.sin, vjp=lambda g, out, x: (g * gnp.cos(x),),
          jvp=lambda ts, out, x: ts[0] * gnp.cos(x), family="mine", inputs=(REAL,),
          shapes="(...)")
'''


def test_plugin_checks_each_op_at_every_seed(pytester: pytest.Pytester) -> None:
    from gradcheck import default_registry

    before = set(default_registry.names())

    def forget() -> None:
        sys.modules.pop("flaky_ops", None)
        for name in set(default_registry.names()) - before:
            default_registry.remove(name)

    pytester.makepyfile(flaky_ops=FLAKY_OPS)
    pytester.makeconftest("import flaky_ops  # noqa: F401")
    try:
        args = ["--gradcheck", "--gradcheck-ops=mine.*", "--gradcheck-seeds=0:4",
                "--gradcheck-examples=1", "--gradcheck-references=numeric",
                "-p", "no:cacheprovider"]
        result = pytester.runpytest(*args, "--gradcheck-report=r.json")
        result.assert_outcomes(passed=1, failed=1)
        result.stdout.fnmatch_lines(["*'mine.flaky_sin' fails over 4 seeds*",
                                     "*- mismatch at 3 of 4 seeds (75%, flaky): seeds 1, 2, 3*",
                                     "*'mine.flaky_sin' fails * (seed 1, *"])
        data = json.loads((pytester.path / "r.json").read_text())
        assert data["seed_summary"]["mine.flaky_sin"]["seeds"] == list(range(4))
        forget()  # each in-process run imports the project's ops again
        pytester.runpytest(*args, "--gradcheck-ops=mine.flaky_sin",
                           "--gradcheck-max-failure-rate=0.8").assert_outcomes(passed=1)
        forget()
        bad = pytester.runpytest("--gradcheck-seeds=4:1", "-p", "no:cacheprovider")
        assert bad.ret == pytest.ExitCode.USAGE_ERROR
        bad.stderr.fnmatch_lines(["*--gradcheck-seeds: '4:1' holds no seed*"])
    finally:
        forget()
