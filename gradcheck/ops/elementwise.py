"""Elementwise unary ops: numpy forward, VJP and JVP declared together.

Where TensorFlow differentiates an op with a dedicated gradient op
(``TanhGrad``, ``SqrtGrad``, ``RsqrtGrad``, ``ReciprocalGrad``), the VJP here
calls a registered gradient op too, which has its own VJP and JVP; second
order then goes through gradient-of-gradient rules as in TensorFlow, which
the double-VJP checks examine.  Gradient ops are swept like any other op;
their rules broadcast (``unbroadcast``/``fit``) so any broadcasting pair of
inputs works, and they are linear in their upstream-gradient input.

Each op names its equivalents in other frameworks (``equivalents=``, see
``gradcheck.ops.refs``): numpy's API, TensorFlow's, and for a gradient op
TensorFlow's raw gradient op (:func:`tf_gradient_op`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from gradcheck.domains import POSITIVE, REAL, UNIT, Interval, NonZero, Positive
from gradcheck.engine.op import Op, define_op
from gradcheck.engine.reads import parameters_read
from gradcheck.engine.tensor import Tensor, value_of
from gradcheck.ops.refs import NoEquivalent, formula
from gradcheck.ops.rules import cast_cotangent, dtype_of, fit, unbroadcast, zero_jvp, zero_vjp

ANY = "(...)"
GRAD_PAIR = "(...),(...)"
LN2 = math.log(2.0)  # python floats keep float32 rules in float32 (NEP 50)
LN10 = math.log(10.0)

#: Names exported in gradcheck.numpy.
NUMPY = [
    "negative", "abs", "absolute", "sign", "exp", "expm1", "exp2", "log", "log1p", "log2",
    "log10", "sqrt", "cbrt", "square", "reciprocal", "sin", "cos", "tan", "arcsin", "arccos",
    "arctan", "sinh", "cosh", "tanh", "arcsinh", "arccosh", "arctanh", "sinc", "floor", "ceil",
    "round", "around", "clip",
]


#: Why a gradient op's numpy equivalent is a formula.
NO_GRADIENT_OPS = "numpy has no gradient ops: TensorFlow's formula for it"


# -- equivalents: how other frameworks compute these ops ------------------------------
def _static_shape(x: Any) -> tuple[int, ...]:
    return tuple(int(d) for d in x.shape)


def broadcast_static(ns: Any, *xs: Any) -> list[Any]:
    """``xs`` broadcast to their common static shape with ``ns.broadcast_to`` (differentiably),
    for framework functions that do not broadcast, such as TensorFlow's raw gradient ops."""
    shape = np.broadcast_shapes(*(_static_shape(x) for x in xs))
    return [x if _static_shape(x) == shape else ns.broadcast_to(x, shape) for x in xs]


def tf_gradient_op(op: str, first: str, second: str, **attrs: Any) -> Callable[..., Any]:
    """The TensorFlow equivalent of a gradient op: ``tf.raw_ops.<op>`` given the op's two
    inputs, in order, as ``first`` and ``second``.  The registry's gradient ops take
    TensorFlow's argument order; the inputs are broadcast first, as the raw ops do not."""
    def call(tf: Any, a: Any, b: Any, **params: Any) -> Any:
        a, b = broadcast_static(tf, a, b)
        return getattr(tf.raw_ops, op)(**{first: a, second: b}, **attrs, **params)
    call.__name__ = f"raw_ops.{op}"
    return call


def _elementwise(name: str, forward: Callable[..., Any], vjp: Any, jvp: Any,
                 domain: Any = REAL, **meta: Any) -> Op:
    if not forward.__doc__:
        meta.setdefault("doc", f"numpy.{name}, elementwise.")
    return define_op(name, forward, vjp, jvp, family="elementwise", inputs=(domain,),
                     shapes=ANY, **meta)


