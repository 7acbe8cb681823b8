"""The reductions and cumulative ops (gradcheck/ops/reduce.py, cumulative.py).

Every case runs the checks of tests/op_harness.py: forward against numpy/scipy; every
derivative path by ``gradcheck.check`` at the case's point (float64, float32, autograd's
declared equivalent) and on inputs drawn from the op's declared metadata.  Then the cases the
generic checks cannot reach: zeros in products, ties, magnitude 1e3, empty and 0-d inputs.
"""

from __future__ import annotations

import math
import warnings
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
    seed_for,
)

import gradcheck as gc
import gradcheck.numpy as gnp
import gradcheck.special as gsp
from gradcheck import default_registry
from gradcheck.domains import REAL
from gradcheck.engine.tensor import value_of


def _cumlogsumexp(x: np.ndarray, axis: Any = None) -> np.ndarray:
    return np.log(np.cumsum(np.exp(x), axis=axis))


NO_CUMLOGSUMEXP = "cumlogsumexp declares no autograd equivalent (autograd has none)"
NO_CUMPROD = "cumprod declares no autograd equivalent"
AG_NORM = "autograd has no rule for this ord (it says so: unsupported)"
# a framework finding, not a limit of ours: inf where an entry is 0
AG_PROD = "autograd's prod rule divides by x: its derivatives are inf where an entry is 0"
S3 = (2, 3, 2)
MATRIX = ((2, 3),)
CASES = [
    OpCase("sum", np.sum, shapes=MATRIX),
    OpCase("sum", np.sum, {"axis": (0, 2), "keepdims": True},
           (S3,)),
    OpCase("mean", np.mean, {"axis": -1}, MATRIX),
    OpCase("mean", np.mean, {"axis": (0, 1), "keepdims": True},
           (S3,)),
    # autograd's prod rule divides by x: its cases draw no zeros
    OpCase("prod", np.prod, inputs=(REAL,), label="prod-real"),
    OpCase("prod", np.prod, {"axis": 1}, inputs=(REAL,),
           label="prod-real-axis1"),
    OpCase("prod", np.prod, {"axis": 1, "keepdims": True}, ((3, 4),), no_autograd=AG_PROD),
    OpCase("prod", np.prod, {"axis": (0, 2)}, (S3,), no_autograd=AG_PROD),
    OpCase("prod", np.prod, {}, ((3, 4),), no_autograd=AG_PROD),
    OpCase("max", np.max, shapes=MATRIX),
    OpCase("max", np.max, {"axis": 0, "keepdims": True}, MATRIX),
    OpCase("max", np.max, {"axis": (0, 2)}, (S3,)),
    OpCase("min", np.min, {"axis": -1}, MATRIX),
    OpCase("min", np.min, {"axis": (1, 2), "keepdims": True},
           (S3,)),
    OpCase("special.logsumexp", sp.logsumexp, shapes=MATRIX),
    OpCase("special.logsumexp", sp.logsumexp, {"axis": 1, "keepdims": True}, MATRIX),
    OpCase("special.logsumexp", sp.logsumexp, {"axis": (0, -1)}, (S3,)),
    OpCase("var", np.var, shapes=MATRIX),
    OpCase("var", np.var, {"axis": 1, "ddof": 1}, MATRIX),
    OpCase("var", np.var, {"axis": (0, 2), "keepdims": True},
           (S3,)),
    OpCase("std", np.std, shapes=MATRIX),
    # (2, 3) drew two close entries in a column: float32 derivatives of std there carry the
    # rounding of x - mean (relative error ~1e-4), more than check()'s float32 allowance
    OpCase("std", np.std, {"axis": 0, "ddof": 1}, ((3, 4),)),
    OpCase("std", np.std, {"axis": (1, 2), "keepdims": True},
           (S3,)),
    OpCase("cumsum", np.cumsum, shapes=MATRIX),
    OpCase("cumsum", np.cumsum, {"axis": 1}, MATRIX),
    OpCase("cumsum", np.cumsum, {"axis": -2}, (S3,)),
    OpCase("cumprod", np.cumprod, shapes=MATRIX, no_autograd=NO_CUMPROD),
    OpCase("cumprod", np.cumprod, {"axis": 1}, ((3, 5),), no_autograd=NO_CUMPROD),
    OpCase("cumprod", np.cumprod, {"axis": 0}, (S3,), no_autograd=NO_CUMPROD),
    OpCase("cumlogsumexp", _cumlogsumexp, shapes=MATRIX, no_autograd=NO_CUMLOGSUMEXP),
    OpCase("cumlogsumexp", _cumlogsumexp, {"axis": 1}, (S3,), no_autograd=NO_CUMLOGSUMEXP),
    OpCase("linalg.norm", np.linalg.norm, shapes=MATRIX),
    OpCase("linalg.norm", np.linalg.norm,
           {"ord": 3, "axis": 1}, MATRIX),
    OpCase("linalg.norm", np.linalg.norm,
           {"ord": "fro", "axis": (0, 2)}, (S3,)),
    # autograd's norm rule cannot take keepdims with a pair of axes
    OpCase("linalg.norm", np.linalg.norm, {"ord": "fro", "axis": (2, 1), "keepdims": True},
           (S3,), no_autograd="autograd's norm VJP cannot broadcast with keepdims=True over "
                              "two axes (it raises)"),
    OpCase("linalg.norm", np.linalg.norm,
           {"ord": "nuc"}, ((3, 2),)),
    OpCase("linalg.norm", np.linalg.norm, {"ord": 1, "axis": 0}, MATRIX, no_autograd=AG_NORM),
    OpCase("linalg.norm", np.linalg.norm, {"ord": 0.5, "axis": -1}, MATRIX,
           no_autograd=AG_NORM),
    OpCase("linalg.norm", np.linalg.norm, {"ord": -1, "axis": 1}, MATRIX, no_autograd=AG_NORM),
    OpCase("linalg.norm", np.linalg.norm, {"ord": 0, "axis": 1}, MATRIX, no_autograd=AG_NORM),
    OpCase("linalg.norm", np.linalg.norm, {"ord": np.inf, "axis": -1}, MATRIX,
           no_autograd="autograd's vector inf-norm derivative is inf (a framework finding: its "
                       "p-norm rule raises |x| and the norm to the power ord)"),
    OpCase("linalg.norm", np.linalg.norm, {"ord": -np.inf, "axis": 0, "keepdims": True},
           MATRIX, no_autograd=AG_NORM),
    OpCase("linalg.norm", np.linalg.norm, {"ord": 1, "axis": (2, 0)}, (S3,),
           no_autograd=AG_NORM),
    OpCase("linalg.norm", np.linalg.norm, {"ord": -np.inf, "axis": (0, 1)}, (S3,),
           no_autograd=AG_NORM),
    OpCase("linalg.norm", np.linalg.norm, {"ord": np.inf}, ((3, 4),), no_autograd=AG_NORM),
    OpCase("linalg.norm", np.linalg.norm, {"ord": 2, "axis": (1, 2)}, (S3,),
           no_autograd=AG_NORM),
    OpCase("linalg.norm", np.linalg.norm, {"ord": -2, "axis": (2, 1)}, (S3,),
           no_autograd=AG_NORM),
]
MY_OPS = ["sum", "mean", "prod", "max", "min", "special.logsumexp", "var", "std", "linalg.norm",
          "cumsum", "cumprod", "cumlogsumexp", "linear_recurrence"]


