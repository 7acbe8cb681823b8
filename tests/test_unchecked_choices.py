"""A parameter choice whose every example is skipped (``axis=4`` where the drawn arrays have
at most 4 dimensions) was never checked: it gets strata of its own, and when none of them is
usable the check says so with an error finding.  Before, such a choice was skipped silently
and a rule wrong only there passed (found by a new user's exploration of the CLI)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import gradcheck as gc
import gradcheck.numpy as gnp


def _axsum(wrong_at: int) -> Any:
    def scale(axis: int) -> float:
        return 1.5 if axis == wrong_at else 1.0

    def vjp(g: Any, out: Any, x: Any, axis: int = 0) -> Any:
        if x.ndim == 0:
            return g * scale(axis)
        return gnp.broadcast_to(gnp.expand_dims(g, axis), x.shape) * scale(axis)

    def jvp(ts: Any, out: Any, x: Any, axis: int = 0) -> Any:
        return gnp.sum(ts[0], axis=axis) * scale(axis)

    return gc.define_op(f"axsum_wrong_at_{wrong_at}", lambda x, axis=0: np.sum(x, axis=axis),
                        vjp=vjp, jvp=jvp, params={"axis": [0, 4]}, register=False)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_choice_the_drawn_shapes_never_offer_is_an_error_not_a_pass(seed: int) -> None:
    report = gc.check(_axsum(wrong_at=4), seed=seed)
    assert not report.passed
    errors = [f for f in report.findings if f.kind == "error"]
    assert errors and all("axis=4 never checked" in f.message for f in errors)
    assert "give shapes=" in errors[0].message and "axis: an axis" in errors[0].message
    assert {f.details["dtype"] for f in errors} == set(report.dtypes)


def test_the_shapes_that_offer_the_choice_check_it() -> None:
    wrong = gc.check(_axsum(wrong_at=4), seed=0, shapes="(a,b,c,d,e)")
    assert {f.kind for f in wrong.findings} == {"mismatch"}
    assert gc.check(_axsum(wrong_at=-1), seed=0, shapes="(a,b,c,d,e)").passed


def test_a_given_point_that_does_not_fit_a_choice_says_so() -> None:
    report = gc.check(_axsum(wrong_at=-1), inputs=[np.ones((2, 3))], params={"axis": [0, 3]},
                      seed=0)
    assert not report.passed
    errors = [f for f in report.findings if f.kind == "error"]
    assert errors and all("axis=3 never checked" in f.message for f in errors)
    assert gc.check(_axsum(wrong_at=-1), inputs=[np.ones((2, 3))], params={"axis": [0, 1]},
                    seed=0).passed

