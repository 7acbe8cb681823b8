"""The ``gradcheck`` command line: exit codes, output, files, determinism."""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from gradcheck import default_registry
from gradcheck.checker.report import Results
from gradcheck.cli import functions as functions_module
from gradcheck.cli import main
from gradcheck.cli import run as run_module
from gradcheck.render import render_html

ANSI = re.compile(r"\x1b\[")
SMALL = ["--examples", "2", "--references", "numeric", "--dtype", "float64"]

BROKEN_OPS = '''
"""A user's ops module: one correct op, one with a sign error in both rules."""
import numpy as np

import gradcheck.numpy as gnp
from gradcheck import define_op
from gradcheck.domains import REAL

define_op("clitest.good_sin", np.sin, vjp=lambda g, out, x: (g * gnp.cos(x),),
          jvp=lambda ts, out, x: ts[0] * gnp.cos(x), family="clitest", inputs=(REAL,),
          shapes="(...)")
define_op("clitest.bad_cos", np.cos, vjp=lambda g, out, x: (g * gnp.sin(x),),
          jvp=lambda ts, out, x: ts[0] * gnp.sin(x), family="clitest", inputs=(REAL,),
          shapes="(...)")
'''



@pytest.fixture
def user_ops(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A module on sys.path that registers ``clitest.*`` ops when imported (removed after)."""
    (tmp_path / "clitest_ops.py").write_text(BROKEN_OPS)
    monkeypatch.syspath_prepend(str(tmp_path))
    before = set(default_registry.names())
    yield "clitest_ops"
    sys.modules.pop("clitest_ops", None)
    for name in set(default_registry.names()) - before:
        default_registry.remove(name)


# -- usage errors exit with 2 and say what is wrong --------------------------------------


@pytest.mark.parametrize(("argv", "message"), [
    (["run", "--op", "sinn"], "unknown op 'sinn'; did you mean sin"),
    (["run", "--op", "sin", "--op", "linalg.cholesk"], "unknown op 'linalg.cholesk'"),
    (["run", "--suite", "smok"], "suite 'smok' not found (known suites: "),
    (["run", "--op", "sin", "--paths", "vjp,hvp"], "--paths: unknown value(s) 'hvp'"),
    (["run", "--op", "sin", "--references", "mxnet"], "--references: unknown value(s) 'mxnet'"),
    (["run", "--op", "sin", "--dtype", "float16"], "--dtype: unknown value(s) 'float16'"),
    (["run", "--op", "sin", "--fail-on", "leak"], "--fail-on: unknown kind 'leak'"),
    (["run"], "nothing to check: give --op OP"),
    (["run", "--all", "--suite", "smoke"], "--all and --suite cannot be combined"),
    (["run", "--op", "sin", "--import", "no_such_module_xyz"], "cannot import it"),
    (["run", "--op", "sin", "--no-report", "--json", "x.json"],
     "--no-report contradicts --json x.json"),
    (["run", "--op", "sin", "--no-html", "--html", "x.html"],
     "--no-html contradicts --html x.html"),
    (["run", "--op", "sin", "--json", "."], "--json .: is a directory"),
    (["run", "--op", "sin", "--json", "r.out", "--html", "r.out"],
     "--html r.out: the same file as --json r.out"),
    (["run", "--op", "sin", "--html", "/proc/x.html"], "--html /proc/x.html: cannot write there"),
    (["run", "--op", "sin", "--json", "/proc/sub/x.json"], "--json /proc/sub/x.json: cannot write"),
    (["report", "missing.json", "--fail-on", "mismatch"], "cannot read results file"),
    (["show", "nosuchop"], "unknown op 'nosuchop'"),
    (["list", "nosuchop"], "unknown op 'nosuchop'"),
    (["report", "missing.json"], "cannot read results file 'missing.json'"),
])
def test_usage_errors(workdir: Path, capsys: pytest.CaptureFixture[str], argv: list[str],
                      message: str) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("gradcheck: error: ") and message in err
    assert not (workdir / "reports").exists()


@pytest.mark.parametrize("argv", [[], ["frobnicate"], ["run", "--mode", "slow", "--op", "sin"],
                                  ["run", "--op", "sin", "--examples", "0"],
                                  ["run", "--op", "sin", "--seed", "-1"],
                                  ["run", "--op", "sin", "--jobs", "x"]])
def test_argparse_usage_errors(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    assert "usage: gradcheck" in capsys.readouterr().err


def test_help(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--help"]) == 0
    out = capsys.readouterr().out
    for option in ("--op", "--all", "--suite", "--paths", "--references", "--mode", "--seed",
                   "--examples", "--dtype", "--jobs", "--json", "--html", "--fail-on",
                   "--verbose", "--no-color"):
        assert option in out


def test_results_file_that_is_not_results(workdir: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    (workdir / "other.json").write_text('{"format": "something-else"}')
    assert main(["report", "other.json"]) == 2
    assert "not a gradcheck results file" in capsys.readouterr().err


# -- list ---------------------------------------------------------------------------------


def test_list_plain(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list", "--no-color"]) == 0
    out = capsys.readouterr().out
    assert not ANSI.search(out)
    lines = out.splitlines()
    assert lines[0] == f"{len(default_registry)} registered ops"
    row = next(line.split() for line in lines if line.startswith("nn.relu "))
    assert row[:3] == ["nn.relu", "nn", "real"]
    assert "jvp native" in " ".join(row) or "jvp by transpose" in " ".join(row)
    assert lines[-1].startswith("reference frameworks: autograd ")


def test_list_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list", "--json", "linalg.*"]) == 0
    data = json.loads(capsys.readouterr().out)
    names = [op["name"] for op in data["ops"]]
    assert "linalg.cholesky" in names and "sin" not in names
    cholesky = next(op for op in data["ops"] if op["name"] == "linalg.cholesky")
    assert cholesky["family"] == "linalg"
    assert cholesky["domain"] == ["symmetric positive definite"]
    assert cholesky["vjp"] is True and cholesky["jvp"] in ("native", "transpose", "linear")
    assert "numeric" in cholesky["references"]
    assert set(data["frameworks_installed"]) == {"autograd", "jax", "tensorflow", "torch"}


def test_list_imports_user_ops(user_ops: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list", "--json", "--import", user_ops, "clitest"]) == 0
    names = [op["name"] for op in json.loads(capsys.readouterr().out)["ops"]]
    assert names == ["clitest.bad_cos", "clitest.good_sin"]
    assert main(["list", "--import", "no_such_module_xyz"]) == 2


def test_list_json_covers_every_op(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [op["name"] for op in data["ops"]] == default_registry.names()
    relu = next(op for op in data["ops"] if op["name"] == "nn.relu")
    assert relu["kinks"] == "0"


# -- run ----------------------------------------------------------------------------------


def test_run_writes_results_and_report(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["run", "--op", "sin", "--op", "exp", *SMALL, "--json", "out/r.json",
                 "--html", "out/r.html"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert not ANSI.search(out)  # not a terminal: plain lines
    # (the wording of the lines is tests/test_terminal.py's business)
    assert re.search(r"^PASS exp", out, re.M) and re.search(r"^PASS sin", out, re.M)
    results = Results.from_json((workdir / "out" / "r.json").read_text())
    assert [r.op for r in results.reports] == ["exp", "sin"]
    assert results.config["examples"] == 2
    html = (workdir / "out" / "r.html").read_text()
    assert html == render_html(results)
    assert not (workdir / "reports").exists()


def test_run_defaults_to_the_reports_folder(workdir: Path) -> None:
    assert main(["run", "--op", "sin", *SMALL]) == 0
    assert Results.from_json((workdir / "reports" / "results.json").read_text()).reports
    assert (workdir / "reports" / "index.html").is_file()


def test_no_report_writes_nothing(workdir: Path) -> None:
    assert main(["run", "--op", "sin", *SMALL, "--no-report"]) == 0
    assert list(workdir.iterdir()) == []


def test_only_the_files_named(workdir: Path) -> None:
    assert main(["run", "--op", "sin", *SMALL, "--json", "only.json"]) == 0
    assert [p.name for p in workdir.iterdir()] == ["only.json"]


@pytest.mark.parametrize(("options", "files"), [
    (["--no-html"], ["reports/results.json"]),
    (["--no-json"], ["reports/index.html"]),
    (["--json", "x.json", "--no-html"], ["x.json"]),
    (["--html", "x.html"], ["x.html"]),
])
def test_output_options_write_exactly_what_is_asked(workdir: Path, options: list[str],
                                                    files: list[str]) -> None:
    assert main(["run", "--op", "sin", *SMALL, *options]) == 0
    written = sorted(str(p.relative_to(workdir)) for p in workdir.rglob("*") if p.is_file())
    assert written == files


def test_hypothesis_keeps_its_files_out_of_the_working_folder(
        workdir: Path, user_ops: str, monkeypatch: pytest.MonkeyPatch) -> None:
    import hypothesis.configuration as configuration

    homes: list[object] = []
    original = configuration.set_hypothesis_home_dir
    monkeypatch.setattr(configuration, "set_hypothesis_home_dir",
                        lambda path: (homes.append(path), original(path))[1])
    # user_ops puts a module in the working folder (Hypothesis would cache its constants);
    # importing it writes Python's own __pycache__ next to it unless bytecode is off (make
    # turns it on; here and in the sweep's worker processes), which is no file of Hypothesis'
    # or gradcheck's
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    assert main(["run", "--import", user_ops, "--op", "clitest.good_sin", *SMALL,
                 "--json", "r.json"]) == 0
    assert sorted(p.name for p in workdir.iterdir()) == ["clitest_ops.py", "r.json"]
    # while the run drew examples, Hypothesis' home was under gradcheck's cache folder
    assert homes[0] == str(Path(os.environ["XDG_CACHE_HOME"]) / "gradcheck" / "hypothesis")


def test_bad_output_path_fails_before_the_sweep(workdir: Path, monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    (workdir / "out").mkdir()
    (workdir / "file").write_text("")
    monkeypatch.setattr(run_module, "sweep", lambda *a, **k: pytest.fail("sweep ran"))
    assert main(["run", "--op", "sin", "--json", "ok.json", "--html", "out"]) == 2
    assert "--html out: is a directory" in capsys.readouterr().err
    assert main(["run", "--op", "sin", "--json", "file/x.json"]) == 2
    assert "--json file/x.json: file is not a folder" in capsys.readouterr().err
    assert sorted(p.name for p in workdir.iterdir()) == ["file", "out"]


def test_op_patterns_and_families_select_exactly_what_they_name(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list", "--json", "linalg.*"]) == 0
    names = {op["name"] for op in json.loads(capsys.readouterr().out)["ops"]}
    assert names == {n for n in default_registry.names() if n.startswith("linalg.")}
    assert not names & {"dot", "matmul", "outer"}
    assert main(["list", "--json", "linalg"]) == 0  # the family: every op of it
    family = {op["name"] for op in json.loads(capsys.readouterr().out)["ops"]}
    assert family == {op.name for op in default_registry if op.family == "linalg"}
    assert {"dot", "matmul", "outer"} <= family


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    import gradcheck

    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"gradcheck {gradcheck.__version__}"


def test_same_seed_same_bytes_whatever_the_jobs(workdir: Path) -> None:
    args = ["run", "--op", "sin", "--op", "nn.elu", "--op", "sum", *SMALL]
    assert main([*args, "--seed", "7", "--json", "a.json"]) == 0
    assert main([*args, "--seed", "7", "--json", "b.json"]) == 0
    assert main([*args, "--seed", "7", "--json", "c.json", "--jobs", "2"]) == 0
    a = (workdir / "a.json").read_bytes()
    assert a == (workdir / "b.json").read_bytes() == (workdir / "c.json").read_bytes()
    assert main([*args, "--seed", "8", "--json", "d.json"]) == 0
    assert (workdir / "d.json").read_bytes() != a


def test_import_finds_a_module_in_the_current_folder(workdir: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    (workdir / "cwd_ops.py").write_text(BROKEN_OPS.replace("clitest", "cwdtest"))
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(workdir))])
    before = set(default_registry.names())
    try:
        assert main(["run", "--import", "cwd_ops", "--op", "cwdtest.good_sin", *SMALL,
                     "--jobs", "2", "--op", "sin", "--json", "r.json"]) == 0
    finally:
        sys.modules.pop("cwd_ops", None)
        for name in set(default_registry.names()) - before:
            default_registry.remove(name)
    results = Results.from_json((workdir / "r.json").read_text())
    assert [r.op for r in results.reports] == ["cwdtest.good_sin", "sin"]


def test_failing_op_exits_1_with_its_message(workdir: Path, user_ops: str,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["run", "--import", user_ops, "--op", "clitest.*", *SMALL, "--no-report"])
    out = capsys.readouterr().out
    assert code == 1
    assert re.search(r"^FAIL clitest\.bad_cos vjp=fail", out, re.M)
    assert re.search(r"^PASS clitest\.good_sin", out, re.M)
    assert re.search(r"^FAIL clitest\.bad_cos · vjp vs numeric · mismatch: ", out, re.M)
    # --fail-on decides which kinds fail the run.
    args = ["run", "--import", user_ops, "--op", "clitest.bad_cos", *SMALL, "--no-report"]
    assert main([*args, "--fail-on", "leaks"]) == 0
    assert main([*args, "--fail-on", "none"]) == 0
    assert main([*args, "--fail-on", "mismatch"]) == 1


def test_verbose_shows_counterexamples(workdir: Path, user_ops: str,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    main(["run", "--import", user_ops, "--op", "clitest.bad_cos", *SMALL, "--no-report", "-v"])
    out = capsys.readouterr().out
    assert "counterexample:" in out and "max_abs_err" in out and "tolerance" in out


def test_suite_by_bare_name_narrowed_by_op(workdir: Path) -> None:
    assert main(["run", "--suite", "smoke", "--op", "sin", "--op", "nn.elu", "--examples", "1",
                 "--references", "numeric", "--json", "s.json"]) == 0
    results = Results.from_json((workdir / "s.json").read_text())
    assert [r.op for r in results.reports] == ["nn.elu", "sin"]
    assert results.config["suite"] == "smoke" and results.config["mode"] == "fast"


def test_suite_allow_and_skip_rows(workdir: Path, user_ops: str) -> None:
    (workdir / "mine.toml").write_text('''
[suite]
ops = ["clitest.*", "exp"]
examples = 2
references = ["numeric"]
dtypes = ["float64"]

[[op]]
name = "clitest.bad_cos"
allow = ["mismatch"]
reason = "known sign error, tracked elsewhere"

[[op]]
name = "exp"
skip = true
reason = "not today"
''')
    args = ["run", "--import", user_ops, "--suite", "mine.toml", "--json", "m.json"]
    assert main(args) == 0  # the mismatch is allowed for this op, still reported
    results = Results.from_json((workdir / "m.json").read_text())
    assert [r.op for r in results.reports] == ["clitest.bad_cos", "clitest.good_sin"]
    assert any(f.kind == "mismatch" for f in results.reports[0].findings)
    assert results.config["exceptions"]["clitest.bad_cos"]["allow"] == ["mismatch"]
    assert results.config["skipped"] == {"exp": "not today"}


def test_interrupted_run_leaves_old_files(workdir: Path, monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    (workdir / "r.json").write_text("old results")
    (workdir / "r.html").write_text("old report")

    def interrupted(*args: object, **kwargs: object) -> Results:
        raise KeyboardInterrupt

    monkeypatch.setattr(run_module, "sweep", interrupted)
    code = main(["run", "--op", "sin", "--json", "r.json", "--html", "r.html"])
    assert code == 130
    assert "interrupted; no results or report were written" in capsys.readouterr().err
    assert (workdir / "r.json").read_text() == "old results"
    assert (workdir / "r.html").read_text() == "old report"
    assert sorted(p.name for p in workdir.iterdir()) == ["r.html", "r.json"]


def test_function_rows_of_a_missing_framework_are_unavailable(
        workdir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    hint = "unavailable: no tensorflow; install with: pip install gradcheck[tensorflow]"
    monkeypatch.setattr(functions_module, "_framework_status",
                        lambda module: hint if module == "tensorflow" else None)
    (workdir / "rows.toml").write_text('''
[suite]
examples = 2
seed = 4
paths = ["vjp", "jvp"]
references = ["numeric"]

[[function]]
target = "tf.math.sin"
inputs = ["real"]

[[function]]
target = "gnp.sin"
name = "engine sin"
inputs = ["real"]
''')
    assert main(["run", "--suite", "rows.toml", "--json", "r.json"]) == 0
    engine_sin, tf_sin = Results.from_json((workdir / "r.json").read_text()).reports
    assert tf_sin.op == "tf.math.sin" and tf_sin.seed == 4
    assert [(c.path, c.reference, c.status, c.note) for c in tf_sin.cells] == [
        ("vjp", "tensorflow", "unavailable", hint), ("jvp", "tensorflow", "unavailable", hint)]
    assert tf_sin.passed
    # the engine's own function is checked for real, under the row's name
    assert engine_sin.op == "engine sin" and engine_sin.cell("vjp", "numeric").status == "pass"


def test_function_rows_run_in_the_sweep_and_narrow_with_op(
        workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (workdir / "rows.toml").write_text('''
[suite]
examples = 2
references = ["numeric"]
ops = ["sin"]

[[function]]
target = "gnp.cumsum"
name = "cumsum, both axes"
inputs = ["real"]
params = {axis = [0, -1]}
shapes = "(3,4)"

[[function]]
target = "gnp.log"
name = "log near zero"
inputs = [{domain = "interval", low = 0.001, high = 0.01}]
''')
    args = ["run", "--suite", "rows.toml", "--jobs", "2", "--json"]
    assert main([*args, "all.json"]) == 0
    ops = [r.op for r in Results.from_json((workdir / "all.json").read_text()).reports]
    assert ops == ["cumsum, both axes", "log near zero", "sin"]
    assert main([*args, "some.json", "--op", "log*", "--op", "sin"]) == 0
    some = Results.from_json((workdir / "some.json").read_text()).reports
    assert [r.op for r in some] == ["log near zero", "sin"]
    assert all(r.passed and r.cells for r in some)
    capsys.readouterr()
    (workdir / "bad.toml").write_text('[[function]]\ntarget = "gnp.no_such_fn"\n'
                                      'inputs = ["real"]\n')
    assert main(["run", "--suite", "bad.toml", "--no-report"]) == 2
    assert "gradcheck.numpy has no attribute 'no_such_fn'" in capsys.readouterr().err


@pytest.mark.tensorflow
def test_suite_audits_tensorflow_functions(workdir: Path) -> None:
    (workdir / "tf.toml").write_text('''
[suite]
examples = 1
paths = ["vjp", "jvp", "double_vjp"]
references = ["numeric", "tensorflow"]

[[tf_function]]
name = "tf.math.sin"
domain = "real"

[[function]]
target = "tf.nn.softsign"
inputs = ["real"]

[[function]]
target = "tf.math.unsorted_segment_sum"
inputs = ["real", {domain = "labels", high = 3}]
params = {num_segments = 3}
shapes = "(n),(n)"
''')
    assert main(["run", "--suite", "tf.toml", "--json", "tf.json"]) == 0
    results = Results.from_json((workdir / "tf.json").read_text())
    sin, segment_sum, softsign = results.reports
    # params reach the function; the integer segment ids are held fixed
    assert segment_sum.cell("vjp", "numeric").status == "pass"
    assert sin.op == "tf.math.sin" and sin.dtypes == ["float64"]
    assert sin.cell("vjp", "numeric").status == "pass"
    # TensorFlow 2.x: sin's double-VJP needs the dummy fed; softsign has no second order.
    assert "dependence_leak" in {f.kind for f in sin.findings}
    assert "unsupported" in {f.kind for f in softsign.findings}
    (workdir / "bad.toml").write_text('[[tf_function]]\nname = "tf.math.no_such_fn"\n')
    assert main(["run", "--suite", "bad.toml", "--no-report"]) == 2


# -- report and show ----------------------------------------------------------------------


def test_report_rerenders_old_results(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--op", "sin", *SMALL, "--json", "r.json", "--html", "first.html"]) == 0
    capsys.readouterr()
    assert main(["report", "r.json", "--html", "again.html"]) == 0
    assert "report: again.html" in capsys.readouterr().out
    assert (workdir / "again.html").read_bytes() == (workdir / "first.html").read_bytes()
    assert main(["report", "r.json", "--quiet"]) == 0
    assert (workdir / "r.html").read_bytes() == (workdir / "first.html").read_bytes()


def test_report_judges_results_by_their_own_policy(workdir: Path, user_ops: str,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    args = ["run", "--import", user_ops, "--op", "clitest.*", *SMALL, "--json", "r.json"]
    assert main([*args, "--fail-on", "leaks"]) == 0
    config = json.loads((workdir / "r.json").read_text())["config"]
    assert config["fail_on"] == ["dependence_leak", "value_leak"]
    # the run passed under its own policy, so does its report; --fail-on judges anew
    assert main(["report", "r.json", "--quiet"]) == 0
    assert main(["report", "r.json", "--quiet", "--fail-on", "mismatch"]) == 1
    assert main(["report", "r.json", "--quiet", "--fail-on", "none"]) == 0
    assert main([*args]) == 1  # the default policy: the mismatch fails
    assert main(["report", "r.json", "--quiet"]) == 1
    assert main(["report", "r.json", "--quiet", "--fail-on", "mismatc"]) == 2
    assert "--fail-on: unknown kind 'mismatc'" in capsys.readouterr().err
    assert main(["report", "r.json", "--html", "/proc/r.html"]) == 2
    assert "--html /proc/r.html: cannot write there" in capsys.readouterr().err
    assert main(["report", "r.json", "--html", "./r.json"]) == 2  # would destroy the results
    assert "--html r.json: the same file as RESULTS.json r.json" in capsys.readouterr().err


def test_show_one_op_in_depth(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["show", "nn.elu", *SMALL]) == 0
    out = capsys.readouterr().out
    assert out.startswith("nn.elu\n")
    assert "  family: nn" in out and "  rules: vjp, jvp" in out
    assert "nn.elu: every path against every reference" in out
    assert re.search(r"^vjp\s+numeric\s+pass\s+\d", out, re.M)
    assert re.search(r"^double_vjp\s+numeric\s+pass", out, re.M)
    assert "convergence of the numeric reference" in out
    assert re.search(r"^fitted slope\s+(n/a|-?\d)", out, re.M)
    assert re.search(r"^expected slope\s+2\.00", out, re.M)


def test_show_from_results_and_failing_op(workdir: Path, user_ops: str,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--import", user_ops, "--op", "clitest.*", *SMALL,
                 "--json", "r.json"]) == 1
    capsys.readouterr()
    assert main(["show", "bad_cos", "--results", "r.json"]) == 1
    out = capsys.readouterr().out
    assert out.startswith("clitest.bad_cos\n")
    assert "mismatch" in out and "counterexample:" in out
    assert main(["show", "nope", "--results", "r.json"]) == 2