def _unary(name: str, forward: Callable[..., Any], deriv: Callable[[Any, Any], Any],
           domain: Any = REAL, **meta: Any) -> Op:
    """An op whose derivative is ``deriv(x, out)``, written with registered ops.  Its VJP
    rule passes on only the arguments ``deriv`` reads, so a tape keeps only those values (sin
    keeps its input, exp its output; see ``gradcheck.engine.reads``)."""
    read = parameters_read(deriv, 2)
    if read == frozenset({0}):
        vjp = lambda g, out, x: g * deriv(x, None)
    elif read == frozenset({1}):
        vjp = lambda g, out, x: g * deriv(None, out)
    else:
        vjp = lambda g, out, x: g * deriv(x, out)
    return _elementwise(name, forward, vjp=vjp, jvp=lambda ts, out, x: ts[0] * deriv(x, out),
                        domain=domain, **meta)


def _gradient_op(name: str, forward: Callable[..., Any], d_first: Callable[..., Any],
                 d_second: Callable[..., Any], inputs: tuple[Any, Any], grad_of: str,
                 doc: str, **meta: Any) -> Op:
    """A TensorFlow-style gradient op ``f(a, b)`` whose partials are written as
    ``d_first(w, out, a, b)`` and ``d_second(w, out, a, b)`` for a cotangent or
    tangent ``w`` (both are linear in ``w``)."""
    return define_op(
        name, forward,
        vjp=(lambda g, out, a, b: unbroadcast(d_first(g, out, a, b), a),
             lambda g, out, a, b: unbroadcast(d_second(g, out, a, b), b)),
        jvp=(lambda t, out, a, b: fit(d_first(t, out, a, b), out),
             lambda t, out, a, b: fit(d_second(t, out, a, b), out)),
        family="elementwise", inputs=inputs, shapes=GRAD_PAIR, grad_of=grad_of, doc=doc,
        **meta,
    )


def _select(mask: Any, a: Any) -> Any:
    """``a`` where ``mask`` holds, exact zeros elsewhere (differentiable in ``a``)."""
    from gradcheck.ops.binary import where

    return where(mask, a, zeros_like(a))


# -- not differentiated: dtype changes and constants ---------------------------------
def _tf_astype(tf: Any, x: Any, dtype: Any) -> Any:
    if np.dtype(dtype) != np.float64:
        raise NoEquivalent("the TensorFlow oracle computes in float64 only")
    return tf.cast(x, tf.float64)


astype: Op = define_op(
    "astype", lambda x, dtype: np.asarray(x).astype(dtype),
    vjp=lambda g, out, x, dtype: cast_cotangent(g, dtype_of(x)),
    jvp=lambda ts, out, x, dtype: cast_cotangent(ts[0], dtype),
    family="elementwise", linear=True, inputs=(REAL,), shapes=ANY,
    params={"dtype": [np.float64, np.float32]},
    doc="Cast to ``dtype``; the cotangent is cast back.",
    equivalents={"numpy": lambda xp, x, dtype: x.astype(dtype),
                 "tensorflow": _tf_astype},
)
zeros_like: Op = define_op("zeros_like", np.zeros_like, None, family="elementwise",
                           differentiable=False, register=False)
ones_like: Op = define_op("ones_like", np.ones_like, None, family="elementwise",
                          differentiable=False, register=False)

# -- sign and magnitude -----------------------------------------------------------------
negative: Op = _elementwise("negative", lambda x: np.negative(x),
                            vjp=lambda g, out, x: negative(g), jvp=None, linear=True,
                            equivalents={"numpy": "negative", "tensorflow": "math.negative"})
sign: Op = _elementwise("sign", lambda x: np.sign(x), vjp=zero_vjp, jvp=zero_jvp, kinks=(0.0,),
                        equivalents={"numpy": "sign", "tensorflow": "math.sign"})


def _abs_vjp(g: Any, out: Any, x: Any) -> Any:
    if dtype_of(x).kind == "c":  # the modulus: g conj(z) / |z|
        from gradcheck.ops.complex import modulus_vjp
        return modulus_vjp(g, out, x)
    return g * sign(x)


def _abs_jvp(ts: Any, out: Any, x: Any) -> Any:
    if dtype_of(x).kind == "c":  # Re(conj(z) t) / |z|
        from gradcheck.ops.complex import modulus_jvp
        return modulus_jvp(ts[0], out, x)
    return ts[0] * sign(x)