class TestReductions(PathChecks, AutogradChecks, SampledMetadataChecks):
    cases = CASES
    sampled_ops = MY_OPS
    sampled_without_autograd = {"cumlogsumexp": NO_CUMLOGSUMEXP, "cumprod": NO_CUMPROD,
                                "prod": AG_PROD, "linalg.norm": "autograd has rules for few "
                                "ords (the rows compare those)",
                                "linear_recurrence": "an internal op: no autograd equivalent"}


# ---------------------------------------------------------------------------------------
# The linear recurrence under the cumulative rules
# ---------------------------------------------------------------------------------------
def _recurrence_by_definition(a: np.ndarray, b: np.ndarray, reverse: bool,
                              exclusive: bool) -> np.ndarray:
    """Along the last axis: sum over i of b[i] times the product of a strictly after i,
    up to k (inclusive) or before k (exclusive); mirrored for reverse."""
    n = b.shape[-1]
    out = np.zeros(np.broadcast_shapes(a.shape, b.shape))
    for k in range(n):
        for i in range(n):
            lo, hi = (i, k) if not reverse else (k, i)
            if (hi < lo) or (exclusive and hi == lo):
                continue
            stop = hi if exclusive else hi + 1
            out[..., k] += b[..., i] * np.prod(a[..., lo + 1:stop], axis=-1)
    return out


