"""dtypes= naming a complex dtype is a request to check complex values: a check that met none
says so (an error when only complex dtypes were asked: nothing asked was checked), and an op
drawing its own complex_inputs is not checked at real and complex values under one name."""

from __future__ import annotations

import numpy as np
import pytest

import gradcheck as gc
import gradcheck.numpy as gnp


def test_complex_asked_for_a_real_only_op_is_never_a_pass() -> None:
    report = gc.check("nn.relu", dtypes=["complex128"], examples=2)
    assert not report.passed
    [f] = [f for f in report.findings if f.details.get("reason") == "no complex example"]
    assert f.kind == "error" and "nn.relu" in f.message and "complex_inputs" in f.message


def test_complex_asked_for_a_real_function_names_the_fix() -> None:
    report = gc.check(lambda x: gnp.sin(x), inputs=["real"], dtypes=["complex128"],
                      examples=2)
    assert not report.passed
    assert any("inputs=['complex']" in f.message for f in report.failures)


def test_complex_beside_real_for_a_real_only_op_is_said_not_failed() -> None:
    report = gc.check("nn.relu", dtypes=["float64", "complex128"], examples=2)
    assert report.passed
    assert [f.kind for f in report.findings
            if f.details.get("reason") == "no complex example"] == ["unsupported"]


def test_real_in_complex_out_counts_as_complex() -> None:
    report = gc.check("rfft", dtypes=["complex128"], examples=2)
    assert report.passed and report.stats["complex_examples"]["float64"] >= 1
    assert not any(f.details.get("reason") == "no complex example" for f in report.findings)


def test_complex_inputs_given_count_as_complex() -> None:
    report = gc.check(lambda z: gnp.exp(z), inputs=["complex"], dtypes=["complex128"],
                      examples=2)
    assert report.passed and report.stats["complex_examples"]["float64"] == 2


def test_real_and_complex_dtypes_of_an_op_with_complex_inputs_are_refused() -> None:
    with pytest.raises(ValueError, match=r"exp: dtypes= mixes real \(float64\) and complex"):
        gc.check("exp", dtypes=["float64", np.complex128])


def test_real_dtypes_report_no_complex_count() -> None:
    report = gc.check("exp", dtypes=["float64"], examples=2)
    assert "complex_examples" not in report.stats and report.passed
