"""Deliberately broken ops, one or more per class of gradient bug the checker must catch.

They live in their own registry, ``BROKEN``, never in the shipped one.  Rules are written
with registered ops (so second order works) except where the bug itself is raw numpy.
``CASES`` is the table the tests run: each row names the op, the finding kind it must
produce (and on which path), the check options, and why the op is broken.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.special

import gradcheck.numpy as gnp
from gradcheck.domains import REAL
from gradcheck.engine import Registry
from gradcheck.extend import define_op, fit, shape_of, unbroadcast
from gradcheck.ops.elementwise import astype

BROKEN = Registry("broken")

UNARY = dict(family="broken", inputs=(REAL,), shapes="(...)", registry=BROKEN)
BINARY = dict(family="broken", inputs=(REAL, REAL), shapes="(...),(...)", registry=BROKEN)


def _unary(name: str, forward: Any, vjp: Any, jvp: Any, **meta: Any) -> Any:
    return define_op(name, forward, vjp, jvp, **{**UNARY, **meta})


# -- wrong values -------------------------------------------------------------------------
sign_error = _unary(
    "sign_error", np.sin,
    vjp=lambda g, out, x: -(g * gnp.cos(x)),
    jvp=lambda ts, out, x: -(ts[0] * gnp.cos(x)),
    doc="sin whose rules have the wrong sign.")

missing_chain = _unary(
    "missing_chain", lambda x: np.sin(x * x),
    vjp=lambda g, out, x: g * gnp.cos(x * x),
    jvp=lambda ts, out, x: ts[0] * gnp.cos(x * x),
    doc="sin(x**2) whose rules forget the inner derivative 2x.")


def _cube_slope(x: Any) -> Any:
    # right slope 3x^2 for |x| <= 3, 1% too small beyond: a bug only far from the origin
    return gnp.where(np.abs(np.asarray(x)) > 3, 2.97 * x * x, 3.0 * x * x)


region_far = _unary(
    "region_far", lambda x: x * x * x,
    vjp=lambda g, out, x: g * _cube_slope(x),
    jvp=lambda ts, out, x: ts[0] * _cube_slope(x),
    doc="x**3 whose rules are 1% off for |x| > 3 only.")


def _sigmoid(x: Any) -> Any:
    return 1.0 / (1.0 + gnp.exp(-x))


def _softplus_slope(x: Any) -> Any:
    # a "fast path" for large inputs that returns the wrong limit (0 instead of 1)
    return gnp.where(np.asarray(x) > 20, 0.0 * x, _sigmoid(x))


region_large = _unary(
    "region_large", lambda x: np.logaddexp(0.0, x),
    vjp=lambda g, out, x: g * _softplus_slope(x),
    jvp=lambda ts, out, x: ts[0] * _softplus_slope(x),
    doc="softplus whose derivative is 0 instead of 1 for x > 20.")

small_error = _unary(
    "small_error", np.exp,
    vjp=lambda g, out, x: g * out * 1.0001,
    jvp=lambda ts, out, x: ts[0] * out * 1.0001,
    doc="exp whose rules are off by a relative 1e-4.")


def _first_slice(g: Any, like: Any) -> Any:
    """unbroadcast's bug: sums the added leading axes but takes the first entry (instead of
    the sum) along axes where the input had size 1."""
    shape, gshape = shape_of(like), shape_of(g)
    lead = len(gshape) - len(shape)
    if lead:
        g = gnp.sum(g, axis=tuple(range(lead)))
    for i, d in enumerate(shape):
        if d == 1 and shape_of(g)[i] != 1:
            g = g[(slice(None),) * i + (slice(0, 1),)]
    return g


no_reduction = define_op(
    "no_reduction", np.multiply,
    vjp=(lambda g, out, x, y: _first_slice(g * y, x), lambda g, out, x, y: _first_slice(g * x, y)),
    jvp=(lambda t, out, x, y: fit(t * y, out), lambda t, out, x, y: fit(x * t, out)),
    doc="multiply whose VJP does not sum over broadcast size-1 axes.", **BINARY)


def _bad_mT(y: Any) -> Any:
    """Swaps the last two axes right only for 2-D square matrices; otherwise reshapes."""
    shape = shape_of(y)
    if len(shape) == 2 and shape[0] == shape[1]:
        return gnp.transpose(y)
    return gnp.reshape(y, shape[:-2] + (shape[-1], shape[-2]))


def _good_mT(y: Any) -> Any:
    nd = len(shape_of(y))
    return gnp.transpose(y, tuple(range(nd - 2)) + (nd - 1, nd - 2))


bad_transpose = define_op(
    "bad_transpose", np.matmul,
    vjp=(lambda g, out, x, y: unbroadcast(gnp.matmul(g, _bad_mT(y)), x),
         lambda g, out, x, y: unbroadcast(gnp.matmul(_good_mT(x), g), y)),
    jvp=(lambda t, out, x, y: gnp.matmul(t, y), lambda t, out, x, y: gnp.matmul(x, t)),
    family="broken", inputs=(REAL, REAL), shapes="(...,m,k),(...,k,n)", registry=BROKEN,
    doc="matmul whose VJP transposes by reshaping (right for 2-D square matrices only).")

# -- wrong structure of the rules ------------------------------------------------------------
affine_vjp = _unary(
    "affine_vjp", np.sin,
    vjp=lambda g, out, x: g * gnp.cos(x) + 0.1,
    jvp=lambda ts, out, x: ts[0] * gnp.cos(x),
    doc="sin whose VJP adds a constant: g * cos(x) + 0.1.")

wrong_jvp = _unary(
    "wrong_jvp", np.cos,
    vjp=lambda g, out, x: -(g * gnp.sin(x)),
    jvp=lambda ts, out, x: ts[0] * gnp.sin(x),
    doc="cos with a right VJP and a JVP of the wrong sign.")


# ELU with TensorFlow's old gradient-of-gradient bug: the gradient op's VJP with respect to
# its upstream gradient reads the gradient op's own output, so it is not linear in g.
def _leaky_grad_vjp_g(gg: Any, out: Any, g: Any, y: Any) -> Any:
    return gnp.where(np.asarray(y) > 0, gg, gg * (out + 1.0))


elu_leaky_grad = define_op(
    "elu_leaky_grad", lambda g, y: np.where(y > 0, g, g * (y + 1.0)),
    vjp=(_leaky_grad_vjp_g, lambda gg, out, g, y: gnp.where(np.asarray(y) > 0, 0.0 * gg, gg * g)),
    jvp=(lambda t, out, g, y: gnp.where(np.asarray(y) > 0, t, t * (y + 1.0)),
         lambda t, out, g, y: gnp.where(np.asarray(y) > 0, 0.0 * t, t * g)),
    grad_of="elu_leaky", kinks=(0.0,), **BINARY)

elu_leaky = _unary(
    "elu_leaky", lambda x: np.where(x > 0, x, np.expm1(np.minimum(x, 0.0))),
    vjp=lambda g, out, x: elu_leaky_grad(g, out),
    jvp=lambda ts, out, x: elu_leaky_grad(ts[0], out),
    grad_op="elu_leaky_grad", kinks=(0.0,),
    doc="elu whose gradient op elu_leaky_grad has a gradient that leaks the dummy.")

reads_dummy = _unary(
    "reads_dummy", np.sin,
    vjp=lambda g, out, x: g * gnp.cos(x) + 0.0 * g * g,
    jvp=lambda ts, out, x: ts[0] * gnp.cos(x),
    doc="sin whose VJP adds 0 * g**2: right values, but its transpose reads the dummy.")


def _mutating_vjp(g: Any, out: Any, x: Any) -> Any:
    np.multiply(g, out, out=g)  # writes into the cotangent it was given
    return g


in_place = _unary(
    "in_place", np.exp, vjp=_mutating_vjp, jvp=lambda ts, out, x: ts[0] * out,
    first_order_only="raw numpy on the cotangent",
    doc="exp whose VJP multiplies the cotangent in place.")

wrong_dtype = _unary(
    "wrong_dtype", np.exp,
    vjp=lambda g, out, x: astype(g * out, np.float64),
    jvp=lambda ts, out, x: ts[0] * out,
    doc="exp whose VJP always returns float64.")

hidden_shape = _unary(
    "hidden_shape", lambda x: 2.0 * x,
    vjp=lambda g, out, x: gnp.reshape(2.0 * g, (1, *shape_of(x))),
    jvp=lambda ts, out, x: 2.0 * ts[0],
    doc="2x whose VJP returns shape (1, *x.shape): numpy broadcasting would hide it.")

_NOISE = np.random.default_rng()  # deliberately unseeded


def _noisy(x: Any) -> Any:
    return 1.0 + 1e-13 * _NOISE.standard_normal(shape_of(x))


nondeterministic = _unary(
    "nondeterministic", np.sin,
    vjp=lambda g, out, x: g * gnp.cos(x) * _noisy(x),
    jvp=lambda ts, out, x: ts[0] * gnp.cos(x),
    doc="sin whose VJP differs in the last bits from call to call.")


def _lse_axis(shapes: Any) -> list[Any]:
    return [-1]


naive_logsumexp = define_op(
    "naive_logsumexp", lambda x, axis=-1: np.log(np.sum(np.exp(x), axis=axis)),
    vjp=lambda g, out, x, axis=-1: gnp.expand_dims(g, axis) * gnp.exp(
        x - gnp.expand_dims(out, axis)),
    jvp=lambda ts, out, x, axis=-1: gnp.sum(ts[0] * gnp.exp(x - gnp.expand_dims(out, axis)),
                                            axis=axis),
    family="broken", inputs=(REAL,), shapes="(...,n)", params={"axis": _lse_axis},
    reference=lambda x, axis=-1: scipy.special.logsumexp(x, axis=axis), registry=BROKEN,
    doc="logsumexp computed as log(sum(exp(x))): overflows for large x.")


def _lse_stable(x: Any, axis: int = -1) -> Any:
    return scipy.special.logsumexp(x, axis=axis)


naive_logsumexp_vjp = define_op(
    "naive_logsumexp_vjp", _lse_stable,
    vjp=lambda g, out, x, axis=-1: gnp.expand_dims(g, axis) * gnp.exp(x) / gnp.sum(
        gnp.exp(x), axis=axis, keepdims=True),
    jvp=lambda ts, out, x, axis=-1: gnp.sum(ts[0] * gnp.exp(x - gnp.expand_dims(out, axis)),
                                            axis=axis),
    family="broken", inputs=(REAL,), shapes="(...,n)", params={"axis": _lse_axis},
    registry=BROKEN, doc="stable logsumexp whose VJP is exp(x) / sum(exp(x)) (no max-shift).")


@dataclass(frozen=True)
class Case:
    """One broken op and what the checker must say about it."""

    op: str
    kind: str
    path: str | None
    reason: str
    options: dict[str, Any] = field(default_factory=dict)


CASES = [
    Case("sign_error", "mismatch", "vjp", "sign error"),
    Case("missing_chain", "mismatch", "vjp", "missing chain-rule factor"),
    Case("region_far", "mismatch", "vjp", "wrong only for |x| > 3"),
    Case("region_large", "mismatch", "vjp", "wrong only for x > 20"),
    Case("no_reduction", "mismatch", "vjp", "missing reduction over broadcast axes"),
    Case("bad_transpose", "mismatch", "vjp", "transposition bug: batched or non-square only"),
    Case("small_error", "mismatch", "vjp", "relative error 1e-4"),
    Case("affine_vjp", "nonlinear", "vjp", "affine VJP g * f'(x) + c"),
    Case("wrong_jvp", "mismatch", "jvp", "wrong JVP, right VJP"),
    Case("elu_leaky", "value_leak", "double_vjp", "gradient op with a wrong gradient (ELU)"),
    Case("reads_dummy", "dependence_leak", "double_vjp", "double-VJP reads the dummy"),
    Case("in_place", "input_mutated", "vjp", "VJP writes into its cotangent"),
    Case("wrong_dtype", "dtype", "vjp", "float64 cotangent for float32 input",
         {"dtypes": ["float32"]}),
    Case("hidden_shape", "shape", "vjp", "cotangent shape hidden by broadcasting"),
    Case("nondeterministic", "nondeterministic", "vjp", "different bits on each call",
         {"dtypes": ["float64"]}),
    Case("naive_logsumexp", "mismatch", "forward", "logsumexp without max-shift"),
    Case("naive_logsumexp_vjp", "mismatch", "vjp", "logsumexp VJP without max-shift"),
]


# -- ops that misbehave as a whole, for the sweep runner ------------------------------------
HANGING = Registry("hanging")


def _spin(x: Any) -> Any:
    while True:  # a Python-level hang: the per-op timer interrupts it
        pass


def _stuck(x: Any) -> Any:
    import signal
    import time

    # block the timer's signal, as a hang inside C code would: only killing the worker helps
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})
    time.sleep(60)
    return x


def _crash(x: Any) -> Any:
    raise RuntimeError("this op always fails")


def _die(x: Any) -> Any:
    import os

    os._exit(3)


for _name, _forward in (("spin", _spin), ("stuck", _stuck), ("crash", _crash), ("die", _die)):
    define_op(_name, _forward, vjp=lambda g, out, x: g, jvp=lambda ts, out, x: ts[0],
              family="hanging", inputs=(REAL,), shapes="(...)", registry=HANGING)
