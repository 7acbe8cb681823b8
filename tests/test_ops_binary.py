"""The broadcasting binary ops (gradcheck/ops/binary.py).

Each case runs the checks of tests/op_harness.py (forward against numpy; every derivative
path by ``gradcheck.check`` in float64 and float32 and against autograd's declared equivalent);
then broadcasting pairs with size-1, 0-d and zero-size shapes, ties in maximum/minimum,
logaddexp at 1e3, xlogy at x = 0 and fmod's y-derivative.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import scipy.special as sp
from op_harness import (
    HVP_MODES,
    JVP_METHODS,
    AutogradChecks,
    OpCase,
    PathChecks,
    SampledMetadataChecks,
    assert_close,
    check_at,
    engine_vjp,
    rng_for,
    seed_for,
)

import gradcheck as gc
import gradcheck.nn as gnn
import gradcheck.numpy as gnp
import gradcheck.special as gsp
from gradcheck.domains import NonZero
from gradcheck.engine.tensor import value_of

PAIR = ((2, 3), (3,))
NO_FMOD = "fmod declares no autograd equivalent (autograd has no fmod rule)"
CASES = [
    OpCase("add", np.add, shapes=PAIR),
    OpCase("subtract", np.subtract, shapes=((2, 1), (1, 3))),
    OpCase("multiply", np.multiply, shapes=PAIR),
    OpCase("divide", np.divide, shapes=PAIR),
    OpCase("power", np.power, shapes=PAIR),
    OpCase("where", np.where, shapes=((2, 3),) * 3),
    OpCase("where", np.where, shapes=((2, 1), (2, 3), (3,)),
           no_autograd="autograd's where rule cannot broadcast"),
    OpCase("maximum", np.maximum, shapes=PAIR),
    OpCase("minimum", np.minimum, shapes=((2, 1), (3,))),
    OpCase("arctan2", np.arctan2, shapes=PAIR),
    OpCase("hypot", np.hypot, shapes=((2, 3), (1, 3))),
    OpCase("logaddexp", np.logaddexp, shapes=PAIR),
    OpCase("squared_difference", lambda x, y: (x - y) ** 2, shapes=PAIR),
    OpCase("special.xlogy", sp.xlogy, shapes=PAIR),
    OpCase("fmod", np.fmod, shapes=PAIR, no_autograd=NO_FMOD),
    OpCase("fmod", np.fmod, shapes=((3,), (2, 3)), inputs=(NonZero(), NonZero()),
           no_autograd=NO_FMOD,
           label="fmod-negative-ratios"),
]
MY_OPS = ["add", "subtract", "multiply", "divide", "power", "where", "maximum", "minimum",
          "arctan2", "hypot", "logaddexp", "squared_difference", "special.xlogy", "fmod"]


class TestBinaryOps(PathChecks, AutogradChecks, SampledMetadataChecks):
    cases = CASES
    sampled_ops = MY_OPS
    sampled_without_autograd = {"fmod": NO_FMOD}


# ---------------------------------------------------------------------------------------
# Broadcasting: size-1 dims, 0-d scalars, zero-size arrays
# ---------------------------------------------------------------------------------------
BROADCAST_SHAPES = [((2, 3), (3,)), ((2, 1), (1, 3)), ((), (2, 3)), ((2, 3), ()), ((1,), (2, 1)),
                    ((), ()), ((0, 3), (3,)), ((2, 0), (1,)), ((1, 0), (2, 1))]
BINARY = [n for n in MY_OPS if n != "where"]


@pytest.mark.parametrize("shapes", BROADCAST_SHAPES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("name", BINARY)
def test_broadcasting_pairs(name: str, shapes: tuple[tuple[int, ...], ...]) -> None:
    case = OpCase(name, shapes=shapes)
    xs = case.point()
    out = np.asarray(case(*xs))
    assert out.shape == np.broadcast_shapes(*shapes)
    if out.size:
        case.check(("float64",))
        return
    # zero-size: every derivative is empty, in its input's or the output's shape
    cts = engine_vjp(case, xs, np.ones(out.shape))
    assert [c.shape for c in cts] == list(shapes)
    assert all(np.all(c == 0) for c in cts)
    for method in JVP_METHODS:
        _, t = gc.jvp(case, xs, [np.ones_like(x) for x in xs], method=method)
        assert np.shape(value_of(t)) == out.shape, method


def test_where_broadcasts_its_condition() -> None:
    c = np.array([True, False, True])
    x, y = np.arange(6.0).reshape(2, 3), np.float64(-1.0)
    f = lambda a, b: gnp.where(c, a, b)  # noqa: E731
    gx, gy = engine_vjp(f, [x, y], np.ones((2, 3)))
    assert_close(gx, np.broadcast_to(c, (2, 3)).astype(float), 0, "where: x's share")
    assert float(gy) == 2.0


# ---------------------------------------------------------------------------------------
# maximum / minimum ties: half each
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("fn", [gnp.maximum, gnp.minimum], ids=["maximum", "minimum"])
def test_ties_split_evenly(fn: Any) -> None:
    x = np.array([1.0, 2.0, 3.0])
    y = np.array([1.0, 5.0, 3.0])
    gx, gy = engine_vjp(fn, [x, y], np.ones(3))
    wins = (x > y) if fn is gnp.maximum else (x < y)
    assert_close(gx, wins + 0.5 * (x == y), 0, f"{fn.name} x's share")
    assert_close(gy, (1 - wins) - 0.5 * (x == y), 0, f"{fn.name} y's share")
    # the same input on both sides: the shares add up to the full derivative
    (g,) = engine_vjp(lambda a: fn(a, a), [x], np.ones(3))
    assert_close(g, np.ones(3), 0, f"{fn.name}(x, x)")
    u, w = np.array([1.0, 1.0, 4.0]), np.array([3.0, 1.0, 2.0])
    for method in JVP_METHODS:
        _, t = gc.jvp(fn, [x, y], [u, w], method=method)
        expected = np.where(x == y, (u + w) / 2, np.where(wins, u, w))
        assert_close(t, expected, 0, f"{fn.name} JVP at ties ({method})")


def test_ties_with_broadcasting() -> None:
    x = np.array([[0.0, 1.0], [2.0, 1.0]])
    gx, gy = engine_vjp(gnp.maximum, [x, np.float64(1.0)], np.ones((2, 2)))
    assert_close(gx, np.array([[0.0, 0.5], [1.0, 0.5]]), 0, "x's share")
    assert float(gy) == 2.0  # 1 + 1/2 + 1/2


# ---------------------------------------------------------------------------------------
# Numerics at the edges
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_logaddexp_at_1e3(dtype: Any) -> None:
    x = np.array([1000.0, 1000.0, -1000.0, 1000.0], dtype)
    y = np.array([1000.0, -1000.0, -1000.0, 999.0], dtype)
    rtol = 4 * 1e3 * float(np.finfo(dtype).eps)
    out = gnp.logaddexp(x, y)
    assert out.dtype == dtype
    assert_close(out, np.logaddexp(x.astype(float), y.astype(float)), rtol, "forward")
    gx, gy = engine_vjp(gnp.logaddexp, [x, y], np.ones(4, dtype))
    sx = sp.expit(x.astype(float) - y.astype(float))
    assert_close(gx, sx, rtol, "logaddexp VJP x at 1e3")
    assert_close(gy, 1 - sx, rtol, "logaddexp VJP y at 1e3")
    u = np.ones(4, dtype)
    for method in JVP_METHODS:
        _, t = gc.jvp(gnp.logaddexp, [x, y], [u, u], method=method)
        assert_close(t, np.ones(4), rtol, f"logaddexp JVP at 1e3 ({method})")
    for mode in HVP_MODES:
        hs = gc.hvp(gnp.logaddexp, [x, y], [u, -u], mode=mode)
        # d2/dx2 = s(1-s); along (1, -1) the HVP is 2 s (1 - s) (1, -1)
        assert_close(hs[0], 2 * sx * (1 - sx), rtol, f"logaddexp HVP at 1e3 ({mode})")


def test_xlogy_at_zero() -> None:
    x = np.array([0.0, 0.0, 2.0])
    y = np.array([0.5, 3.0, 4.0])
    assert_close(gsp.xlogy(x, y), sp.xlogy(x, y), 0, "forward")
    assert float(gsp.xlogy(np.float64(0.0), np.float64(0.0))) == 0.0  # scipy: 0 even at y = 0
    gx, gy = engine_vjp(gsp.xlogy, [x, y], np.ones(3))
    # x * log(y) is linear in x: its x-derivative is log(y) at x = 0 too
    assert_close(gx, np.log(y), 1e-15, "d/dx at x = 0")
    assert_close(gy, x / y, 1e-15, "d/dy at x = 0")


def test_fmod_derivative_in_y_truncates() -> None:
    x = np.array([-5.5, 5.5, 7.0, -0.3])
    y = np.array([2.0, -2.0, 2.5, 0.7])
    gx, gy = engine_vjp(gnp.fmod, [x, y], np.ones(4))
    assert_close(gx, np.ones(4), 0, "d/dx")
    assert_close(gy, -np.trunc(x / y), 0, "d/dy = -trunc(x/y), not -floor")
    check_at("fmod", [x, y], seed=seed_for("fmod", "truncates"))


def test_squared_difference_matches_tensorflow_formula() -> None:
    x, y = np.array([[1.0, -2.0]]), np.array([0.5])
    g = np.array([[2.0, 3.0]])
    gx, gy = engine_vjp(gnn.squared_difference, [x, y], g)
    assert_close(gx, 2 * g * (x - y), 0, "d/dx")
    assert_close(gy, np.sum(-2 * g * (x - y), axis=1), 0, "d/dy, summed over broadcasting")


def test_exports() -> None:
    for name in ("maximum", "minimum", "arctan2", "hypot", "logaddexp", "fmod", "where"):
        assert name in gnp.__all__, name
    assert gsp.xlogy.name == "special.xlogy"
    assert gnn.squared_difference.name == "squared_difference"
    assert not hasattr(gnp, "squared_difference")


def test_maximum_works_on_tensors_under_a_tape() -> None:
    x = gc.tensor([1.0, 4.0])
    with gc.GradientTape() as tape:
        tape.watch(x)
        y = gnp.sum(gnp.maximum(x, 2.0) * x)
    g = np.asarray(value_of(tape.gradient(y, x)))
    assert_close(g, np.array([2.0, 8.0]), 0, "d/dx sum(maximum(x, 2) * x)")


@pytest.mark.parametrize("name", BINARY)
def test_mixed_float_dtypes(name: str) -> None:
    """float32 with float64 computes in float64; each cotangent comes back in its input's dtype."""
    op = gc.default_registry.get(name)
    rng = rng_for(name, "mixed")
    dx, dy = op.meta["inputs"]
    x, y = dx.sample(rng, (2, 3), np.float32), dy.sample(rng, (3,), np.float64)
    out = np.asarray(op(x, y))
    assert out.dtype == np.float64
    gx, gy = engine_vjp(op, [x, y], np.ones(out.shape))
    assert (gx.dtype, gy.dtype) == (np.float32, np.float64)
