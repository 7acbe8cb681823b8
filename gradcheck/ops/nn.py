"""Neural-network ops (``nn.<name>``): softmax, log_softmax, normalization, embedding, dropout.

softmax and log_softmax are differentiated, as in TensorFlow's ``nn_grad.py``, through
gradient ops with TensorFlow's math: ``nn.softmax_grad(dy, y) = (dy - sum(dy * y)) * y`` and
``nn.log_softmax_grad(dy, y) = dy - sum(dy) * exp(y)``, where ``y`` is the forward's output.
Both are linear in the upstream gradient ``dy`` and declare their own VJP and JVP, so second
order goes through gradient-of-gradient rules.  Forwards shift by the maximum, so they are
stable at any magnitude.

layer_norm and batch_norm are one normalization with different default axes (the axes the
statistics are taken over); their rules use the symmetric Jacobian of ``x -> (x - mean) /
sqrt(var + eps)``.  embedding's VJP is ``scatter_add`` into the table; dropout takes its mask.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from gradcheck.domains import REAL, BoolMask, Indices, Interval
from gradcheck.engine.op import Op, define_op
from gradcheck.engine.tensor import value_of
from gradcheck.ops.elementwise import exp, rsqrt, zeros_like
from gradcheck.ops.indexing import scatter_add
from gradcheck.ops.params import is_int, positive_number, real_number
from gradcheck.ops.reduce import mean
from gradcheck.ops.reduce import sum as sum_
from gradcheck.ops.refs import formula
from gradcheck.ops.rules import dtype_of, fit, normalize_axis, unbroadcast
from gradcheck.ops.shape import dims, draw_shape, pick, tf_axes, tf_constant

#: Names exported in gradcheck.nn.
NN = ["softmax", "log_softmax", "layer_norm", "batch_norm", "embedding", "dropout"]


def _ints(values: Any) -> bool:
    """Whether ``values`` is a sequence (tuple, list, array) of ints."""
    try:
        return all(is_int(v) for v in values)
    except TypeError:  # not iterable
        return False


def axes_of(op: str, axis: Any, ndim: int) -> tuple[int, ...]:
    """``axis`` (None, an int or a tuple of distinct ints) as sorted non-negative axes; the
    error names ``op``: a TypeError for a value that is not an axis (a bool, a float), a
    ValueError for an axis out of range or named twice."""
    if axis is not None and not is_int(axis) and not _ints(axis):
        raise TypeError(f"{op}: axis must be None, an int or a tuple of ints, got "
                        f"{type(axis).__name__} {axis!r}")
    try:
        axes = normalize_axis(axis, ndim)
    except (ValueError, TypeError) as error:
        raise ValueError(f"{op}: bad axis {axis!r} for an input of dimension {ndim}: "
                         f"{error}") from None
    if len(set(axes)) != len(axes):
        raise ValueError(f"{op}: bad axis {axis!r} for an input of dimension {ndim}: it names "
                         "the same axis twice")
    return axes


def _axis_choices(shapes: list[tuple[int, ...]]) -> list[Any]:
    nd = len(shapes[0])
    return [-1, 0, None] + ([1, (0, -1)] if nd >= 2 else [])


def _class_shapes(draw: Callable[..., Any], form: str | None = None) -> list[tuple[int, ...]]:
    """One non-scalar shape (softmax needs an axis); of a stratum's ``form`` if given."""
    return [_nonscalar(draw, form)]


def _same_two(draw: Callable[..., Any], form: str | None = None) -> list[tuple[int, ...]]:
    shape = _nonscalar(draw, form)
    return [shape, shape]


def _nonscalar(draw: Callable[..., Any], form: str | None) -> tuple[int, ...]:
    """1 to 3 dims, or a stratum's ``form`` (see gradcheck.checker.sampling.FORMS)."""
    from gradcheck.ops.forms import formed_shape

    return draw_shape(draw, 1, 3, min_side=0) if form is None else \
        formed_shape(draw, form, 1, 4)


