"""Reports written through symlinks and into pipes (never replacing either); nan, inf and huge
timeouts; a [[function]] target whose module raises at import; a suite that is not UTF-8; a
row's own seed under suite-level seeds; results files with an unknown finding kind or a bad
seed."""

from __future__ import annotations

import json
import math
import os
import stat
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

import gradcheck as gc
from gradcheck.checker.timeout import time_limit
from gradcheck.cli import main
from gradcheck.cli.suites import load_suite
from gradcheck.render import atomic_write_text

SMALL = ["--examples", "2", "--references", "numeric", "--dtype", "float64",
         "--paths", "vjp"]


@pytest.fixture
def clean_path(workdir: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``workdir``, with ``sys.path`` restored afterwards (a run puts the cwd on it)."""
    monkeypatch.setattr(sys, "path", list(sys.path))
    return workdir


class FifoReader:
    """A FIFO at ``path`` and a thread reading it whole, as ``| head`` would read a pipe."""

    def __init__(self, path: Path) -> None:
        os.mkfifo(path)
        self.path, self.data = path, b""
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        with open(self.path, "rb") as handle:
            self.data = handle.read()

    def text(self) -> str:
        self.thread.join(timeout=60)
        assert not self.thread.is_alive(), "the FIFO was never written and closed"
        return self.data.decode()


# -- 2. symlinks and pipes ----------------------------------------------------------------


def test_atomic_write_goes_through_a_symlink(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    target = elsewhere / "target.json"
    target.write_text("old")
    target.chmod(0o640)
    link = tmp_path / "out.json"
    link.symlink_to(target)
    atomic_write_text(link, "new")
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert target.read_text() == "new"
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert sorted(p.name for p in elsewhere.iterdir()) == ["target.json"]  # no temp left
    assert sorted(p.name for p in tmp_path.iterdir()) == ["elsewhere", "out.json"]


def test_atomic_write_through_a_dangling_symlink_creates_its_target(tmp_path: Path) -> None:
    link = tmp_path / "out.json"
    link.symlink_to("made.json")
    atomic_write_text(link, "x")
    assert link.is_symlink() and (tmp_path / "made.json").read_text() == "x"


def test_interrupted_write_through_a_symlink_keeps_the_old_target(tmp_path: Path) -> None:
    target = tmp_path / "target.json"
    target.write_text("old")
    link = tmp_path / "out.json"
    link.symlink_to(target)

    def chunks() -> Iterator[str]:
        yield "half"
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        atomic_write_text(link, chunks())
    assert link.is_symlink() and target.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.json", "target.json"]


def test_atomic_write_into_a_fifo_writes_in_place(tmp_path: Path) -> None:
    reader = FifoReader(tmp_path / "pipe")
    link = tmp_path / "link"
    link.symlink_to(reader.path)  # as /dev/stdout -> /proc/self/fd/1 -> a pipe
    atomic_write_text(link, iter(["a\n", "b\n"]))
    assert reader.text() == "a\nb\n"
    assert stat.S_ISFIFO(reader.path.stat().st_mode) and link.is_symlink()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link", "pipe"]


def test_atomic_write_refuses_a_directory(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "d")
    for path in (tmp_path / "d", tmp_path / "link"):
        with pytest.raises(IsADirectoryError):
            atomic_write_text(path, "x")
    assert list((tmp_path / "d").iterdir()) == []


def test_run_writes_json_through_a_symlink(workdir: Path) -> None:
    (workdir / "target.json").write_text("old")
    (workdir / "out.json").symlink_to("target.json")
    assert main(["run", "--op", "sin", *SMALL, "--json", "out.json", "--no-html"]) == 0
    assert (workdir / "out.json").is_symlink()
    assert json.loads((workdir / "target.json").read_text())["reports"][0]["op"] == "sin"


def test_run_writes_json_into_a_pipe_and_the_page_to_a_file(workdir: Path) -> None:
    reader = FifoReader(workdir / "pipe")
    (workdir / "stdout_link").symlink_to(reader.path)
    assert main(["run", "--op", "sin", *SMALL, "--json", "stdout_link",
                 "--html", "page.html"]) == 0
    assert json.loads(reader.text())["reports"][0]["op"] == "sin"
    assert stat.S_ISFIFO(reader.path.stat().st_mode)
    assert (workdir / "stdout_link").is_symlink()
    assert (workdir / "page.html").read_text().startswith("<!DOCTYPE html>")


def test_run_refuses_a_symlink_to_a_directory(workdir: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    (workdir / "d").mkdir()
    (workdir / "out.json").symlink_to("d")
    assert main(["run", "--op", "sin", *SMALL, "--json", "out.json", "--no-html"]) == 2
    assert "--json out.json: is a directory" in capsys.readouterr().err


def test_run_refuses_a_symlink_loop(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (workdir / "a.json").symlink_to("b.json")
    (workdir / "b.json").symlink_to("a.json")
    assert main(["run", "--op", "sin", *SMALL, "--json", "a.json", "--no-html"]) == 2
    assert "--json a.json: cannot write there" in capsys.readouterr().err


# -- 4. timeouts -------------------------------------------------------------------------


@pytest.mark.parametrize("seconds", [math.inf, 1e10, 1e300])
def test_time_limit_longer_than_the_timer_is_no_limit(seconds: float) -> None:
    with time_limit(seconds):
        ran = True
    assert ran


def test_time_limit_refuses_nan() -> None:
    with pytest.raises(ValueError, match="timeout"), time_limit(math.nan):
        pass


@pytest.mark.parametrize("seconds", [math.inf, 1e10])
def test_check_with_a_huge_timeout_passes(seconds: float) -> None:
    report = gc.check("sin", examples=2, paths=["vjp"], dtypes=["float64"], timeout=seconds)
    assert report.passed, [f.message for f in report.findings]


def test_check_refuses_a_nan_timeout() -> None:
    with pytest.raises(ValueError, match="timeout"):
        gc.check("sin", timeout=math.nan)


def test_cli_huge_timeout_is_no_limit(workdir: Path) -> None:
    assert main(["run", "--op", "sin", *SMALL, "--no-report", "--timeout", "1e10"]) == 0


@pytest.mark.parametrize(("value", "code"), [("nan", 2), ("inf", 0), ("1e10", 0)])
def test_suite_timeout(workdir: Path, capsys: pytest.CaptureFixture[str],
                       value: str, code: int) -> None:
    (workdir / "s.toml").write_text(f'[suite]\nops = ["sin"]\nexamples = 2\npaths = ["vjp"]\n'
                                    f'dtypes = ["float64"]\ntimeout = {value}\n')
    assert main(["run", "--suite", "s.toml", "--no-report"]) == code
    if code == 2:
        assert "s.toml: [suite]: timeout must be a positive number" in capsys.readouterr().err


# -- 5. a [[function]] target whose module raises at import ------------------------------


@pytest.mark.parametrize(("source", "error"), [
    ('raise RuntimeError("boom at import")\n', "RuntimeError: boom at import"),
    ("def f(:\n", "SyntaxError"),
    ("import sys\nsys.exit(3)\n", "sys.exit(3)"),
])
def test_function_target_whose_module_raises_is_a_usage_error(
        clean_path: Path, capsys: pytest.CaptureFixture[str], source: str, error: str) -> None:
    (clean_path / "raising_mod_fixes4.py").write_text(source)
    (clean_path / "s.toml").write_text('[suite]\nexamples = 2\n[[function]]\n'
                                       'target = "raising_mod_fixes4:f"\ninputs = ["real"]\n')
    assert main(["run", "--suite", "s.toml", "--no-report"]) == 2
    err = capsys.readouterr().err
    assert "[[function]] 'raising_mod_fixes4:f'" in err and error in err
    assert "Traceback" not in err


# -- 6. a suite that is not UTF-8 ---------------------------------------------------------


def test_suite_not_utf8_is_a_usage_error(workdir: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    (workdir / "latin.toml").write_bytes(b'\xff\xfe[suite]\nops = ["sin"]\n')
    assert main(["run", "--suite", "latin.toml", "--no-report"]) == 2
    assert "latin.toml: not a UTF-8 text file" in capsys.readouterr().err


# -- 7. a row's own seed under suite-level seeds -------------------------------------------


SEED_ROW = ('[suite]\nops = ["sin", "cos"]\nexamples = 2\npaths = ["vjp"]\n'
            'dtypes = ["float64"]\nseeds = "0:2"\n'
            '[[op]]\nname = "cos"\nseed = 7\nreason = "pin cos to seed 7"\n'
            '[[function]]\ntarget = "gnp.tanh"\ninputs = ["real"]\nseed = 5\n'
            'reason = "pinned"\n')


def test_rows_own_seed_wins_over_suite_seeds(workdir: Path) -> None:
    (workdir / "s.toml").write_text(SEED_ROW)
    checked, _ = load_suite(workdir / "s.toml").plan(base={"seeds": [3, 4]})
    settings = {p.name: p.settings for p in checked}
    assert settings["sin"]["seeds"] == [3, 4]
    for name, seed in (("cos", 7), ("gnp.tanh", 5)):
        assert settings[name]["seed"] == seed and "seeds" not in settings[name]


def test_run_checks_a_pinned_row_at_its_seed_only(workdir: Path) -> None:
    (workdir / "s.toml").write_text(SEED_ROW)
    assert main(["run", "--suite", "s.toml", "--json", "r.json", "--no-html"]) == 0
    data = json.loads((workdir / "r.json").read_text())
    assert [(r["op"], r["seed"]) for r in data["reports"]] == [
        ("cos", 7), ("gnp.tanh", 5), ("sin", 0), ("sin", 1)]
    assert "seeds" not in data["config"]["exceptions"]["cos"]["settings"]


# -- 8. results files with an unknown finding kind or a bad seed ---------------------------


@pytest.mark.parametrize(("change", "words"), [
    ({"findings": [{"kind": "bogus", "op": "sin", "path": "vjp", "reference": "numeric",
                    "message": "x"}]}, "finding 1: unknown kind 'bogus'"),
    ({"seed": "x"}, "seed must be a non-negative integer, got 'x'"),
    ({"seed": 1.5}, "seed must be a non-negative integer, got 1.5"),
])
def test_report_on_a_malformed_results_file_is_a_usage_error(
        workdir: Path, capsys: pytest.CaptureFixture[str], change: dict[str, object],
        words: str) -> None:
    assert main(["run", "--op", "sin", *SMALL, "--json", "good.json", "--no-html"]) == 0
    data = json.loads((workdir / "good.json").read_text())
    data["reports"][0].update(change)
    (workdir / "bad.json").write_text(json.dumps(data))
    capsys.readouterr()
    assert main(["report", "bad.json", "--html", "bad.html", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "bad.json is not a gradcheck results file: report 1 ('sin'): " + words in err
    assert not (workdir / "bad.html").exists()
