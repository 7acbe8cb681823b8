"""The activation ops (gradcheck/ops/activations.py), with the path checks of op_harness.py.

Besides the per-op checks: stability at |x| = 1e3 (no overflow, exact limits of the first
and second derivatives), the ELU family's double-VJP at x < 0 (the TensorFlow bug of the
forward-mode thread must not be in a shipped op), and TensorFlow's gradient ops as the
reference for argument order and for their own gradients.
"""

from __future__ import annotations

import math
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
    engine_vjp,
    import_tensorflow,
)

import gradcheck as gc
import gradcheck.nn as gnn
from gradcheck import default_registry
from gradcheck.engine.tensor import value_of
from gradcheck.ops import activations

SCALE = 1.0507009873554804934193349852946
ALPHA = 1.6732632423543772848170429916717
C = math.sqrt(2 / math.pi)


def _gelu_tanh(x: Any, xp: Any = np) -> Any:
    return 0.5 * x * (1 + xp.tanh(C * (x + 0.044715 * x ** 3)))


def _elu(x: Any, alpha: float, xp: Any) -> Any:
    return xp.where(x > 0, x, alpha * (xp.exp(xp.minimum(x, 0)) - 1))


CASES = [
    OpCase("nn.sigmoid", lambda x: 1 / (1 + np.exp(-x))),
    OpCase("nn.sigmoid_grad", lambda y, dy: dy * y * (1 - y), cotangent_arg=1),
    OpCase("nn.log_sigmoid", lambda x: np.log(1 / (1 + np.exp(-x)))),
    OpCase("nn.softplus", lambda x: np.log1p(np.exp(x))),
    OpCase("nn.softplus_grad", lambda dy, x: dy / (1 + np.exp(-x)), cotangent_arg=0),
    OpCase("nn.softsign", lambda x: x / (1 + np.abs(x))),
    OpCase("nn.softsign_grad", lambda dy, x: dy / (1 + np.abs(x)) ** 2, cotangent_arg=0),
    OpCase("nn.relu", lambda x: np.where(x > 0, x, 0.0)),
    OpCase("nn.relu_grad", lambda dy, f: dy * (f > 0), cotangent_arg=0),
    OpCase("nn.relu6", lambda x: np.minimum(np.maximum(x, 0.0), 6.0)),
    OpCase("nn.relu6_grad", lambda dy, f: dy * ((f > 0) & (f < 6)), cotangent_arg=0),
    OpCase("nn.leaky_relu", lambda x, alpha=0.2: np.maximum(x, alpha * x)),
    OpCase("nn.leaky_relu", lambda x, alpha: np.maximum(x, alpha * x), params={"alpha": 0.01},
           label="nn.leaky_relu-0.01"),
    OpCase("nn.leaky_relu_grad", lambda dy, f, alpha=0.2: np.where(f > 0, dy, alpha * dy),
           cotangent_arg=0),
    OpCase("nn.leaky_relu_grad", lambda dy, f, alpha: np.where(f > 0, dy, alpha * dy),
           params={"alpha": 0.25}, cotangent_arg=0, label="nn.leaky_relu_grad-0.25"),
    OpCase("nn.elu", lambda x: _elu(x, 1.0, np)),
    OpCase("nn.elu", lambda x, alpha: _elu(x, alpha, np), params={"alpha": 0.5},
           label="nn.elu-0.5"),
    OpCase("nn.elu_grad", lambda dy, y: np.where(y < 0, dy * (y + 1), dy), cotangent_arg=0),
    OpCase("nn.elu_grad", lambda dy, y, alpha: np.where(y < 0, dy * (y + alpha), dy),
           params={"alpha": 0.5}, cotangent_arg=0, label="nn.elu_grad-0.5"),
    OpCase("nn.selu", lambda x: SCALE * _elu(x, ALPHA, np)),
    OpCase("nn.selu_grad", lambda dy, y: np.where(y < 0, dy * (y + SCALE * ALPHA), SCALE * dy),
           cotangent_arg=0),
    OpCase("nn.celu", lambda x: np.maximum(x, 0) + np.minimum(0, np.exp(x) - 1)),
    OpCase("nn.celu",
           lambda x, alpha: np.maximum(x, 0) + np.minimum(0, alpha * np.expm1(x / alpha)),
           params={"alpha": 2.0}, label="nn.celu-2"),
    OpCase("nn.gelu", lambda x: 0.5 * x * (1 + sp.erf(x / math.sqrt(2)))),
    OpCase("nn.gelu", lambda x, approximate: _gelu_tanh(x), params={"approximate": True},
           label="nn.gelu-tanh"),
    OpCase("nn.silu", lambda x: x / (1 + np.exp(-x))),
    OpCase("nn.mish", lambda x: x * np.tanh(np.log1p(np.exp(x)))),
    OpCase("nn.hard_tanh", lambda x: np.clip(x, -1, 1)),
]


class TestActivations(PathChecks, AutogradChecks, ElementwiseChecks):
    cases = CASES