def _same_shape(op: str, dy: Any, y: Any) -> None:
    if np.shape(dy) != np.shape(y):
        raise ValueError(f"{op}: the upstream gradient has shape {np.shape(dy)} but the output "
                         f"has shape {np.shape(y)}; they must be equal")


# -- equivalents: numpy has no softmax (autograd.scipy.special only logsumexp) -----------------
def tf_over_axes(tf: Any, fn: Callable[..., Any], x: Any, axis: Any) -> Any:
    """``fn(x, axis=a)`` (tf.nn.softmax, tf.nn.log_softmax: one int axis) over numpy's
    ``axis``: an int, a tuple or None (every axis) moved last and flattened into one."""
    shape = dims(x)
    if not int(np.prod(shape)):
        return x * 0.0
    axes = tf_axes(axis, len(shape)) or list(range(len(shape)))
    if len(axes) == 1:
        return fn(x, axis=axes[0])
    rest = [i for i in range(len(shape)) if i not in axes]
    moved = tf.transpose(x, perm=rest + axes)
    flat = tf.reshape(moved, [shape[i] for i in rest] + [int(np.prod([shape[i] for i in axes]))])
    out = tf.reshape(fn(flat, axis=-1), [shape[i] for i in rest + axes])
    return tf.transpose(out, perm=list(np.argsort(rest + axes)))


def np_log_softmax(np_: Any, x: Any, axis: Any = -1) -> Any:
    """log_softmax with a numpy namespace: x - logsumexp(x)."""
    if not int(np.prod(dims(x))):
        return x * 1.0
    return x - np_.special.logsumexp(x, axis=axis, keepdims=True)


_NO_SOFTMAX = "numpy has no softmax; autograd.scipy.special has logsumexp only"


def _tf_sum(tf: Any, x: Any, axis: Any) -> Any:
    return tf.reduce_sum(x, axis=tf_axes(axis, len(dims(x))), keepdims=True)


# -- softmax ----------------------------------------------------------------------------------
def _softmax(x: Any, axis: Any = -1) -> np.ndarray:
    """exp(x) / sum(exp(x)) along ``axis``, shifted by the maximum (no overflow)."""
    x = np.asarray(x)
    axes = axes_of("nn.softmax", axis, x.ndim)
    if x.size == 0:
        return np.zeros_like(x)
    e = np.exp(x - np.max(x, axis=axes, keepdims=True))
    return e / np.sum(e, axis=axes, keepdims=True)


def _softmax_grad(dy: Any, y: Any, axis: Any = -1) -> np.ndarray:
    """TensorFlow's softmax gradient: (dy - sum(dy * y, axis)) * y for y = softmax(x)."""
    _same_shape("nn.softmax_grad", dy, y)
    axes = axes_of("nn.softmax_grad", axis, np.ndim(y))
    return (dy - np.sum(dy * y, axis=axes, keepdims=True)) * y


def _softmax_grad_dy(w: Any, out: Any, dy: Any, y: Any, axis: Any = -1) -> Any:
    # (diag(y) - y y^T) is symmetric: the op is its own transpose in dy
    return softmax_grad(w, y, axis=axis)


def _softmax_grad_y_vjp(w: Any, out: Any, dy: Any, y: Any, axis: Any = -1) -> Any:
    axes = axes_of("nn.softmax_grad", axis, len(np.shape(value_of(y))))
    s = sum_(dy * y, axis=axes, keepdims=True)
    return w * (dy - s) - dy * sum_(w * y, axis=axes, keepdims=True)


def _softmax_grad_y_jvp(t: Any, out: Any, dy: Any, y: Any, axis: Any = -1) -> Any:
    axes = axes_of("nn.softmax_grad", axis, len(np.shape(value_of(y))))
    s = sum_(dy * y, axis=axes, keepdims=True)
    return t * (dy - s) - y * sum_(dy * t, axis=axes, keepdims=True)


