"""Broadcasting binary ops.  Cotangents are summed back to each input's shape.

maximum and minimum split the derivative evenly between the two inputs where they
are equal (as JAX does; TensorFlow gives it all to the first input), so the rule is
symmetric in its arguments.

Each op names its equivalents (``equivalents=``): numpy's function and TensorFlow's.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gradcheck.domains import POSITIVE, REAL, BoolMask, Interval, NonZero
from gradcheck.engine.op import Op, define_op
from gradcheck.engine.tensor import value_of
from gradcheck.ops.cumulative import REAL_WITH_ZEROS
from gradcheck.ops.elementwise import exp, log
from gradcheck.ops.lazy import special as sp
from gradcheck.ops.refs import formula
from gradcheck.ops.rules import dtype_of, fit, shape_of, unbroadcast

PAIR = "(...),(...)"

#: Names exported in gradcheck.numpy, gradcheck.nn and gradcheck.special.
NUMPY = ["add", "subtract", "multiply", "divide", "power", "where", "maximum", "minimum",
         "arctan2", "hypot", "logaddexp", "fmod"]
NN = ["squared_difference"]
SPECIAL = ["xlogy"]


def _binary(name, forward, vjp, jvp=None, inputs=(REAL, REAL), **meta):
    return define_op(name, forward, vjp, jvp, family="binary", inputs=inputs, shapes=PAIR,
                     **meta)


# add and subtract spell out their JVPs: applying the op to the tangents would need zeros for
# a constant operand, and zeros of a Python scalar are an int64 array that upcasts float32.
add = _binary(
    "add", np.add,
    vjp=(lambda g, out, x, y: unbroadcast(g, x),
         lambda g, out, x, y: unbroadcast(g, y)),
    jvp=(lambda t, out, x, y: fit(t, out),
         lambda t, out, x, y: fit(t, out)),
    linear=True, equivalents={"numpy": "add", "tensorflow": "math.add"},
)
subtract = _binary(
    "subtract", np.subtract,
    vjp=(lambda g, out, x, y: unbroadcast(g, x),
         lambda g, out, x, y: unbroadcast(-g, y)),
    jvp=(lambda t, out, x, y: fit(t, out),
         lambda t, out, x, y: fit(-t, out)),
    linear=True, equivalents={"numpy": "subtract", "tensorflow": "math.subtract"},
)
multiply = _binary(
    "multiply", np.multiply,
    vjp=(lambda g, out, x, y: unbroadcast(g * y, x),
         lambda g, out, x, y: unbroadcast(g * x, y)),
    jvp=(lambda t, out, x, y: fit(t * y, out),
         lambda t, out, x, y: fit(x * t, out)),
    complex_rules=True,
    equivalents={"numpy": "multiply", "tensorflow": "math.multiply"},
)
divide = _binary(
    "divide", np.divide,
    vjp=(lambda g, out, x, y: unbroadcast(g / y, x),
         lambda g, out, x, y: unbroadcast(-g * out / y, y)),
    jvp=(lambda t, out, x, y: fit(t / y, out),
         lambda t, out, x, y: fit(-t * out / y, out)),
    complex_rules=True,
    inputs=(REAL, NonZero()), equivalents={"numpy": "divide", "tensorflow": "math.divide"},
)


def _zero_at(x: Any) -> np.ndarray:
    """Where ``x`` is exactly zero (a constant mask: its derivative is zero)."""
    return np.asarray(value_of(x)) == 0


def _pow_dx(x, y, out):
    """y * x**(y - 1), and 0 at x = y = 0 (x**0 is constant), not 0 * inf = nan.

    Only that point's exponent is replaced: at y = 0 and x != 0 the exponent stays y - 1,
    so the rule's own derivative in y (the mixed second derivative, 1/x there) stays right.
    """
    exponent = y - 1
    both = _zero_at(x) & _zero_at(y)
    if both.any():
        exponent = where(both, 1, exponent)
    return y * power(x, exponent)


def _pow_dy(x, y, out):
    """x**y * log(x), and 0 at x = 0 (0**y is 0 for y > 0), not 0 * -inf = nan."""
    zero = _zero_at(x)
    if zero.any():
        x = where(zero, 1, x)  # log(1) = 0; the unselected x gets a zero cotangent, no nan
    return out * log(x)


power = _binary(
    "power", np.power,
    vjp=(lambda g, out, x, y: unbroadcast(g * _pow_dx(x, y, out), x),
         lambda g, out, x, y: unbroadcast(g * _pow_dy(x, y, out), y)),
    jvp=(lambda t, out, x, y: fit(t * _pow_dx(x, y, out), out),
         lambda t, out, x, y: fit(t * _pow_dy(x, y, out), out)),
    # |y| <= 3 keeps x**y finite at every magnitude the checker explores (x up to ~3e3)
    inputs=(POSITIVE, Interval(-3.0, 3.0)),
    complex_inputs=("complex_cut", "complex"),
    equivalents={"numpy": "power", "tensorflow": "math.pow"},
)


def _zeros(like):
    """A constant zero array shaped like ``like``: a branch that passes nothing on."""
    return np.zeros(shape_of(like), dtype_of(like))


def _where_forward(cond, x, y):
    return np.where(cond, x, y)


where: Op = define_op(
    "where", _where_forward,
    vjp=(None,
         lambda g, out, c, x, y: unbroadcast(where(c, g, _zeros(g)), x),
         lambda g, out, c, x, y: unbroadcast(where(c, _zeros(g), g), y)),
    jvp=(None,
         lambda t, out, c, x, y: fit(where(c, t, _zeros(t)), out),
         lambda t, out, c, x, y: fit(where(c, _zeros(t), t), out)),
    family="binary", nondiff_argnums=(0,), inputs=(BoolMask(), REAL, REAL),
    shapes="(...),(...),(...)",
    doc="numpy.where(cond, x, y); cond is a boolean mask, not differentiated.",
    complex_rules=True,
    equivalents={"numpy": "where", "tensorflow": "where"},
)


# -- maximum and minimum: ties split evenly --------------------------------------------------
def _share(x, y, out, larger):
    """The first input's share of the derivative: 1 where it wins, 1/2 at a tie, else 0."""
    xv, yv = np.asarray(value_of(x)), np.asarray(value_of(y))
    wins = xv > yv if larger else xv < yv
    return (wins + 0.5 * (xv == yv)).astype(dtype_of(out))


