"""The README's migration examples (torch.autograd.gradcheck / gradgradcheck /
jax.test_util.check_grads onto gradcheck calls) run as written, and check(..., atol=, rtol=,
eps=) overrides reach the tolerances and the numeric step and show in every report."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

import gradcheck
from gradcheck.checker.api import format_failure
from gradcheck.checker.numeric import directional_derivative
from gradcheck.checker.tolerances import Overrides, Tolerances, current_overrides, overridden
from gradcheck.render import render_html

README = Path(__file__).resolve().parent.parent / "README.md"
HEADING = "### Migrating from torch.autograd.gradcheck"


def _examples() -> list[str]:
    text = README.read_text()
    assert HEADING in text, "the README's migration section is missing"
    section = text.split(HEADING, 1)[1]
    section = re.split(r"\n#{2,3} ", section, maxsplit=1)[0]
    return re.findall(r"```python\n(.*?)```", section, flags=re.S)


def test_the_readme_has_a_torch_and_a_jax_example() -> None:
    blocks = _examples()
    assert len(blocks) == 2
    assert "torch.autograd.gradgradcheck" in blocks[0] and "check_grads" in blocks[1]


# torch.autograd.gradcheck itself calls torch.jit.script, which torch 2.13 deprecates
@pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated:DeprecationWarning")
@pytest.mark.parametrize("index", [pytest.param(0, marks=pytest.mark.torch, id="torch"),
                                   pytest.param(1, marks=pytest.mark.jax, id="jax")])
def test_readme_example_runs(index: int) -> None:
    block = _examples()[index]
    framework = "torch" if index == 0 else "jax"
    pytest.importorskip(framework, reason=f"needs gradcheck[{framework}]")
    exec(compile(block, f"README migration example {index + 1}", "exec"), {})  # noqa: S102


# -- overrides ------------------------------------------------------------------------------
@pytest.mark.torch
def test_atol_and_rtol_reach_the_comparisons() -> None:
    torch = pytest.importorskip("torch", reason="needs gradcheck[torch]")

    def hardsigmoid(x):  # torch's float64 backward uses 1/6 rounded to float32
        return torch.nn.functional.hardsigmoid(x)

    inputs = [{"domain": "interval", "low": -2.5, "high": 2.5}]
    paths = ["vjp", "jvp"]
    strict = gradcheck.check(hardsigmoid, inputs=inputs, paths=paths, examples=2)
    assert [f.kind for f in strict.failures] and {f.kind for f in strict.failures} == {"mismatch"}
    # an error of ~5e-9 on a derivative of 1/6: inside atol=1e-7 and inside rtol=1e-6
    for given in ({"atol": 1e-7}, {"rtol": 1e-6}):
        loose = gradcheck.check(hardsigmoid, inputs=inputs, paths=paths, examples=2, **given)
        assert loose.passed, format_failure(loose)
        assert loose.tolerance_overrides == given


def test_eps_is_the_numeric_step_only_inside_the_call() -> None:
    f = np.sin
    with overridden(Overrides(eps=0.125)):
        assert directional_derivative(f, [np.array([0.3])], 0, [np.array([1.0])]).step == 0.125
        assert Tolerances("float64").overrides.eps == 0.125
    assert directional_derivative(f, [np.array([0.3])], 0, [np.array([1.0])]).step != 0.125
    assert current_overrides() == Overrides()


def test_overrides_show_in_json_html_and_the_terminal_message() -> None:
    report = gradcheck.check("sin", examples=2, atol=1e-9, eps=1e-4)
    assert json.loads(report.to_json())["tolerance_overrides"] == {"atol": 1e-9, "eps": 1e-4}
    assert report.overrides_text == "tolerance overridden: atol=1e-09, eps=0.0001"
    assert gradcheck.Report.from_dict(report.to_dict()).tolerance_overrides == \
        report.tolerance_overrides
    report.findings.append(gradcheck.Finding("sin", "vjp", "numeric", "mismatch", "made up"))
    assert "tolerance overridden: atol=1e-09, eps=0.0001" in format_failure(report)
    assert "tolerance overridden: atol=1e-09, eps=0.0001" in render_html(
        gradcheck.Results(reports=[report]))
    plain = gradcheck.check("sin", examples=2)
    assert plain.tolerance_overrides == {} and plain.overrides_text == ""


@pytest.mark.parametrize("key", ["atol", "rtol", "eps"])
@pytest.mark.parametrize("value", [0, -1e-3, float("nan"), float("inf")])
def test_bad_overrides_are_clear_errors(key: str, value: float) -> None:
    with pytest.raises(ValueError, match=f"gradcheck.check: {key} must be a positive finite "
                                         f"number, got {value!r}"):
        gradcheck.check("sin", **{key: value})


def test_an_override_that_is_not_a_number_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="atol must be a positive finite number, got str"):
        gradcheck.check("sin", atol="1e-5")
    with pytest.raises(TypeError, match="rtol .* got bool"):
        gradcheck.check("sin", rtol=True)