softmax_grad: Op = define_op(
    "nn.softmax_grad", _softmax_grad,
    vjp=(_softmax_grad_dy, _softmax_grad_y_vjp),
    jvp=(_softmax_grad_dy, _softmax_grad_y_jvp),
    family="nn", inputs=(REAL, Interval(0.0, 1.0)), shapes=_same_two,
    params={"axis": _axis_choices}, grad_of="nn.softmax",
    equivalents={
        "numpy": formula(lambda np_, dy, y, axis=-1: (
            dy - np_.sum(dy * y, axis=axis, keepdims=True)) * y, _NO_SOFTMAX),
        "tensorflow": formula(lambda tf, dy, y, axis=-1: (dy - _tf_sum(tf, dy * y, axis)) * y,
                              "TensorFlow has no softmax gradient op: its _SoftmaxGrad "
                              "computes this expression"),
    },
)
softmax: Op = define_op(
    "nn.softmax", _softmax,
    vjp=lambda g, out, x, axis=-1: softmax_grad(g, out, axis=axis),
    jvp=lambda ts, out, x, axis=-1: softmax_grad(ts[0], out, axis=axis),
    family="nn", inputs=(REAL,), shapes=_class_shapes, params={"axis": _axis_choices},
    grad_op="nn.softmax_grad", reference=lambda x, axis=-1: _scipy("softmax", x, axis),
    equivalents={
        "numpy": formula(lambda np_, x, axis=-1: np_.exp(np_log_softmax(np_, x, axis)),
                         _NO_SOFTMAX),
        "tensorflow": lambda tf, x, axis=-1: tf_over_axes(tf, tf.nn.softmax, x, axis),
    },
)


def _scipy(name: str, x: Any, axis: Any) -> np.ndarray:
    """scipy.special's softmax or log_softmax (it rejects empty arrays: those stay empty)."""
    import scipy.special

    x = np.asarray(x)
    return getattr(scipy.special, name)(x, axis=axis) if x.size else np.zeros_like(x)


# -- log_softmax ------------------------------------------------------------------------------
def _log_softmax(x: Any, axis: Any = -1) -> np.ndarray:
    """x - logsumexp(x) along ``axis``, shifted by the maximum (finite for finite x)."""
    x = np.asarray(x)
    axes = axes_of("nn.log_softmax", axis, x.ndim)
    if x.size == 0:
        return np.zeros_like(x)
    z = x - np.max(x, axis=axes, keepdims=True)
    return z - np.log(np.sum(np.exp(z), axis=axes, keepdims=True))


def _log_softmax_grad(dy: Any, y: Any, axis: Any = -1) -> np.ndarray:
    """TensorFlow's log_softmax gradient: dy - sum(dy, axis) * exp(y) for y = log_softmax(x)."""
    _same_shape("nn.log_softmax_grad", dy, y)
    axes = axes_of("nn.log_softmax_grad", axis, np.ndim(y))
    return dy - np.sum(dy, axis=axes, keepdims=True) * np.exp(y)


def _log_softmax_grad_dy_vjp(w: Any, out: Any, dy: Any, y: Any, axis: Any = -1) -> Any:
    axes = axes_of("nn.log_softmax_grad", axis, len(np.shape(value_of(y))))
    return w - sum_(w * exp(y), axis=axes, keepdims=True)


def _log_softmax_grad_y(w: Any, out: Any, dy: Any, y: Any, axis: Any = -1) -> Any:
    # d/dy_i of -sum(dy) exp(y_i) is diagonal: the VJP and JVP are the same expression
    axes = axes_of("nn.log_softmax_grad", axis, len(np.shape(value_of(y))))
    return -w * sum_(dy, axis=axes, keepdims=True) * exp(y)


