"""Fixes to ops found by exploring the numpy namespace against numpy, autograd and JAX.

Each test failed before its fix: power's derivatives at zeros (nan), numpy keywords the
reductions refused, var and std of an empty input, svd(compute_uv=False), svd's singular
values of a non-square matrix, clip with array bounds, and numpy functions gnp lacked (sort,
argsort, diff, take_along_axis).
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
import pytest
from op_harness import JVP_METHODS, assert_passed, engine_vjp

import gradcheck as gc
import gradcheck.numpy as gnp
from gradcheck.checker import format_failure
from gradcheck.engine.tensor import value_of


def jvps(f: Any, x: np.ndarray, t: np.ndarray) -> dict[str, np.ndarray]:
    """The JVP of ``f`` at ``x`` in direction ``t`` by every method the engine has."""
    return {m: np.asarray(value_of(gc.jvp(f, [x], [t], method=m)[1])) for m in JVP_METHODS}


# -- power at zeros ------------------------------------------------------------------------
@pytest.mark.parametrize("exponent", [0, 0.0, np.array([0.0, 0.0])], ids=["int", "float", "array"])
def test_power_zero_exponent_at_zero_has_zero_derivative(exponent: Any) -> None:
    x = np.array([0.0, 2.0])
    f = lambda a: a ** exponent  # noqa: E731
    (g,) = engine_vjp(f, [x], np.ones(2))
    np.testing.assert_array_equal(g, [0.0, 0.0])
    for method, t in jvps(f, x, np.ones(2)).items():
        np.testing.assert_array_equal(t, [0.0, 0.0], err_msg=method)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_power_derivative_in_the_exponent_at_a_zero_base(dtype: Any) -> None:
    # 0**y is 0 for every y > 0, so d/dy is 0 (autograd, JAX and torch agree), not 0 * log 0
    x, y = np.array([0.0, 2.0], dtype), np.array([2.0, 0.5], dtype)
    gx, gy = engine_vjp(lambda a, b: gnp.power(a, b), [x, y], np.ones(2, dtype))
    np.testing.assert_allclose(gx, [0.0, 0.5 * 2.0 ** -0.5], rtol=1e-6)
    np.testing.assert_allclose(gy, [0.0, 2.0 ** 0.5 * math.log(2.0)], rtol=1e-6)
    assert gx.dtype == gy.dtype == dtype
    (t,) = [gc.jvp(lambda b: gnp.power(x, b), [y], [np.ones(2, dtype)])[1]]
    np.testing.assert_allclose(value_of(t), gy, rtol=1e-6)


def hessian_of_power(x: float, y: float) -> np.ndarray:
    """The engine's Hessian of x**y at (x, y), by forward-over-reverse HVPs."""
    f = lambda v: gnp.sum(v[0] ** v[1])  # noqa: E731
    rows = [gc.hvp(f, (np.array([x, y]),), (e,))[0] for e in np.eye(2)]
    return np.array([np.asarray(value_of(r)) for r in rows])


def test_power_second_derivatives_where_the_guards_act() -> None:
    # at y = 0, x != 0: f_xy = x**(y-1) (1 + y log x) = 1/x (the guard must not replace y - 1
    # there), f_xx = 0, f_yy = log(x)**2
    np.testing.assert_allclose(hessian_of_power(2.0, 0.0),
                               [[0.0, 0.5], [0.5, math.log(2.0) ** 2]], rtol=1e-14)
    # at x = 0, y = 2: f_xx = 2, f_xy = lim x (1 + 2 log x) = 0, f_yy = lim x**2 log(x)**2 = 0
    np.testing.assert_allclose(hessian_of_power(0.0, 2.0), [[2.0, 0.0], [0.0, 0.0]], atol=0)


def test_power_checks_at_zeros() -> None:
    """Every path (second order included) against the numeric reference at points where the
    rules used to give nan: in x with y held at 0 and 2, in y with x held at 0."""
    x, y = np.array([0.0, 0.0, 1.5]), np.array([0.0, 2.0, 0.0])
    assert_passed(gc.check("power", inputs=[x, y], wrt=[0], seed=0))
    assert_passed(gc.check("power", inputs=[np.array([0.0, 0.0, 1.5]), np.array([2.0, 3.0, 0.0])],
                           wrt=[1], seed=0))