@pytest.mark.parametrize("exclusive", [False, True])
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("n", [0, 1, 5, 70])
def test_linear_recurrence_matches_its_definition(n: int, reverse: bool,
                                                  exclusive: bool) -> None:
    rng = np.random.default_rng(n)
    # factors near 1 in magnitude keep 70-step products finite; exact zeros cut the chain
    a = rng.uniform(0.8, 1.2, (2, n)) * rng.choice([-1.0, 1.0, 0.0], (2, n), p=[.45, .45, .1])
    b = rng.standard_normal((2, n))
    got = gc.default_registry.get("linear_recurrence")(a, b, reverse=reverse,
                                                       exclusive=exclusive)
    expected = _recurrence_by_definition(a, b, reverse, exclusive)
    assert_close(got, expected, 1e-12, f"linear_recurrence n={n} {reverse=} {exclusive=}")


def test_linear_recurrence_reverse_is_the_transpose() -> None:
    op = gc.default_registry.get("linear_recurrence")
    a = np.random.default_rng(1).standard_normal(6)
    eye = np.eye(6)
    for exclusive in (False, True):
        fwd = np.stack([op(a, e, exclusive=exclusive) for e in eye], axis=1)
        rev = np.stack([op(a, e, reverse=True, exclusive=exclusive) for e in eye], axis=1)
        assert_close(rev, fwd.T, 1e-14, f"reverse vs transpose, {exclusive=}")


def test_linear_recurrence_broadcasts_and_rejects_0d() -> None:
    op = gc.default_registry.get("linear_recurrence")
    a, b = np.full((1, 4), 0.5), np.ones((3, 4))
    check_at("linear_recurrence", [a, b], seed=seed_for("linear_recurrence", "broadcast"))
    with pytest.raises(ValueError, match="linear_recurrence"):
        op(np.float64(1.0), np.float64(2.0))


# ---------------------------------------------------------------------------------------
# Products with zeros
# ---------------------------------------------------------------------------------------
def _others_by_deletion(x: np.ndarray) -> np.ndarray:
    return np.array([np.prod(np.delete(x, i)) for i in range(x.size)])


@pytest.mark.parametrize("zeros", [[], [2], [1, 3], [0, 2, 4]], ids=lambda z: f"{len(z)}zeros")
def test_prod_with_zeros(zeros: list[int]) -> None:
    x = np.array([1.5, -2.0, 0.7, 3.0, -0.4])
    x[zeros] = 0.0
    g = engine_vjp(gnp.prod, [x], np.float64(1.0))[0]
    assert_close(g, _others_by_deletion(x), 1e-15, f"prod gradient with zeros at {zeros}")
    u = np.random.default_rng(3).standard_normal(5)
    _, t = gc.jvp(gnp.prod, [x], [u])
    assert math.isclose(float(value_of(t)), float(_others_by_deletion(x) @ u), abs_tol=1e-15)
    # second order: d2 prod / dx_i dx_j = product of all but i and j
    hess = np.zeros((5, 5))
    for i in range(5):
        for j in range(5):
            if i != j:
                hess[i, j] = np.prod(np.delete(x, [i, j]))
    for mode in HVP_MODES:
        (h,) = gc.hvp(gnp.prod, [x], [u], mode=mode)
        assert_close(h, hess @ u, 1e-14, f"prod HVP ({mode}) with zeros at {zeros}")


