"""check()'s own handling of framework functions: ``framework=`` when detection cannot tell,
and dtypes a framework function is not checked in (said, never an error of every row)."""

from __future__ import annotations

import numpy as np
import pytest

import gradcheck.numpy as gnp
from gradcheck.checker import check

pytestmark = pytest.mark.torch


def test_framework_names_the_framework_of_a_function_detection_cannot_tell() -> None:
    import torch

    def f(x: object) -> object:  # tensor methods only, domains as inputs: nothing to go by
        return x.sin() * 2  # type: ignore[attr-defined]

    report = check(f, inputs=["real"], framework="torch", examples=2)
    assert report.family == "torch" and report.passed, report.failures
    # torch tensors as inputs say it too
    given = check(f, inputs=[torch.linspace(-1, 1, 5, dtype=torch.float64)], examples=1)
    assert given.family == "torch" and given.passed


def test_framework_is_refused_for_an_op() -> None:
    with pytest.raises(TypeError, match="framework='torch' names the framework of a function"):
        check("sin", framework="torch")


def test_a_dtype_a_framework_function_is_not_checked_in_is_said_not_failed() -> None:
    import torch
    report = check(torch.sin, inputs=["real"], dtypes=["float64", "float32"], examples=2)
    assert report.dtypes == ["float64"] and report.passed
    (said,) = report.findings
    assert said.kind == "unsupported" and said.details["dtype"] == "float32"
    assert "checked in float64 only" in said.message
    with pytest.raises(ValueError, match="checked in float64 only"):
        check(torch.sin, inputs=["real"], dtypes="float32")


def test_a_gradcheck_function_keeps_both_dtypes() -> None:
    report = check(lambda x: gnp.sin(x) * np.float64(2), inputs=["real"], examples=2)
    assert report.dtypes == ["float64", "float32"] and report.passed
