"""The interpreter ``make install`` makes .venv from: the first CPython 3.11 with venv among
the Makefile's candidates, else ``python3``; ``make PYTHON=...`` wins over both."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _make(*args: str) -> str:
    return subprocess.run(["make", "-s", "--no-print-directory", *args], cwd=ROOT,
                          check=True, capture_output=True, text=True).stdout


def _venv_command(*args: str) -> str:
    """The command the install recipe would run first (``make -n``: nothing is run)."""
    out = _make("-n", "install", "VENV=/nonexistent/venv", *args)
    return next(line for line in out.splitlines() if "-m venv" in line)


def _variable(name: str) -> str:
    """A Makefile variable's value, as make expands it."""
    return _make("--eval", "print-%: ; @:$(info $($*))", f"print-{name}").strip()


def _is_candidate(python: str) -> bool:
    """Whether ``python`` passes the Makefile's own probe (``PY_OK``)."""
    try:
        done = subprocess.run([python, "-c", _variable("PY_OK")], capture_output=True)
    except OSError:
        return False
    return done.returncode == 0


def test_a_missing_candidate_is_passed_over_for_the_next_that_works() -> None:
    here = sys.executable  # the test run's own interpreter
    chosen = _venv_command(f"PY_CANDIDATES=/no/such/python3.11 {here}")
    assert chosen.split()[0] == (here if _is_candidate(here) else "python3")


def test_no_working_candidate_falls_back_to_python3() -> None:
    chosen = _venv_command("PY_CANDIDATES=/no/such/python3.11 /no/such/python3")
    assert chosen.split()[0] == "python3"


def test_python_given_on_the_command_line_wins() -> None:
    assert _venv_command("PYTHON=/opt/some/python").split()[0] == "/opt/some/python"


def test_the_default_is_the_first_working_candidate() -> None:
    candidates = _variable("PY_CANDIDATES").split()
    assert candidates[0] == "/usr/bin/python3.11"  # the distribution's build comes first
    expected = next((p for p in candidates if _is_candidate(p)), "python3")
    assert _venv_command().split()[0] == expected