def test_prod_with_zeros_along_an_axis() -> None:
    x = np.array([[0.0, 2.0, 3.0], [0.0, 0.0, 5.0], [1.0, 2.0, 4.0]])
    g = engine_vjp(lambda a: gnp.prod(a, axis=1), [x], np.ones(3))[0]
    assert_close(g, np.stack([_others_by_deletion(r) for r in x]), 0, "rows with zeros")
    g = engine_vjp(lambda a: gnp.prod(a, axis=0, keepdims=True), [x.T], np.ones((1, 3)))[0]
    assert_close(g, np.stack([_others_by_deletion(r) for r in x]).T, 0, "columns with zeros")


@pytest.mark.parametrize("zeros", [[], [1], [1, 3]], ids=lambda z: f"{len(z)}zeros")
def test_cumprod_with_zeros(zeros: list[int]) -> None:
    x = np.array([1.5, -2.0, 0.7, 3.0, -0.4])
    x[zeros] = 0.0
    # dy_k/dx_i = prod of x_j for j <= k, j != i
    jac = np.array([[np.prod(np.delete(x[:k + 1], i)) if i <= k else 0.0 for i in range(5)]
                    for k in range(5)])
    v = np.random.default_rng(4).standard_normal(5)
    assert_close(engine_vjp(gnp.cumprod, [x], v)[0], v @ jac, 1e-15, f"cumprod VJP {zeros}")
    for method in JVP_METHODS:
        _, t = gc.jvp(gnp.cumprod, [x], [v], method=method)
        assert_close(t, jac @ v, 1e-15, f"cumprod JVP ({method}) {zeros}")
    # every path, second order included, at the zeros
    check_at("cumprod", [x], seed=seed_for("cumprod", str(zeros)))


# ---------------------------------------------------------------------------------------
# Ties: the derivative is shared evenly
# ---------------------------------------------------------------------------------------
TIED = np.array([[1.0, 3.0, 3.0, 2.0], [2.0, 2.0, 2.0, 2.0], [-1.0, 0.5, -1.0, 0.0]])


@pytest.mark.parametrize("fn", [gnp.max, gnp.amax, gnp.min, gnp.amin],
                         ids=["max", "amax", "min", "amin"])
def test_ties_share_evenly(fn: Any) -> None:
    find = np.max if fn in (gnp.max, gnp.amax) else np.min
    hit = TIED == find(TIED, axis=1, keepdims=True)
    expected = hit / hit.sum(axis=1, keepdims=True)
    g = engine_vjp(lambda a: fn(a, axis=1), [TIED], np.ones(3))[0]
    assert_close(g, expected, 0, f"{fn.name} ties along axis 1")
    u = np.random.default_rng(5).standard_normal(TIED.shape)
    _, t = gc.jvp(lambda a: fn(a, axis=1), [TIED], [u])
    assert_close(t, np.sum(expected * u, axis=1), 1e-15, f"{fn.name} JVP at ties")
    whole = engine_vjp(lambda a: fn(a), [TIED], np.float64(2.0))[0]
    hit = TIED == find(TIED)
    assert_close(whole, 2.0 * hit / hit.sum(), 0, f"{fn.name} ties over all")


def test_amax_is_max() -> None:
    assert gnp.amax is gnp.max and gnp.amin is gnp.min


def test_inf_norm_ties_share_evenly() -> None:
    x = np.array([3.0, -3.0, 1.0])
    g = engine_vjp(lambda a: gnp.linalg.norm(a, np.inf), [x], np.float64(1.0))[0]
    assert_close(g, np.array([0.5, -0.5, 0.0]), 0, "inf-norm ties")


# ---------------------------------------------------------------------------------------
# Magnitude 1e3
# ---------------------------------------------------------------------------------------
LARGE = np.array([[1000.0, 999.0, -1000.0], [-1000.0, -1001.0, -999.5]])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_logsumexp_at_1e3(dtype: Any) -> None:
    x = LARGE.astype(dtype)
    # rounding 1e3 to the dtype moves exp(x - out) by about 1e3 * eps, relatively
    rtol = 4 * 1e3 * float(np.finfo(dtype).eps)
    out = gsp.logsumexp(x, axis=1)
    assert out.dtype == dtype
    assert_close(out, sp.logsumexp(LARGE, axis=1), rtol, "logsumexp forward at 1e3")
    softmax = sp.softmax(LARGE, axis=1)
    g = engine_vjp(lambda a: gsp.logsumexp(a, axis=1), [x], np.ones(2, dtype))[0]
    assert np.all(np.isfinite(g))
    assert_close(g, softmax, rtol, "logsumexp VJP at 1e3")
    u = np.ones_like(x)
    _, t = gc.jvp(lambda a: gsp.logsumexp(a, axis=1, keepdims=True), [x], [u])
    assert_close(t, np.ones((2, 1)), rtol, "logsumexp JVP at 1e3")
    (h,) = gc.hvp(lambda a: gsp.logsumexp(a), [x], [u])
    assert np.all(np.isfinite(np.asarray(value_of(h))))