@pytest.mark.parametrize("seed", range(5))
def test_power_still_passes_its_own_check(seed: int) -> None:
    assert_passed(gc.check("power", seed=seed))


def test_power_full_mode() -> None:
    report = gc.check("power", mode="full", seed=0)
    assert report.passed, format_failure(report)


# -- numpy's keywords on the reductions ------------------------------------------------------
X = np.array([[1.5, -2.0, 3.0], [0.5, 1.0, 2.0]])
DTYPE_REDUCTIONS = [gnp.sum, gnp.mean, gnp.prod, gnp.var, gnp.std]


@pytest.mark.parametrize("fn", DTYPE_REDUCTIONS, ids=lambda f: f.name)
def test_reductions_take_dtype(fn: Any) -> None:
    expected = getattr(np, fn.name)(X, axis=0, dtype=np.float32)
    f = lambda a: fn(a, axis=0, dtype=np.float32)  # noqa: E731
    out = np.asarray(value_of(f(gc.tensor(X))))
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, expected, rtol=1e-6)
    # the derivative is the one of the reduction of the cast input, cast back
    g = np.array([1.0, -2.0, 0.5])
    (ct,) = engine_vjp(f, [X], g.astype(np.float32))
    (expected_ct,) = engine_vjp(lambda a: fn(a, axis=0), [X], g)
    assert ct.dtype == np.float64
    np.testing.assert_allclose(ct, expected_ct, rtol=1e-5)
    for method, t in jvps(f, X, np.ones_like(X)).items():
        assert t.dtype == np.float32, method


def test_sum_dtype_positionally_and_through_check() -> None:
    np.testing.assert_array_equal(gnp.sum(X, 0, np.float32), np.sum(X, 0, np.float32))
    assert_passed(gc.check("sum", inputs=["real"], params={"axis": 0, "dtype": np.float64},
                           seed=0))


@pytest.mark.parametrize("name", ["sum", "mean", "prod", "max", "min", "var", "std"])
def test_numpy_calls_the_methods_with_out_none(name: str) -> None:
    # numpy's own np.max(t) calls t.max(axis=None, out=None): the op takes out=None
    op = gc.default_registry.get(name)
    x = gc.tensor(X)
    np.testing.assert_allclose(value_of(op(x, axis=1, out=None)),
                               getattr(np, name)(X, axis=1), rtol=1e-15)
    out, vjp_fn = gc.vjp(lambda a: op(a, axis=1, out=None), X)
    assert vjp_fn(np.ones(2))[0].shape == X.shape


@pytest.mark.parametrize("name", ["max", "min", "prod", "var", "std"])
def test_numpy_functions_on_tensors(name: str) -> None:
    x = gc.tensor(X)
    np.testing.assert_allclose(value_of(getattr(np, name)(x)), getattr(np, name)(X),
                               rtol=1e-15)


@pytest.mark.parametrize("fn, keyword, message", [
    (gnp.sum, {"out": np.zeros(3)}, r"op 'sum': out= is not supported"),
    (gnp.max, {"out": np.zeros(3)}, r"op 'max': out= is not supported"),
    (gnp.mean, {"out": np.zeros(3)}, r"op 'mean': out= is not supported"),
    (gnp.sum, {"initial": 1.0}, r"op 'sum': initial= is not supported.*gnp.sum\(x\) \+ initial"),
    (gnp.max, {"initial": 0.0}, r"op 'max': initial= .*gnp.maximum\(gnp.max\(x\), initial\)"),
    (gnp.prod, {"where": np.array([True, False, True])},
     r"op 'prod': where= is not supported.*gnp.prod\(gnp.where\(mask, x, 1\)\)"),
    (gnp.mean, {"where": np.array([True, False, True])}, r"op 'mean': where= .*x\[mask\]"),
])
def test_unsupported_numpy_keywords_are_clear_errors(fn: Any, keyword: dict[str, Any],
                                                     message: str) -> None:
    with pytest.raises((TypeError, ValueError), match=message):
        fn(gc.tensor(X), axis=0, **keyword)


