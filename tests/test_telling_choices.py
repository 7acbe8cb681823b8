"""A parameter choice counts as checked only at an ordinary magnitude: at 1e3 elu's alpha
scales e^-1000 = 0, so a derivative ignoring alpha passed in full mode whenever its choice
fell on the 1e3 stratum alone."""

from __future__ import annotations

import numpy as np
import pytest

import gradcheck as gc
import gradcheck.numpy as gnp
from gradcheck.ops.elementwise import exp


def _elu_ignoring_alpha() -> gc.Op:
    base = gc.default_registry.get("nn.elu")
    meta = {k: v for k, v in base.meta.items() if k not in ("equivalents", "grad_op")}

    def deriv(w: object, x: object) -> object:  # alpha * exp(x) where x < 0, with alpha 1
        return gnp.where(x > 0, w, w * exp(gnp.minimum(x, 0)))

    return gc.define_op("nn.elu", base.forward,
                        lambda g, out, x, alpha=1.0: deriv(g, x),
                        lambda ts, out, x, alpha=1.0: deriv(ts[0], x),
                        family="nn", register=False, **meta)


def test_the_planted_rule_is_really_wrong() -> None:
    bad = _elu_ignoring_alpha()
    _, pull = gc.vjp(lambda t: bad(t, alpha=0.5), np.array([-1.0]))
    assert abs(float(np.asarray(pull(np.ones(1))[0])[0]) - 0.5 * np.exp(-1.0)) > 0.1


@pytest.mark.parametrize("seed", range(6))
def test_full_mode_finds_a_derivative_ignoring_a_choice(seed: int) -> None:
    assert not gc.check(_elu_ignoring_alpha(), seed=seed, mode="full").passed


def test_the_right_elu_still_passes_in_full_mode() -> None:
    assert gc.check("nn.elu", seed=1, mode="full").passed