def test_cumlogsumexp_at_1e3() -> None:
    x = np.array([1000.0, -1000.0, 1001.0, 999.5, -999.0])
    out = gnp.cumlogsumexp(x)
    expected = [sp.logsumexp(x[:k + 1]) for k in range(5)]
    assert_close(out, np.array(expected), 1e-14, "cumlogsumexp forward at 1e3")
    g = np.random.default_rng(6).standard_normal(5)
    # ct_i = sum_{k >= i} g_k exp(x_i - out_k); every exponent is <= 0
    ct = np.array([sum(g[k] * np.exp(x[i] - out[k]) for k in range(i, 5)) for i in range(5)])
    got = engine_vjp(gnp.cumlogsumexp, [x], g)[0]
    assert_close(got, ct, 1e-12, "cumlogsumexp VJP at 1e3")
    check_at("cumlogsumexp", [x], seed=seed_for("cumlogsumexp", "1e3"))
    for mode in HVP_MODES:
        (h,) = gc.hvp(gnp.cumlogsumexp, [x], [g], mode=mode)
        assert np.all(np.isfinite(np.asarray(value_of(h)))), mode


def test_cumlogsumexp_matches_logaddexp_accumulate() -> None:
    x = np.random.default_rng(8).standard_normal((3, 4)) * 500
    assert_close(gnp.cumlogsumexp(x, axis=0), np.logaddexp.accumulate(x, axis=0), 1e-15,
                 "cumlogsumexp vs numpy")


# ---------------------------------------------------------------------------------------
# var/std edge cases, empty and 0-d inputs, signatures and exports
# ---------------------------------------------------------------------------------------
def test_std_over_single_entries_has_zero_derivative() -> None:
    x = np.random.default_rng(9).standard_normal((3, 1))
    g = engine_vjp(lambda a: gnp.std(a, axis=1), [x], np.ones(3))[0]
    assert_close(g, np.zeros_like(x), 0, "std over one entry")
    _, t = gc.jvp(lambda a: gnp.std(a, axis=1), [x], [np.ones_like(x)])
    assert_close(t, np.zeros(3), 0, "std JVP over one entry")


