"""The pytest plugin, run the way an op author would run it (with ``pytester``).

Each test writes a small project: a module registering one correct op and one with a
sign error in its derivative rules, a conftest importing it, and tests using the
fixture or the marker.  Ops registered in-process are removed again afterwards.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator

import pytest

from gradcheck import default_registry
from gradcheck.checker.report import Results

MINE_OPS = '''
"""Ops of a user's project: one right, one with the derivative's sign flipped."""
import numpy as np

import gradcheck.numpy as gnp
from gradcheck import define_op
from gradcheck.domains import REAL

good_sin = define_op(
    "mine.good_sin", np.sin,
    vjp=lambda g, out, x: (g * gnp.cos(x),),
    jvp=lambda ts, out, x: ts[0] * gnp.cos(x),
    family="mine", inputs=(REAL,), shapes="(...)",
)
bad_cos = define_op(
    "mine.bad_cos", np.cos,
    vjp=lambda g, out, x: (g * gnp.sin(x),),  # wrong: d cos = -sin
    jvp=lambda ts, out, x: ts[0] * gnp.sin(x),
    family="mine", inputs=(REAL,), shapes="(...)",
)
'''

FAST = ["--gradcheck-examples=2", "-p", "no:cacheprovider"]


@pytest.fixture
def project(pytester: pytest.Pytester) -> Iterator[pytest.Pytester]:
    """A project whose conftest registers ``mine.good_sin`` and ``mine.bad_cos``."""
    before = set(default_registry.names())
    pytester.makepyfile(mine_ops=MINE_OPS)
    pytester.makeconftest("import mine_ops  # noqa: F401  (registers the project's ops)")
    yield pytester
    for name in set(default_registry.names()) - before:
        default_registry.remove(name)


def test_plugin_stays_out_of_runs_that_do_not_use_it(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_ok():\n    assert True\n")
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["plugins: *gradcheck-*"])  # loaded by its entry point
    assert "- gradcheck -" not in result.stdout.str()  # but silent: no summary section


def test_importing_the_plugin_imports_nothing_heavy() -> None:
    code = ("import sys, gradcheck.pytest_plugin\n"
            "heavy = ['hypothesis', 'jinja2', 'matplotlib', 'tensorflow', 'autograd', 'rich',\n"
            "         'gradcheck.checker.api', 'gradcheck.render']\n"
            "print([m for m in heavy if m in sys.modules])\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "[]"


def test_options_are_in_the_gradcheck_group(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--help")
    result.stdout.fnmatch_lines(["*gradient checks of registered ops*", "*--gradcheck *",
                                 "*--gradcheck-seed=SEED*", "*--gradcheck-mode*",
                                 "*--gradcheck-references=REFS*", "*--gradcheck-report=PATH*"])


def test_marker_is_registered(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--markers")
    result.stdout.fnmatch_lines(["@pytest.mark.gradcheck(ops, *"])


def test_one_item_per_registered_op(project: pytest.Pytester) -> None:
    result = project.runpytest("--gradcheck", "--gradcheck-ops=mine.*", "-v", *FAST)
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines([
        "*gradcheck::mine.bad_cos FAILED*",
        "*gradcheck::mine.good_sin PASSED*",
    ])
    # The failure shows the finding, not a traceback through the plugin.
    result.stdout.fnmatch_lines(["*_ gradcheck of mine.bad_cos _*",
                                 "gradcheck: 'mine.bad_cos' fails * check(s)*",
                                 "- vjp vs numeric · mismatch: *"])
    assert "pytest_plugin.py" not in result.stdout.str()


def test_every_registered_op_is_collected(project: pytest.Pytester) -> None:
    result = project.runpytest("--gradcheck", "--collect-only", "-q", *FAST)
    ids = [line for line in result.stdout.lines if line.startswith("gradcheck::")]
    expected = sorted(f"gradcheck::{name}" for name in default_registry.names())
    assert sorted(ids) == expected
    assert "gradcheck::mine.good_sin" in ids


def test_keyword_selection_applies_to_op_items(project: pytest.Pytester) -> None:
    result = project.runpytest("--gradcheck", "-k", "good_sin", *FAST)
    result.assert_outcomes(passed=1, deselected=len(default_registry) - 1)


def test_unknown_op_pattern_is_a_usage_error(project: pytest.Pytester) -> None:
    result = project.runpytest("--gradcheck", "--gradcheck-ops=mine.bad_coss", *FAST)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--gradcheck-ops: unknown op 'mine.bad_coss'; did you mean*"])


def test_bad_options_are_usage_errors(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--gradcheck-references=numeric,mxnet")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--gradcheck-references: unknown reference(s) 'mxnet'*"])
    result = pytester.runpytest("--gradcheck-mode=slow")
    assert result.ret == pytest.ExitCode.USAGE_ERROR


def test_references_option_adds_to_the_checkers_own(project: pytest.Pytester) -> None:
    project.makepyfile(test_refs='''
def test_refs(gradcheck):
    report = gradcheck.check("mine.good_sin", paths=["vjp"])
    assert {c.reference for c in report.cells} >= {"numeric", "autograd"}
''')
    project.runpytest("--gradcheck-references=autograd", *FAST).assert_outcomes(passed=1)


def test_fixture_check_and_assert_ok(project: pytest.Pytester) -> None:
    project.makepyfile(test_fixture='''
def test_check_returns_the_report(gradcheck):
    report = gradcheck.check("mine.bad_cos")
    assert report.op == "mine.bad_cos" and not report.passed
    assert {f.kind for f in report.failures} == {"mismatch"}

def test_assert_ok_passes(gradcheck):
    assert gradcheck.assert_ok("mine.good_sin").passed

def test_assert_ok_fails(gradcheck):
    gradcheck.assert_ok("mine.bad_cos")
''')
    result = project.runpytest(*FAST)
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(["*AssertionError: gradcheck: 'mine.bad_cos' fails *",
                                 "*- vjp vs numeric · mismatch: *",
                                 "*error * vs tolerance * (ratio *",
                                 "*counterexample: {*"])
    assert "pytest_plugin.py" not in result.stdout.str()  # the test's frame, not ours


def test_marker_checks_ops_after_the_test(project: pytest.Pytester) -> None:
    project.makepyfile(test_marker='''
import pytest

@pytest.mark.gradcheck(ops=["mine.good_sin"], paths=["vjp", "jvp"])
def test_good():
    pass

@pytest.mark.gradcheck(ops=["mine.good_sin", "mine.bad_cos"])
def test_bad():
    pass

@pytest.mark.gradcheck(ops=["mine.bad_cos"])
def test_body_fails_first():
    assert 1 == 2
''')
    result = project.runpytest("-v", *FAST)
    result.assert_outcomes(passed=1, failed=2)
    result.stdout.fnmatch_lines(["*test_good PASSED*", "*test_bad FAILED*"])
    # The finding itself: op, path, error vs tolerance, counterexample -- and none of the
    # plugin's own frames or source.
    result.stdout.fnmatch_lines(["gradcheck: 'mine.bad_cos' fails *",
                                 "- vjp vs numeric · mismatch: *",
                                 "    error * vs tolerance * (ratio *",
                                 "    counterexample: {*"])
    out = result.stdout.str()
    assert "pytest_plugin.py" not in out and "def pytest_runtest_call" not in out
    result.stdout.fnmatch_lines(["*assert 1 == 2*"])  # the body's own failure, unchanged


def test_marker_misuse_is_reported_at_collection(project: pytest.Pytester) -> None:
    project.makepyfile(test_misuse='''
import pytest

@pytest.mark.gradcheck()
def test_no_ops():
    pass

@pytest.mark.gradcheck(ops=["mine.good_sin"], pathz=["vjp"])
def test_bad_option():
    pass

@pytest.mark.gradcheck(ops=["mine.good_sinn"])
def test_unknown_op():
    pass

def test_unmarked():
    pass
''')
    result = project.runpytest(*FAST)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([
        "*test_no_ops: @pytest.mark.gradcheck needs the ops to check*",
        "*test_bad_option: @pytest.mark.gradcheck unknown option(s) 'pathz'; it takes ops and"
        " paths, *",
        "*test_unknown_op: @pytest.mark.gradcheck unknown op 'mine.good_sinn'*",
    ])
    result.assert_outcomes()  # nothing ran


def test_report_written_at_session_end(project: pytest.Pytester) -> None:
    result = project.runpytest("--gradcheck", "--gradcheck-ops=mine.*", "--gradcheck-seed=3",
                               "--gradcheck-report=out/gc.json", *FAST)
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*- gradcheck -*",
                                 "gradcheck: 2 reports: 1 fail, 1 pass; report: out*gc.json*"])
    results = Results.from_json((project.path / "out" / "gc.json").read_text())
    assert [r.op for r in results.reports] == ["mine.bad_cos", "mine.good_sin"]
    assert {r.seed for r in results.reports} == {3}
    html = (project.path / "out" / "gc.html").read_text()
    assert "mine.bad_cos" in html and html.rstrip().endswith("</html>")


def test_report_under_xdist_matches_a_serial_run(project: pytest.Pytester) -> None:
    project.makepyfile(test_fixture='''
def test_one(gradcheck):
    gradcheck.check("mine.good_sin", seed=1)
''')
    args = ["--gradcheck", "--gradcheck-ops=mine.*", *FAST]
    serial = project.runpytest_subprocess(*args, "--gradcheck-report=serial.json")
    serial.assert_outcomes(passed=2, failed=1)
    parallel = project.runpytest_subprocess(*args, "-n", "2", "--gradcheck-report=xdist.json")
    parallel.assert_outcomes(passed=2, failed=1)
    parallel.stdout.fnmatch_lines(["gradcheck: 3 reports: 1 fail, 2 pass; *"])
    serial_text = (project.path / "serial.json").read_text()
    assert json.loads(serial_text)["reports"]  # three reports: two ops and the fixture's
    assert len(json.loads(serial_text)["reports"]) == 3
    assert (project.path / "xdist.json").read_text() == serial_text
    assert (project.path / "xdist.html").read_text() == (project.path / "serial.html").read_text()


def test_summary_counts_what_the_json_holds(project: pytest.Pytester) -> None:
    project.makepyfile(test_twice='''
def test_one(gradcheck):
    gradcheck.check("mine.good_sin", seed=1)

def test_again(gradcheck):
    gradcheck.check("mine.good_sin", seed=1)
''')
    result = project.runpytest("--gradcheck-report=gc.json", *FAST)
    result.assert_outcomes(passed=2)
    assert len(json.loads((project.path / "gc.json").read_text())["reports"]) == 1
    result.stdout.fnmatch_lines(
        ["gradcheck: 1 report: 1 pass (1 identical repeated check merged); report: gc.json*"])


BLAS_TEST = '''
import ctypes
import glob
import os

import numpy as np


def openblas_threads():
    """The thread count numpy's bundled OpenBLAS runs with (None if not found)."""
    libs = glob.glob(os.path.join(os.path.dirname(np.__file__), "..", "numpy.libs",
                                  "*openblas*"))
    for path in libs:
        lib = ctypes.CDLL(path)
        for name in ("scipy_openblas_get_num_threads64_", "openblas_get_num_threads64_",
                     "openblas_get_num_threads"):
            if hasattr(lib, name):
                return getattr(lib, name)()
    return None


