"""The elementwise and special-function ops (gradcheck/ops/elementwise.py, special.py).

Each op is checked at a point of its declared input domain by tests/op_harness.py: forward
against numpy/scipy or a direct formula; every derivative path by ``gradcheck.check`` (against
the numeric reference and each other, in float64 and float32, and against autograd's declared
equivalent); 0-d and zero-size inputs; the gradient ops' linearity in their upstream
gradient.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import scipy.special as sp
from op_harness import (
    AutogradChecks,
    ElementwiseChecks,
    OpCase,
    PathChecks,
    check_against_tensorflow,
    import_tensorflow,
)

import gradcheck as gc
import gradcheck.numpy as gnp
import gradcheck.special as gsp
from gradcheck import default_registry
from gradcheck.ops import elementwise, special

CASES = [
    OpCase("negative", np.negative),
    OpCase("abs", np.abs),
    OpCase("sign", np.sign),
    OpCase("square", np.square),
    OpCase("exp", np.exp),
    OpCase("expm1", np.expm1),
    OpCase("exp2", np.exp2),
    OpCase("log", np.log),
    OpCase("log2", np.log2),
    OpCase("log10", np.log10),
    OpCase("log1p", np.log1p),
    OpCase("sqrt", np.sqrt),
    OpCase("sqrt_grad", lambda y, dy: dy / (2 * y), cotangent_arg=1),
    OpCase("rsqrt", lambda x: x ** -0.5),
    OpCase("rsqrt_grad", lambda y, dy: -dy * y ** 3 / 2, cotangent_arg=1),
    OpCase("reciprocal", lambda x: 1 / x),
    OpCase("reciprocal_grad", lambda y, dy: -dy * y ** 2, cotangent_arg=1),
    OpCase("cbrt", np.cbrt),
    OpCase("sin", np.sin),
    OpCase("cos", np.cos),
    OpCase("tan", np.tan),
    OpCase("arcsin", np.arcsin),
    OpCase("arccos", np.arccos),
    OpCase("arctan", np.arctan),
    OpCase("sinh", np.sinh),
    OpCase("cosh", np.cosh),
    OpCase("tanh", np.tanh),
    OpCase("tanh_grad", lambda y, dy: dy * (1 - y ** 2), cotangent_arg=1),
    OpCase("arcsinh", np.arcsinh),
    OpCase("arccosh", np.arccosh),
    OpCase("arctanh", np.arctanh),
    OpCase("sinc", lambda x: np.sin(np.pi * x) / (np.pi * x)),
    OpCase("floor", np.floor),
    OpCase("ceil", np.ceil),
    OpCase("round", np.round),
    OpCase("clip", np.clip, params={"a_min": -0.5, "a_max": 0.5}, label="clip"),
    OpCase("clip", lambda x, a_max: np.minimum(x, a_max), params={"a_max": 0.3},
           label="clip-upper"),
    OpCase("special.erf", sp.erf),
    OpCase("special.erfc", sp.erfc),
    OpCase("special.erfinv", sp.erfinv),
    OpCase("special.lgamma", lambda x: np.log(np.abs(sp.gamma(x)))),
    OpCase("special.digamma", sp.digamma),
    OpCase("special.polygamma", sp.polygamma),
    OpCase("special.spherical_jn", sp.spherical_jn, no_autograd="autograd has no spherical_jn"),
]


class TestElementwiseOps(PathChecks, AutogradChecks, ElementwiseChecks):
    cases = CASES


def test_every_op_of_the_modules_is_tested() -> None:
    # astype (a dtype cast, not a math function) is exercised by every float32 check
    names = {v.name for module in (elementwise, special) for v in vars(module).values()
             if isinstance(v, gc.Op) and v.name in default_registry and v.name != "astype"}
    assert names == {c.name for c in CASES}


@pytest.mark.parametrize("name", ["sqrt", "rsqrt", "reciprocal", "tanh"])
def test_gradient_op_metadata_points_both_ways(name: str) -> None:
    op = default_registry.get(name)
    grad_op = default_registry.get(op.meta["grad_op"])
    assert grad_op.meta["grad_of"] == op.name
    assert grad_op.family == op.family


def test_exports() -> None:
    assert gnp.abs is gnp.absolute and gnp.round is gnp.around
    assert gsp.gammaln is gsp.lgamma and gsp.psi is gsp.digamma
    assert gnp.sinc.name == "sinc" and gsp.erfinv.name == "special.erfinv"
    assert default_registry.get("lgamma") is gsp.lgamma


def test_only_arctan_uses_the_transpose_fallback() -> None:
    ops = [op for op in default_registry if op.family in ("elementwise", "special")]
    fallback = [op.name for op in ops if not op.has_native_jvp]
    assert fallback == ["arctan"]
    assert default_registry.get("arctan").transpose_jvp_reason


def test_sinc_derivatives_at_zero() -> None:
    x = np.array([0.0, 1e-9, -1e-9])
    _, vjp_fn = gc.vjp(gnp.sinc, x)
    np.testing.assert_allclose(vjp_fn(np.ones(3))[0], -np.pi ** 2 / 3 * x, atol=1e-15)
    (h,) = gc.hvp(gnp.sinc, (x,), (np.ones(3),))
    np.testing.assert_allclose(h, -np.pi ** 2 / 3, rtol=1e-12)


def test_digamma_twice_differentiable() -> None:
    x = np.array([0.5, 1.0, 3.0])
    (h,) = gc.hvp(gsp.digamma, (x,), (np.ones(3),))
    np.testing.assert_allclose(h, sp.polygamma(2, x), rtol=1e-12)
    (h,) = gc.hvp(gsp.lgamma, (x,), (np.ones(3),))
    np.testing.assert_allclose(h, sp.polygamma(1, x), rtol=1e-12)


def test_kinks_are_declared() -> None:
    assert default_registry.get("abs").meta["kinks"] == (0.0,)
    assert default_registry.get("floor").meta["kinks"] == "integers"
    assert default_registry.get("round").meta["kinks"] == "half_integers"
    kinks = default_registry.get("clip").meta["kinks"]
    assert kinks({"a_min": -0.5, "a_max": None}) == (-0.5,)
    assert kinks({"a_min": -1.0, "a_max": 2.0}) == (-1.0, 2.0)


def test_clip_gradient_passes_inside_only() -> None:
    x = np.array([-2.0, -0.4, 0.0, 0.4, 2.0])
    _, vjp_fn = gc.vjp(lambda t: gnp.clip(t, -0.5, 0.5), x)
    np.testing.assert_array_equal(vjp_fn(np.full(5, 3.0))[0], [0.0, 3.0, 3.0, 3.0, 0.0])


@pytest.mark.parametrize("kwargs, message", [
    ({}, "at least one of a_min and a_max"),
    ({"a_min": 1.0, "a_max": 0.0}, "greater than a_max"),
    ({"a_min": np.ones(3), "a_max": np.zeros(3)}, "greater than a_max"),
])
def test_clip_rejects_bad_bounds(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message) as info:
        gnp.clip(np.ones(3), **kwargs)
    assert "'clip'" in str(info.value)


@pytest.mark.parametrize("n", [-1, 1.5, True])
def test_polygamma_rejects_bad_orders(n: Any) -> None:
    with pytest.raises(ValueError, match="special.polygamma.*non-negative integers"):
        gsp.polygamma(n, np.ones(2))


@pytest.mark.tensorflow
@pytest.mark.parametrize("name, tf_name", [
    ("sqrt_grad", "SqrtGrad"), ("rsqrt_grad", "RsqrtGrad"),
    ("reciprocal_grad", "ReciprocalGrad"), ("tanh_grad", "TanhGrad"),
])
def test_gradient_ops_match_tensorflow(name: str, tf_name: str) -> None:
    tf = import_tensorflow()
    raw_op = getattr(tf.raw_ops, tf_name)
    case = next(c for c in CASES if c.name == name)
    check_against_tensorflow(case, lambda y, dy: raw_op(y=y, dy=dy))
