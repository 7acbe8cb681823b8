"""Special functions (scipy.special's names), exported in ``gradcheck.special``.

Every derivative is again a registered op, so each function is differentiable
to any order: lgamma' = digamma, digamma' = polygamma(1, .), and
polygamma(n, .)' = polygamma(n + 1, .) (TensorFlow's ``_PolygammaGrad``);
``spherical_jn`` (whose derivative is a combination of neighbouring orders)
carries ``sinc``'s derivatives through 0.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from gradcheck.domains import POSITIVE, REAL, UNIT, Domain
from gradcheck.engine.op import Op, define_op
from gradcheck.engine.tensor import value_of
from gradcheck.ops.elementwise import broadcast_static, exp, square
from gradcheck.ops.lazy import special as sp
from gradcheck.ops.rules import dtype_of, fit, unbroadcast

TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
SQRT_PI_OVER_TWO = math.sqrt(math.pi) / 2.0

#: Names exported in gradcheck.special.
SPECIAL = ["erf", "erfc", "erfinv", "lgamma", "gammaln", "digamma", "psi", "polygamma",
           "spherical_jn"]


@dataclass(frozen=True, repr=False)
class Order(Domain):
    """Non-negative integer orders below ``high`` (polygamma's ``n``); not differentiated."""

    high: int = 3
    differentiable = False

    def sample(self, rng: np.random.Generator, shape: tuple[int, ...], dtype: Any,
               scale: float = 1.0, context: dict[str, Any] | None = None) -> np.ndarray:
        return rng.integers(0, self.high, shape).astype(np.int64)

    def describe(self) -> str:
        return f"integer order < {self.high}"


def _special(name: str, forward: Callable[..., Any], deriv: Callable[[Any, Any], Any],
             domain: Any = REAL, **meta: Any) -> Op:
    """A unary special function whose derivative is ``deriv(x, out)`` (registered ops)."""
    if not forward.__doc__:
        meta.setdefault("doc", f"scipy.special.{name.removeprefix('special.')}.")
    return define_op(name, forward,
                     vjp=lambda g, out, x: g * deriv(x, out),
                     jvp=lambda ts, out, x: ts[0] * deriv(x, out),
                     family="special", inputs=(domain,), shapes="(...)", **meta)


def _float_dtype(x: Any) -> np.dtype:
    dt = np.result_type(x)
    return dt if np.issubdtype(dt, np.floating) else np.dtype(np.float64)


def _orders(op: str, n: Any) -> np.ndarray:
    """``n`` as an integer array, or a ValueError naming the op."""
    arr = np.asarray(value_of(n))
    if arr.dtype == bool or not np.issubdtype(arr.dtype, np.number) \
            or np.any(arr != np.round(arr)) or np.any(arr < 0):
        raise ValueError(f"op {op!r}: the order n must hold non-negative integers, got {n!r}")
    return arr.astype(np.int64)


erf: Op = _special("special.erf", lambda x: sp.erf(x),
                   lambda x, out: TWO_OVER_SQRT_PI * exp(-square(x)),
                   equivalents={"numpy": "special.erf", "tensorflow": "math.erf"})
erfc: Op = _special("special.erfc", lambda x: sp.erfc(x),
                    lambda x, out: -TWO_OVER_SQRT_PI * exp(-square(x)),
                    equivalents={"numpy": "special.erfc", "tensorflow": "math.erfc"})
# erfinv'(x) = sqrt(pi)/2 exp(erfinv(x)^2) (TensorFlow's _ErfinvGrad uses the output).
erfinv: Op = _special("special.erfinv", lambda x: sp.erfinv(x),
                      lambda x, out: SQRT_PI_OVER_TWO * exp(square(out)), domain=UNIT,
                      equivalents={"numpy": "special.erfinv", "tensorflow": "math.erfinv"})
lgamma: Op = _special("special.lgamma", lambda x: sp.gammaln(x), lambda x, out: digamma(x),
                      domain=POSITIVE, reference=lambda x: sp.gammaln(x),
                      doc="log|Gamma(x)| (scipy's gammaln).",
                      equivalents={"numpy": "special.gammaln", "tensorflow": "math.lgamma"})
gammaln = lgamma
digamma: Op = _special("special.digamma", lambda x: sp.psi(x), lambda x, out: polygamma(1, x),
                       domain=POSITIVE, doc="The digamma function psi = lgamma'.",
                       equivalents={"numpy": "special.digamma", "tensorflow": "math.digamma"})
psi = digamma


def _polygamma(n: Any, x: Any) -> Any:
    """scipy.special.polygamma(n, x), in x's float dtype."""
    orders = _orders("special.polygamma", n)
    return np.asarray(sp.polygamma(orders, x)).astype(_float_dtype(x), copy=False)


def _tf_polygamma(tf: Any, n: Any, x: Any) -> Any:
    # tf.math.polygamma takes a float order, and inputs of one shape
    return tf.math.polygamma(*broadcast_static(tf, tf.cast(n, tf.float64), x))


polygamma: Op = define_op(
    "special.polygamma", _polygamma,
    vjp=(None, lambda g, out, n, x: unbroadcast(g * polygamma(value_of(n) + 1, x), x)),
    jvp=(None, lambda t, out, n, x: fit(t * polygamma(value_of(n) + 1, x), out)),
    family="special", nondiff_argnums=(0,), inputs=(Order(3), POSITIVE),
    shapes="(...),(...)",
    equivalents={"numpy": "special.polygamma", "tensorflow": _tf_polygamma},
)


def _spherical_jn(n: Any, z: Any) -> Any:
    """scipy.special.spherical_jn(n, z), in z's float dtype."""
    orders = _orders("special.spherical_jn", n)
    return np.asarray(sp.spherical_jn(orders, z)).astype(_float_dtype(z), copy=False)


def _spherical_jn_deriv(n: Any, z: Any) -> Any:
    # j_n' = (n j_{n-1} - (n+1) j_{n+1}) / (2n+1), which is -j_1 at n = 0; no division by z.
    orders = _orders("special.spherical_jn", n)
    dt = dtype_of(z)
    lower = (orders / (2 * orders + 1)).astype(dt)
    upper = ((orders + 1) / (2 * orders + 1)).astype(dt)
    return (lower * spherical_jn(np.maximum(orders - 1, 0), z)
            - upper * spherical_jn(orders + 1, z))


spherical_jn: Op = define_op(
    "special.spherical_jn", _spherical_jn,
    vjp=(None, lambda g, out, n, z: unbroadcast(g * _spherical_jn_deriv(n, z), z)),
    jvp=(None, lambda t, out, n, z: fit(t * _spherical_jn_deriv(n, z), out)),
    family="special", nondiff_argnums=(0,), inputs=(Order(3), REAL), shapes="(...),(...)",
)