def test_an_all_true_where_is_no_mask() -> None:
    np.testing.assert_array_equal(gnp.sum(X, axis=0, where=np.ones(3, bool)), np.sum(X, axis=0))


# -- var and std of an empty input -----------------------------------------------------------
@pytest.mark.parametrize("fn", [gnp.var, gnp.std], ids=lambda f: f.name)
@pytest.mark.parametrize("shape, params", [((0,), {}), ((0, 2), {"axis": 0}),
                                           ((2, 0), {"keepdims": True}),
                                           ((0, 3), {"axis": None, "ddof": 1})])
def test_moments_of_an_empty_input_have_an_empty_gradient(fn: Any, shape: tuple[int, ...],
                                                          params: dict[str, Any]) -> None:
    x = np.zeros(shape)
    f = lambda a: fn(a, **params)  # noqa: E731
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # numpy's own: the moments are nan
        out = np.asarray(value_of(f(x)))
        (g,) = engine_vjp(f, [x], np.ones(out.shape))
        tangents = jvps(f, x, np.ones(shape))
    assert g.shape == shape and g.dtype == x.dtype
    for method, t in tangents.items():  # nothing moves the nan constants
        np.testing.assert_array_equal(t, np.zeros(out.shape), err_msg=method)


# -- svd: compute_uv=False, and the singular values of a non-square matrix -------------------
A = np.random.default_rng(3).standard_normal((4, 3))


@pytest.mark.parametrize("shape", [(4, 3), (3, 4), (2, 3, 3)])
def test_svd_compute_uv_false_is_svdvals(shape: tuple[int, ...]) -> None:
    a = np.random.default_rng(4).standard_normal(shape)
    s = gnp.linalg.svd(gc.tensor(a), compute_uv=False)
    np.testing.assert_allclose(value_of(s), np.linalg.svd(a, compute_uv=False), rtol=1e-13)
    g = np.random.default_rng(5).standard_normal(np.shape(value_of(s)))
    (ct,) = engine_vjp(lambda x: gnp.linalg.svd(x, compute_uv=False), [a], g)
    (expected,) = engine_vjp(gnp.linalg.svdvals, [a], g)
    np.testing.assert_array_equal(ct, expected)
    np.testing.assert_array_equal(gnp.linalg.svd(a, True, False),  # numpy's positions
                                  np.linalg.svd(a, True, False))


def test_svd_compute_uv_false_checks() -> None:
    assert_passed(gc.check(lambda a: gnp.linalg.svd(a, compute_uv=False), inputs=["full_rank"],
                           shapes="(4,3)", seed=0))


def test_svd_is_still_the_registered_op() -> None:
    assert gnp.linalg.svd is gc.default_registry.get("linalg.svd")
    u, s, vh = gnp.linalg.svd(gc.tensor(A), full_matrices=False)
    np.testing.assert_allclose(value_of(u) * value_of(s) @ value_of(vh), A, atol=1e-14)


@pytest.mark.parametrize("compute_uv", [True, False])
def test_svd_hermitian_is_a_clear_error(compute_uv: bool) -> None:
    with pytest.raises(ValueError, match=r"linalg.svd: hermitian=True is not supported"):
        gnp.linalg.svd(np.eye(2), compute_uv=compute_uv, hermitian=True)


@pytest.mark.parametrize("a", [A, A.T, np.stack([A, 2 * A])], ids=["tall", "wide", "batch"])
def test_singular_values_of_a_non_square_matrix_by_default_svd(a: np.ndarray) -> None:
    """svd(a)[1] with numpy's default full_matrices=True: u and vh are unused, so the VJP
    needs only the first k vectors (it raised, asking for full_matrices=False)."""
    g = np.random.default_rng(6).standard_normal(a.shape[:-2] + (3,))
    (ct,) = engine_vjp(lambda x: gnp.linalg.svd(x)[1], [a], g)
    (expected,) = engine_vjp(lambda x: gnp.linalg.svd(x, full_matrices=False)[1], [a], g)
    np.testing.assert_allclose(ct, expected, rtol=1e-13, atol=1e-14)


