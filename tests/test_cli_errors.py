"""The command line and the pytest plugin refuse what they cannot honour, with exit code 2
(pytest: a usage error) and a message naming the option and what was wrong -- never a
traceback, a silently ignored option, or a verdict other than the run's."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from gradcheck import default_registry
from gradcheck.checker.report import Finding, Report, Results
from gradcheck.cli import main
from gradcheck.cli.suites import SuiteError, load_suite

TINY = ["--paths", "vjp", "--examples", "1", "--dtype", "float64", "--references", "numeric"]

USER_OPS = '''
import numpy as np

import gradcheck.numpy as gnp
from gradcheck import define_op
from gradcheck.domains import REAL

define_op("errtest.good_sin", np.sin, vjp=lambda g, out, x: (g * gnp.cos(x),),
          jvp=lambda ts, out, x: ts[0] * gnp.cos(x), family="errtest", inputs=(REAL,),
          shapes="(...)")
define_op("errtest.bad_cos", np.cos, vjp=lambda g, out, x: (g * gnp.sin(x),),
          jvp=lambda ts, out, x: ts[0] * gnp.sin(x), family="errtest", inputs=(REAL,),
          shapes="(...)")
'''


@pytest.fixture
def workdir(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory,
            monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """An empty current directory, not on the path; the path, the modules and the registry
    as they were afterwards."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("cache")))
    monkeypatch.delenv("HYPOTHESIS_STORAGE_DIRECTORY", raising=False)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(tmp_path))])
    modules, ops = set(sys.modules), set(default_registry.names())
    yield tmp_path
    for name in set(sys.modules) - modules:
        if name.startswith(("errtest", "user_", "my_")):
            del sys.modules[name]
    for name in set(default_registry.names()) - ops:
        default_registry.remove(name)


def _results(path: Path, reports: list[Report], **config: object) -> Path:
    path.write_text(Results(reports=reports, config=dict(config)).to_json())
    return path


def _report(op: str, seed: int, *kinds: str) -> Report:
    report = Report(op=op, seed=seed, dtypes=["float64"])
    report.findings = [Finding(op, "vjp", "numeric", kind, f"{op}: {kind}") for kind in kinds]
    return report


# -- A1: report --fail-on keeps the run's max failure rate ---------------------------------