abs: Op = _elementwise("abs", lambda x: np.abs(x), _abs_vjp, _abs_jvp,  # noqa: A001 - numpy's
                       kinks=(0.0,), equivalents={"numpy": "abs", "tensorflow": "math.abs"},
                       complex_inputs=("complex_nonzero",),
                       doc="numpy.abs, elementwise; of a complex array, the modulus |z|.")
absolute = abs
square: Op = _unary("square", lambda x: np.square(x), lambda x, out: 2 * x,
                    complex_rules=True,
                    equivalents={"numpy": "square", "tensorflow": "math.square"})

# -- exponentials and logarithms --------------------------------------------------------
exp: Op = _unary("exp", lambda x: np.exp(x), lambda x, out: out, complex_inputs=("complex",),
                 equivalents={"numpy": "exp", "tensorflow": "math.exp"})
expm1: Op = _unary("expm1", lambda x: np.expm1(x), lambda x, out: out + 1,
                   complex_rules=True,
                   equivalents={"numpy": "expm1", "tensorflow": "math.expm1"})
# tf.math has no exp2, log2 or log10: TensorFlow's numpy API has them.
exp2: Op = _unary("exp2", lambda x: np.exp2(x), lambda x, out: out * LN2,
                  complex_rules=True,
                  equivalents={"numpy": "exp2", "tensorflow": "experimental.numpy.exp2"})
log: Op = _elementwise("log", lambda x: np.log(x), vjp=lambda g, out, x: g / x,
                       jvp=lambda ts, out, x: ts[0] / x, domain=POSITIVE,
                       complex_inputs=("complex_cut",),
                       equivalents={"numpy": "log", "tensorflow": "math.log"})
log2: Op = _elementwise("log2", lambda x: np.log2(x), vjp=lambda g, out, x: g / (x * LN2),
                        jvp=lambda ts, out, x: ts[0] / (x * LN2), domain=POSITIVE,
                        complex_rules=True,
                        equivalents={"numpy": "log2", "tensorflow": "experimental.numpy.log2"})
log10: Op = _elementwise("log10", lambda x: np.log10(x), vjp=lambda g, out, x: g / (x * LN10),
                         jvp=lambda ts, out, x: ts[0] / (x * LN10), domain=POSITIVE,
                         complex_rules=True,
                         equivalents={"numpy": "log10", "tensorflow": "experimental.numpy.log10"})
log1p: Op = _elementwise("log1p", lambda x: np.log1p(x), vjp=lambda g, out, x: g / (1 + x),
                         jvp=lambda ts, out, x: ts[0] / (1 + x), domain=Interval(-1.0, 4.0),
                         complex_rules=True,
                         equivalents={"numpy": "log1p", "tensorflow": "math.log1p"})

# -- powers, with TensorFlow's gradient ops ---------------------------------------------
# SqrtGrad(y, dy) = dy / (2 y); TF's _SqrtGradGrad: (-(g / y) * out, g / (2 y)).
sqrt_grad: Op = _gradient_op(
    "sqrt_grad", lambda y, dy: 0.5 * dy / y,
    lambda w, out, y, dy: -(w / y) * out,
    lambda w, out, y, dy: sqrt_grad(y, w),
    inputs=(POSITIVE, REAL), grad_of="sqrt",
    complex_rules=True,
    doc="sqrt's gradient op: dy / (2 y) for y = sqrt(x).",
    equivalents={"numpy": formula(lambda xp, y, dy: 0.5 * dy / y, NO_GRADIENT_OPS),
                 "tensorflow": tf_gradient_op("SqrtGrad", "y", "dy")},
)
sqrt: Op = _elementwise("sqrt", lambda x: np.sqrt(x), vjp=lambda g, out, x: sqrt_grad(out, g),
                        jvp=lambda ts, out, x: sqrt_grad(out, ts[0]), domain=POSITIVE,
                        grad_op="sqrt_grad", complex_inputs=("complex_cut",),
                        equivalents={"numpy": "sqrt", "tensorflow": "math.sqrt"})