def test_every_activation_is_tested() -> None:
    names = {v.name for v in vars(activations).values()
             if isinstance(v, gc.Op) and v.family == "nn" and v.name in default_registry}
    assert names == {c.name for c in CASES}


def test_gradient_op_metadata_points_both_ways() -> None:
    with_grad_op = [op for op in default_registry
                    if op.family == "nn" and op.meta.get("grad_op")]
    assert {op.name for op in with_grad_op} >= {
        "nn.sigmoid", "nn.softplus", "nn.softsign", "nn.relu", "nn.relu6", "nn.leaky_relu",
        "nn.elu", "nn.selu"}
    for op in with_grad_op:
        assert default_registry.get(op.meta["grad_op"]).meta["grad_of"] == op.name


# -- the ELU family at x < 0: the double-VJP must not see the dummy --------------------------
NEGATIVE_SLOPES = [
    ("nn.elu", {"alpha": 1.0}, lambda x: np.exp(x)),
    ("nn.elu", {"alpha": 0.5}, lambda x: 0.5 * np.exp(x)),
    ("nn.selu", {}, lambda x: SCALE * ALPHA * np.exp(x)),
    ("nn.celu", {"alpha": 1.0}, lambda x: np.exp(x)),
    ("nn.celu", {"alpha": 2.0}, lambda x: np.exp(x / 2.0)),
]


@pytest.mark.parametrize("name, params, slope", NEGATIVE_SLOPES,
                         ids=[f"{n}-{p.get('alpha', '')}" for n, p, _ in NEGATIVE_SLOPES])
def test_elu_family_double_vjp_at_negative_inputs(name: str, params: dict[str, Any],
                                                  slope: Any) -> None:
    op = default_registry.get(name)
    x = np.array([-2.5, -1.0, -0.3, -0.01])
    u = np.array([1.0, -2.0, 0.5, 3.0])
    expected = slope(x) * u

    def f(t: Any) -> Any:
        return op(t, **params)

    _, native = gc.jvp(f, (x,), (u,))
    np.testing.assert_allclose(value_of(native), expected, rtol=1e-13)
    _, t = gc.jvp(f, (x,), (u,), method="transpose")
    np.testing.assert_allclose(value_of(t), expected, rtol=1e-13)
    for dummy in (None, np.ones(4), np.array([0.3, -7.0, 2.0, 1e3])):
        _, t = gc.jvp(f, (x,), (u,), method="double_vjp", dummy=dummy)
        np.testing.assert_allclose(value_of(t), expected, rtol=1e-13)


def test_elu_grad_partial_in_outputs_uses_the_upstream_gradient() -> None:
    # d EluGrad(dy, y) / dy_y = dy where y < 0 (TF's _EluGradGrad), never the op's own output
    elu_grad = default_registry.get("nn.elu_grad")
    dy = np.array([2.0, -3.0, 0.5])
    y = np.array([-0.5, -0.2, 0.7])
    d_dy, d_y = engine_vjp(lambda a, b: elu_grad(a, b), [dy, y], np.ones(3))
    np.testing.assert_allclose(d_dy, [0.5, 0.8, 1.0])
    np.testing.assert_allclose(d_y, [2.0, -3.0, 0.0])


# -- stability at |x| = 1e3 ---------------------------------------------------------------
BIG = np.array([-1e3, 1e3])
# (name, params, (f'(-1e3), f'(1e3)), (f''(-1e3), f''(1e3)))
LIMITS = [
    ("nn.sigmoid", {}, (0.0, 0.0), (0.0, 0.0)),
    ("nn.log_sigmoid", {}, (1.0, 0.0), (0.0, 0.0)),
    ("nn.softplus", {}, (0.0, 1.0), (0.0, 0.0)),
    ("nn.silu", {}, (0.0, 1.0), (0.0, 0.0)),
    ("nn.mish", {}, (0.0, 1.0), (0.0, 0.0)),
    ("nn.gelu", {}, (0.0, 1.0), (0.0, 0.0)),
    ("nn.gelu", {"approximate": True}, (0.0, 1.0), (0.0, 0.0)),
    ("nn.elu", {}, (0.0, 1.0), (0.0, 0.0)),
    ("nn.selu", {}, (0.0, SCALE), (0.0, 0.0)),
    ("nn.celu", {"alpha": 2.0}, (0.0, 1.0), (0.0, 0.0)),
    ("nn.softsign", {}, (1001.0 ** -2, 1001.0 ** -2), (2 * 1001.0 ** -3, -2 * 1001.0 ** -3)),
]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name, params, d1, d2", LIMITS,
                         ids=[f"{n}{'-' if p else ''}{'-'.join(map(str, p.values()))}"
                              for n, p, _, _ in LIMITS])