def test_blas_threads():
    assert os.environ.get("OPENBLAS_NUM_THREADS") == os.environ["EXPECTED_BLAS"]
    assert os.environ.get("OMP_NUM_THREADS") == os.environ["EXPECTED_OMP"]
    # numpy read the variable when it loaded BLAS: what BLAS runs with is what counts
    if os.environ["EXPECTED_BLAS"] == "1":
        assert openblas_threads() in (None, 1)
'''


@pytest.mark.parametrize(("user", "expected"), [(None, "1"), ("3", "3")])
def test_xdist_workers_use_one_blas_thread_unless_told(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, user: str | None,
        expected: str) -> None:
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    if user is None:
        monkeypatch.delenv("OPENBLAS_NUM_THREADS", raising=False)
    else:
        monkeypatch.setenv("OPENBLAS_NUM_THREADS", user)
    monkeypatch.setenv("EXPECTED_BLAS", expected)
    monkeypatch.setenv("EXPECTED_OMP", "1")
    pytester.makepyfile(test_blas=BLAS_TEST)
    pytester.runpytest_subprocess("-n", "1", "-p", "no:cacheprovider").assert_outcomes(
        passed=1)
    if user is None:  # a run without xdist leaves the user's environment alone
        monkeypatch.setenv("EXPECTED_BLAS", "")
        pytester.makepyfile(test_blas=BLAS_TEST.replace(
            'os.environ.get("OPENBLAS_NUM_THREADS")', 'os.environ.get("OPENBLAS_NUM_THREADS", "")'
        ).replace('assert os.environ.get("OMP_NUM_THREADS") == os.environ["EXPECTED_OMP"]',
                  "assert 'OMP_NUM_THREADS' not in os.environ"))
        pytester.runpytest_subprocess("-p", "no:cacheprovider").assert_outcomes(passed=1)