# RsqrtGrad(y, dy) = -dy y^3 / 2; TF's _RsqrtGradGrad: (-3/2 g dy y^2, RsqrtGrad(y, g)).
rsqrt_grad: Op = _gradient_op(
    "rsqrt_grad", lambda y, dy: -0.5 * dy * (y * y * y),
    lambda w, out, y, dy: -1.5 * w * dy * square(y),
    lambda w, out, y, dy: rsqrt_grad(y, w),
    inputs=(POSITIVE, REAL), grad_of="rsqrt",
    complex_rules=True,
    doc="rsqrt's gradient op: -dy * y**3 / 2 for y = 1 / sqrt(x).",
    equivalents={"numpy": formula(lambda xp, y, dy: -0.5 * dy * y * y * y, NO_GRADIENT_OPS),
                 "tensorflow": tf_gradient_op("RsqrtGrad", "y", "dy")},
)
rsqrt: Op = _elementwise("rsqrt", lambda x: 1 / np.sqrt(x),
                         vjp=lambda g, out, x: rsqrt_grad(out, g),
                         jvp=lambda ts, out, x: rsqrt_grad(out, ts[0]), domain=POSITIVE,
                         complex_rules=True,
                         grad_op="rsqrt_grad", doc="1 / sqrt(x) (TensorFlow's rsqrt).",
                         equivalents={"numpy": formula(lambda xp, x: 1.0 / xp.sqrt(x),
                                                       "numpy has no rsqrt"),
                                      "tensorflow": "math.rsqrt"})

# ReciprocalGrad(y, dy) = -dy y^2; TF's _ReciprocalGradGrad: (-2 g dy y, ReciprocalGrad(y, g)).
reciprocal_grad: Op = _gradient_op(
    "reciprocal_grad", lambda y, dy: -dy * (y * y),
    lambda w, out, y, dy: -2 * w * dy * y,
    lambda w, out, y, dy: reciprocal_grad(y, w),
    inputs=(REAL, REAL), grad_of="reciprocal",
    complex_rules=True,
    doc="reciprocal's gradient op: -dy * y**2 for y = 1 / x.",
    equivalents={"numpy": formula(lambda xp, y, dy: -dy * y * y, NO_GRADIENT_OPS),
                 "tensorflow": tf_gradient_op("ReciprocalGrad", "y", "dy")},
)
reciprocal: Op = _elementwise("reciprocal", lambda x: np.reciprocal(x),
                              vjp=lambda g, out, x: reciprocal_grad(out, g),
                              jvp=lambda ts, out, x: reciprocal_grad(out, ts[0]),
                              domain=NonZero(), grad_op="reciprocal_grad",
                              complex_inputs=("complex_nonzero",),
                              equivalents={"numpy": "reciprocal", "tensorflow": "math.reciprocal"})
# The cube root's derivative is infinite at 0: sample away from it.
cbrt: Op = _unary(
    "cbrt", lambda x: np.cbrt(x), lambda x, out: 1 / (3 * square(out)), domain=NonZero(),
    equivalents={"numpy": "cbrt", "tensorflow": "experimental.numpy.cbrt",
                 # the real cube root of the op's nonzero inputs
                 "autograd": formula(lambda xp, x: xp.sign(x) * xp.abs(x) ** (1.0 / 3.0),
                                     "autograd has no rule for cbrt")},
)

# -- trigonometric ----------------------------------------------------------------------
sin: Op = _unary("sin", lambda x: np.sin(x), lambda x, out: cos(x), complex_inputs=("complex",),
                 equivalents={"numpy": "sin", "tensorflow": "math.sin"})
cos: Op = _unary("cos", lambda x: np.cos(x), lambda x, out: -sin(x), complex_inputs=("complex",),
                 equivalents={"numpy": "cos", "tensorflow": "math.cos"})
# tan has poles at +-pi/2: stay where it is well conditioned.
tan: Op = _unary("tan", lambda x: np.tan(x), lambda x, out: 1 + square(out),
                 complex_rules=True,
                 domain=Interval(-1.3, 1.3), equivalents={"numpy": "tan", "tensorflow": "math.tan"})
arcsin: Op = _unary("arcsin", lambda x: np.arcsin(x), lambda x, out: 1 / sqrt(1 - square(x)),
                    complex_rules=True,
                    domain=UNIT, equivalents={"numpy": "arcsin", "tensorflow": "math.asin"})