def test_stable_at_1e3(name: str, params: dict[str, Any], d1: tuple[float, float],
                       d2: tuple[float, float], dtype: Any) -> None:
    op = default_registry.get(name)
    x = BIG.astype(dtype)
    f = lambda t: op(t, **params)  # noqa: E731
    with np.errstate(over="raise", invalid="raise", divide="raise"):
        out = np.asarray(f(x))
        (ct,) = engine_vjp(f, [x], np.ones_like(x))
        _, t = gc.jvp(f, (x,), (np.ones_like(x),))
        hvps = [np.asarray(value_of(h)) for m in ("fwd_over_rev", "rev_over_rev", "rev_over_fwd")
                for h in gc.hvp(f, (x,), (np.ones_like(x),), mode=m)]
    assert np.all(np.isfinite(out)) and out.dtype == dtype
    tol = 1e-6 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(ct, d1, rtol=tol, atol=tol)
    np.testing.assert_allclose(value_of(t), d1, rtol=tol, atol=tol)
    for h in hvps:
        np.testing.assert_allclose(h, d2, rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_stable_forwards_at_1e3(dtype: Any) -> None:
    x = BIG.astype(dtype)
    with np.errstate(over="raise", invalid="raise", divide="raise"):
        np.testing.assert_allclose(gnn.sigmoid(x), [0.0, 1.0])
        np.testing.assert_allclose(gnn.log_sigmoid(x), [-1e3, 0.0])
        np.testing.assert_allclose(gnn.softplus(x), [0.0, 1e3])
        np.testing.assert_allclose(gnn.silu(x), [0.0, 1e3])
        np.testing.assert_allclose(gnn.mish(x), [0.0, 1e3])
        np.testing.assert_allclose(gnn.elu(x), [-1.0, 1e3])
        sg = default_registry.get("nn.softplus_grad")
        (d_dy, d_x) = engine_vjp(lambda a, b: sg(a, b), [np.ones_like(x), x], np.ones_like(x))
    np.testing.assert_allclose(d_dy, [0.0, 1.0])
    np.testing.assert_allclose(d_x, [0.0, 0.0])


def test_log_sigmoid_keeps_accuracy_for_large_negative_inputs() -> None:
    x = np.array([-40.0, -1e3])
    np.testing.assert_allclose(gnn.log_sigmoid(x), sp.log_expit(x), rtol=1e-15)
    (ct,) = engine_vjp(gnn.log_sigmoid, [np.array([40.0])], np.ones(1))
    np.testing.assert_allclose(ct, [np.exp(-40.0) / (1 + np.exp(-40.0))], rtol=1e-14)


# -- parameters ----------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["nn.elu", "nn.celu", "nn.elu_grad"])
@pytest.mark.parametrize("alpha", [0.0, -1.0])
def test_alpha_must_be_positive(name: str, alpha: float) -> None:
    op = default_registry.get(name)
    args = (np.ones(2),) * (op.nin or 1)
    with pytest.raises(ValueError, match=f"op '{name}'.*alpha must be a positive scalar"):
        op(*args, alpha=alpha)


def test_parameters_may_be_positional() -> None:
    x = np.array([-1.0, 2.0])
    np.testing.assert_allclose(gnn.leaky_relu(x, 0.1), [-0.1, 2.0])
    np.testing.assert_allclose(gnn.gelu(x, True), gnn.gelu(x, approximate=True))


# -- TensorFlow's gradient ops: argument order, math and their own gradients ---------------
TF_GRAD_OPS = [
    ("nn.sigmoid_grad", "SigmoidGrad", lambda o, a, b: o(y=a, dy=b), True),
    ("nn.softplus_grad", "SoftplusGrad", lambda o, a, b: o(gradients=a, features=b), True),
    ("nn.softsign_grad", "SoftsignGrad", lambda o, a, b: o(gradients=a, features=b), False),
    ("nn.relu_grad", "ReluGrad", lambda o, a, b: o(gradients=a, features=b), True),
    ("nn.relu6_grad", "Relu6Grad", lambda o, a, b: o(gradients=a, features=b), True),
    # TF keeps alpha in float32: 0.25 is exact there, 0.2 is not
    ("nn.leaky_relu_grad-0.25", "LeakyReluGrad",
     lambda o, a, b: o(gradients=a, features=b, alpha=0.25), True),
    ("nn.elu_grad", "EluGrad", lambda o, a, b: o(gradients=a, outputs=b), True),
    ("nn.selu_grad", "SeluGrad", lambda o, a, b: o(gradients=a, outputs=b), True),
]


@pytest.mark.tensorflow
@pytest.mark.parametrize("name, tf_name, call, second_order", TF_GRAD_OPS,
                         ids=[row[0] for row in TF_GRAD_OPS])
def test_gradient_ops_match_tensorflow(name: str, tf_name: str, call: Any,
                                       second_order: bool) -> None:
    tf = import_tensorflow()
    raw_op = getattr(tf.raw_ops, tf_name)
    case = next(c for c in CASES if c.id == name)
    report = check_against_tensorflow(case, lambda a, b: call(raw_op, a, b))
    # TF registers no gradient for SoftsignGrad: its second-order paths are unsupported
    second = {c.status for c in report.cells if c.reference == "tensorflow"
              and c.path.startswith("hvp")}
    assert second == ({"pass"} if second_order else {"unsupported"}), report.cells