log_softmax_grad: Op = define_op(
    "nn.log_softmax_grad", _log_softmax_grad,
    vjp=(_log_softmax_grad_dy_vjp, _log_softmax_grad_y),
    jvp=(lambda t, out, dy, y, axis=-1: log_softmax_grad(t, y, axis=axis), _log_softmax_grad_y),
    family="nn", inputs=(REAL, Interval(-6.0, 0.0)), shapes=_same_two,
    params={"axis": _axis_choices}, grad_of="nn.log_softmax",
    equivalents={
        "numpy": formula(lambda np_, dy, y, axis=-1: dy - np_.sum(dy, axis=axis, keepdims=True)
                         * np_.exp(y), _NO_SOFTMAX),
        "tensorflow": formula(lambda tf, dy, y, axis=-1: dy - _tf_sum(tf, dy, axis) * tf.exp(y),
                              "TensorFlow has no log_softmax gradient op: its _LogSoftmaxGrad "
                              "computes this expression"),
    },
)


def _log_softmax_jvp(ts: Any, out: Any, x: Any, axis: Any = -1) -> Any:
    axes = axes_of("nn.log_softmax", axis, len(np.shape(value_of(x))))
    return ts[0] - sum_(ts[0] * exp(out), axis=axes, keepdims=True)


log_softmax: Op = define_op(
    "nn.log_softmax", _log_softmax,
    vjp=lambda g, out, x, axis=-1: log_softmax_grad(g, out, axis=axis),
    jvp=_log_softmax_jvp,
    family="nn", inputs=(REAL,), shapes=_class_shapes, params={"axis": _axis_choices},
    grad_op="nn.log_softmax_grad",
    reference=lambda x, axis=-1: _scipy("log_softmax", x, axis),
    equivalents={
        "numpy": formula(np_log_softmax, _NO_SOFTMAX),
        "tensorflow": lambda tf, x, axis=-1: tf_over_axes(tf, tf.nn.log_softmax, x, axis),
    },
)