def _extreme(name, forward, larger):
    return _binary(
        name, forward,
        vjp=(lambda g, out, x, y: unbroadcast(g * _share(x, y, out, larger), x),
             lambda g, out, x, y: unbroadcast(g * _share(y, x, out, larger), y)),
        jvp=(lambda t, out, x, y: fit(t * _share(x, y, out, larger), out),
             lambda t, out, x, y: fit(t * _share(y, x, out, larger), out)),
        kinks="ties",
        doc=f"numpy.{name}(x, y); where x == y each input gets half the derivative.",
        equivalents={"numpy": name, "tensorflow": f"math.{name}"},
    )


maximum = _extreme("maximum", np.maximum, larger=True)
minimum = _extreme("minimum", np.minimum, larger=False)


# -- smooth two-argument functions ---------------------------------------------------------
def _sum_of_squares(x, y):
    return x * x + y * y


arctan2 = _binary(
    "arctan2", np.arctan2,
    vjp=(lambda g, out, x, y: unbroadcast(g * y / _sum_of_squares(x, y), x),
         lambda g, out, x, y: unbroadcast(-g * x / _sum_of_squares(x, y), y)),
    jvp=(lambda t, out, x, y: fit(t * y / _sum_of_squares(x, y), out),
         lambda t, out, x, y: fit(-t * x / _sum_of_squares(x, y), out)),
    # x away from 0 keeps clear of the origin and of the branch cut (x = 0, y < 0)
    inputs=(NonZero(), REAL),
    doc="numpy.arctan2(x, y): the angle of the point (y, x); cut along x = 0, y < 0.",
    equivalents={"numpy": "arctan2", "tensorflow": "math.atan2"},
)
hypot = _binary(
    "hypot", np.hypot,
    vjp=(lambda g, out, x, y: unbroadcast(g * x / out, x),
         lambda g, out, x, y: unbroadcast(g * y / out, y)),
    jvp=(lambda t, out, x, y: fit(t * x / out, out),
         lambda t, out, x, y: fit(t * y / out, out)),
    doc="numpy.hypot(x, y) = sqrt(x**2 + y**2); not differentiable at x = y = 0.",
    # tf.math has no hypot or logaddexp: TensorFlow's numpy API has them.
    equivalents={"numpy": "hypot", "tensorflow": "experimental.numpy.hypot"},
)
logaddexp = _binary(
    "logaddexp", np.logaddexp,
    # exp(x - out) <= 1: no overflow at any magnitude
    vjp=(lambda g, out, x, y: unbroadcast(g * exp(x - out), x),
         lambda g, out, x, y: unbroadcast(g * exp(y - out), y)),
    jvp=(lambda t, out, x, y: fit(t * exp(x - out), out),
         lambda t, out, x, y: fit(t * exp(y - out), out)),
    doc="numpy.logaddexp(x, y) = log(exp(x) + exp(y)), stable for large |x|, |y|.",
    equivalents={"numpy": "logaddexp", "tensorflow": "experimental.numpy.logaddexp"},
)


