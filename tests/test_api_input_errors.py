"""A new user's mistakes in check()'s arguments are refused up front, naming the argument:
a seed that is not an integer, a parameter name the op or function does not take, a shape
signature with a missing comma."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import gradcheck as gc
import gradcheck.numpy as gnp


@pytest.mark.parametrize("seed", ["x", None, 1.5, True])
def test_a_seed_that_is_not_an_integer_is_refused(seed: Any) -> None:
    with pytest.raises(TypeError, match=r"seed must be an integer, got .*"):
        gc.check("sin", seed=seed, examples=1)


def test_numpy_integer_seeds_are_seeds() -> None:
    a = gc.check("sin", seed=np.int64(3), examples=1)
    b = gc.check("sin", seed=3, examples=1)
    assert a.to_json() == b.to_json()


def test_an_unknown_op_parameter_is_refused_with_the_nearest_name() -> None:
    with pytest.raises(ValueError, match=r"op 'sum', params: unknown parameter 'axsi' "
                                         r"\(its parameters: axis.*did you mean 'axis'\?"):
        gc.check("sum", params={"axsi": 0})


def test_an_unknown_function_parameter_is_refused() -> None:
    def f(x: Any, scale: float = 1.0, *, mode: str = "a") -> Any:
        return gnp.sin(x) * scale

    with pytest.raises(ValueError, match=r"function .*f, params: unknown parameter 'scal' .*"
                                         r"did you mean 'scale'\?"):
        gc.check(f, inputs=["real"], params={"scal": 2.0})
    # keyword-only parameters and choices are parameters too
    assert gc.check(f, inputs=["real"], params={"mode": "a", "scale": [1.0, 2.0]},
                    examples=2).passed
    # a function taking **kwargs takes any name
    assert gc.check(lambda x, **k: gnp.sin(x), inputs=["real"], params={"zzz": 1},
                    examples=1).passed


def test_declared_parameters_still_pass() -> None:
    assert gc.check("sum", params={"axis": [0, None], "keepdims": True}, examples=2,
                    seed=0).passed


@pytest.mark.parametrize("shapes", ["(a b)", "(..., m n)"])
def test_a_missing_comma_in_a_shape_signature_is_refused(shapes: str) -> None:
    with pytest.raises(ValueError, match=r"dimension names are separated by commas"):
        gc.check(lambda a: gnp.sum(a), inputs=["real"], shapes=shapes)


def test_spaces_around_names_are_allowed() -> None:
    assert gc.check(lambda a, b: gnp.matmul(a, b), inputs=["real", "real"],
                    shapes="( ..., m, k ), (..., k ,n)", examples=2, seed=0).passed


def test_ops_whose_params_are_drawn_by_a_callable_take_their_own_params() -> None:
    # var, std, linalg.norm, the nn ops: meta["params"] is a callable drawing them all
    assert gc.check("var", params={"axis": 0}, examples=2, seed=0).passed
    with pytest.raises(ValueError, match=r"op 'var', params: unknown parameter 'axsi'"):
        gc.check("var", params={"axsi": 0})