arccos: Op = _unary("arccos", lambda x: np.arccos(x), lambda x, out: -1 / sqrt(1 - square(x)),
                    complex_rules=True,
                    domain=UNIT, equivalents={"numpy": "arccos", "tensorflow": "math.acos"})
# One op of the family has no JVP rule on purpose: it exercises the transpose fallback.
arctan: Op = _elementwise(
    "arctan", lambda x: np.arctan(x), vjp=lambda g, out, x: g / (1 + square(x)), jvp=None,
    transpose_jvp_reason="exercises the JVP computed by transposing the VJP",
    complex_rules=True,
    equivalents={"numpy": "arctan", "tensorflow": "math.atan"},
)

# -- hyperbolic -------------------------------------------------------------------------
sinh: Op = _unary("sinh", lambda x: np.sinh(x), lambda x, out: cosh(x),
                  complex_rules=True,
                  equivalents={"numpy": "sinh", "tensorflow": "math.sinh"})
cosh: Op = _unary("cosh", lambda x: np.cosh(x), lambda x, out: sinh(x),
                  complex_rules=True,
                  equivalents={"numpy": "cosh", "tensorflow": "math.cosh"})

# TanhGrad(y, dy) = dy (1 - y^2); TF's _TanhGradGrad: (-2 g dy y, TanhGrad(y, g)).
tanh_grad: Op = _gradient_op(
    "tanh_grad", lambda y, dy: dy * (1 - y * y),
    lambda w, out, y, dy: w * dy * (-2 * y),
    lambda w, out, y, dy: tanh_grad(y, w),
    inputs=(UNIT, REAL), grad_of="tanh",
    complex_rules=True,
    doc="tanh's gradient op: dy * (1 - y**2) for y = tanh(x).",
    equivalents={"numpy": formula(lambda xp, y, dy: dy * (1 - y * y), NO_GRADIENT_OPS),
                 "tensorflow": tf_gradient_op("TanhGrad", "y", "dy")},
)
tanh: Op = _elementwise("tanh", lambda x: np.tanh(x), vjp=lambda g, out, x: tanh_grad(out, g),
                        jvp=lambda ts, out, x: tanh_grad(out, ts[0]), grad_op="tanh_grad",
                        complex_inputs=("complex",),
                        equivalents={"numpy": "tanh", "tensorflow": "math.tanh"})
# TensorFlow's forms: 1 / cosh(asinh x) and 1 / sinh(acosh x).
arcsinh: Op = _unary("arcsinh", lambda x: np.arcsinh(x), lambda x, out: 1 / cosh(out),
                     complex_rules=True,
                     equivalents={"numpy": "arcsinh", "tensorflow": "math.asinh"})
arccosh: Op = _unary("arccosh", lambda x: np.arccosh(x), lambda x, out: 1 / sinh(out),
                     domain=Positive(low=1.0),
                     complex_rules=True,
                     equivalents={"numpy": "arccosh", "tensorflow": "math.acosh"})
arctanh: Op = _unary("arctanh", lambda x: np.arctanh(x), lambda x, out: 1 / (1 - square(x)),
                     complex_rules=True,
                     domain=UNIT, equivalents={"numpy": "arctanh", "tensorflow": "math.atanh"})


def _sinc_deriv(x: Any, out: Any) -> Any:
    # sinc(x) = j0(pi x) and j0' = -j1: no 0/0 at x = 0, and differentiable to any order.
    from gradcheck.ops.special import spherical_jn

    return -math.pi * spherical_jn(1, math.pi * x)


sinc: Op = _unary("sinc", lambda x: np.sinc(x), _sinc_deriv,
                  equivalents={"numpy": "sinc", "tensorflow": "experimental.numpy.sinc"})

# -- rounding and clipping: zero derivative almost everywhere ------------------------------
floor: Op = _elementwise("floor", lambda x: np.floor(x), vjp=zero_vjp, jvp=zero_jvp,
                         kinks="integers",
                         equivalents={"numpy": "floor", "tensorflow": "math.floor"})
ceil: Op = _elementwise("ceil", lambda x: np.ceil(x), vjp=zero_vjp, jvp=zero_jvp,
                        kinks="integers", equivalents={"numpy": "ceil", "tensorflow": "math.ceil"})