def test_var_without_degrees_of_freedom_is_a_clear_error() -> None:
    x = np.ones((2, 1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # numpy's own, from the forward
        with pytest.raises(ValueError, match=r"op 'var': ddof=1 leaves no degrees of freedom"):
            engine_vjp(lambda a: gnp.var(a, axis=1, ddof=1), [x], np.ones(2))


EMPTY = [
    (gnp.sum, {"axis": 0}, (0, 3)),
    (gnp.sum, {}, (2, 0)),
    (gnp.prod, {"axis": 0}, (0, 3)),
    (gnp.prod, {}, (0,)),
    (gnp.mean, {"axis": 1}, (0, 3)),
    (gnp.max, {"axis": 1}, (0, 3)),
    (gnp.min, {"axis": 0, "keepdims": True}, (3, 0)),
    (gsp.logsumexp, {"axis": 1}, (0, 3)),
    (gnp.var, {"axis": 1}, (0, 3)),
    (gnp.std, {"axis": 1, "ddof": 1}, (0, 3)),
    (gnp.linalg.norm, {}, (0, 3)),
    (gnp.linalg.norm, {"ord": 1, "axis": 0}, (0, 2)),
    (gnp.linalg.norm, {"ord": np.inf, "axis": 0}, (2, 0)),
    (gnp.cumsum, {}, (0,)),
    (gnp.cumsum, {"axis": 1}, (2, 0)),
    (gnp.cumprod, {"axis": 0}, (0, 2)),
    (gnp.cumlogsumexp, {"axis": 0}, (0, 2)),
]


@pytest.mark.parametrize("fn,params,shape", EMPTY,
                         ids=[f"{f.name}{s}{p}".replace(" ", "") for f, p, s in EMPTY])
def test_zero_size_inputs_behave_like_numpy(fn: Any, params: dict[str, Any],
                                            shape: tuple[int, ...]) -> None:
    x = np.zeros(shape)
    out = np.asarray(fn(x, **params))
    reference = {"special.logsumexp": sp.logsumexp, "linalg.norm": np.linalg.norm,
                 "cumlogsumexp": lambda a, axis: np.logaddexp.accumulate(a, axis=axis)}
    expected = reference.get(fn.name, getattr(np, fn.name, None))(x, **params)
    np.testing.assert_array_equal(out, expected)
    f = lambda a: fn(a, **params)  # noqa: E731
    (g,) = engine_vjp(f, [x], np.ones_like(out))
    assert g.shape == shape
    for method in JVP_METHODS:
        _, t = gc.jvp(f, [x], [np.ones(shape)], method=method)
        assert np.shape(value_of(t)) == out.shape, method
        np.testing.assert_array_equal(np.asarray(value_of(t)), np.zeros(out.shape))


def test_empty_logsumexp_is_minus_inf_like_scipy() -> None:
    assert gsp.logsumexp(np.zeros(0)) == -np.inf == sp.logsumexp(np.zeros(0))


ZERO_D = [gnp.sum, gnp.mean, gnp.prod, gnp.max, gnp.min, gsp.logsumexp, gnp.var, gnp.std,
          gnp.linalg.norm, gnp.cumsum, gnp.cumprod, gnp.cumlogsumexp]


@pytest.mark.parametrize("fn", ZERO_D, ids=lambda f: f.name)
def test_0d_inputs(fn: Any) -> None:
    x = np.array(-0.7)
    out = fn(x)
    reference = {"special.logsumexp": sp.logsumexp, "linalg.norm": lambda a: np.abs(a),
                 "cumlogsumexp": lambda a: np.reshape(a, (1,))}
    expected = reference.get(fn.name, getattr(np, fn.name, None))(x)
    assert_close(out, expected, 1e-15, f"{fn.name} on a 0-d input")
    (g,) = engine_vjp(fn, [x], np.ones(np.shape(out)))
    assert g.shape == ()
    check_at(fn.name, [x], seed=seed_for(fn.name, "0-d"))


def test_numpy_positional_parameters() -> None:
    x = np.random.default_rng(10).standard_normal((2, 3))
    assert_close(gnp.sum(x, 0), np.sum(x, 0), 0, "sum axis positionally")
    assert_close(gnp.cumsum(x, 1), np.cumsum(x, 1), 0, "cumsum axis positionally")
    assert_close(gnp.linalg.norm(x, 1, 0, True), np.linalg.norm(x, 1, 0, True), 0, "norm")
    assert_close(gnp.var(x, 1, ddof=1), np.var(x, 1, ddof=1), 0, "var")


def test_exports() -> None:
    for name in ("sum", "mean", "prod", "max", "min", "amax", "amin", "var", "std", "cumsum",
                 "cumprod", "cumlogsumexp"):
        assert name in gnp.__all__, name
    assert gsp.logsumexp.name == "special.logsumexp"
    assert gnp.linalg.norm.name == "linalg.norm"
    assert "linear_recurrence" not in gnp.__all__


@pytest.mark.parametrize("name,params", [("special.logsumexp", {"axis": 1}),
                                         ("special.logsumexp", {}),
                                         ("cumlogsumexp", {"axis": 0}),
                                         ("cumlogsumexp", {})])
@pytest.mark.parametrize("scale", [1.0, 1e3])
def test_declared_references_match(name: str, params: dict[str, Any], scale: float) -> None:
    op = default_registry.get(name)
    x = np.random.default_rng(11).standard_normal((3, 4)) * scale
    assert_close(op(x, **params), op.meta["reference"](x, **params), 1e-13,
                 f"{name} vs its declared reference")
