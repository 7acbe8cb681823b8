"""Losses (``nn.<name>``, family ``loss``): cross-entropies with logits, l2, mse, huber.

The cross-entropies take TensorFlow's ``(labels, logits)`` order and are stable at any
magnitude of the logits: they go through log_softmax (a max shift) or the form
``max(x, 0) - x z + log1p(exp(-|x|))``.  Their rules use the registered softmax, log_softmax
and sigmoid, whose own rules are TensorFlow's gradient ops, so second order follows
TensorFlow's structure.  Soft labels are differentiable; the derivative with respect to the
logits is ``sum(labels) * softmax - labels``, which is TensorFlow's ``softmax - labels`` on
the simplex and stays right off it (where the numeric checks probe).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from gradcheck.domains import REAL, Domain, Interval
from gradcheck.engine.op import Op, define_op
from gradcheck.engine.tensor import value_of
from gradcheck.ops.activations import sigmoid
from gradcheck.ops.elementwise import clip
from gradcheck.ops.nn import axes_of, log_softmax, np_log_softmax, softmax
from gradcheck.ops.params import positive_number
from gradcheck.ops.reduce import expand_to
from gradcheck.ops.reduce import sum as sum_
from gradcheck.ops.refs import NoEquivalent, formula
from gradcheck.ops.rules import dtype_of, fit, shape_of, unbroadcast
from gradcheck.ops.shape import (
    broadcast_to,
    dims,
    draw_shape,
    expand_dims,
    pick,
    reshape,
    tf_axes,
    tf_broadcast,
)

#: Names exported in gradcheck.nn.
NN = ["softmax_cross_entropy_with_logits", "sparse_softmax_cross_entropy_with_logits",
      "sigmoid_cross_entropy_with_logits", "l2_loss", "mean_squared_error", "huber"]


# -- input domains ----------------------------------------------------------------------------
@dataclass(frozen=True, repr=False)
class SimplexAlong(Domain):
    """Soft labels: positive entries summing to 1 along the op's ``axis`` parameter."""

    param: str = "axis"

    def sample(self, rng: np.random.Generator, shape: tuple[int, ...], dtype: Any,
               scale: float = 1.0, context: dict[str, Any] | None = None) -> np.ndarray:
        axis = (context or {}).get("params", {}).get(self.param, -1)
        x = rng.uniform(0.1, 1.0, shape)
        if x.size:
            x = x / np.sum(x, axis=axes_of("SimplexAlong", axis, len(shape)), keepdims=True)
        return x.astype(dtype)

    def describe(self) -> str:
        return f"probabilities along {self.param}"


@dataclass(frozen=True, repr=False)
class ClassLabels(Domain):
    """Integer labels in [0, classes), the classes being the last dimension of input ``of``
    (TensorFlow's sparse labels come before the logits they index)."""

    of: int = 1
    differentiable = False

    def sample(self, rng: np.random.Generator, shape: tuple[int, ...], dtype: Any,
               scale: float = 1.0, context: dict[str, Any] | None = None) -> np.ndarray:
        shapes = (context or {}).get("shapes", [])
        classes = shapes[self.of][-1] if len(shapes) > self.of and shapes[self.of] else 1
        return rng.integers(0, max(int(classes), 1), shape).astype(np.int64)

    def describe(self) -> str:
        return "class labels"


def _same_nonscalar(draw: Callable[..., Any], form: str | None = None) -> list[tuple[int, ...]]:
    """Two equal shapes of 1 to 3 dims, or of a stratum's ``form`` (see
    gradcheck.checker.sampling.FORMS)."""
    from gradcheck.ops.forms import formed_shape

    shape = draw_shape(draw, 1, 3, min_side=0) if form is None else \
        formed_shape(draw, form, 1, 4)
    return [shape, shape]


def _loss(name: str, forward: Callable[..., Any], vjp: Any, jvp: Any, **meta: Any) -> Op:
    return define_op(name, forward, vjp, jvp, family="loss", **meta)


_NO_LOSS = "numpy has no loss functions"
# tf.compat.v1.losses.* cast both inputs to float32; the other losses are Keras'
_NO_TF_LOSS = ("TensorFlow's only {} outside Keras, tf.compat.v1.losses.{}, computes in "
               "float32")


# -- softmax cross-entropy --------------------------------------------------------------------
def _softmax_xent(labels: Any, logits: Any, axis: int = -1) -> np.ndarray:
    """-sum(labels * log_softmax(logits), axis): TensorFlow's softmax_cross_entropy_with_logits
    (soft labels of the logits' shape, classes along ``axis``)."""
    op = "nn.softmax_cross_entropy_with_logits"
    if np.shape(labels) != np.shape(logits):
        raise ValueError(f"{op}: labels {np.shape(labels)} and logits {np.shape(logits)} must "
                         "have the same shape")
    if not isinstance(axis, (int, np.integer)):
        raise TypeError(f"{op}: axis must be an int, got {axis!r}")
    axes = axes_of(op, axis, np.ndim(logits))
    return -np.sum(labels * log_softmax.forward(logits, axis=axes), axis=axes)