# TensorFlow's SquaredDifference: its gradient is 2 * g * (x - y), and minus that for y.
def _twice_difference(g, x, y):
    return (2 * g) * (x - y)


squared_difference = _binary(
    "squared_difference", lambda x, y: np.square(np.subtract(x, y)),
    vjp=(lambda g, out, x, y: unbroadcast(_twice_difference(g, x, y), x),
         lambda g, out, x, y: unbroadcast(-_twice_difference(g, x, y), y)),
    jvp=(lambda t, out, x, y: fit(_twice_difference(t, x, y), out),
         lambda t, out, x, y: fit(-_twice_difference(t, x, y), out)),
    doc="TensorFlow's squared_difference(x, y) = (x - y)**2.",
    complex_rules=True,
    equivalents={"numpy": formula(lambda xp, x, y: xp.square(x - y),
                                  "numpy has no squared_difference"),
                 "tensorflow": "math.squared_difference"},
)

xlogy = _binary(
    "special.xlogy", lambda x, y: sp.xlogy(x, y),
    # d/dx is log(y) also at x == 0 (as in JAX; TensorFlow returns 0 there)
    vjp=(lambda g, out, x, y: unbroadcast(g * log(y), x),
         lambda g, out, x, y: unbroadcast(g * x / y, y)),
    jvp=(lambda t, out, x, y: fit(t * log(y), out),
         lambda t, out, x, y: fit(t * x / y, out)),
    inputs=(REAL_WITH_ZEROS, POSITIVE),
    doc="scipy.special.xlogy(x, y) = x * log(y), and 0 where x == 0.",
    # x log(y) is the op on its domain (y > 0), with the op's derivative log(y) at x = 0
    equivalents={"numpy": "special.xlogy", "tensorflow": "math.xlogy",
                 "autograd": formula(lambda xp, x, y: x * xp.log(y),
                                     "autograd.scipy.special has no xlogy")},
)


def _truncated_ratio(x, y, out):
    """trunc(x / y) as a constant: it is piecewise constant, so its derivative is zero."""
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.trunc(np.asarray(value_of(x)) / np.asarray(value_of(y)))
    return ratio.astype(dtype_of(out))


fmod = _binary(
    "fmod", np.fmod,
    vjp=(lambda g, out, x, y: unbroadcast(g, x),
         lambda g, out, x, y: unbroadcast(-g * _truncated_ratio(x, y, out), y)),
    jvp=(lambda t, out, x, y: fit(t, out),
         lambda t, out, x, y: fit(-t * _truncated_ratio(x, y, out), out)),
    # Its jumps (x / y an integer) are not points of either input alone, so there is no
    # kinks entry for them: the checker's numeric kink test catches a sample that lands there.
    inputs=(REAL, NonZero()),
    doc="numpy.fmod(x, y) = x - trunc(x / y) * y; jumps where x / y is an integer.",
    # TensorFlow's fmod has no registered gradient (TruncateMod): its derivative paths are
    # unsupported, with TensorFlow's own message.  No autograd entry: it has no fmod rule.
    equivalents={"tensorflow": "truncatemod"},
)