def test_report_fail_on_keeps_the_recorded_failure_rate(
        workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # mismatch at 1 of 4 seeds: under the run's max failure rate 0.5 the op passes
    reports = [_report("x.flaky", seed, *(["mismatch"] if seed == 1 else []))
               for seed in range(4)]
    path = _results(workdir / "r.json", reports, fail_on=["mismatch"], max_failure_rate=0.5)
    assert main(["report", str(path), "--quiet"]) == 0
    assert main(["report", str(path), "--quiet", "--fail-on", "mismatch"]) == 0
    assert main(["report", str(path), "--quiet", "--fail-on", "failures"]) == 0


# -- A2, A3: --import ----------------------------------------------------------------------


@pytest.mark.parametrize(("source", "error"), [
    ('import numpy as np, gradcheck as gc\n'
     'gc.define_op("sin", np.sin, vjp=lambda g, out, x: g)\n',
     "importing it raised ValueError: default registry: an op named 'sin' is already"),
    ('import numpy as np, gradcheck as gc\n'
     'gc.define_op("my.x", np.sin, vjp=lambda g, out, x: g, kinkz=[0])\n',
     "importing it raised ValueError: op 'my.x': unknown metadata key 'kinkz'"),
    ("def f(:\n", "importing it raised SyntaxError: invalid syntax (user_mod.py, line 1)"),
    ('raise RuntimeError("boom at import")\n', "importing it raised RuntimeError: boom at import"),
    ("import sys\nsys.exit(3)\n", "importing it called sys.exit(3) (guard a script's main "
                                  "code with if __name__ == '__main__')"),
])
def test_import_that_raises_is_a_usage_error(workdir: Path, capsys: pytest.CaptureFixture[str],
                                            source: str, error: str) -> None:
    (workdir / "user_mod.py").write_text(source)
    assert main(["list", "--import", "user_mod"]) == 2
    err = capsys.readouterr().err
    assert f"--import user_mod: {error}" in err
    assert "Traceback" not in err


@pytest.mark.parametrize("given", ["./user_ops.py", "user_ops.py", "lib/user_ops.py"])
def test_import_a_py_file_by_path_in_workers_too(workdir: Path, given: str) -> None:
    (workdir / "lib").mkdir()
    (workdir / Path(given).parent / "user_ops.py").write_text(USER_OPS)
    # two ops on two worker processes, which import the module again by its name
    assert main(["run", "--import", given, "--op", "errtest.*", *TINY, "--jobs", "2",
                 "--json", "r.json", "--no-html", "--fail-on", "none"]) == 0
    results = Results.from_json((workdir / "r.json").read_text())
    assert [r.op for r in results.reports] == ["errtest.bad_cos", "errtest.good_sin"]
    assert [f.kind for f in results.reports[0].findings] == ["mismatch"]  # checked, not error
    assert results.reports[1].findings == []


@pytest.mark.parametrize(("given", "error"), [
    ("missing.py", "--import missing.py: no such .py file"),
    ("./ops", "--import ./ops: no such .py file"),
    ("my-ops.py", "'my-ops.py' cannot be imported as a module"),
    ("json.py", "--import json.py: the module name 'json' is taken by"),
    (".rel", "--import .rel: not a module name"),
])
def test_import_paths_that_cannot_work(workdir: Path, capsys: pytest.CaptureFixture[str],
                                       given: str, error: str) -> None:
    for name in ("my-ops.py", "json.py"):
        (workdir / name).write_text("X = 1\n")
    assert main(["list", "--import", given]) == 2
    assert error in capsys.readouterr().err


# -- A6, C17: results files that are not results ------------------------------------------


@pytest.mark.parametrize(("text", "error"), [
    ("[]", "not a gradcheck results file: expected a JSON object, got a list"),
    ('{"format": "gradcheck-results/1", "reports": [], "config": []}',
     "'config' must be an object, got a list"),
    ('{"format": "gradcheck-results/1", "reports": {}}', "'reports' must be a list"),
    ('{"format": "gradcheck-results/1", "reports": ["x"]}', "reports[0] must be an object"),
    ('{"format": "gradcheck-results/1", "reports": [], "config": {"fail_on": ["bogus"]}}',
     "config.fail_on: unknown finding kind(s) 'bogus'"),
    ('{"format": "gradcheck-results/1", "reports": [], "config": {"fail_on": "mismatch"}}',
     "config.fail_on must be a list of finding kinds"),
    ('{"format": "gradcheck-results/1", "reports": [], "config": {"max_failure_rate": 2}}',
     "config.max_failure_rate must be a number from 0 to below 1"),
])
def test_report_on_json_that_is_not_results(workdir: Path, capsys: pytest.CaptureFixture[str],
                                            text: str, error: str) -> None:
    (workdir / "r.json").write_text(text)
    assert main(["report", "r.json"]) == 2
    err = capsys.readouterr().err
    assert "r.json is not a gradcheck results file: " in err and error in err
    assert not (workdir / "r.html").exists()


# -- B8, B12, B13: options that contradict each other ------------------------------------


@pytest.mark.parametrize(("argv", "error"), [
    (["run", "--op", "elu", "--all"], "--all and --op elu cannot be combined"),
    (["run", "--op", "sin", "--fail-on", ""], "--fail-on: empty"),
    (["run", "--op", "sin", "--fail-on", ","], "--fail-on: empty"),
    (["run", "--op", "sin", "--scheduler", "tcp://localhost:8786", "--jobs", "2"],
     "--jobs 2 and --scheduler tcp://localhost:8786 cannot be combined"),
    (["run", "--op", "sin", "--scheduler", "bogus"],
     "--scheduler bogus: not a Dask scheduler address: missing port number"),
    (["run", "--op", "sin", "--scheduler", "http://host:8786"],
     "not a Dask scheduler address: unknown protocol 'http'"),
])
def test_contradictions_are_usage_errors(workdir: Path, capsys: pytest.CaptureFixture[str],
                                         monkeypatch: pytest.MonkeyPatch, argv: list[str],
                                         error: str) -> None:
    import distributed

    def no_client(*args: object, **kwargs: object) -> None:
        raise AssertionError("a Client was made for an address that cannot work")

    monkeypatch.setattr(distributed, "Client", no_client)
    assert main(argv) == 2
    assert error in capsys.readouterr().err
    assert not (workdir / "reports").exists()


def test_show_from_results_refuses_check_options(workdir: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    path = _results(workdir / "r.json", [_report("x.op", 0)])
    assert main(["show", "x.op", "--results", str(path), "--examples", "3",
                 "--dtype", "float32"]) == 2
    assert "--dtype, --examples would change nothing" in capsys.readouterr().err


# -- B10, B11: show from a results file of many seeds, under its policy ------------------


def test_show_picks_a_seed_of_a_multi_seed_file(workdir: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    path = _results(workdir / "r.json",
                    [_report("x.op", 0), _report("x.op", 1, "mismatch"), _report("x.op", 2)])
    assert main(["show", "op", "--results", str(path), "--no-color"]) == 1
    out = capsys.readouterr().out
    assert "checked with seed 1," in out  # the first failing seed, by default
    assert "x.op was checked at seeds 0, 1, 2; this is seed 1" in out
    assert main(["show", "x.op", "--results", str(path), "--seed", "2", "--no-color"]) == 1
    assert "checked with seed 2," in capsys.readouterr().out


def test_show_seed_not_in_file_and_ambiguous_names(workdir: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    path = _results(workdir / "r.json", [_report(op, seed) for op in ("a.op", "b.op")
                                         for seed in (0, 1)])
    assert main(["show", "a.op", "--results", str(path), "--seed", "7"]) == 2
    assert "has no report of a.op at that seed (its seeds: 0, 1)" in capsys.readouterr().err
    assert main(["show", "op", "--results", str(path)]) == 2
    err = capsys.readouterr().err
    assert "op 'op' is ambiguous (it may be a.op, b.op)" in err
    assert "(ops there: a.op, b.op)" in err


def test_show_judges_by_the_recorded_policy(workdir: Path) -> None:
    reports = [_report("x.op", 0, "mismatch")]
    allowed = _results(workdir / "a.json", reports,
                       exceptions={"x.op": {"allow": ["mismatch"], "reason": "known"}})
    assert main(["show", "x.op", "--results", str(allowed)]) == 0
    assert main(["show", "x.op", "--results", str(allowed), "--fail-on", "mismatch"]) == 0
    lenient = _results(workdir / "l.json", reports, fail_on=["error"])
    assert main(["show", "x.op", "--results", str(lenient)]) == 0
    assert main(["show", "x.op", "--results", str(lenient), "--fail-on", "mismatch"]) == 1


def test_show_over_seeds_uses_the_recorded_failure_rate(workdir: Path) -> None:
    reports = [_report("x.op", seed, *(["mismatch"] if seed == 0 else [])) for seed in range(4)]
    path = _results(workdir / "r.json", reports, max_failure_rate=0.5)
    assert main(["show", "x.op", "--results", str(path)]) == 0
    assert main(["show", "x.op", "--results", str(path), "--fail-on", "mismatch"]) == 0


# -- B7, B9: suite rows checked at load ---------------------------------------------------


def _suite(workdir: Path, text: str) -> Path:
    path = workdir / "s.toml"
    path.write_text('[suite]\nops = ["nn.elu"]\n' + text)
    return path


@pytest.mark.parametrize(("row", "error"), [
    ('allow = ["tensorflo:mismatch"]',
     r"allow: unknown side 'tensorflo' in 'tensorflo:mismatch' \(did you mean 'tensorflow'\?\)"
     r"; a side is a reference \(numeric, self, .*\) or one of the checker's own "
     r"\(structure, linearity, dummy, neither, undecided, all\)"),
    ('allow = [":mismatch"]', r"unknown side '' in ':mismatch'"),
    ('allow = ["mismatc"]', r"unknown finding kind 'mismatc' in 'mismatc' \(did you mean "
                            r"'mismatch'\?\)"),
    ('params = {alphax = 1.0}',
     r"\[\[op\]\] row 1 \('nn.elu'\): params: op 'nn.elu' has no parameter 'alphax' \(did you "
     r"mean 'alpha'\?\) \(its parameters: alpha\)"),
])
def test_suite_rows_are_checked_at_load(workdir: Path, row: str, error: str) -> None:
    path = _suite(workdir, f'[[op]]\nname = "nn.elu"\nreason = "x"\n{row}\n')
    with pytest.raises(SuiteError, match=error):
        load_suite(path)


@pytest.mark.parametrize("entry", ["tensorflow:mismatch", "numeric:mismatch", "self:mismatch",
                                   "neither:mismatch", "dummy:value_leak", "all:error",
                                   "structure:shape", "linearity:nonlinear"])
def test_suite_allow_sides_that_findings_carry(workdir: Path, entry: str) -> None:
    path = _suite(workdir, f'[[op]]\nname = "nn.elu"\nreason = "x"\nallow = ["{entry}"]\n'
                           'params = {alpha = 1.0}\n')
    assert load_suite(path).rows[0].allow == {entry}


def test_suite_error_exits_2(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _suite(workdir, '[[op]]\nname = "nn.elu"\nreason = "x"\nallow = ["tensorflo:mismatch"]\n')
    assert main(["run", "--suite", "s.toml", "--no-report"]) == 2
    assert "did you mean 'tensorflow'?" in capsys.readouterr().err


# -- B14: [[function]] targets ------------------------------------------------------------


def test_plain_numpy_target_is_refused_with_the_gnp_name(
        workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (workdir / "s.toml").write_text('[[function]]\ntarget = "np.sin"\ninputs = ["real"]\n'
                                    '[[function]]\ntarget = "np.polyfit"\ninputs = ["real"]\n')
    assert main(["run", "--suite", "s.toml", "--no-report"]) == 2
    err = capsys.readouterr().err
    assert "'np.sin' is plain numpy, which computes no derivatives to check; use 'gnp.sin' " \
           "(gradcheck.numpy, the differentiable numpy) instead" in err


def test_plain_numpy_without_a_gnp_twin() -> None:
    from gradcheck.checker.dotted import load_function

    with pytest.raises(ValueError, match="gradcheck.numpy has no 'gnp.polyfit'"):
        load_function("numpy.polyfit", "row")
    assert load_function("gnp.linalg.norm", "row") is not None


def test_function_target_in_the_current_folder_without_import(workdir: Path) -> None:
    (workdir / "my_fns.py").write_text("import gradcheck.numpy as gnp\n\n"
                                       "def softclip(x):\n    return gnp.tanh(x) * 2.0\n")
    (workdir / "s.toml").write_text('[[function]]\ntarget = "my_fns:softclip"\n'
                                    'inputs = ["real"]\n')
    assert main(["run", "--suite", "s.toml", *TINY, "--json", "r.json", "--no-html"]) == 0
    report = Results.from_json((workdir / "r.json").read_text()).reports[0]
    assert report.op == "my_fns:softclip" and report.findings == []


# -- C16, C17: what the run prints ---------------------------------------------------------


def test_progress_line_of_an_allowed_op_says_allowed(
        workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (workdir / "errtest_ops.py").write_text(USER_OPS)
    (workdir / "s.toml").write_text('[suite]\nops = ["errtest.bad_cos"]\n[[op]]\n'
                                    'name = "errtest.bad_cos"\nallow = ["mismatch"]\n'
                                    'reason = "known sign error"\n')
    assert main(["run", "--import", "errtest_ops", "--suite", "s.toml", *TINY,
                 "--no-report", "--no-color"]) == 0
    out = capsys.readouterr().out
    assert "ALLOWED errtest.bad_cos" in out
    assert "FAIL errtest.bad_cos" not in out


def test_list_one_op_grammar(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list", "nn.elu", "--no-color"]) == 0
    assert capsys.readouterr().out.splitlines()[0] == "1 registered op"


def test_examples_help_says_per_dtype(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--help"]) == 0
    assert "examples (sampled inputs) per op and dtype" in \
        " ".join(capsys.readouterr().out.split())


# -- A4, A5, C17: the pytest plugin's options ---------------------------------------------


@pytest.mark.parametrize(("option", "error"), [
    ("--gradcheck-report=/proc/gc.json", "*--gradcheck-report /proc/gc.json: cannot write*"),
    ("--gradcheck-report=out", "*--gradcheck-report out: is a directory; give a file name*"),
    ("--gradcheck-report=rep.html", "*--gradcheck-report=rep.html: give the JSON file's path "
                                    "(such as rep.json)*"),
    ("--gradcheck-seed=-1", "*--gradcheck-seed must be a non-negative integer, got -1*"),
])
def test_plugin_refuses_bad_options_before_any_test(pytester: pytest.Pytester, option: str,
                                                    error: str) -> None:
    pytester.mkdir("out")
    pytester.makepyfile("def test_ok():\n    assert True\n")
    result = pytester.runpytest(option, "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([error])
    assert "passed" not in result.stdout.str()  # refused before anything ran



def test_cluster_workers_get_the_modules_of_function_targets() -> None:
    from gradcheck.checker.executors.cluster import _target_modules

    units = [("a", {"function": "my_fns:softclip"}), ("b", {"function": "tf.math.sin"}),
             ("c", {"function": "my_fns:other"}), ("sin", {"seed": 0})]
    assert _target_modules(units) == ["my_fns"]  # uploaded like a one-file --import module


def test_an_op_rows_spec_is_checked_against_the_op_at_load(tmp_path: Path) -> None:
    # inputs= with one input too many for 'sum' used to be taken for its axis parameter
    suite = tmp_path / "s.toml"
    suite.write_text("[suite]\nops = []\n\n[[op]]\nname = \"sum\"\ninputs = [\"real\", \"real\"]\n"
                     "reason = \"a user's spec\"\n")
    with pytest.raises(SuiteError, match=r"row 1 \('sum'\): op 'sum': takes 1 input"):
        load_suite(str(suite), default_registry)