# -- layer_norm and batch_norm ----------------------------------------------------------------
def _normalize(op: str, x: Any, gamma: Any, beta: Any, axis: Any, eps: float) -> np.ndarray:
    x = np.asarray(x)
    try:
        fits = np.broadcast_shapes(x.shape, np.shape(gamma), np.shape(beta)) == x.shape
    except ValueError:
        fits = False
    if not fits:
        raise ValueError(f"{op}: gamma {np.shape(gamma)} and beta {np.shape(beta)} must "
                         f"broadcast to the input's shape {x.shape} without changing it")
    eps = positive_number(op, "eps", eps)
    axes = axes_of(op, axis, x.ndim)
    if x.size == 0:
        return np.zeros(x.shape, np.result_type(x, gamma, beta))
    mu = np.mean(x, axis=axes, keepdims=True)
    var = np.mean(np.square(x - mu), axis=axes, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * gamma + beta


def _statistics(x: Any, axes: tuple[int, ...], eps: float) -> tuple[Any, Any]:
    """The normalized input and 1 / sqrt(var + eps), in registered ops."""
    centered = x - mean(x, axis=axes, keepdims=True)
    rstd = rsqrt(mean(centered * centered, axis=axes, keepdims=True) + eps)
    return centered * rstd, rstd


def _normalized_jacobian(w: Any, xhat: Any, rstd: Any, axes: tuple[int, ...]) -> Any:
    """d(xhat)/dx applied to ``w``; the matrix is symmetric, so this is the VJP and the JVP."""
    return rstd * (w - mean(w, axis=axes, keepdims=True)
                   - xhat * mean(w * xhat, axis=axes, keepdims=True))


def _normalization(name: str, default_axis: Any, doc: str) -> Op:
    def forward(x: Any, gamma: Any, beta: Any, axis: Any = default_axis,
                eps: float = 1e-5) -> np.ndarray:
        return _normalize(name, x, gamma, beta, axis, eps)

    def vjp(g: Any, out: Any, x: Any, gamma: Any, beta: Any, axis: Any = default_axis,
            eps: float = 1e-5) -> tuple[Any, Any, Any]:
        axes = axes_of(name, axis, len(np.shape(value_of(x))))
        if not np.size(value_of(x)):
            return zeros_like(x), zeros_like(gamma), zeros_like(beta)
        xhat, rstd = _statistics(x, axes, eps)
        return (unbroadcast(_normalized_jacobian(g * gamma, xhat, rstd, axes), x),
                unbroadcast(g * xhat, gamma), unbroadcast(g, beta))

    def jvp(ts: Any, out: Any, x: Any, gamma: Any, beta: Any, axis: Any = default_axis,
            eps: float = 1e-5) -> Any:
        axes = axes_of(name, axis, len(np.shape(value_of(x))))
        if not np.size(value_of(x)):
            return zeros_like(out)
        xhat, rstd = _statistics(x, axes, eps)
        t_x, t_gamma, t_beta = ts
        total = zeros_like(out)
        if t_x is not None:
            total = total + _normalized_jacobian(t_x, xhat, rstd, axes) * gamma
        if t_gamma is not None:
            total = total + xhat * t_gamma
        if t_beta is not None:
            total = total + t_beta
        return fit(total, out)

    def numpy_equivalent(np_: Any, x: Any, gamma: Any, beta: Any, axis: Any = default_axis,
                         eps: float = 1e-5) -> Any:
        mu = np_.mean(x, axis=axis, keepdims=True)
        var = np_.mean(np_.square(x - mu), axis=axis, keepdims=True)
        return (x - mu) / np_.sqrt(var + eps) * gamma + beta

    def tf_equivalent(tf: Any, x: Any, gamma: Any, beta: Any, axis: Any = default_axis,
                      eps: float = 1e-5) -> Any:
        axes = tf_axes(axis, len(dims(x))) or list(range(len(dims(x))))
        mean_, variance = tf.nn.moments(x, axes, keepdims=True)
        return tf.nn.batch_normalization(x, mean_, variance, beta, gamma, eps)

    forward.__doc__ = doc
    return define_op(
        name, forward, vjp, jvp, family="nn", inputs=(REAL, REAL, REAL),
        shapes=_norm_shapes, params=_norm_params,
        equivalents={"numpy": formula(numpy_equivalent, "numpy has no normalization function"),
                     "tensorflow": tf_equivalent},
    )


def _norm_shapes(draw: Callable[..., Any], form: str | None = None) -> list[tuple[int, ...]]:
    """x of 1 to 3 nonempty dims (or of a stratum's ``form``); gamma and beta shaped like its
    last axis, all of x, or (1,)."""
    x = draw_shape(draw, 1, 3, min_side=1) if form is None else _nonscalar(draw, form)
    return [x, pick(draw, [x[-1:], x, (1,)]), pick(draw, [x[-1:], (1,), x])]


def _norm_params(draw: Callable[..., Any], shapes: list[tuple[int, ...]]) -> dict[str, Any]:
    return {"axis": pick(draw, _axis_choices(shapes)), "eps": pick(draw, [1e-5, 1e-3])}


layer_norm: Op = _normalization(
    "nn.layer_norm", -1,
    "(x - mean) / sqrt(var + eps) * gamma + beta, statistics over ``axis`` (default the last; "
    "the biased variance, as TensorFlow and PyTorch use).  gamma and beta broadcast to x.",
)
batch_norm: Op = _normalization(
    "nn.batch_norm", 0,
    "Batch normalization with the batch's own statistics (training mode): layer_norm's "
    "formula with the statistics over ``axis`` (default 0, the batch; pass (0, 1, 2) for "
    "NHWC images), then gamma and beta per feature.",
)


# -- embedding --------------------------------------------------------------------------------
def _embedding(table: Any, ids: Any) -> np.ndarray:
    """Rows of ``table`` at the integer ``ids`` (TensorFlow's embedding_lookup): shape
    ids.shape + table.shape[1:].  Ids must lie in [0, len(table))."""
    table = np.asarray(table)
    idx = np.asarray(value_of(ids))
    if table.ndim == 0:
        raise ValueError("nn.embedding: the table must have at least one dimension")
    if idx.dtype.kind not in "iu":
        raise TypeError(f"nn.embedding: ids must be integers, got dtype {idx.dtype}")
    if idx.size and (idx.min() < 0 or idx.max() >= table.shape[0]):
        raise ValueError(f"nn.embedding: ids must lie in [0, {table.shape[0]}), got values "
                         f"from {idx.min()} to {idx.max()}")
    return np.take(table, idx, axis=0)


def _embedding_shapes(draw: Callable[..., Any], form: str | None = None) -> list[tuple[int, ...]]:
    """A table of 1 or 2 dims and ids; a stratum's ``form`` (see
    gradcheck.checker.sampling.FORMS) gives a table of many rows, a vector table and ids, or
    a 4-d table."""
    if form is None:
        return [draw_shape(draw, 1, 2, min_side=1), draw_shape(draw, 0, 2, max_side=3)]
    from gradcheck.ops.forms import LONG, formed_shape

    if form == "long":
        return [(pick(draw, list(range(LONG[0], LONG[1] + 1))), pick(draw, [2, 3])),
                draw_shape(draw, 1, 2, min_side=1, max_side=3)]
    if form == "vector":
        return [formed_shape(draw, form), formed_shape(draw, form)]
    return [formed_shape(draw, form), draw_shape(draw, 0, 1, min_side=1, max_side=3)]


embedding: Op = define_op(
    "nn.embedding", _embedding,
    vjp=(lambda g, out, table, ids: scatter_add(zeros_like(table), ids, g, axis=0), None),
    linear=True, family="nn", inputs=(REAL, Indices(axis=0)), nondiff_argnums=(1,),
    shapes=_embedding_shapes,
    equivalents={"numpy": lambda np_, table, ids: table[np.asarray(ids)],
                 "tensorflow": lambda tf, table, ids: tf.nn.embedding_lookup(
                     table, tf.constant(tf_constant(tf, ids, np.int64)))},
)


# -- dropout ----------------------------------------------------------------------------------
def _keep_scale(mask: Any, rate: float, like: Any) -> np.ndarray:
    """mask / (1 - rate) in the input's dtype (a constant: the mask is not differentiated)."""
    m = np.asarray(value_of(mask))
    if m.dtype != np.bool_:
        raise TypeError(f"nn.dropout: the mask must be boolean, got dtype {m.dtype}")
    rate = real_number("nn.dropout", "rate", rate)
    if not 0 <= rate < 1:
        raise ValueError(f"op 'nn.dropout': rate must lie in [0, 1), got {rate!r}")
    return (m * (1.0 / (1.0 - rate))).astype(dtype_of(like))


def _dropout(x: Any, mask: Any, rate: float) -> np.ndarray:
    """x * mask / (1 - rate) for a given boolean ``mask`` that broadcasts to x (kept entries
    are scaled up, as TensorFlow's dropout does, so the expectation is unchanged)."""
    x = np.asarray(x)
    try:
        fits = np.broadcast_shapes(x.shape, np.shape(mask)) == x.shape
    except ValueError:
        fits = False
    if not fits:
        raise ValueError(f"nn.dropout: the mask's shape {np.shape(mask)} must broadcast to "
                         f"the input's shape {x.shape}")
    return x * _keep_scale(mask, rate, x)


dropout: Op = define_op(
    "nn.dropout", _dropout,
    vjp=(lambda g, out, x, mask, rate: g * _keep_scale(mask, rate, g), None),
    linear=True, family="nn", inputs=(REAL, BoolMask()), nondiff_argnums=(1,),
    shapes="(...),(...)", params={"rate": [0.5, 0.0, 0.2]},
    equivalents={
        "numpy": formula(lambda np_, x, mask, rate: x * (np.asarray(mask) / (1.0 - rate)),
                         "numpy has no dropout"),
        "tensorflow": formula(lambda tf, x, mask, rate: x * tf.constant(
            tf_constant(tf, mask) / (1.0 - rate), dtype=x.dtype),
            "tf.nn.dropout draws its own mask; the op is given one"),
    },
)
