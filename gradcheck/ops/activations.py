"""Activation functions (``nn.<name>``), exported in ``gradcheck.nn``.

Where TensorFlow differentiates an activation with a dedicated gradient op
(SigmoidGrad, SoftplusGrad, SoftsignGrad, ReluGrad, Relu6Grad, LeakyReluGrad,
EluGrad, SeluGrad) the VJP calls a registered gradient op with TensorFlow's
argument order and math, and that op's own rules follow TensorFlow's
gradient-of-gradient functions (``nn_grad.py``, ``math_grad.py``).  Every
gradient op is linear in its upstream-gradient input, and its partial with
respect to the other input is written with the *gradient op's* inputs (the
old TensorFlow ``_EluGradGrad`` used the gradient op's output there, which
leaked the double-VJP dummy for x < 0).

Each op names its equivalents (``equivalents=``): TensorFlow's activation or raw gradient
op, and numpy's API (a formula where numpy has no such function).

Forwards are stable at |x| = 1e3: sigmoid via ``expit``, softplus and
log_sigmoid via ``logaddexp``, exponential branches on ``min(x, 0)``; the
rules use ``sigmoid(x) * sigmoid(-x)`` rather than ``1 / (e^-x + 2 + e^x)``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from gradcheck.domains import REAL, Interval
from gradcheck.engine.op import Op, define_op
from gradcheck.ops.elementwise import (
    NO_GRADIENT_OPS,
    exp,
    sign,
    square,
    tanh,
    tanh_grad,
    tf_gradient_op,
    zeros_like,
)
from gradcheck.ops.elementwise import abs as abs_
from gradcheck.ops.lazy import special as sp
from gradcheck.ops.params import positive_number, real_number
from gradcheck.ops.refs import NoEquivalent, formula
from gradcheck.ops.rules import fit, unbroadcast
from gradcheck.ops.special import erfc

ANY = "(...)"
GRAD_PAIR = "(...),(...)"
SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946
GELU_C = math.sqrt(2.0 / math.pi)  # the tanh approximation's inner scale
GELU_K = 0.044715
INV_SQRT2 = 1.0 / math.sqrt(2.0)
INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)

#: Names exported in gradcheck.nn.
NN = ["sigmoid", "log_sigmoid", "softplus", "softsign", "relu", "relu6", "leaky_relu", "elu",
      "selu", "celu", "gelu", "silu", "mish", "hard_tanh"]


def _where(mask: Any, a: Any, b: Any) -> Any:
    from gradcheck.ops.binary import where

    return where(mask, a, b)


def _activation(name: str, forward: Callable[..., Any], vjp: Any, jvp: Any,
                **meta: Any) -> Op:
    return define_op(name, forward, vjp, jvp, family="nn", inputs=(REAL,), shapes=ANY, **meta)


def _gradient_op(name: str, forward: Callable[..., Any], d_first: Callable[..., Any],
                 d_second: Callable[..., Any], inputs: tuple[Any, Any], grad_of: str,
                 doc: str = "", **meta: Any) -> Op:
    """A gradient op ``f(a, b, **params)`` with partials ``d_first(w, out, a, b, **params)``
    and ``d_second(...)`` for a cotangent or tangent ``w`` (linear in ``w``)."""
    return define_op(
        name, forward,
        vjp=(lambda g, out, a, b, **p: unbroadcast(d_first(g, out, a, b, **p), a),
             lambda g, out, a, b, **p: unbroadcast(d_second(g, out, a, b, **p), b)),
        jvp=(lambda t, out, a, b, **p: fit(d_first(t, out, a, b, **p), out),
             lambda t, out, a, b, **p: fit(d_second(t, out, a, b, **p), out)),
        family="nn", inputs=inputs, shapes=GRAD_PAIR, grad_of=grad_of, doc=doc, **meta,
    )


def _zero(w: Any, out: Any, a: Any, b: Any, **params: Any) -> Any:
    """A partial that is zero almost everywhere (TensorFlow returns ``zeros_like``)."""
    return zeros_like(out)


def _float32_alpha(tf_op: str, alpha: Any) -> float:
    """``alpha`` for a TensorFlow op that keeps it as a float32 attribute, when that is exact."""
    if float(np.float32(alpha)) != float(alpha):
        raise NoEquivalent(f"TensorFlow's {tf_op} keeps alpha as a float32 attribute: it cannot "
                           f"compute alpha={alpha!r} in float64")
    return float(alpha)


# -- sigmoid family ---------------------------------------------------------------------
# SigmoidGrad(y, dy) = dy y (1 - y); TF's _SigmoidGradGrad: (g dy (1 - 2y), SigmoidGrad(y, g)).
sigmoid_grad: Op = _gradient_op(
    "nn.sigmoid_grad", lambda y, dy: dy * (y * (1 - y)),
    lambda w, out, y, dy: w * dy * (1 - 2 * y),
    lambda w, out, y, dy: sigmoid_grad(y, w),
    inputs=(Interval(0.0, 1.0), REAL), grad_of="nn.sigmoid",
    doc="sigmoid's gradient op: dy * y * (1 - y) for y = sigmoid(x).",
    equivalents={"numpy": formula(lambda xp, y, dy: dy * y * (1 - y), NO_GRADIENT_OPS),
                 "tensorflow": tf_gradient_op("SigmoidGrad", "y", "dy")},
)
sigmoid: Op = _activation(
    "nn.sigmoid", lambda x: sp.expit(x),
    vjp=lambda g, out, x: sigmoid_grad(out, g),
    jvp=lambda ts, out, x: sigmoid_grad(out, ts[0]),
    grad_op="nn.sigmoid_grad", doc="1 / (1 + exp(-x)), without overflow (scipy's expit).",
    equivalents={"numpy": "special.expit", "tensorflow": "math.sigmoid"},
)
log_sigmoid: Op = _activation(
    "nn.log_sigmoid", lambda x: -np.logaddexp(0, -x),
    vjp=lambda g, out, x: g * sigmoid(-x),
    jvp=lambda ts, out, x: ts[0] * sigmoid(-x),
    reference=lambda x: sp.log_expit(x),
    doc="log(sigmoid(x)) = -softplus(-x), stable for large |x|.",
    equivalents={"numpy": formula(lambda xp, x: -xp.logaddexp(0.0, -x),
                                  "numpy has no log_sigmoid (autograd has no log_expit)"),
                 "tensorflow": "math.log_sigmoid"},
)


# SoftplusGrad(dy, x) = dy sigmoid(x); TF's _SoftplusGradGrad divides by e^-x + 2 + e^x,
# which overflows at |x| = 1e3: sigmoid(x) sigmoid(-x) is the same number, computed stably.
def _softplus_grad_dx(w: Any, out: Any, dy: Any, x: Any) -> Any:
    return w * dy * (sigmoid(x) * sigmoid(-x))


softplus_grad: Op = _gradient_op(
    "nn.softplus_grad", lambda dy, x: dy * sp.expit(x),
    lambda w, out, dy, x: softplus_grad(w, x), _softplus_grad_dx,
    inputs=(REAL, REAL), grad_of="nn.softplus",
    doc="softplus's gradient op: dy * sigmoid(x).",
    equivalents={"numpy": formula(lambda xp, dy, x: dy * xp.special.expit(x), NO_GRADIENT_OPS),
                 "tensorflow": tf_gradient_op("SoftplusGrad", "gradients", "features")},
)
softplus: Op = _activation(
    "nn.softplus", lambda x: np.logaddexp(0, x),
    vjp=lambda g, out, x: softplus_grad(g, x),
    jvp=lambda ts, out, x: softplus_grad(ts[0], x),
    grad_op="nn.softplus_grad", doc="log(1 + exp(x)), stable for large |x|.",
    equivalents={"numpy": formula(lambda xp, x: xp.logaddexp(0.0, x), "numpy has no softplus"),
                 "tensorflow": "math.softplus"},
)

def _cube(d: Any) -> Any:
    return d * d * d


# SoftsignGrad(dy, x) = dy / (1 + |x|)^2 (TF registers no gradient for it; d/dx is
# -2 dy sign(x) / (1 + |x|)^3, which jumps at 0: softsign is C1 but not C2 there).
softsign_grad: Op = _gradient_op(
    "nn.softsign_grad", lambda dy, x: dy / np.square(1 + np.abs(x)),
    lambda w, out, dy, x: softsign_grad(w, x),
    lambda w, out, dy, x: -2 * w * dy * sign(x) / _cube(1 + abs_(x)),
    inputs=(REAL, REAL), grad_of="nn.softsign", kinks=(0.0,),
    doc="softsign's gradient op: dy / (1 + |x|)**2.",
    equivalents={"numpy": formula(lambda xp, dy, x: dy / xp.square(1 + xp.abs(x)),
                                  NO_GRADIENT_OPS),
                 "tensorflow": tf_gradient_op("SoftsignGrad", "gradients", "features")},
)
softsign: Op = _activation(
    "nn.softsign", lambda x: x / (1 + np.abs(x)),
    vjp=lambda g, out, x: softsign_grad(g, x),
    jvp=lambda ts, out, x: softsign_grad(ts[0], x),
    grad_op="nn.softsign_grad", kinks=(0.0,), doc="x / (1 + |x|).",
    equivalents={"numpy": formula(lambda xp, x: x / (1 + xp.abs(x)), "numpy has no softsign"),
                 "tensorflow": "nn.softsign"},
)

# -- rectifiers: TF's ReluGrad / Relu6Grad / LeakyReluGrad(gradients, features) -----------
# Their own gradients (_ReluGradGrad, ...) are (XGrad(g, features), zeros).
relu_grad: Op = _gradient_op(
    "nn.relu_grad", lambda dy, f: np.where(f > 0, dy, np.zeros_like(dy)),
    lambda w, out, dy, f: relu_grad(w, f), _zero,
    inputs=(REAL, REAL), grad_of="nn.relu", kinks=(0.0,),
    doc="relu's gradient op: dy where features > 0, else 0.",
    equivalents={"numpy": formula(lambda xp, dy, f: xp.where(f > 0, dy, 0.0 * dy),
                                  NO_GRADIENT_OPS),
                 "tensorflow": tf_gradient_op("ReluGrad", "gradients", "features")},
)
relu: Op = _activation(
    "nn.relu", lambda x: np.maximum(x, 0),
    vjp=lambda g, out, x: relu_grad(g, out),
    jvp=lambda ts, out, x: relu_grad(ts[0], out),
    grad_op="nn.relu_grad", kinks=(0.0,), doc="max(x, 0).",
    equivalents={"numpy": formula(lambda xp, x: xp.where(x > 0, x, 0.0 * x),
                                  "numpy has no relu"),
                 "tensorflow": "nn.relu"},
)
relu6_grad: Op = _gradient_op(
    "nn.relu6_grad", lambda dy, f: np.where((f > 0) & (f < 6), dy, np.zeros_like(dy)),
    lambda w, out, dy, f: relu6_grad(w, f), _zero,
    inputs=(REAL, Interval(-2.0, 8.0)), grad_of="nn.relu6", kinks=(0.0, 6.0),
    doc="relu6's gradient op: dy where 0 < features < 6, else 0.",
    equivalents={"numpy": formula(lambda xp, dy, f: xp.where((f > 0) & (f < 6), dy, 0.0 * dy),
                                  NO_GRADIENT_OPS),
                 "tensorflow": tf_gradient_op("Relu6Grad", "gradients", "features")},
)
relu6: Op = _activation(
    "nn.relu6", lambda x: np.clip(x, 0, 6),
    vjp=lambda g, out, x: relu6_grad(g, out),
    jvp=lambda ts, out, x: relu6_grad(ts[0], out),
    grad_op="nn.relu6_grad", kinks=(0.0, 6.0), doc="min(max(x, 0), 6).",
    equivalents={"numpy": formula(lambda xp, x: xp.clip(x, 0.0, 6.0), "numpy has no relu6"),
                 "tensorflow": "nn.relu6"},
)


def _leaky_relu_grad(dy: Any, f: Any, alpha: float = 0.2) -> Any:
    """LeakyReluGrad: dy where features > 0, alpha * dy elsewhere."""
    return np.where(f > 0, dy, real_number("nn.leaky_relu_grad", "alpha", alpha) * dy)


def _tf_leaky_relu_grad(tf: Any, dy: Any, f: Any, alpha: float = 0.2) -> Any:
    alpha = _float32_alpha("LeakyReluGrad", alpha)
    return tf_gradient_op("LeakyReluGrad", "gradients", "features", alpha=alpha)(tf, dy, f)


leaky_relu_grad: Op = _gradient_op(
    "nn.leaky_relu_grad", _leaky_relu_grad,
    lambda w, out, dy, f, alpha=0.2: leaky_relu_grad(w, f, alpha=alpha), _zero,
    inputs=(REAL, REAL), grad_of="nn.leaky_relu", kinks=(0.0,),
    params={"alpha": [0.2, 0.01]},
    equivalents={"numpy": formula(lambda xp, dy, f, alpha=0.2: xp.where(f > 0, dy, alpha * dy),
                                  NO_GRADIENT_OPS),
                 "tensorflow": _tf_leaky_relu_grad},
)


def _leaky_relu(x: Any, alpha: float = 0.2) -> Any:
    """x where x > 0, alpha * x elsewhere (TensorFlow's default alpha = 0.2)."""
    return np.where(x > 0, x, real_number("nn.leaky_relu", "alpha", alpha) * x)


def _tf_leaky_relu(tf: Any, x: Any, alpha: float = 0.2) -> Any:
    return tf.nn.leaky_relu(x, alpha=_float32_alpha("LeakyRelu", alpha))


leaky_relu: Op = _activation(
    "nn.leaky_relu", _leaky_relu,
    vjp=lambda g, out, x, alpha=0.2: leaky_relu_grad(g, x, alpha=alpha),
    jvp=lambda ts, out, x, alpha=0.2: leaky_relu_grad(ts[0], x, alpha=alpha),
    grad_op="nn.leaky_relu_grad", kinks=(0.0,), params={"alpha": [0.2, 0.01]},
    equivalents={"numpy": formula(lambda xp, x, alpha=0.2: xp.where(x > 0, x, alpha * x),
                                  "numpy has no leaky_relu"),
                 "tensorflow": _tf_leaky_relu},
)


# -- exponential linear units: TF's EluGrad / SeluGrad(gradients, outputs) ----------------
def _elu_grad(dy: Any, y: Any, alpha: float = 1.0) -> Any:
    """EluGrad: dy * (y + alpha) where the ELU output y < 0, dy elsewhere."""
    alpha = positive_number("nn.elu_grad", "alpha", alpha)
    return np.where(y < 0, dy * (y + alpha), dy)


def _numpy_elu_grad(xp: Any, dy: Any, y: Any, alpha: float = 1.0) -> Any:
    return xp.where(y < 0, dy * (y + alpha), dy)


def _tf_elu_grad(tf: Any, dy: Any, y: Any, alpha: float = 1.0) -> Any:
    if alpha != 1.0:
        raise NoEquivalent("TensorFlow's EluGrad has alpha = 1 only")
    return tf_gradient_op("EluGrad", "gradients", "outputs")(tf, dy, y)


# TF's _EluGradGrad: (EluGrad(g, y), g * dy where y < 0): d/dy of dy * (y + alpha) is dy.
elu_grad: Op = _gradient_op(
    "nn.elu_grad", _elu_grad,
    lambda w, out, dy, y, alpha=1.0: elu_grad(w, y, alpha=alpha),
    lambda w, out, dy, y, alpha=1.0: _where(y < 0, w * dy, zeros_like(out)),
    inputs=(REAL, REAL), grad_of="nn.elu", kinks=(0.0,), params={"alpha": [1.0, 0.5]},
    equivalents={"numpy": formula(_numpy_elu_grad, NO_GRADIENT_OPS), "tensorflow": _tf_elu_grad},
)


def _elu(x: Any, alpha: float = 1.0) -> Any:
    """x where x > 0, alpha * (exp(x) - 1) elsewhere (alpha > 0)."""
    alpha = positive_number("nn.elu", "alpha", alpha)
    return np.where(x > 0, x, alpha * np.expm1(np.minimum(x, 0)))


def _tf_elu(tf: Any, x: Any, alpha: float = 1.0) -> Any:
    if alpha == 1.0:
        return tf.nn.elu(x)
    # tf.nn.elu has alpha = 1; alpha * elu(x) is alpha * (e^x - 1) for x < 0, still with
    # TensorFlow's elu and its gradient op.
    return tf.where(x > 0, x, alpha * tf.nn.elu(x))


def _numpy_elu(xp: Any, x: Any, alpha: float = 1.0) -> Any:
    return xp.where(x > 0, x, alpha * xp.expm1(xp.minimum(x, 0.0)))


elu: Op = _activation(
    "nn.elu", _elu,
    vjp=lambda g, out, x, alpha=1.0: elu_grad(g, out, alpha=alpha),
    jvp=lambda ts, out, x, alpha=1.0: elu_grad(ts[0], out, alpha=alpha),
    grad_op="nn.elu_grad", kinks=(0.0,), params={"alpha": [1.0, 0.5]},
    equivalents={"numpy": formula(_numpy_elu, "numpy has no elu"), "tensorflow": _tf_elu},
)

def _numpy_selu_grad(xp: Any, dy: Any, y: Any) -> Any:
    return xp.where(y < 0, dy * (y + SELU_SCALE * SELU_ALPHA), dy * SELU_SCALE)


selu_grad: Op = _gradient_op(
    "nn.selu_grad",
    lambda dy, y: np.where(y < 0, dy * (y + SELU_SCALE * SELU_ALPHA), dy * SELU_SCALE),
    lambda w, out, dy, y: selu_grad(w, y),
    lambda w, out, dy, y: _where(y < 0, w * dy, zeros_like(out)),
    inputs=(REAL, REAL), grad_of="nn.selu", kinks=(0.0,),
    doc="selu's gradient op: dy * (y + scale * alpha) where y < 0, dy * scale elsewhere.",
    equivalents={"numpy": formula(_numpy_selu_grad, NO_GRADIENT_OPS),
                 "tensorflow": tf_gradient_op("SeluGrad", "gradients", "outputs")},
)
selu: Op = _activation(
    "nn.selu",
    lambda x: SELU_SCALE * np.where(x > 0, x, SELU_ALPHA * np.expm1(np.minimum(x, 0))),
    vjp=lambda g, out, x: selu_grad(g, out),
    jvp=lambda ts, out, x: selu_grad(ts[0], out),
    grad_op="nn.selu_grad", kinks=(0.0,), doc="scale * elu(x, alpha) with SELU's constants.",
    equivalents={"numpy": formula(lambda xp, x: SELU_SCALE * _numpy_elu(xp, x, SELU_ALPHA),
                                  "numpy has no selu"),
                 "tensorflow": "nn.selu"},
)


def _celu(x: Any, alpha: float = 1.0) -> Any:
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1)) (alpha > 0)."""
    alpha = positive_number("nn.celu", "alpha", alpha)
    return np.where(x > 0, x, alpha * np.expm1(np.minimum(x, 0) / alpha))


def _celu_deriv(w: Any, out: Any, x: Any, alpha: float = 1.0) -> Any:
    # exp(x / alpha) = out / alpha + 1 for x <= 0: no overflow, and the output is bounded.
    return _where(x > 0, w, w * (out / alpha + 1))


def _celu_with(ns: Any, where: Any, x: Any, alpha: float = 1.0) -> Any:
    return where(x > 0, x, alpha * ns.expm1(ns.minimum(x, 0.0) / alpha))


celu: Op = _activation(
    "nn.celu", _celu,
    vjp=lambda g, out, x, alpha=1.0: _celu_deriv(g, out, x, alpha),
    jvp=lambda ts, out, x, alpha=1.0: _celu_deriv(ts[0], out, x, alpha),
    kinks=(0.0,), params={"alpha": [1.0, 2.0]},
    equivalents={
        "numpy": formula(lambda xp, x, alpha=1.0: _celu_with(xp, xp.where, x, alpha),
                         "numpy has no celu"),
        "tensorflow": formula(lambda tf, x, alpha=1.0: _celu_with(tf.math, tf.where, x, alpha),
                              "TensorFlow has no celu"),
    },
)


# -- smooth gates ---------------------------------------------------------------------
def _gelu(x: Any, approximate: bool = False) -> Any:
    """x * Phi(x); with ``approximate`` the tanh form, written as x * sigmoid(2u)."""
    if not isinstance(approximate, (bool, np.bool_)):  # torch's "none"/"tanh" read as truthy
        raise TypeError(f"nn.gelu: approximate must be True or False, got "
                        f"{type(approximate).__name__} {approximate!r}")
    if approximate:
        return x * sp.expit(2 * GELU_C * (x + GELU_K * x * x * x))
    return 0.5 * x * sp.erfc(-x * INV_SQRT2)


def _gelu_deriv(x: Any, approximate: bool = False) -> Any:
    if approximate:
        s = sigmoid(2 * GELU_C * (x + GELU_K * x * x * x))
        return s + sigmoid_grad(s, x * (2 * GELU_C) * (1 + 3 * GELU_K * square(x)))
    return 0.5 * erfc(-x * INV_SQRT2) + x * INV_SQRT_2PI * exp(-0.5 * square(x))


def _numpy_gelu(xp: Any, x: Any, approximate: bool = False) -> Any:
    if approximate:
        return 0.5 * x * (1 + xp.tanh(GELU_C * (x + GELU_K * x * x * x)))
    return 0.5 * x * xp.special.erfc(-x * INV_SQRT2)


gelu: Op = _activation(
    "nn.gelu", _gelu,
    vjp=lambda g, out, x, approximate=False: g * _gelu_deriv(x, approximate),
    jvp=lambda ts, out, x, approximate=False: ts[0] * _gelu_deriv(x, approximate),
    params={"approximate": [False, True]},
    equivalents={"numpy": formula(_numpy_gelu, "numpy has no gelu"), "tensorflow": "nn.gelu"},
)
silu: Op = _activation(
    "nn.silu", lambda x: x * sp.expit(x),
    vjp=lambda g, out, x: g * (sigmoid(x) * (1 + x * sigmoid(-x))),
    jvp=lambda ts, out, x: ts[0] * (sigmoid(x) * (1 + x * sigmoid(-x))),
    doc="x * sigmoid(x) (swish).",
    equivalents={"numpy": formula(lambda xp, x: x * xp.special.expit(x), "numpy has no silu"),
                 "tensorflow": "nn.silu"},
)


def _mish_deriv(x: Any) -> Any:
    t = tanh(softplus(x))
    return t + tanh_grad(t, x * sigmoid(x))


# The family's one op without a JVP rule: it exercises the transpose fallback.
mish: Op = _activation(
    "nn.mish", lambda x: x * np.tanh(np.logaddexp(0, x)),
    vjp=lambda g, out, x: g * _mish_deriv(x), jvp=None,
    transpose_jvp_reason="exercises the JVP computed by transposing the VJP",
    doc="x * tanh(softplus(x)).",
    equivalents={
        "numpy": formula(lambda xp, x: x * xp.tanh(xp.logaddexp(0.0, x)), "numpy has no mish"),
        "tensorflow": formula(lambda tf, x: x * tf.math.tanh(tf.math.softplus(x)),
                              "TensorFlow has no mish in tf.math or tf.nn"),
    },
)
hard_tanh: Op = _activation(
    "nn.hard_tanh", lambda x: np.clip(x, -1, 1),
    vjp=lambda g, out, x: _where((x > -1) & (x < 1), g, zeros_like(g)),
    jvp=lambda ts, out, x: _where((x > -1) & (x < 1), ts[0], zeros_like(ts[0])),
    kinks=(-1.0, 1.0), doc="clip(x, -1, 1).",
    equivalents={"numpy": lambda xp, x: xp.clip(x, -1.0, 1.0),
                 "tensorflow": lambda tf, x: tf.clip_by_value(x, -1.0, 1.0)},
)