def _tf_round(tf: Any, x: Any, decimals: int = 0) -> Any:
    if decimals != 0:
        raise NoEquivalent("tf.math.round rounds to integers only")
    return tf.math.round(x)  # half to even, as numpy


round: Op = _elementwise(  # noqa: A001 - numpy's name
    "round", lambda x, decimals=0: np.round(x, decimals), vjp=zero_vjp, jvp=zero_jvp,
    kinks="half_integers", doc="numpy.round; the sweep uses decimals=0 (kinks at k + 1/2).",
    equivalents={"numpy": "round", "tensorflow": _tf_round},
)
around = round


def _clip_bounds(a_min: Any, a_max: Any) -> None:
    """Bounds are numbers or arrays (broadcasting with x, as numpy's), held fixed."""
    for name, bound in (("a_min", a_min), ("a_max", a_max)):
        if isinstance(bound, Tensor):
            raise TypeError(f"op 'clip': {name} is a tensor, but the bounds are held fixed (they "
                            "get no derivative); write gnp.minimum(gnp.maximum(x, a_min), a_max) "
                            "to differentiate them")
    if a_min is None and a_max is None:
        raise ValueError("op 'clip': at least one of a_min and a_max must be given")
    if a_min is not None and a_max is not None and np.any(np.greater(a_min, a_max)):
        where = "" if np.ndim(a_min) == np.ndim(a_max) == 0 else \
            f" at {np.count_nonzero(np.greater(a_min, a_max))} entries"
        raise ValueError(f"op 'clip': a_min ({_shown(a_min)}) is greater than a_max "
                         f"({_shown(a_max)}){where}")


def _shown(bound: Any) -> str:
    return str(bound) if np.ndim(bound) == 0 else f"an array of shape {np.shape(bound)}"


def _clip(x: Any, a_min: Any = None, a_max: Any = None) -> Any:
    """numpy.clip; the bounds (numbers or arrays that broadcast with x) are held fixed.  The
    derivative is 1 inside [a_min, a_max], 0 outside."""
    _clip_bounds(a_min, a_max)
    return np.clip(x, a_min, a_max)


def _inside(x: Any, a_min: Any, a_max: Any) -> np.ndarray:
    """Where x is within its bounds, in the shape x and the bounds broadcast to."""
    xv = np.asarray(value_of(x))
    inside = np.ones(np.broadcast_shapes(xv.shape, *(np.shape(b) for b in (a_min, a_max)
                                                      if b is not None)), dtype=bool)
    if a_min is not None:
        inside &= xv >= a_min
    if a_max is not None:
        inside &= xv <= a_max
    return inside


def _clip_kinks(params: dict[str, Any]) -> tuple[float, ...]:
    """The bounds' values: every entry of x keeps away from each (from every entry of an
    array bound, which is more than needed but never wrong)."""
    values = [np.unique(np.asarray(b, dtype=np.float64)) for b in
              (params.get("a_min"), params.get("a_max")) if b is not None]
    return tuple(float(v) for v in np.concatenate(values)) if values else ()


def _tf_clip(tf: Any, x: Any, a_min: Any = None, a_max: Any = None) -> Any:
    if a_min is not None and a_max is not None:
        return tf.clip_by_value(x, a_min, a_max)
    return tf.maximum(x, a_min) if a_min is not None else tf.minimum(x, a_max)


def _clip_params(draw: Any, shapes: Any) -> dict[str, Any]:
    from hypothesis import strategies as st

    a_min, a_max = draw(st.sampled_from([(-0.5, 0.5), (-1.0, 2.0), (None, 0.3), (-0.3, None)]))
    return {"a_min": a_min, "a_max": a_max}


clip: Op = _elementwise(
    "clip", _clip,
    vjp=lambda g, out, x, a_min=None, a_max=None:
        unbroadcast(_select(_inside(x, a_min, a_max), g), x),
    jvp=lambda ts, out, x, a_min=None, a_max=None:
        fit(_select(_inside(x, a_min, a_max), ts[0]), out),
    params=_clip_params, kinks=_clip_kinks,
    equivalents={"numpy": lambda xp, x, a_min=None, a_max=None: xp.clip(x, a_min, a_max),
                 "tensorflow": _tf_clip},
)