def _xent_dlogits(labels: Any, logits: Any, axis: int) -> Any:
    return softmax(logits, axis=axis) * sum_(labels, axis=axis, keepdims=True) - labels


def _xent_reference(labels: Any, logits: Any, axis: int = -1) -> np.ndarray:
    from scipy.special import log_softmax as scipy_log_softmax

    logits = np.asarray(logits)
    if not logits.size:
        return np.sum(np.asarray(labels) * logits, axis=axis)
    return -np.sum(labels * scipy_log_softmax(logits, axis=axis), axis=axis)


softmax_cross_entropy_with_logits: Op = _loss(
    "nn.softmax_cross_entropy_with_logits", _softmax_xent,
    vjp=(lambda g, out, labels, logits, axis=-1:
         expand_to(g, logits, axis, False) * -log_softmax(logits, axis=axis),
         lambda g, out, labels, logits, axis=-1:
         expand_to(g, logits, axis, False) * _xent_dlogits(labels, logits, axis)),
    jvp=(lambda t, out, labels, logits, axis=-1:
         -sum_(t * log_softmax(logits, axis=axis), axis=axis),
         lambda t, out, labels, logits, axis=-1:
         sum_(t * _xent_dlogits(labels, logits, axis), axis=axis)),
    inputs=(SimplexAlong(), REAL), shapes=_same_nonscalar, params={"axis": [-1, 0]},
    reference=_xent_reference,
    equivalents={
        "numpy": formula(lambda np_, labels, logits, axis=-1: -np_.sum(
            labels * np_log_softmax(np_, logits, axis), axis=axis), _NO_LOSS),
        "tensorflow": lambda tf, labels, logits, axis=-1:
            tf.nn.softmax_cross_entropy_with_logits(labels=labels, logits=logits, axis=axis),
    },
)


# -- sparse softmax cross-entropy -------------------------------------------------------------
def _one_hot(op: str, labels: Any, logits: Any) -> np.ndarray:
    """The labels as a one-hot array in the logits' dtype (a constant), validated."""
    idx = np.asarray(value_of(labels))
    shape = shape_of(logits)
    if idx.dtype.kind not in "iu":
        raise TypeError(f"{op}: labels must be integers, got dtype {idx.dtype}")
    if len(shape) == 0 or idx.shape != shape[:-1]:
        raise ValueError(f"{op}: labels have shape {idx.shape} but the logits {shape} need "
                         f"{shape[:-1] if shape else 'at least one dimension'}")
    if idx.size and (idx.min() < 0 or idx.max() >= shape[-1]):
        raise ValueError(f"{op}: labels must lie in [0, {shape[-1]}), got values from "
                         f"{idx.min()} to {idx.max()}")
    return (idx[..., None] == np.arange(shape[-1])).astype(dtype_of(logits))


def _sparse_xent(labels: Any, logits: Any) -> np.ndarray:
    """-log_softmax(logits)[label] over the last axis: TensorFlow's
    sparse_softmax_cross_entropy_with_logits (integer labels of shape logits.shape[:-1])."""
    hot = _one_hot("nn.sparse_softmax_cross_entropy_with_logits", labels, logits)
    return -np.sum(hot * log_softmax.forward(logits, axis=-1), axis=-1)


def _sparse_dlogits(labels: Any, logits: Any) -> Any:
    hot = _one_hot("nn.sparse_softmax_cross_entropy_with_logits", labels, logits)
    return softmax(logits, axis=-1) - hot


def _sparse_reference(labels: Any, logits: Any) -> np.ndarray:
    from scipy.special import log_softmax as scipy_log_softmax

    logits = np.asarray(logits)
    if not logits.size:
        return np.zeros(logits.shape[:-1], logits.dtype)
    picked = np.take_along_axis(scipy_log_softmax(logits, axis=-1), labels[..., None], -1)
    return -picked[..., 0]


def _sparse_shapes(draw: Callable[..., Any], form: str | None = None) -> list[tuple[int, ...]]:
    """Labels and logits of one more (class) axis; a stratum's ``form`` (see
    gradcheck.checker.sampling.FORMS) gives the logits many classes, one row, or 4 dims."""
    if form is not None:
        from gradcheck.ops.forms import formed_shape

        logits = formed_shape(draw, form, 1, 4)
        return [logits[:-1], logits]
    batch = draw_shape(draw, 0, 2, min_side=0)
    return [batch, (*batch, pick(draw, [3, 1, 2, 4]))]


