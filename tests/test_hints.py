"""Hints worked out from what went wrong, not fixed strings."""

from __future__ import annotations

import pytest

import gradcheck as gc
from gradcheck.cli import main
from gradcheck.cli.suites import suite_names


def test_an_unchecked_axis_choice_names_the_dimensions_it_needs() -> None:
    report = gc.check("sum", inputs=["real"], params={"axis": [0, 5]}, examples=2)
    [message] = {f.message.split(" in float")[1].split(":", 1)[1] for f in report.failures}
    assert "inputs of 6 dimensions or more, such as '(a,b,c,d,e,f)'" in message
    # and following the hint works
    assert gc.check("sum", inputs=["real"], params={"axis": [0, 5]}, examples=2,
                    shapes="(a,b,c,d,e,f)").passed


def test_run_help_lists_every_shipped_suite(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--help"]) == 0
    flat = " ".join(capsys.readouterr().out.split())
    assert len(suite_names()) >= 5
    assert f"({', '.join(suite_names())})" in flat


@pytest.mark.parametrize("approximate", ["none", "tanh", 1])
def test_gelu_refuses_an_approximate_that_is_not_a_bool(approximate: object) -> None:
    import numpy as np

    with pytest.raises(TypeError, match="nn.gelu: approximate must be True or False"):
        gc.nn.gelu(np.ones(2), approximate=approximate)


def test_a_negative_seed_is_refused_as_the_cli_refuses_it() -> None:
    with pytest.raises(ValueError, match="seed must be a non-negative integer, got -1"):
        gc.check("tanh", seed=-1)