def test_singular_values_by_default_svd_in_reverse_mode() -> None:
    """The VJP against the numeric reference, and the reverse-over-reverse Hessian (it goes
    through the reduced svd).  Forward mode needs every output's tangent, the extra vectors'
    too: it still raises for a non-square a with full_matrices=True (as JAX's does), so the
    paths that use it are not checked here."""
    assert_passed(gc.check(lambda a: gnp.linalg.svd(a)[1], inputs=[A], seed=0, paths=["vjp"]))
    v = np.random.default_rng(7).standard_normal(A.shape)

    def hvp(full_matrices: bool) -> np.ndarray:
        f = lambda a: gnp.sum(gnp.linalg.svd(a, full_matrices=full_matrices)[1] ** 3)  # noqa: E731
        return np.asarray(value_of(gc.hvp(f, (A,), (v,), mode="rev_over_rev")[0]))

    np.testing.assert_allclose(hvp(True), hvp(False), rtol=1e-12)


# -- clip with array bounds ------------------------------------------------------------------
LOW = np.array([-1.0, 0.0, -3.0, 0.5, 1.0])


def test_clip_takes_array_bounds_that_broadcast() -> None:
    x = np.array([[-2.0, -0.4, 0.0, 0.4, 2.0]])
    high = np.array([[1.5], [2.0]])  # the output is larger than x: (2, 5)
    f = lambda t: gnp.clip(t, LOW, high)  # noqa: E731
    np.testing.assert_array_equal(value_of(f(gc.tensor(x))), np.clip(x, LOW, high))
    g = np.arange(1.0, 11.0).reshape(2, 5)
    inside = (x >= LOW) & (x <= high)  # the bounds themselves count as inside, as for numbers
    (ct,) = engine_vjp(f, [x], g)
    np.testing.assert_array_equal(ct, np.sum(g * inside, axis=0, keepdims=True))
    for method, t in jvps(f, x, np.ones_like(x)).items():
        np.testing.assert_array_equal(t, inside.astype(float), err_msg=method)


def test_clip_with_array_bounds_checks() -> None:
    assert_passed(gc.check(lambda t: gnp.clip(t, LOW, 1.0), inputs=["real"], shapes="(3,5)",
                           seed=0))
    assert_passed(gc.check("clip", params={"a_min": LOW, "a_max": 2.5}, shapes="(2,5)", seed=0))


def test_clip_kinks_of_array_bounds_are_their_values() -> None:
    kinks = gc.default_registry.get("clip").meta["kinks"]
    assert kinks({"a_min": LOW, "a_max": 2.5}) == (-3.0, -1.0, 0.0, 0.5, 1.0, 2.5)