def _np_sparse_xent(np_: Any, labels: Any, logits: Any) -> Any:
    hot = np.eye(dims(logits)[-1])[np.asarray(labels)]
    return -np_.sum(hot * np_log_softmax(np_, logits, -1), axis=-1)


def _tf_sparse_xent(tf: Any, labels: Any, logits: Any) -> Any:
    if not dims(logits)[-1]:
        raise NoEquivalent("TensorFlow's sparse cross-entropy needs at least one class")
    return tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)


sparse_softmax_cross_entropy_with_logits: Op = _loss(
    "nn.sparse_softmax_cross_entropy_with_logits", _sparse_xent,
    vjp=(None, lambda g, out, labels, logits:
         expand_dims(g, -1) * _sparse_dlogits(labels, logits)),
    jvp=(None, lambda t, out, labels, logits:
         sum_(t * _sparse_dlogits(labels, logits), axis=-1)),
    inputs=(ClassLabels(of=1), REAL), nondiff_argnums=(0,), shapes=_sparse_shapes,
    reference=_sparse_reference,
    equivalents={"numpy": formula(_np_sparse_xent, _NO_LOSS), "tensorflow": _tf_sparse_xent},
)


# -- sigmoid cross-entropy --------------------------------------------------------------------
def _sigmoid_xent(labels: Any, logits: Any) -> np.ndarray:
    """TensorFlow's sigmoid_cross_entropy_with_logits: -z log(sigmoid(x)) - (1 - z)
    log(1 - sigmoid(x)) in the stable form max(x, 0) - x z + log1p(exp(-|x|)) (broadcasting)."""
    x = np.asarray(logits)
    return np.maximum(x, 0) - x * labels + np.log1p(np.exp(-np.abs(x)))


def _tf_sigmoid_xent(tf: Any, labels: Any, logits: Any) -> Any:
    labels, logits = tf_broadcast(tf, labels, logits)  # TensorFlow's does not broadcast
    return tf.nn.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits)


sigmoid_cross_entropy_with_logits: Op = _loss(
    "nn.sigmoid_cross_entropy_with_logits", _sigmoid_xent,
    vjp=(lambda g, out, z, x: unbroadcast(-g * x, z),
         lambda g, out, z, x: unbroadcast(g * (sigmoid(x) - z), x)),
    jvp=(lambda t, out, z, x: fit(-t * x, out),
         lambda t, out, z, x: fit(t * (sigmoid(x) - z), out)),
    inputs=(Interval(0.0, 1.0), REAL), shapes="(...),(...)",
    reference=lambda z, x: np.logaddexp(0, x) - x * z,
    equivalents={
        # log(1 + e^-|x|) + max(x, 0) - x z, the stable form
        "numpy": formula(lambda np_, z, x: np_.logaddexp(0.0, -np_.abs(x))
                         + np_.maximum(x, 0.0) - x * z, _NO_LOSS),
        "tensorflow": _tf_sigmoid_xent,
    },
)


# -- regression losses ------------------------------------------------------------------------
l2_loss: Op = _loss(
    "nn.l2_loss", lambda t: np.asarray(np.sum(np.square(t)) / 2),
    vjp=lambda g, out, t: g * t,
    jvp=lambda ts, out, t: sum_(ts[0] * t),
    inputs=(REAL,), shapes="(...)", doc="TensorFlow's l2_loss: sum(t ** 2) / 2 (a scalar).",
    equivalents={"numpy": formula(lambda np_, t: np_.sum(t * t) / 2, _NO_LOSS),
                 "tensorflow": "nn.l2_loss"},
)


def _mean_count(op: str, shape: tuple[int, ...], axis: Any) -> int:
    n = int(np.prod([shape[a] for a in axes_of(op, axis, len(shape))], dtype=np.int64))
    if n == 0:
        raise ValueError(f"{op}: the mean over axis {axis!r} of shape {shape} has no entries")
    return n


def _diff(op: str, predictions: Any, targets: Any) -> np.ndarray:
    try:
        np.broadcast_shapes(np.shape(predictions), np.shape(targets))
    except ValueError:
        raise ValueError(f"{op}: predictions {np.shape(predictions)} and targets "
                         f"{np.shape(targets)} do not broadcast") from None
    return np.asarray(predictions) - np.asarray(targets)


def _mse(predictions: Any, targets: Any, axis: Any = None) -> np.ndarray:
    """mean((predictions - targets) ** 2) over ``axis`` (None: every entry), broadcasting."""
    e = _diff("nn.mean_squared_error", predictions, targets)
    n = _mean_count("nn.mean_squared_error", e.shape, axis)
    return np.asarray(np.sum(np.square(e), axis=axis) / n)


