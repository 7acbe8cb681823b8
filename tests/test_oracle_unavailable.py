"""A missing framework is a status and an Unavailable error, never a crash at import."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import gradcheck
from gradcheck.oracles import (
    REFERENCE_NAMES,
    Unavailable,
    available_references,
    get_oracle,
)


def _identity(x: object) -> object:
    return x


@pytest.mark.parametrize("name", REFERENCE_NAMES)
def test_unimportable_framework_reports_unavailable(monkeypatch: pytest.MonkeyPatch,
                                                    name: str) -> None:
    # None in sys.modules makes `import <name>` raise ImportError even if it was imported.
    monkeypatch.setitem(sys.modules, name, None)
    oracle = get_oracle(name)  # a fresh oracle: no cached import to reset
    status = oracle.status()
    assert status is not None
    assert status.startswith(f"unavailable: {name} cannot be imported")
    assert status.endswith(f"install with: pip install gradcheck[{name}]")
    x, t = [np.ones(2)], [np.ones(2)]
    calls = [lambda: oracle.vjp(_identity, x, 0, np.ones(2)),
             lambda: oracle.jvp(_identity, x, 0, t),
             lambda: oracle.double_vjp(_identity, x, 0, t, np.ones(2)),
             lambda: oracle.hvp(_identity, x, 0, t, np.ones(2))]
    for call in calls:
        with pytest.raises(Unavailable, match=rf"pip install gradcheck\[{name}\]"):
            call()


def test_available_references_lists_every_status(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in REFERENCE_NAMES:
        monkeypatch.setitem(sys.modules, name, None)
    statuses = available_references()
    assert list(statuses) == ["autograd", "tensorflow", "torch", "jax"]
    for name, status in statuses.items():
        assert status is not None and f"gradcheck[{name}]" in status


def test_tensorflow_reference_is_unavailable_without_tensorflow(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # TensorFlow's double-VJP (and its leak verdicts) through the checker: every path of the
    # tensorflow reference is an "unavailable" cell with the install hint, the rest is checked.
    monkeypatch.setitem(sys.modules, "tensorflow", None)
    report = gradcheck.check("sin", references=["numeric", "tensorflow"], examples=1,
                             paths=["vjp", "double_vjp"])
    for path in ("vjp", "double_vjp"):
        cell = report.cell(path, "tensorflow")
        assert cell is not None and cell.status == "unavailable"
        assert "pip install gradcheck[tensorflow]" in cell.note
    assert report.cell("double_vjp", "numeric").status == "pass"  # type: ignore[union-attr]
    assert report.passed


@pytest.mark.parametrize("name", ["torch", "jax"])
def test_torch_and_jax_references_are_unavailable_without_them(
        monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    # every path of the reference is an "unavailable" cell with the install hint; the rest
    # of the check runs
    monkeypatch.setitem(sys.modules, name, None)
    report = gradcheck.check("sin", references=["numeric", name], examples=1,
                             paths=["vjp", "double_vjp"])
    for path in ("vjp", "double_vjp"):
        cell = report.cell(path, name)
        assert cell is not None and cell.status == "unavailable"
        assert f"pip install gradcheck[{name}]" in cell.note
    assert report.cell("vjp", "numeric").status == "pass"  # type: ignore[union-attr]
    assert report.passed


def test_unknown_reference_names_the_known_ones() -> None:
    with pytest.raises(ValueError, match=r"unknown reference 'mxnet'; known references: "
                                         r"autograd, tensorflow, torch, jax"):
        get_oracle("mxnet")


def test_importing_gradcheck_oracles_imports_no_framework() -> None:
    # A fresh interpreter: this test process may already hold TensorFlow from other tests.
    code = ("import sys, gradcheck.oracles, gradcheck.oracles.tensorflow, "
            "gradcheck.oracles.autograd, gradcheck.oracles.torch, gradcheck.oracles.jax, "
            "gradcheck.oracles.targets; "
            "loaded = {'tensorflow', 'autograd', 'torch', 'jax'} & set(sys.modules); "
            "assert not loaded, loaded")
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.autograd
@pytest.mark.tensorflow
@pytest.mark.torch
@pytest.mark.jax
def test_installed_frameworks_are_available() -> None:
    assert available_references() == {"autograd": None, "tensorflow": None, "torch": None,
                                      "jax": None}