@pytest.mark.parametrize("kwargs, error, message", [
    ({"a_min": gc.tensor(0.0), "a_max": 1.0}, TypeError,
     r"op 'clip': a_min is a tensor, but the bounds are held fixed"),
    ({"a_min": np.ones(5), "a_max": np.zeros(5)}, ValueError,
     r"op 'clip': a_min \(an array of shape \(5,\)\) is greater than a_max .* at 5 entries"),
])
def test_clip_bounds_errors(kwargs: dict[str, Any], error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        gnp.clip(np.ones(5), **kwargs)


# -- sort, argsort, diff, take_along_axis: numpy functions composed of ops -------------------
Y = np.random.default_rng(8).standard_normal((3, 4))


@pytest.mark.parametrize("name", ["sort", "argsort", "diff", "take_along_axis"])
def test_numpy_functions_are_exported(name: str) -> None:
    assert name in gnp.__all__ and callable(getattr(gnp, name))


SORTED = [
    ("sort", lambda np_, a: np_.sort(a)),
    ("sort-axis0", lambda np_, a: np_.sort(a, axis=0)),
    ("sort-none", lambda np_, a: np_.sort(a, axis=None)),
    ("sort-stable", lambda np_, a: np_.sort(a, kind="stable")),
    ("diff", lambda np_, a: np_.diff(a)),
    ("diff-n2-axis0", lambda np_, a: np_.diff(a, 2, axis=0)),
    ("diff-n0", lambda np_, a: np_.diff(a, 0)),
    ("diff-prepend-append", lambda np_, a: np_.diff(a, prepend=0.5, append=a[:, :1])),
    ("take_along_axis", lambda np_, a: np_.take_along_axis(a, np.argsort(Y, axis=1), axis=1)),
    ("take_along_axis-broadcast", lambda np_, a: np_.take_along_axis(
        a, np.array([[3, 0, 3]]), axis=-1)),
    ("take_along_axis-none", lambda np_, a: np_.take_along_axis(a, np.array([11, 0, 5]), None)),
]


@pytest.mark.parametrize("f", [f for _, f in SORTED], ids=[i for i, _ in SORTED])
def test_composed_functions_match_numpy_and_check(f: Any) -> None:
    expected = f(np, Y)
    for given in (gc.tensor(Y), Y):  # without a tensor: numpy's own function
        out = f(gnp, given)
        assert np.shape(value_of(out)) == expected.shape
        np.testing.assert_array_equal(value_of(out), expected)
    # every path, to second order, against the numeric reference
    assert_passed(gc.check(lambda a: f(gnp, a), inputs=["real"], shapes="(3,4)", seed=0))


def test_sort_vjp_is_the_inverse_permutation_also_at_ties() -> None:
    x = np.array([3.0, 1.0, 2.0, 1.0])
    w = np.array([10.0, 20.0, 30.0, 40.0])
    (ct,) = engine_vjp(gnp.sort, [x], w)
    # stable order: the first 1.0 (index 1) is sorted first, then index 3, then 2, then 0
    np.testing.assert_array_equal(ct, [40.0, 10.0, 30.0, 20.0])


def test_take_along_axis_repeated_indices_accumulate() -> None:
    (ct,) = engine_vjp(lambda a: gnp.take_along_axis(a, np.array([[0, 0, 2]]), axis=1), [Y],
                       np.ones((3, 3)))
    np.testing.assert_array_equal(ct, np.tile([2.0, 0.0, 1.0, 0.0], (3, 1)))


def test_diff_differentiates_a_tensor_prepend() -> None:
    x, p = np.array([1.0, 4.0, 9.0]), np.array([0.5])
    cts = engine_vjp(lambda a, b: gnp.diff(a, prepend=b), [x, p], np.array([1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(cts[0], [-1.0, -1.0, 3.0])
    np.testing.assert_array_equal(cts[1], [-1.0])


@pytest.mark.parametrize("call, error, message", [
    (lambda: gnp.take_along_axis(gc.tensor(Y), np.zeros((3, 1)), 1), IndexError,
     r"take_along_axis: indices must be integers"),
    (lambda: gnp.take_along_axis(gc.tensor(Y), np.zeros(3, int), 1), ValueError,
     r"take_along_axis: indices \(1 dimensions\) and arr \(2 dimensions\)"),
    (lambda: gnp.take_along_axis(gc.tensor(Y), np.zeros((3, 1), int), 2), np.exceptions.AxisError,
     r"take_along_axis: axis 2 is out of bounds"),
    (lambda: gnp.diff(gc.tensor(Y), -1), ValueError, r"diff: order n must be non-negative"),
    (lambda: gnp.diff(gc.tensor(1.0)), ValueError, r"diff: the input must have at least one"),
    (lambda: gnp.sort(gc.tensor(Y), order="x"), ValueError, r"sort: order= sorts structured"),
])
def test_composed_functions_errors_name_the_function(call: Any, error: type,
                                                     message: str) -> None:
    with pytest.raises(error, match=message):
        call()
