"""Cumulative ops along an axis: cumsum, cumprod, cumlogsumexp, and the scan under their rules.

Every derivative here is a first-order linear recurrence, so one registered op,
``linear_recurrence``, carries them all: its own derivatives are linear recurrences
too, which keeps every rule differentiable again.  It multiplies and adds only (no
division), so cumprod and prod stay exact when the input holds zeros, where the
usual ``cumsum(g * y) / x`` rule gives nan.

The cumulative ops name their equivalents (``equivalents=``): numpy's function where
there is one, and TensorFlow's ``tf.math.cumsum``, ``cumprod`` and ``cumulative_logsumexp``.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from gradcheck.domains import REAL, Domain
from gradcheck.engine.op import define_op
from gradcheck.ops.elementwise import exp
from gradcheck.ops.rules import dtype_of, fit, shape_of, unbroadcast

#: Names exported in gradcheck.numpy.
NUMPY = ["cumsum", "cumprod", "cumlogsumexp"]

ANY = "(...)"
_BLOCK = 32  # scan length done step by step; longer scans go block-wise (fewer Python steps)


@dataclass(frozen=True, repr=False)
class RealWithZeros(Domain):
    """Real values ~ N(0, scale) with about a fraction ``p`` of them exactly zero.

    For products: their rules must not divide by the input.  The magnitude explored goes as
    far as products allow: the product of all entries stays inside float32's range (1e30),
    so a large array's entries are capped at ``1e30 ** (1 / size)``.
    """

    p: float = 0.25

    def sample(self, rng: np.random.Generator, shape: tuple[int, ...], dtype: Any,
               scale: float = 1.0, context: dict[str, Any] | None = None) -> np.ndarray:
        size = int(np.prod(shape, dtype=np.int64))
        scale = min(scale, 1e30 ** (1.0 / max(size, 1)))
        x = rng.standard_normal(shape) * scale
        return (x * (rng.uniform(0.0, 1.0, shape) >= self.p)).astype(dtype)

    def describe(self) -> str:
        return f"real, about {self.p:.0%} exact zeros"


REAL_WITH_ZEROS = RealWithZeros()


# -- the scan ---------------------------------------------------------------------------
def _scan_last(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``h[k] = a[k] * h[k-1] + b[k]`` along the last axis, from ``h[-1] = 0``."""
    n = b.shape[-1]
    if n <= _BLOCK:
        h = np.empty_like(b)
        carry = np.zeros(b.shape[:-1], dtype=b.dtype)
        for k in range(n):
            carry = a[..., k] * carry + b[..., k]
            h[..., k] = carry
        return h
    # Scan each block from a zero carry, then scan the blocks' end values (a shorter
    # recurrence whose coefficients are the blocks' products) and add the carries in.
    m = -(-n // _BLOCK)
    widths = [(0, 0)] * (b.ndim - 1) + [(0, m * _BLOCK - n)]
    blocked = (*b.shape[:-1], m, _BLOCK)
    ab = np.pad(a, widths, constant_values=1).reshape(blocked)
    bb = np.pad(b, widths).reshape(blocked)
    local = _scan_last(ab, bb)
    with np.errstate(over="ignore", invalid="ignore"):
        gain = np.cumprod(ab, axis=-1)
        ends = _scan_last(gain[..., -1], local[..., -1])
        carry = np.concatenate([np.zeros_like(ends[..., :1]), ends[..., :-1]], axis=-1)
        # a zero carry adds nothing, even where the block's product overflowed
        term = np.where(carry[..., None] == 0, 0, gain * carry[..., None])
    return (local + term).reshape(*b.shape[:-1], m * _BLOCK)[..., :n]


def _shift(x: np.ndarray) -> np.ndarray:
    """``x`` moved one step along the last axis, zero first."""
    return np.concatenate([np.zeros_like(x[..., :1]), x[..., :-1]], axis=-1)


def _linrec_forward(a, b, axis=-1, reverse=False, exclusive=False):
    """The linear recurrence along ``axis``; ``a[j]`` is the factor between steps j-1 and j.

    forward:  ``h[k] = a[k] h[k-1] + b[k]``, i.e. ``h[k] = sum_{i<=k} b[i] prod_{i<j<=k} a[j]``;
    exclusive: ``h[k] = sum_{i<k} b[i] prod_{i<j<k} a[j]`` (the inclusive result shifted);
    reverse: the same from the other end, ``h[i] = sum_{k>=i} b[k] prod_{i<j<=k} a[j]``
    (exclusive: ``k > i`` and ``i<j<k``).  Reverse and forward with the same ``a`` are
    transposes of each other in ``b``.
    """
    a, b = np.broadcast_arrays(np.asarray(a), np.asarray(b))
    if a.ndim == 0:
        raise ValueError("op 'linear_recurrence': inputs must have at least one dimension")
    dtype = np.result_type(a, b)
    a = np.moveaxis(a, axis, -1).astype(dtype)
    b = np.moveaxis(b, axis, -1).astype(dtype)
    if reverse:
        a, b = a[..., ::-1], b[..., ::-1]
        if not exclusive:  # in reversed order the factor sits one step later
            a = _shift(a)
    h = _scan_last(a, b)
    if exclusive:
        h = _shift(h)
    if reverse:
        h = h[..., ::-1]
    return np.ascontiguousarray(np.moveaxis(h, -1, axis))


def _linrec_vjp(g, out, a, b, axis=-1, reverse=False, exclusive=False):
    # transpose in b: the same recurrence run the other way; in a: see _linrec_jvp_a
    ct_b = linear_recurrence(a, g, axis=axis, reverse=not reverse, exclusive=exclusive)
    if exclusive:
        ct_a = out * ct_b
    elif reverse:
        ct_a = out * linear_recurrence(a, g, axis=axis, exclusive=True)
    else:
        ct_a = linear_recurrence(a, b, axis=axis, exclusive=True) * ct_b
    return unbroadcast(ct_a, a), unbroadcast(ct_b, b)


def _linrec_jvp_a(t, out, a, b, axis=-1, reverse=False, exclusive=False):
    # d h[k] = da[k] h[k-1] + a[k] dh[k-1]: a recurrence driven by da times the previous h
    if exclusive or reverse:
        return fit(linear_recurrence(a, t * out, axis=axis, reverse=reverse, exclusive=True), out)
    prev = linear_recurrence(a, b, axis=axis, exclusive=True)
    return fit(linear_recurrence(a, t * prev, axis=axis), out)


def _linrec_jvp_b(t, out, a, b, axis=-1, reverse=False, exclusive=False):
    return fit(linear_recurrence(a, t, axis=axis, reverse=reverse, exclusive=exclusive), out)


def _linrec_axes(shapes: list[tuple[int, ...]]) -> list[int]:
    return [-1, 0]


linear_recurrence = define_op(
    "linear_recurrence", _linrec_forward,
    vjp=_linrec_vjp, jvp=(_linrec_jvp_a, _linrec_jvp_b),
    family="reduce", inputs=(REAL, REAL), shapes="(...,n),(...,n)",
    params={"axis": _linrec_axes, "reverse": [False, True], "exclusive": [False, True]},
    complex_rules=True,  # prod's and cumsum's complex rules run through it
)


# -- helpers for the rules ----------------------------------------------------------------
def _flat(x, axis):
    # numpy's cumulative functions scan the flattened array for axis=None and for 0-d input
    return axis is None or not shape_of(x)


def _along(x, axis):
    """``(x, axis)`` as the scan sees them."""
    if _flat(x, axis):
        from gradcheck.ops.shape import reshape

        return reshape(x, (int(np.prod(shape_of(x), dtype=np.int64)),)), 0
    return x, axis


def _unflatten(ct, x, axis):
    if _flat(x, axis):
        from gradcheck.ops.shape import reshape

        return reshape(ct, shape_of(x))
    return ct


def first_mask(x: Any, axis: int, last: bool = False) -> np.ndarray:
    """A constant, shaped to broadcast with ``x``: 1 at the first (or last) index of ``axis``."""
    shape = shape_of(x)
    axis = axis % len(shape)
    mask = np.zeros([1] * axis + [shape[axis]] + [1] * (len(shape) - axis - 1), dtype_of(x))
    if shape[axis]:
        np.moveaxis(mask, axis, 0)[-1 if last else 0] = 1
    return mask


def shift_in(y: Any, axis: int, first: Any) -> Any:
    """``y`` moved one step forward along ``axis``, with ``first`` (broadcast) at index 0."""
    zero = np.zeros((), dtype_of(y))
    return linear_recurrence(zero, y, axis=axis, exclusive=True) + first_mask(y, axis) * first


def exclusive_cumprod(x: Any, axis: int, reverse: bool = False) -> Any:
    """Products of the entries before (after, with ``reverse``) each one: no division."""
    one = first_mask(x, axis, last=reverse)
    return one + linear_recurrence(x, x * one, axis=axis, reverse=reverse, exclusive=True)


# -- the cumulative ops -----------------------------------------------------------------
def _cum_axes(shapes: list[tuple[int, ...]]) -> list[Any]:
    nd = len(shapes[0])
    return [None] + ([0, -1] if nd else []) + ([1] if nd >= 2 else [])


CUM_PARAMS = {"axis": _cum_axes}


def _tf_scan(name: str) -> Callable[..., Any]:
    """The TensorFlow equivalent ``tf.math.<name>(x, axis)``; numpy's ``axis=None`` scans the
    flattened array."""
    def call(tf: Any, x: Any, axis: Any = None) -> Any:
        fn = getattr(tf.math, name)
        if axis is None:
            return fn(tf.reshape(x, [-1]), axis=0)
        return fn(x, axis=int(axis))
    call.__name__ = f"math.{name}"
    return call


def _scan_forward(name: str, numpy_fn: Callable[..., Any]) -> Callable[..., Any]:
    """numpy.cumsum or numpy.cumprod with numpy's signature (its out: None only)."""
    def forward(x, axis=None, dtype=None, out=None):
        if out is not None:
            raise TypeError(f"op {name!r}: out= is not supported (ops return a new array, "
                            f"they never write into one); got {type(out).__name__}")
        return numpy_fn(x, axis=axis, dtype=dtype)
    forward.__doc__ = f"numpy.{name}(x, axis, dtype); axis=None scans the flattened array."
    return forward


def _in_dtype(x, dtype):
    from gradcheck.ops.reduce import in_dtype  # (reduce imports this module)

    return in_dtype(x, dtype)


def _back_to(ct, x):
    from gradcheck.ops.reduce import back_to

    return back_to(ct, x)


def _cumsum_vjp(g, out, x, axis=None, dtype=None):
    ones = np.ones((), dtype_of(g))  # a reverse cumsum, in the dtype= the sums were made in
    ct = linear_recurrence(ones, g, axis=0 if _flat(x, axis) else axis, reverse=True)
    return _back_to(_unflatten(ct, x, axis), x)


cumsum = define_op(
    "cumsum", _scan_forward("cumsum", np.cumsum),
    vjp=_cumsum_vjp, linear=True,
    family="reduce", inputs=(REAL,), shapes=ANY, params=CUM_PARAMS,
    doc="numpy.cumsum(x, axis, dtype); axis=None scans the flattened array.",
    equivalents={"numpy": "cumsum", "tensorflow": _tf_scan("cumsum")},
)


def _cumprod_vjp(g, out, x, axis=None, dtype=None):
    # ct[i] = (prod_{j<i} x[j]) * sum_{k>=i} g[k] prod_{i<j<=k} x[j], in the dtype= given
    xs, ax = _along(_in_dtype(x, dtype), axis)
    before = shift_in(out, ax, 1)  # prod_{j<i} x[j] is the previous output
    ct = _unflatten(before * linear_recurrence(xs, g, axis=ax, reverse=True), x, axis)
    return _back_to(ct, x)


def _cumprod_jvp(ts, out, x, axis=None, dtype=None):
    # dy[k] = x[k] dy[k-1] + t[k] prod_{j<k} x[j]
    xs, ax = _along(_in_dtype(x, dtype), axis)
    t, _ = _along(_in_dtype(ts[0], dtype), axis)
    return linear_recurrence(xs, t * exclusive_cumprod(xs, ax), axis=ax)


cumprod = define_op(
    "cumprod", _scan_forward("cumprod", np.cumprod),
    vjp=_cumprod_vjp, jvp=_cumprod_jvp,
    family="reduce", inputs=(REAL_WITH_ZEROS,), shapes=ANY, params=CUM_PARAMS,
    doc="numpy.cumprod(x, axis, dtype); exact derivatives with zeros in x (no division).",
    equivalents={"tensorflow": _tf_scan("cumprod")},
    complex_rules=True,
)


def _cumlogsumexp_forward(x, axis=None):
    """log(cumsum(exp(x))) along ``axis`` without overflow: ``np.logaddexp.accumulate``.

    ``axis=None`` scans the flattened array, as numpy's cumsum does.  Like numpy's cumsum
    it takes one integer axis, and a 0-d input is scanned as shape (1,) along that axis
    (0 or -1; numpy's own errors otherwise).
    """
    x = np.asarray(x)
    if axis is None:
        x, axis = x.reshape(-1), 0
    elif isinstance(axis, (bool, np.bool_)):
        raise TypeError("an integer is required for the axis")  # numpy's cumsum's words
    else:
        axis = operator.index(axis)  # a tuple or float: numpy's TypeError
        x = x.reshape(-1) if x.ndim == 0 else x
    return np.logaddexp.accumulate(x, axis=axis)


def _decay(out, axis):
    # exp(out[k-1] - out[k]) <= 1 since out grows along the axis: nothing overflows
    return exp(shift_in(out, axis, out) - out)


def _cumlogsumexp_vjp(g, out, x, axis=None):
    # ct[i] = sum_{k>=i} g[k] exp(x[i] - out[k]) = exp(x[i] - out[i]) * (a reverse recurrence)
    xs, ax = _along(x, axis)
    acc = linear_recurrence(_decay(out, ax), g, axis=ax, reverse=True)
    return _unflatten(exp(xs - out) * acc, x, axis)


def _cumlogsumexp_jvp(ts, out, x, axis=None):
    xs, ax = _along(x, axis)
    t, _ = _along(ts[0], axis)
    return linear_recurrence(_decay(out, ax), t * exp(xs - out), axis=ax)


def _cumlogsumexp_reference(x, axis=None):
    """Each prefix's logsumexp by scipy (quadratic: for checking only)."""
    from scipy.special import logsumexp

    x = np.asarray(x)
    if axis is None or x.ndim == 0:
        x, axis = x.reshape(-1), 0
    xm = np.moveaxis(x, axis, -1)
    n = xm.shape[-1]
    prefix = np.tril(np.ones((n, n), dtype=bool))  # prefix[k, i]: i <= k
    masked = np.where(prefix, xm[..., None, :], -np.inf)
    return np.moveaxis(logsumexp(masked, axis=-1), -1, axis)


cumlogsumexp = define_op(
    "cumlogsumexp", _cumlogsumexp_forward,
    vjp=_cumlogsumexp_vjp, jvp=_cumlogsumexp_jvp,
    family="reduce", inputs=(REAL,), shapes=ANY, params=CUM_PARAMS,
    reference=_cumlogsumexp_reference,
    equivalents={"tensorflow": _tf_scan("cumulative_logsumexp")},
)
