"""Packaging: the built wheel, installed into a scratch environment, runs a shipped suite by
name from any folder (the suites travel inside the package)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest

import gradcheck

ROOT = Path(__file__).resolve().parents[1]


def _run(*args: str | Path, cwd: Path) -> str:
    done = subprocess.run([str(a) for a in args], cwd=cwd, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, f"{args}: {done.stdout}\n{done.stderr}"
    return done.stdout


@pytest.mark.slow
def test_wheel_installs_and_runs_a_suite_by_name(tmp_path: Path) -> None:
    # Build from a copy of the sources, so the working tree gets no build/ or egg-info.
    source = tmp_path / "source"
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(ROOT / "gradcheck", source / "gradcheck", ignore=ignore)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    wheels = tmp_path / "wheels"
    _run(sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
         "--wheel-dir", wheels, source, cwd=tmp_path)
    (wheel,) = wheels.glob("gradcheck-*.whl")

    # A scratch environment whose dependencies (numpy, hypothesis, ...) come from this one:
    # a .pth line adds this environment's site-packages to the path without running its
    # .pth files, so the editable install of the working tree stays out.
    scratch = tmp_path / "venv"
    venv.create(scratch, with_pip=False)
    python = scratch / "bin" / "python"
    site = _run(python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])",
                cwd=tmp_path).strip()
    (Path(site) / "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    _run(sys.executable, "-m", "pip", "--python", python, "install", "--quiet", "--no-deps",
         "--no-index", wheel, cwd=tmp_path)

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    where = _run(python, "-c", "import gradcheck; print(gradcheck.__file__)", cwd=elsewhere)
    assert where.startswith(site)  # the installed wheel, not the working tree
    gradcheck_cli = scratch / "bin" / "gradcheck"
    assert _run(gradcheck_cli, "--version", cwd=elsewhere).strip() == \
        f"gradcheck {gradcheck.__version__}"
    _run(gradcheck_cli, "run", "--suite", "smoke", "--op", "sin", "--examples", "1",
         "--json", "out.json", "--no-html", cwd=elsewhere)
    results = json.loads((elsewhere / "out.json").read_text())
    assert results["config"]["suite"] == "smoke"
    assert [r["op"] for r in results["reports"]] == ["sin"]
    assert sorted(p.name for p in elsewhere.iterdir()) == ["out.json"]
