"""A new user's findings: a run whose output closes (``| head``) writes its report or not
by its sweep's progress, never at random, and says which; ``2>&1 | head`` still exits 141;
the environment records the frameworks every op used (CLI and pytest plugin); a marker's
unknown op is named with both its quotes."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from gradcheck.cli import main, what_was_written
from gradcheck.pytest_plugin import marker_problem

SMALL = ["--examples", "2", "--references", "numeric", "--dtype", "float64"]
TWO_OPS = ["--op", "sin", "--op", "cos"]  # two progress lines, then the summary



class Reader(io.StringIO):
    """stdout read by ``| head -N``: ``lines`` lines get through, then writing raises
    ``error`` (BrokenPipeError: the reader has gone; KeyboardInterrupt: a Ctrl-C then)."""

    def __init__(self, lines: int, error: type[BaseException] = BrokenPipeError) -> None:
        super().__init__()
        self.lines, self.error = lines, error
        self.fd = os.open(os.devnull, os.O_WRONLY)  # what the CLI points at devnull

    def fileno(self) -> int:
        return self.fd

    def close(self) -> None:
        os.close(self.fd)
        super().close()

    def write(self, text: str) -> int:
        if self.getvalue().count("\n") >= self.lines:
            raise self.error(32, "Broken pipe") if self.error is BrokenPipeError \
                else self.error()
        return super().write(text)


def _run_into(reader: Reader, monkeypatch: pytest.MonkeyPatch, *argv: str) -> int:
    monkeypatch.setattr(sys, "stdout", reader)
    try:
        return main(["run", *TWO_OPS, *SMALL, *argv])
    finally:
        monkeypatch.undo()
        reader.close()


# -- 1. the report of a run whose output closes ------------------------------------------


def test_output_closed_after_the_sweep_still_writes_the_report_and_says_so(
        workdir: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    # Both progress lines get through; the summary's first line finds the pipe closed.
    code = _run_into(Reader(lines=2), monkeypatch, "--json", "r.json", "--html", "r.html")
    assert code == 141
    assert capsys.readouterr().err == \
        "gradcheck: output closed (broken pipe); r.json and r.html were written\n"
    assert [r["op"] for r in json.loads((workdir / "r.json").read_text())["reports"]] == \
        ["cos", "sin"]
    assert (workdir / "r.html").read_text().rstrip().endswith("</html>")


def test_output_closed_during_the_sweep_writes_nothing_and_says_so(
        workdir: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    code = _run_into(Reader(lines=1), monkeypatch, "--json", "r.json")
    assert code == 141
    assert capsys.readouterr().err == \
        "gradcheck: output closed (broken pipe); no results or report were written\n"
    assert list(workdir.iterdir()) == []


def test_ctrl_c_after_the_sweep_says_the_report_was_written(
        workdir: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    code = _run_into(Reader(lines=2, error=KeyboardInterrupt), monkeypatch,
                     "--json", "r.json", "--no-html")
    assert code == 130
    assert capsys.readouterr().err == "gradcheck: interrupted; r.json was written\n"
    assert (workdir / "r.json").exists() and not (workdir / "reports").exists()


def test_what_was_written_lists_the_files_in_order() -> None:
    assert what_was_written([]) == "no results or report were written"
    assert what_was_written([Path("a.json")]) == "a.json was written"
    assert what_was_written([Path("a.json"), Path("b.html")]) == \
        "a.json and b.html were written"


def test_the_users_pipe_to_head_always_gets_the_report(tmp_path: Path) -> None:
    """`gradcheck run ... | head -3`, the pipe closed once the sweep is over: before, the
    report was written or not by how fast the summary reached the closed pipe."""
    read, write = os.pipe()
    code = "import sys; from gradcheck.cli import main; sys.exit(main(sys.argv[1:]))"
    process = subprocess.Popen([sys.executable, "-c", code, "run", *TWO_OPS, *SMALL, "-v",
                                "--json", "r.json", "--no-html"],
                               cwd=tmp_path, stdout=write, stderr=subprocess.PIPE, text=True,
                               env={**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")})
    os.close(write)
    with os.fdopen(read) as reader:  # the progress lines, then one line of the summary
        lines = [reader.readline() for _ in range(3)]
    _, err = process.communicate(timeout=120)
    assert lines[2] and (tmp_path / "r.json").exists(), (lines, err)
    if process.returncode == 141:  # else everything fitted in the pipe before it closed
        assert err == "gradcheck: output closed (broken pipe); r.json was written\n"
    else:
        assert (process.returncode, err) == (0, "")


# -- 2. `2>&1 | head`: stderr is the closed pipe too -------------------------------------


def test_closed_output_that_is_also_stderr_exits_141(tmp_path: Path) -> None:
    read, write = os.pipe()
    code = "import sys; from gradcheck.cli import main; sys.exit(main(sys.argv[1:]))"
    ops = [a for name in ("sin", "cos", "exp", "tanh", "sinh", "cosh") for a in ("--op", name)]
    process = subprocess.Popen([sys.executable, "-c", code, "run", *ops, *SMALL,
                                "--json", "r.json"],
                               cwd=tmp_path, stdout=write, stderr=write,
                               env={**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")})
    os.close(write)
    with os.fdopen(read) as reader:  # `2>&1 | head -1`
        reader.readline()
    assert process.wait(timeout=120) == 141
    assert not (tmp_path / "r.json").exists()


# -- 3. the environment names every framework the checks used ---------------------------


def _environment(path: Path) -> dict[str, str]:
    environment: dict[str, str] = json.loads(path.read_text())["environment"]
    return environment


def test_run_records_the_versions_of_its_references(workdir: Path) -> None:
    from importlib.metadata import version

    argv = ["run", "--op", "sin", "--examples", "2", "--references", "autograd",
            "--dtype", "float64"]
    assert main([*argv, "--json", "one.json", "--html", "one.html"]) == 0
    assert main([*argv, "--json", "two.json", "--no-html", "--jobs", "2"]) == 0
    environment = _environment(workdir / "one.json")
    assert environment["autograd"] == version("autograd")
    assert environment["gradcheck"] == version("gradcheck")
    assert _environment(workdir / "two.json") == environment
    assert "not recorded" not in (workdir / "one.html").read_text()


def test_a_suites_references_are_recorded(workdir: Path) -> None:
    # given by the suite, not the command line: each op's settings carry them
    (workdir / "s.toml").write_text('[suite]\nops = ["sin", "cos"]\nexamples = 2\n'
                                    'dtypes = ["float64"]\nreferences = ["numeric", "autograd"]\n')
    assert main(["run", "--suite", "s.toml", "--json", "r.json", "--no-html"]) == 0, \
        (workdir / "s.toml").read_text()
    assert "autograd" in _environment(workdir / "r.json")


MINE_OPS = '''
import numpy as np
import gradcheck.numpy as gnp
from gradcheck import define_op
from gradcheck.domains import REAL

define_op("fix3.good_sin", np.sin, vjp=lambda g, out, x: (g * gnp.cos(x),),
          jvp=lambda ts, out, x: ts[0] * gnp.cos(x), family="fix3", inputs=(REAL,),
          shapes="(...)")
'''


@pytest.fixture
def project(pytester: pytest.Pytester) -> Iterator[pytest.Pytester]:
    from gradcheck import default_registry

    before = set(default_registry.names())
    pytester.makepyfile(fix3_ops=MINE_OPS)
    pytester.makeconftest("import fix3_ops  # noqa: F401")
    yield pytester
    for name in set(default_registry.names()) - before:
        default_registry.remove(name)


def test_plugin_report_records_the_environment(project: pytest.Pytester) -> None:
    from importlib.metadata import version

    result = project.runpytest("--gradcheck", "--gradcheck-ops=fix3.*",
                               "--gradcheck-references=autograd", "--gradcheck-examples=2",
                               "--gradcheck-report=gc.json", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    environment = _environment(project.path / "gc.json")
    assert environment["gradcheck"] == version("gradcheck")
    assert environment["autograd"] == version("autograd")
    assert {"python", "numpy", "platform"} <= set(environment)


# -- 4. a marker's unknown op keeps its quotes -------------------------------------------


def test_marker_unknown_op_message_keeps_its_closing_quote() -> None:
    mark = pytest.mark.gradcheck(ops=["no.such.op"]).mark
    assert marker_problem(mark) == "unknown op 'no.such.op'"
    mark = pytest.mark.gradcheck(ops=["sinn"]).mark
    assert marker_problem(mark) == "unknown op 'sinn'; did you mean sin, sinh, sinc?"
