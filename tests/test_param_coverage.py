"""Every choice of every explored parameter is checked, in fast and full mode: a rule wrong
for one parameter value only (an axis, a norm, the last of four choices) is found at every
seed.  Choices are taken in turn by the strata; a choice none of them took on an example
with elements (a shape-dependent axis on a 0-d stratum, the 4th choice of a second
parameter) gets a stratum of its own."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import gradcheck as gc
import gradcheck.numpy as gnp
from gradcheck.checker.api import _strata, unmet_choices
from gradcheck.checker.targets import OpTarget


def _axes(shapes: list[tuple[int, ...]]) -> list[Any]:
    nd = len(shapes[0])
    return [None] + ([0, -1] if nd else []) + ([(0, nd - 1), 1] if nd >= 2 else [])


def _mean_wrong_for_tuple_axes() -> Any:
    def vjp(g: Any, out: Any, x: Any, axis: Any = None) -> Any:
        n = np.shape(x)[axis] if isinstance(axis, int) else np.size(x)  # wrong for tuples
        ge = g if axis is None else gnp.expand_dims(g, axis)
        return (gnp.broadcast_to(ge, np.shape(x)) / n,)

    return gc.define_op("mean_tuple_bug", lambda x, axis=None: np.mean(x, axis=axis)
                        if np.size(x) else np.sum(x, axis=axis),
                        vjp=vjp, linear=True, params={"axis": _axes}, register=False)


def _wrong_for_the_last_choice_of_b() -> Any:
    return gc.define_op(
        "radix_bug", lambda x, a=0, b=0: np.sin(x) * (1 + a + b),
        vjp=lambda g, out, x, a=0, b=0: (g * gnp.cos(x) * ((1 + a + b) if b != 3 else 1 + a),),
        transpose_jvp_reason="the test's", params={"a": [0, 1, 2], "b": [0, 1, 2, 3]},
        register=False)


@pytest.mark.parametrize("seed", range(5))
def test_a_bug_at_a_shape_dependent_choice_is_found_at_every_seed(seed: int) -> None:
    assert not gc.check(_mean_wrong_for_tuple_axes(), seed=seed).passed


@pytest.mark.parametrize("mode", ["fast", "full"])
@pytest.mark.parametrize("seed", range(3))
def test_a_bug_at_the_last_choice_of_a_second_parameter_is_found(mode: str, seed: int) -> None:
    report = gc.check(_wrong_for_the_last_choice_of_b(), seed=seed, mode=mode)
    assert {f.counterexample["params"]["b"] for f in report.failures} == {3}


@pytest.mark.parametrize("name", ["sum", "prod", "nn.softmax", "tile", "rfft",
                                  "linalg.solve_triangular"])
@pytest.mark.parametrize("count", [3, 8])
def test_the_registrys_strata_take_every_choice(name: str, count: int) -> None:
    # count 3: full mode's strata; 8: fast mode's
    target = OpTarget(gc.default_registry.get(name))
    found = _strata(target, "float64", count, seed=0)
    assert unmet_choices(target.param_space(), found) == []


@pytest.mark.parametrize("name", ["reshape", "broadcast_to"])
@pytest.mark.parametrize("seed", [0, 1])
def test_choices_offered_at_one_input_shape_only_are_taken(name: str, seed: int) -> None:
    # reshape's target shapes (the reversed shape, a leading 1) exist for one input shape
    # each: a random redraw of the shapes seldom offers them again (16 draws often found
    # none), so later draws take the shapes of the example that offered the choice
    target = OpTarget(gc.default_registry.get(name))
    found = _strata(target, "float64", 8, seed)
    assert unmet_choices(target.param_space(), found) == []


def test_the_seed_turns_the_strata_choices() -> None:
    target = OpTarget(gc.default_registry.get("sum"))
    at = {seed: [e.params for e in _strata(target, "float64", 3, seed)] for seed in (0, 1)}
    assert at[0] != at[1]
    assert at[0] == [e.params for e in _strata(target, "float64", 3, 0)]  # deterministic


def test_correct_ops_with_many_choices_still_pass() -> None:
    assert gc.check(lambda x: gnp.mean(x, axis=(0, -1)) if np.ndim(x) >= 2 else gnp.mean(x),
                    inputs=["real"], seed=0).passed
    assert gc.check("sum", params={"axis": _axes, "keepdims": [False, True]}, seed=0).passed
