"""Reductions over ``axis`` (None, int, tuple, negative) with ``keepdims``.

Ties (max, min, the inf-norms) share the derivative evenly among the tied entries,
as TensorFlow's reduce_max and JAX's reductions do; an entry's share is a constant
computed from the values, since the indicator's own derivative is zero.

Each op names its equivalents (``equivalents=``): numpy's function and TensorFlow's
``tf.math.reduce_*`` (with the axes as TensorFlow takes them) or ``tf.norm``.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable
from typing import Any

import numpy as np

from gradcheck.domains import REAL
from gradcheck.engine.op import define_op
from gradcheck.engine.tensor import value_of
from gradcheck.ops.cumulative import REAL_WITH_ZEROS, exclusive_cumprod
from gradcheck.ops.elementwise import astype, exp
from gradcheck.ops.refs import NoEquivalent
from gradcheck.ops.rules import (
    cast_cotangent,
    dtype_of,
    reduction_axes,
    shape_of,
    zeros_like_rule,
)

ANY = "(...)"

#: Names exported in gradcheck.numpy, gradcheck.special and gradcheck.numpy.linalg.
NUMPY = ["sum", "mean", "prod", "max", "min", "amax", "amin", "var", "std"]
SPECIAL = ["logsumexp"]
LINALG = ["norm"]


# -- axes and the checker's choices ------------------------------------------------------
def axis_choices(shapes: list[tuple[int, ...]]) -> list[Any]:
    """Axis values worth trying for an input of shape ``shapes[0]``."""
    nd = len(shapes[0])
    choices: list[Any] = [None]
    if nd:
        choices += [0, -1]
    if nd >= 2:
        choices += [(0, nd - 1), 1]
    return choices


REDUCE_PARAMS = {"axis": axis_choices, "keepdims": [False, True]}


def reduced_size(shape: tuple[int, ...], axis: Any) -> int:
    """How many entries each output of a reduction over ``axis`` combines."""
    return int(np.prod([shape[a] for a in reduction_axes(axis, len(shape))], dtype=np.int64))


def nonempty_axis_choices(shapes: list[tuple[int, ...]]) -> list[Any]:
    """The axis choices that reduce no zero-size dimension (numpy's max raises there)."""
    shape = shapes[0]
    return [a for a in axis_choices(shapes)
            if all(shape[i] for i in reduction_axes(a, len(shape)))]


def reducible_shapes(draw: Callable[..., Any], form: str | None = None) -> list[tuple[int, ...]]:
    """A shape of 0 to 3 dims; with 2 or more dims, sometimes one of size zero.

    With such shapes every rank has an axis that reduces no empty dimension.  A stratum's
    ``form`` (see :data:`gradcheck.checker.sampling.FORMS`) gives a short axis beside a
    long one, a plain vector, or 4 dims, none empty.
    """
    import hypothesis.strategies as st

    if form is not None:
        from gradcheck.ops.forms import formed_shape

        return [formed_shape(draw, form)]
    shape = draw(st.lists(st.integers(1, 4), min_size=0, max_size=3))
    if len(shape) >= 2 and draw(st.booleans()):
        shape[draw(st.integers(0, len(shape) - 1))] = 0
    return [tuple(shape)]


NONEMPTY_PARAMS = {"axis": nonempty_axis_choices, "keepdims": [False, True]}


def expand_to(g: Any, x: Any, axis: Any, keepdims: bool) -> Any:
    """Broadcast a reduction's cotangent ``g`` back to the shape of ``x``."""
    from gradcheck.ops.shape import broadcast_to, reshape

    shape = shape_of(x)
    axes = reduction_axes(axis, len(shape))
    if not keepdims:
        kept = tuple(1 if i in axes else d for i, d in enumerate(shape))
        g = reshape(g, kept)
    return broadcast_to(g, shape)


def _raw_expanded(out, x, axis, keepdims):
    """The raw output, with the reduced axes put back as size 1 (for constant masks)."""
    out = np.asarray(value_of(out))
    if keepdims:
        return out
    return np.expand_dims(out, reduction_axes(axis, len(shape_of(x))))


# -- TensorFlow's conventions ------------------------------------------------------------
def _tf_shape(x: Any) -> tuple[int, ...]:
    return tuple(int(d) for d in x.shape)


def _tf_axes(x: Any, axis: Any) -> list[int] | None:
    """``axis`` as TensorFlow's reductions take it: a list of non-negative axes, or None.

    Read as numpy reads it: on a 0-d input ``axis=0`` or ``-1`` reduces nothing (``[]``).
    """
    if axis is None:
        return None
    return list(reduction_axes(axis, len(_tf_shape(x))))


def _tf_reduction(name: str) -> Callable[..., Any]:
    """The TensorFlow equivalent ``tf.math.<name>(x, axis, keepdims)``."""
    def call(tf: Any, x: Any, axis: Any = None, keepdims: bool = False) -> Any:
        return getattr(tf.math, name)(x, axis=_tf_axes(x, axis), keepdims=keepdims)
    call.__name__ = f"math.{name}"
    return call


# -- numpy's other keywords ------------------------------------------------------------------
# numpy passes ``out=None`` (and ``dtype=None``) itself, e.g. ``np.max(t)`` calls ``t.max(axis=None,
# out=None)``, so the reductions take numpy's full signatures.  Rules receive every keyword a
# call gave; they take the op's output positionally only (``/``), so numpy's ``out=`` keyword
# lands in ``**numpy_kw`` instead of clashing with it.
#: How to do without numpy's ``initial=`` and ``where=``, per reduction.
_INSTEAD_OF_INITIAL = {"sum": "gnp.sum(x) + initial", "prod": "gnp.prod(x) * initial",
                       "max": "gnp.maximum(gnp.max(x), initial)",
                       "min": "gnp.minimum(gnp.min(x), initial)"}
_INSTEAD_OF_WHERE = {"sum": "gnp.sum(gnp.where(mask, x, 0))",
                     "prod": "gnp.prod(gnp.where(mask, x, 1))",
                     "max": "gnp.max(gnp.where(mask, x, -np.inf))",
                     "min": "gnp.min(gnp.where(mask, x, np.inf))"}


def numpy_only(op: str, out: Any = None, initial: Any = None, where: Any = True) -> None:
    """Refuse numpy's keywords the engine cannot honour, naming the op and a way round."""
    if out is not None:
        raise TypeError(f"op {op!r}: out= is not supported (ops return a new array, they never "
                        f"write into one); got {type(out).__name__}: assign the result instead")
    if initial is not None:
        raise ValueError(f"op {op!r}: initial= is not supported, got {initial!r}; write "
                         f"{_INSTEAD_OF_INITIAL.get(op, 'it out')} instead")
    if not (where is True or np.all(value_of(where))):  # an all-true mask selects everything
        raise ValueError(f"op {op!r}: where= is not supported; select the entries instead: "
                         f"{_INSTEAD_OF_WHERE.get(op, f'gnp.{op}(x[mask])')}")


def in_dtype(x: Any, dtype: Any) -> Any:
    """``x`` cast to numpy's ``dtype=`` (None: as it is): a reduction with ``dtype`` is the
    reduction of the cast input, which is how its rules differentiate it."""
    if dtype is None or np.dtype(dtype) == dtype_of(x):
        return x
    return astype(x, np.dtype(dtype))


def back_to(ct: Any, x: Any) -> Any:
    """A cotangent computed in a ``dtype=`` cast back to the input's own dtype."""
    return ct if dtype_of(ct) == dtype_of(x) else cast_cotangent(ct, dtype_of(x))


def _reduce(name, forward, vjp, jvp=None, inputs=(REAL,), **meta):
    meta.setdefault("shapes", ANY)
    meta.setdefault("params", REDUCE_PARAMS)
    return define_op(name, forward, vjp, jvp, family="reduce", inputs=inputs, **meta)


# -- linear -------------------------------------------------------------------------------
def _sum_forward(x, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=True):
    """numpy.sum(x, axis, dtype, keepdims=...); numpy's out, initial and where: defaults only."""
    numpy_only("sum", out, initial, where)
    return np.sum(x, axis=axis, dtype=dtype, keepdims=keepdims)


def _mean_forward(x, axis=None, dtype=None, out=None, keepdims=False, *, where=True):
    """numpy.mean; nan (no warning) where a mean is taken over no entries."""
    numpy_only("mean", out, where=where)
    x = np.asarray(x)
    if x.size:
        return np.mean(x, axis=axis, dtype=dtype, keepdims=keepdims)
    return np.sum(x, axis=axis, dtype=dtype, keepdims=keepdims) * np.nan


sum = _reduce(  # noqa: A001 - numpy's name
    "sum", _sum_forward,
    vjp=lambda g, out, x, /, axis=None, dtype=None, keepdims=False, **numpy_kw:
        back_to(expand_to(g, x, axis, keepdims), x),
    linear=True,
    equivalents={"numpy": "sum", "tensorflow": _tf_reduction("reduce_sum")},
)


def _mean_count(x, axis):
    return builtins.max(reduced_size(shape_of(x), axis), 1)


mean = _reduce(
    "mean", _mean_forward,
    vjp=lambda g, out, x, /, axis=None, dtype=None, keepdims=False, **numpy_kw:
        back_to(expand_to(g, x, axis, keepdims) / _mean_count(x, axis), x),
    # not mean(t): over no entries the tangent is 0 (nothing moves), not nan
    jvp=lambda ts, out, x, /, axis=None, dtype=None, keepdims=False, **numpy_kw:
        sum(ts[0], axis=axis, dtype=dtype, keepdims=keepdims) / _mean_count(x, axis),
    linear=True, shapes=reducible_shapes, params=NONEMPTY_PARAMS,
    equivalents={"numpy": "mean", "tensorflow": _tf_reduction("reduce_mean")},
)


# -- prod: no division, so zeros in x are fine ---------------------------------------------
def _others(x, axis):
    """For each entry, the product of the other entries of its group (no division)."""
    from gradcheck.ops.shape import reshape, transpose

    shape = shape_of(x)
    axes = reduction_axes(axis, len(shape))
    kept = [i for i in range(len(shape)) if i not in axes]
    perm = (*kept, *axes)
    grouped = (*[shape[i] for i in kept], reduced_size(shape, axis))
    flat = reshape(transpose(x, perm), grouped)
    others = exclusive_cumprod(flat, -1) * exclusive_cumprod(flat, -1, reverse=True)
    back = reshape(others, tuple(shape[i] for i in perm))
    return transpose(back, tuple(int(i) for i in np.argsort(perm)))


def _prod_forward(x, axis=None, dtype=None, out=None, keepdims=False, initial=None,
                  where=True):
    """numpy.prod(x, axis, dtype, keepdims=...); exact derivatives with zeros in x."""
    numpy_only("prod", out, initial, where)
    return np.prod(x, axis=axis, dtype=dtype, keepdims=keepdims)


prod = _reduce(
    "prod", _prod_forward,
    vjp=lambda g, out, x, /, axis=None, dtype=None, keepdims=False, **numpy_kw:
        back_to(expand_to(g, x, axis, keepdims) * _others(in_dtype(x, dtype), axis), x),
    jvp=lambda ts, out, x, /, axis=None, dtype=None, keepdims=False, **numpy_kw:
        sum(in_dtype(ts[0], dtype) * _others(in_dtype(x, dtype), axis), axis=axis,
            keepdims=keepdims),
    inputs=(REAL_WITH_ZEROS,),
    complex_rules=True,
    equivalents={"numpy": "prod", "tensorflow": _tf_reduction("reduce_prod")},
)


# -- max and min: ties share evenly -------------------------------------------------------
def _tie_weights(x, out, axis, keepdims):
    """1/count at the entries equal to their group's extreme, 0 elsewhere (a constant)."""
    hit = np.asarray(value_of(x)) == _raw_expanded(out, x, axis, keepdims)
    count = np.sum(hit, axis=reduction_axes(axis, len(shape_of(x))), keepdims=True)
    return (hit / np.maximum(count, 1)).astype(dtype_of(x))


def _extreme(name, numpy_fn):
    def forward(x, axis=None, out=None, keepdims=False, initial=None, where=True):
        numpy_only(name, out, initial, where)
        return numpy_fn(x, axis=axis, keepdims=keepdims)

    forward.__doc__ = (f"numpy.{name}(x, axis, keepdims=...); the derivative at ties is split "
                       "evenly among the tied entries (as TensorFlow and JAX do).")
    return _reduce(
        name, forward,
        vjp=lambda g, out, x, /, axis=None, keepdims=False, **numpy_kw:
            expand_to(g, x, axis, keepdims) * _tie_weights(x, out, axis, keepdims),
        jvp=lambda ts, out, x, /, axis=None, keepdims=False, **numpy_kw:
            sum(ts[0] * _tie_weights(x, out, axis, keepdims), axis=axis, keepdims=keepdims),
        shapes=reducible_shapes, params=NONEMPTY_PARAMS, kinks="ties",
        equivalents={"numpy": name, "tensorflow": _tf_reduction(f"reduce_{name}")},
    )


max = _extreme("max", np.max)  # noqa: A001 - numpy's name
min = _extreme("min", np.min)  # noqa: A001 - numpy's name
amax = max  # numpy's amax is an alias of max
amin = min


# -- logsumexp ------------------------------------------------------------------------------
def _logsumexp_forward(x, axis=None, *, keepdims=False):
    """log(sum(exp(x))) over ``axis``, shifted by the maximum so nothing overflows.

    As scipy.special.logsumexp: -inf over no entries.  On a 0-d input ``axis`` is read as
    numpy's reductions read it (0 and -1 reduce nothing; scipy also takes ``(0,)``, and its
    ``keepdims`` gives shape (1,) where numpy's, and this, give ()).
    """
    x = np.asarray(x)
    axes = reduction_axes(axis, x.ndim)
    if not x.size:
        out = np.full(np.sum(x, axis=axes, keepdims=True).shape, -np.inf, x.dtype)
    else:
        shift = np.max(x, axis=axes, keepdims=True)
        shift = np.where(np.isfinite(shift), shift, 0)
        with np.errstate(divide="ignore"):
            out = np.log(np.sum(np.exp(x - shift), axis=axes, keepdims=True)) + shift
    return out if keepdims else np.squeeze(out, axis=axes)


def _softmax_weights(out, x, axis, keepdims):
    # exp(x - logsumexp) <= 1: stable at any magnitude
    return exp(x - expand_to(out, x, axis, keepdims))


def _logsumexp_reference(x, axis=None, *, keepdims=False):
    from scipy.special import logsumexp as scipy_logsumexp

    return scipy_logsumexp(x, axis=axis, keepdims=keepdims)


def _numpy_logsumexp(xp: Any, x: Any, axis: Any = None, keepdims: bool = False) -> Any:
    out = xp.special.logsumexp(x, axis=axis, keepdims=keepdims)
    # autograd's logsumexp gives shape (1,) for a 0-d input: numpy's shape is ()
    return xp.reshape(out, ()) if np.ndim(x) == 0 else out


logsumexp = _reduce(
    "special.logsumexp", _logsumexp_forward,
    vjp=lambda g, out, x, axis=None, keepdims=False:
        expand_to(g, x, axis, keepdims) * _softmax_weights(out, x, axis, keepdims),
    jvp=lambda ts, out, x, axis=None, keepdims=False:
        sum(ts[0] * _softmax_weights(out, x, axis, keepdims), axis=axis, keepdims=keepdims),
    shapes=reducible_shapes, params=NONEMPTY_PARAMS, reference=_logsumexp_reference,
    equivalents={"numpy": _numpy_logsumexp, "tensorflow": _tf_reduction("reduce_logsumexp")},
)


# -- var and std ----------------------------------------------------------------------------
def _moment_params(draw: Callable[..., Any], shapes: list[tuple[int, ...]]) -> dict[str, Any]:
    """An axis that reduces no empty dimension, and a ddof that leaves degrees of freedom."""
    import hypothesis.strategies as st

    axis = draw(st.sampled_from(nonempty_axis_choices(shapes)))
    n = reduced_size(shapes[0], axis)
    ddof = draw(st.sampled_from([0, 1] if n > 1 else [0]))
    return {"axis": axis, "ddof": ddof, "keepdims": draw(st.booleans())}


def _dof(op, x, axis, ddof):
    n = reduced_size(shape_of(x), axis)
    if n - ddof <= 0:
        raise ValueError(f"op {op!r}: ddof={ddof} leaves no degrees of freedom over {n} "
                         "entries; the derivative is undefined")
    return n - ddof


def _centered(x, axis):
    return x - mean(x, axis=axis, keepdims=True)


def _no_entries(x: Any) -> bool:
    """``x`` has no entries: its only derivative is an empty array, whatever ``ddof`` says
    (the moments over no entries are nan constants; nothing moves them)."""
    return 0 in shape_of(x)


def _moment_forward(name: str, numpy_fn: Callable[..., Any]) -> Callable[..., Any]:
    """numpy.var or numpy.std with numpy's signature (its out and where: defaults only)."""
    def forward(x, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True):
        numpy_only(name, out, where=where)
        return numpy_fn(x, axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims)
    return forward


def _var_vjp(g, out, x, /, axis=None, dtype=None, ddof=0, keepdims=False, **numpy_kw):
    if _no_entries(x):
        return zeros_like_rule(x)
    xc = in_dtype(x, dtype)
    scale = 2 / _dof("var", x, axis, ddof)
    return back_to(expand_to(g, xc, axis, keepdims) * _centered(xc, axis) * scale, x)


def _var_jvp(ts, out, x, /, axis=None, dtype=None, ddof=0, keepdims=False, **numpy_kw):
    if _no_entries(x):
        return zeros_like_rule(out)
    scale = 2 / _dof("var", x, axis, ddof)
    centered = _centered(in_dtype(x, dtype), axis)
    return sum(in_dtype(ts[0], dtype) * centered, axis=axis, keepdims=keepdims) * scale


def _tf_moment(tf: Any, name: str, x: Any, axis: Any, ddof: int, keepdims: bool) -> Any:
    """tf.math.reduce_variance or reduce_std, times the factor that turns TensorFlow's
    ``ddof = 0`` into ``ddof`` (TensorFlow has no ddof)."""
    n = reduced_size(_tf_shape(x), axis)
    scale = n / (n - ddof) if name == "reduce_variance" else np.sqrt(n / (n - ddof))
    out = getattr(tf.math, name)(x, axis=_tf_axes(x, axis), keepdims=keepdims)
    return out if ddof == 0 else out * scale


def _tf_var(tf: Any, x: Any, axis: Any = None, ddof: int = 0, keepdims: bool = False) -> Any:
    return _tf_moment(tf, "reduce_variance", x, axis, ddof, keepdims)


def _tf_std(tf: Any, x: Any, axis: Any = None, ddof: int = 0, keepdims: bool = False) -> Any:
    return _tf_moment(tf, "reduce_std", x, axis, ddof, keepdims)


var = _reduce(
    "var",
    _moment_forward("var", np.var),
    vjp=_var_vjp, jvp=_var_jvp, shapes=reducible_shapes, params=_moment_params,
    doc="numpy.var(x, axis, dtype, ddof=..., keepdims=...).",
    equivalents={"numpy": "var", "tensorflow": _tf_var},
)


def _std_vjp(g, out, x, /, axis=None, dtype=None, ddof=0, keepdims=False, **numpy_kw):
    if _no_entries(x):
        return zeros_like_rule(x)
    n = _dof("std", x, axis, ddof)
    if reduced_size(shape_of(x), axis) == 1:  # one entry per group: std is identically 0
        return zeros_like_rule(x)
    xc = in_dtype(x, dtype)
    return back_to(expand_to(g / out, xc, axis, keepdims) * _centered(xc, axis) * (1 / n), x)


def _std_jvp(ts, out, x, /, axis=None, dtype=None, ddof=0, keepdims=False, **numpy_kw):
    if _no_entries(x):
        return zeros_like_rule(out)
    n = _dof("std", x, axis, ddof)
    if reduced_size(shape_of(x), axis) == 1:
        return zeros_like_rule(out)
    centered = _centered(in_dtype(x, dtype), axis)
    return sum(in_dtype(ts[0], dtype) * centered, axis=axis, keepdims=keepdims) / out * (1 / n)


std = _reduce(
    "std",
    _moment_forward("std", np.std),
    vjp=_std_vjp, jvp=_std_jvp, shapes=reducible_shapes, params=_moment_params, kinks="ties",
    doc="numpy.std(x, axis, dtype, ddof=..., keepdims=...); not differentiable where all the "
        "entries of a group are equal (zero variance), except over single entries (std = 0).",
    equivalents={"numpy": "std", "tensorflow": _tf_std},
)


# -- linalg.norm ----------------------------------------------------------------------------
def _norm_axes(x, ord, axis):
    """``(axes, is_matrix)`` as numpy.linalg.norm reads ``ord`` and ``axis`` (order kept)."""
    nd = len(shape_of(x))
    if axis is None:
        if ord is None:  # the 2-norm of all the entries, any rank
            return tuple(range(nd)), False
        axis = tuple(range(nd))
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    return tuple(int(a) % builtins.max(nd, 1) for a in axes), len(axes) == 2


def _norm_weight(x, out, ord, axis, keepdims):
    """W shaped like x with d(norm) = sum over the reduced axes of W * dx."""
    from gradcheck.ops.binary import power

    axes, matrix = _norm_axes(x, ord, axis)
    if ord is None or ord == "fro" or (ord == 2 and not matrix):
        return x / expand_to(out, x, axes, keepdims)
    if matrix and ord in ("nuc", 2, -2):
        return _singular_weight(x, ord, axes)
    xv = np.asarray(value_of(x))
    sign = np.sign(xv).astype(dtype_of(x))
    if not matrix and ord == 0:  # a count of nonzeros: zero derivative
        return np.zeros_like(sign)
    if not matrix and np.isfinite(ord):
        if ord == 1:
            return sign
        magnitude = x * sign  # |x|; sign's derivative is zero
        return sign * power(magnitude, ord - 1) * power(expand_to(out, x, axes, keepdims), 1 - ord)
    # max / min kinds: the inf-norms of vectors, the 1- and inf-norms of matrices
    if matrix:
        rows, cols = axes
        summed, over = (rows, cols) if ord in (1, -1) else (cols, rows)
        mag = np.sum(np.abs(xv), axis=summed, keepdims=True)
    else:
        over, mag = axes[0], np.abs(xv)
    extreme = (np.max if ord > 0 else np.min)(mag, axis=over, keepdims=True)
    hit = mag == extreme
    share = hit / np.maximum(np.sum(hit, axis=over, keepdims=True), 1)
    return (np.broadcast_to(share, xv.shape) * sign).astype(dtype_of(x))


def _singular_weight(x, ord, axes):
    """d(norm)/dx for the norms made of singular values: U V^T, or u v^T of the extreme one."""
    from gradcheck.ops.linalg import matmul
    from gradcheck.ops.linalg_decomp import svd
    from gradcheck.ops.shape import transpose

    nd = len(shape_of(x))
    perm = (*[i for i in range(nd) if i not in axes], *axes)
    u, s, vh = svd(transpose(x, perm), full_matrices=False)
    if ord != "nuc":  # numpy orders singular values from largest to smallest
        k = 0 if ord == 2 else shape_of(s)[-1] - 1
        u, vh = u[..., k:k + 1], vh[..., k:k + 1, :]
    return transpose(matmul(u, vh), tuple(int(i) for i in np.argsort(perm)))


def _norm_vjp(g, out, x, ord=None, axis=None, keepdims=False):
    axes, _ = _norm_axes(x, ord, axis)
    return expand_to(g, x, axes, keepdims) * _norm_weight(x, out, ord, axis, keepdims)


def _norm_jvp(ts, out, x, ord=None, axis=None, keepdims=False):
    axes, _ = _norm_axes(x, ord, axis)
    return sum(ts[0] * _norm_weight(x, out, ord, axis, keepdims), axis=axes, keepdims=keepdims)


def _norm_params(draw: Callable[..., Any], shapes: list[tuple[int, ...]]) -> dict[str, Any]:
    """A valid (ord, axis) pair for the shape: vector ords along one axis, matrix ords on two."""
    import hypothesis.strategies as st

    shape = shapes[0]
    nd = len(shape)
    options: list[tuple[Any, Any]] = [(None, None)]
    for ax in ([-1, 0] if nd else []):
        options += [(o, ax) for o in (None, 2, 1, 3, 0.5, 0)]
        if shape[ax]:
            options += [(o, ax) for o in (np.inf, -np.inf, -1)]
    for pair in ([(0, -1), (-1, 0)] if nd >= 2 else []):
        options += [(o, pair) for o in (None, "fro")]
        if shape[pair[0]] and shape[pair[1]]:
            options += [(o, pair) for o in (1, -1, np.inf, -np.inf, 2, -2, "nuc")]
    if nd == 1:
        options += [(1, None)] + ([(np.inf, None)] if shape[0] else [])
    if nd == 2:
        options += [("fro", None)] + ([(1, None), (np.inf, None), ("nuc", None), (2, None)]
                                      if all(shape) else [])
    ord, axis = draw(st.sampled_from(options))
    return {"ord": ord, "axis": axis, "keepdims": draw(st.booleans())}


def _tf_norm(tf: Any, x: Any, ord: Any = None, axis: Any = None, keepdims: bool = False) -> Any:
    """tf.norm with numpy's reading of ``ord`` and ``axis``, for the ords it has."""
    shape = _tf_shape(x)
    # numpy's result shape; tf.norm loses the static shape in graph mode
    out_shape = np.linalg.norm(np.ones(shape), ord=ord, axis=axis, keepdims=keepdims).shape
    if axis is None:
        if ord is None:
            return tf.reshape(tf.norm(tf.reshape(x, [-1])), out_shape)
        axis = tuple(range(len(shape)))  # numpy: a vector or matrix norm of the whole input
    axes = (int(axis),) if np.ndim(axis) == 0 else tuple(int(a) for a in axis)
    matrix = len(axes) == 2
    if ord is None or ord == "fro":
        ord = "euclidean"
    if matrix and ord not in ("euclidean", 1, 2, np.inf):
        raise NoEquivalent(f"tf.norm has no matrix norm ord={ord!r}")
    if not matrix and ord != "euclidean" and not ord > 0:
        raise NoEquivalent(f"tf.norm takes vector ords > 0 only, not {ord!r}")
    out = tf.norm(x, ord=ord, axis=list(axes) if matrix else axes[0], keepdims=keepdims)
    return tf.reshape(out, out_shape)


norm = _reduce(
    "linalg.norm",
    lambda x, ord=None, axis=None, keepdims=False:
        np.linalg.norm(x, ord=ord, axis=axis, keepdims=keepdims),
    vjp=_norm_vjp, jvp=_norm_jvp, params=_norm_params, kinks=(0.0,),
    doc="numpy.linalg.norm(x, ord, axis, keepdims): every vector and matrix ord.  Ties in the "
        "max/min norms (inf, 1 for matrices) share the derivative evenly; the spectral (2, -2) "
        "and nuclear norms need distinct nonzero singular values (their derivatives go "
        "through linalg.svd).",
    equivalents={"numpy": "linalg.norm", "tensorflow": _tf_norm},
)