def _huber(predictions: Any, targets: Any, delta: float = 1.0, axis: Any = None) -> np.ndarray:
    """Mean over ``axis`` of e**2 / 2 where |e| <= delta, delta (|e| - delta / 2) elsewhere,
    for e = predictions - targets.  Not twice differentiable where |e| = delta."""
    op = "nn.huber"
    delta = positive_number(op, "delta", delta)
    e = _diff(op, predictions, targets)
    n = _mean_count(op, e.shape, axis)
    a = np.abs(e)
    loss = np.where(a <= delta, 0.5 * np.square(e), delta * (a - 0.5 * delta))
    return np.asarray(np.sum(loss, axis=axis) / n)


def _regression_rules(name: str, slope: Callable[..., Any]) -> tuple[Any, Any]:
    """The VJP and JVP of mean(loss(p - t)) over ``axis`` for the elementwise ``slope(e,
    **params)`` = d loss / d e (written with registered ops)."""

    def weights(p: Any, t: Any, params: dict[str, Any]) -> tuple[Any, tuple[int, ...]]:
        e = p - t
        axis = params.get("axis")
        return slope(e, **params) * (1 / _mean_count(name, shape_of(e), axis)), shape_of(e)

    def vjp(g: Any, out: Any, p: Any, t: Any, **params: Any) -> tuple[Any, Any]:
        w, shape = weights(p, t, params)
        axes = axes_of(name, params.get("axis"), len(shape))
        kept = tuple(1 if i in axes else d for i, d in enumerate(shape))
        ct = broadcast_to(reshape(g, kept), shape) * w
        return unbroadcast(ct, p), unbroadcast(-ct, t)

    def jvp(ts: Any, out: Any, p: Any, t: Any, **params: Any) -> Any:
        tp, tt = ts
        if tp is None and tt is None:
            return None
        w, _ = weights(p, t, params)
        diff = tp if tt is None else (-tt if tp is None else tp - tt)
        return fit(sum_(diff * w, axis=params.get("axis")), out)

    return vjp, jvp


def _regression_params(draw: Callable[..., Any], shapes: list[tuple[int, ...]]) -> dict[str, Any]:
    return {"axis": pick(draw, [None, -1, 0])}


def _tf_mse(tf: Any, p: Any, t: Any, axis: Any = None) -> Any:
    e = tf.math.squared_difference(p, t)
    return tf.reduce_mean(e, axis=tf_axes(axis, len(dims(e))))


mean_squared_error: Op = _loss(
    "nn.mean_squared_error", _mse,
    *_regression_rules("nn.mean_squared_error", lambda e, axis=None: 2 * e),
    inputs=(REAL, REAL), shapes="(...,n),(...,n)", params=_regression_params,
    equivalents={
        "numpy": formula(lambda np_, p, t, axis=None: np_.mean(np_.square(p - t), axis=axis),
                         _NO_LOSS),
        "tensorflow": formula(_tf_mse, _NO_TF_LOSS.format("mean squared error",
                                                          "mean_squared_error")),
    },
)


def _huber_params(draw: Callable[..., Any], shapes: list[tuple[int, ...]]) -> dict[str, Any]:
    return {**_regression_params(draw, shapes), "delta": pick(draw, [1.0, 0.5, 2.0])}


def _huber_with(where: Callable[..., Any], absolute: Callable[..., Any], e: Any,
                delta: float) -> Any:
    a = absolute(e)
    return where(a <= delta, 0.5 * e * e, delta * (a - 0.5 * delta))


def _tf_huber(tf: Any, p: Any, t: Any, delta: float = 1.0, axis: Any = None) -> Any:
    loss = _huber_with(tf.where, tf.abs, p - t, delta)
    return tf.reduce_mean(loss, axis=tf_axes(axis, len(dims(loss))))


# Its kinks (|predictions - targets| = delta) are not points of either input alone, so there
# is no kinks entry: the checker's numeric kink test catches a sample that lands there.
huber: Op = _loss(
    "nn.huber", _huber,
    *_regression_rules("nn.huber", lambda e, delta=1.0, axis=None:
                       clip(e, -positive_number("nn.huber", "delta", delta),
                            positive_number("nn.huber", "delta", delta))),
    inputs=(REAL, REAL), shapes="(...,n),(...,n)", params=_huber_params,
    equivalents={
        "numpy": formula(lambda np_, p, t, delta=1.0, axis=None: np_.mean(
            _huber_with(np_.where, np_.abs, p - t, delta), axis=axis), _NO_LOSS),
        "tensorflow": formula(_tf_huber, _NO_TF_LOSS.format("Huber loss", "huber_loss")),
    },
)
