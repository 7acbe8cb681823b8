"""Tests for gradcheck.checker.numeric: accuracy, honest error estimates, kinks, convergence."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gradcheck.checker.numeric import (
    NOISE_ROWS,
    NonFiniteError,
    convergence,
    count_evaluations,
    default_step,
    directional_derivative,
    fitted_slope,
    is_kink,
    numeric_jacobian,
    numeric_jacobian_with_error,
    one_sided_derivatives,
)


def _inv_jvp(a: np.ndarray, u: np.ndarray) -> np.ndarray:
    ai = np.linalg.inv(a)
    return -ai @ u @ ai


def _well_conditioned(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, n)) + n * np.eye(n)


# (name, f, analytic JVP (x, u) -> J u, sample points): smooth functions in float64.
SMOOTH = [
    ("exp", np.exp, lambda x, u: np.exp(x) * u, [-2.0, 0.3, 5.0, 20.0]),
    ("sin_large", np.sin, lambda x, u: np.cos(x) * u, [0.5, 1e4, -3e5, 1e8]),
    ("log_small", np.log, lambda x, u: u / x, [1e-3, 1e-2, 0.5, 100.0]),
    ("cube", lambda x: x**3, lambda x, u: 3 * x**2 * u, [0.0, 1.5, -7.0, 1e3]),
    ("tanh", np.tanh, lambda x, u: (1 - np.tanh(x) ** 2) * u, [0.0, 0.7, 3.0, 15.0]),
]


@pytest.mark.parametrize("name,f,jvp,points", SMOOTH, ids=[row[0] for row in SMOOTH])
def test_scalar_points_accurate_with_honest_error(name, f, jvp, points):
    for x in map(np.array, points):
        u = np.array(1.0)
        r = directional_derivative(f, [x], 0, u)
        true = jvp(x, u)
        actual, scale = abs(r.value - true), max(1.0, abs(true))
        assert actual <= 2 * r.error, (x, actual, r.error)  # the estimate bounds the error
        assert actual <= 1e-10 * scale, (x, actual)
        assert r.error <= 1e-7 * scale and r.converged, (x, r.error)  # useful, not just safe


# Several components share one step, so each one's rounding of x + h*u costs accuracy that
# a single component (above) avoids exactly: the error estimate must account for it.
RANDOM_DIRECTIONS = [
    ("exp", np.exp, lambda x, u: np.exp(x) * u, np.array([-2.0, 0.3, 5.0, 20.0])),
    ("sin_large", np.sin, lambda x, u: np.cos(x) * u, np.array([0.5, 30.0, -200.0, 1e3])),
    ("log_small", np.log, lambda x, u: u / x, np.array([1e-3, 1e-2, 0.5, 100.0])),
    ("cube", lambda x: x**3, lambda x, u: 3 * x**2 * u, np.array([0.0, 1.5, -7.0, 1e2])),
    ("tanh", np.tanh, lambda x, u: (1 - np.tanh(x) ** 2) * u, np.array([0.0, 0.7, 3.0, 15.0])),
    ("inv", np.linalg.inv, _inv_jvp, _well_conditioned(4, 0)),
]


@pytest.mark.parametrize("name,f,jvp,x", RANDOM_DIRECTIONS,
                         ids=[row[0] for row in RANDOM_DIRECTIONS])
def test_random_directions_accurate_with_honest_error(name, f, jvp, x):
    rng = np.random.default_rng(1)
    for _ in range(3):
        u = rng.normal(size=x.shape)
        r = directional_derivative(f, [x], 0, [u])
        true = jvp(x, u)
        actual, scale = np.abs(r.value - true), max(1.0, float(np.abs(true).max()))
        assert r.value.shape == true.shape and r.value.dtype == np.float64
        assert np.all(actual <= 2 * r.error), (actual, r.error)
        assert np.all(actual <= 1e-9 * scale) and np.all(r.error <= 1e-7 * scale)
        assert r.converged


def test_error_bound_on_random_multi_argument_directions():
    rng = np.random.default_rng(7)

    def f(x, y):
        return np.sin(x) * y, np.exp(y).sum() * np.cos(x)

    for _ in range(30):
        n = int(rng.integers(1, 6))
        x, y = rng.normal(size=n) * 10 ** rng.uniform(-2, 4), rng.normal(size=n)
        ux, uy = rng.normal(size=n), rng.normal(size=n)
        true = np.concatenate(
            [
                np.cos(x) * ux * y + np.sin(x) * uy,
                np.exp(y) @ uy * np.cos(x) - np.exp(y).sum() * np.sin(x) * ux,
            ]
        )
        r = directional_derivative(f, [x, y], [0, 1], [ux, uy])
        assert r.value.shape == (2 * n,)  # tuple outputs are concatenated
        assert np.all(np.abs(r.value - true) <= 2 * r.error)


@settings(derandomize=True, max_examples=25, deadline=None)
@given(coeffs=st.lists(st.floats(-10, 10), min_size=5, max_size=5), x=st.floats(-3, 3))
def test_polynomials_property(coeffs, x):
    poly = np.polynomial.Polynomial(coeffs)
    r = directional_derivative(poly, [np.array(x)], 0, np.array(1.0))
    true = poly.deriv()(x)
    assert abs(r.value - true) <= 2 * r.error
    assert abs(r.value - true) <= 1e-9 * max(1.0, abs(true), float(np.abs(coeffs).max()))


def test_float32_stays_float32():
    seen = []

    def f(x):
        seen.append(x.dtype)
        return np.exp(x)

    x = np.array([0.3, 1.0], dtype=np.float32)
    r = directional_derivative(f, [x], 0, np.ones(2, dtype=np.float32))
    assert set(seen) == {np.dtype(np.float32)} and r.value.dtype == np.float32
    true = np.exp(x.astype(np.float64))
    assert np.all(np.abs(r.value - true) <= 2 * r.error)
    assert np.all(np.abs(r.value - true) <= 1e-3 * true)
    assert r.step == pytest.approx(default_step(np.float32))


def test_plain_central_difference():
    x = np.array([0.3, 1.7])
    r = directional_derivative(np.exp, [x], 0, np.ones(2), richardson=False)
    assert r.evaluations == 5  # the sample and two central differences
    assert np.all(np.abs(r.value - np.exp(x)) <= 2 * r.error)
    assert np.all(np.abs(r.value - np.exp(x)) <= 1e-8)


def test_explicit_step_and_direction_scaling():
    x = np.array(2.0)
    a = directional_derivative(np.sin, [x], 0, np.array(1.0))
    b = directional_derivative(np.sin, [x], 0, np.array(8.0))  # 8 u: the step shrinks by 8
    assert b.step == pytest.approx(a.step / 8)
    assert b.value == pytest.approx(8 * a.value, rel=1e-12)
    c = directional_derivative(np.sin, [x], 0, np.array(1.0), step=0.01)
    assert c.step == 0.01 and abs(c.value - np.cos(2.0)) <= 2 * c.error


def test_rough_function_is_not_converged():
    r = directional_derivative(
        lambda x: x + 1e-9 * np.sin(1e9 * x), [np.array(0.3)], 0, np.array(1.0)
    )
    assert not r.converged


def test_evaluation_counts_match_calls():
    x = np.array([0.2, 0.9, 1.4])
    counted = count_evaluations(np.sin)
    r = directional_derivative(counted, [x], 0, np.ones(3))
    assert r.evaluations == counted.calls <= 1 + 2 * 6
    counted = count_evaluations(np.sin)
    forward, backward = one_sided_derivatives(counted, [x], 0, np.ones(3))
    assert forward.evaluations + backward.evaluations == counted.calls
    counted = count_evaluations(np.sin)
    jac = numeric_jacobian_with_error(counted, [x], 0)
    assert jac.evaluations == counted.calls <= 1 + 3 * 2 * 6  # the sample is shared
    counted = count_evaluations(np.sin)
    conv = convergence(counted, [x], 0, np.ones(3), np.cos(x))
    assert conv["evaluations"] == counted.calls == 1 + 2 * 16


def test_jacobian_of_inverse():
    a = _well_conditioned(3, 2)
    result = numeric_jacobian_with_error(np.linalg.inv, [a], 0)
    ai = np.linalg.inv(a)
    true = -np.einsum("ik,lj->ijkl", ai, ai)  # d inv(a)_ij / d a_kl
    (jac,), (err,) = result.jacobians, result.errors
    assert jac.shape == err.shape == (3, 3, 3, 3)
    assert np.all(np.abs(jac - true) <= 2 * err) and np.all(np.abs(jac - true) <= 1e-10)
    assert result.converged
    np.testing.assert_array_equal(numeric_jacobian(np.linalg.inv, [a], 0)[0], jac)


def test_jacobian_several_arguments_and_tuple_output():
    def f(x, n, y):
        return x * n, np.outer(x, y)

    x, y = np.array([1.0, 2.0]), np.array([0.5, -1.0, 3.0])
    jx, jy = numeric_jacobian(f, [x, 3, y], [0, 2])
    assert jx.shape == (8, 2) and jy.shape == (8, 3)
    want_x = np.concatenate([3 * np.eye(2), np.kron(np.eye(2), y[:, None])])
    want_y = np.concatenate([np.zeros((2, 3)), np.kron(x[:, None], np.eye(3))])
    np.testing.assert_allclose(jx, want_x, atol=1e-11)
    np.testing.assert_allclose(jy, want_y, atol=1e-11)


def test_zero_size_and_scalars():
    r = directional_derivative(np.sin, [np.zeros(0)], 0, np.zeros(0))
    assert r.value.shape == r.error.shape == (0,) and r.converged
    r = directional_derivative(lambda x: x.sum(), [np.zeros((0, 3))], 0, np.zeros((0, 3)))
    assert r.value.shape == () and r.value == 0 and r.error == 0
    counted = count_evaluations(np.sin)
    assert numeric_jacobian(counted, [np.zeros((2, 0))], 0)[0].shape == (2, 0, 2, 0)
    assert counted.calls == 1
    r = directional_derivative(lambda x: float(np.exp(x)), [1.0], 0, 1.0)  # 0-d in and out
    assert r.value.shape == () and abs(r.value - math.e) <= 2 * r.error
    (jac,) = numeric_jacobian(lambda x: x**2, [np.array(3.0)], 0)
    assert jac.shape == () and jac == pytest.approx(6.0, rel=1e-12)


def test_zero_tangent_gives_zero():
    r = directional_derivative(np.exp, [np.ones(3)], 0, np.zeros(3))
    np.testing.assert_array_equal(r.value, 0.0)


KINKS = [
    ("abs_at_0", np.abs, [np.array(0.0)], 0, [np.array(1.0)]),
    ("relu_at_0", lambda x: np.maximum(x, 0.0), [np.zeros(3)], 0, [np.ones(3)]),
    ("max_tie", np.maximum, [np.array(1.0), np.array(1.0)], [0, 1], [np.array(1.0), np.array(0.0)]),
    (
        "relu_one_of_many",
        lambda x: np.maximum(x, 0.0),
        [np.array([1.0, 0.0, -2.0])],
        0,
        [np.array([0.5, -1.0, 1.0])],
    ),
]
SMOOTH_POINTS = [
    ("abs_away", np.abs, [np.array(0.3)], 0, [np.array(1.0)]),
    # within the first step of the kink: a finer tableau stays on one side (see _tableau)
    ("abs_within_a_step", np.abs, [np.array(1e-7)], 0, [np.array(1.0)]),
    ("relu_away", lambda x: np.maximum(x, 0.0), [np.array([1.0, -2.0])], 0, [np.ones(2)]),
    (
        "max_no_tie",
        np.maximum,
        [np.array(1.0), np.array(2.0)],
        [0, 1],
        [np.array(1.0), np.array(0.5)],
    ),
    (
        "max_tie_moving_together",
        np.maximum,
        [np.array(1.0), np.array(1.0)],
        [0, 1],
        [np.array(1.0), np.array(1.0)],
    ),
    ("exp", np.exp, [np.array([0.3, 4.0])], 0, [np.ones(2)]),
    ("sin_large", np.sin, [np.array(1e4)], 0, [np.array(1.0)]),
    ("log_small", np.log, [np.array(0.01)], 0, [np.array(1.0)]),
    ("tanh_f32", np.tanh, [np.array([0.3, 2.0], np.float32)], 0, [np.ones(2, np.float32)]),
]


@pytest.mark.parametrize("name,f,args,argnums,tangents", KINKS, ids=[k[0] for k in KINKS])
def test_kinks_detected(name, f, args, argnums, tangents):
    assert is_kink(f, args, argnums, tangents)


@pytest.mark.parametrize(
    "name,f,args,argnums,tangents", SMOOTH_POINTS, ids=[k[0] for k in SMOOTH_POINTS]
)
def test_smooth_points_are_not_kinks(name, f, args, argnums, tangents):
    assert not is_kink(f, args, argnums, tangents)


def test_a_noise_bound_agreement_is_not_shrunk_again():
    # A direction moving 10^5 components: each side's error estimate is the probes' rounding
    # off the line, which grows tenfold with every tenfold smaller step.  Shrinking cannot
    # make the agreement tell; it stops after the first round whose estimates are all noise
    # (17 evaluations here; 37 before, and in a check of tanh at a given 10^5-element point
    # all KINK_SHRINKS + 1 rounds ran).
    x = np.random.default_rng(1).standard_normal(100_000)
    u = np.random.default_rng(2).standard_normal(100_000)
    counted = count_evaluations(np.tanh)
    assert not is_kink(counted, [x], 0, [u])
    assert counted.calls <= 20


def test_a_kink_among_many_noisy_components_is_still_found():
    # the same direction, with relu's kink at one of the moved components
    x = np.random.default_rng(1).standard_normal(100_000)
    x[123] = 0.0
    u = np.abs(np.random.default_rng(2).standard_normal(100_000)) + 0.5
    assert is_kink(lambda a: np.maximum(a, 0.0), [x], 0, [u])


@pytest.mark.parametrize("f,df,x", [(np.exp, np.exp, 0.3), (np.sin, np.cos, 1e4),
                                    (np.log, lambda x: 1 / x, 0.01)])
def test_one_sided_derivatives_accurate_on_smooth_functions(f, df, x):
    for r in one_sided_derivatives(f, [np.array(x)], 0, np.array(1.0)):
        actual = abs(r.value - df(x))
        assert actual <= 2 * r.error and actual <= 1e-9 * max(1.0, abs(df(x)))


def test_one_sided_values_at_relu_kink():
    forward, backward = one_sided_derivatives(
        lambda x: np.maximum(x, 0.0), [np.zeros(2)], 0, [np.ones(2)]
    )
    np.testing.assert_allclose(forward.value, 1.0, atol=1e-12)
    np.testing.assert_allclose(backward.value, 0.0, atol=1e-12)


CONVERGENCE = [
    ("exp", np.exp, np.exp, np.array([0.5, 0.25])),
    ("sin_large", np.sin, np.cos, np.array([1e3, 500.0])),
    ("log_small", np.log, lambda x: 1 / x, np.array([0.05, 0.025])),
]


@pytest.mark.parametrize("name,f,df,x", CONVERGENCE, ids=[c[0] for c in CONVERGENCE])
def test_convergence_slope(name, f, df, x):
    u = np.ones_like(x)
    right = convergence(f, [x], 0, u, df(x))
    wrong = convergence(f, [x], 0, u, df(x) + 1e-3)
    assert abs(fitted_slope(right) - 2.0) < 0.3
    assert abs(fitted_slope(wrong)) < 0.3
    assert right["expected_slope"] == 2.0
    assert len(right["steps"]) + len(right["dropped"]) == 16
    assert all(type(v) is float for key in ("steps", "errors", "rounding") for v in right[key])
    assert json.loads(json.dumps(right)) == right  # plain data for the HTML report
    assert convergence(f, [x], 0, u, df(x)) == right  # deterministic


def test_convergence_drops_steps_outside_the_domain():
    conv = convergence(np.log, [np.array(0.05)], 0, np.array(1.0), 20.0)
    assert conv["dropped"] and all(h > 0.05 for h in conv["dropped"])
    assert all(h < 0.05 for h in conv["steps"])


def test_convergence_of_a_quadratic_has_no_truncation_part():
    conv = convergence(lambda x: x**2, [np.array(1.5)], 0, np.array(1.0), 3.0)
    assert math.isnan(fitted_slope(conv))
    wrong = convergence(lambda x: x**2, [np.array(1.5)], 0, np.array(1.0), 3.001)
    assert abs(fitted_slope(wrong)) < 0.3


def test_convergence_custom_steps():
    conv = convergence(np.exp, [np.array(0.0)], 0, np.array(1.0), 1.0, steps=[1e-1, 1e-2])
    assert conv["steps"] == [1e-1, 1e-2]
    assert conv["errors"][1] == pytest.approx(conv["errors"][0] / 100, rel=0.05)


@pytest.mark.parametrize(
    "f,x,where",
    [
        (np.log, np.array([1.0, 0.0]), "sample point"),
        (np.exp, np.array(1000.0), "sample point"),
        (np.log, np.array([1.0, 1e-14]), "probe point"),  # past every shrink of the steps
        (np.sqrt, np.array(0.0), "probe point"),
    ],
)
def test_non_finite_raises(f, x, where):
    with pytest.raises(NonFiniteError, match=f"{f.__name__} returned .*non-finite.* {where}"):
        directional_derivative(f, [x], 0, np.ones_like(x))
    with pytest.raises(NonFiniteError):
        numeric_jacobian(f, [x], 0)
    with pytest.raises(NonFiniteError):
        is_kink(f, [x], 0, np.ones_like(x))


def test_non_finite_argument_and_overflowing_quotient():
    with pytest.raises(NonFiniteError, match="argument 0 contains non-finite"):
        directional_derivative(np.sin, [np.array([1.0, np.nan])], 0, np.ones(2))
    with pytest.raises(NonFiniteError, match="overflowed"):
        directional_derivative(lambda x: 1e308 * np.sign(x), [np.array(0.0)], 0, np.array(1.0))


@pytest.mark.parametrize(
    "call,match",
    [
        (
            lambda: directional_derivative(np.sin, [np.ones(2)], 1, [np.ones(2)]),
            "directional_derivative: argnums entry 1 is out of range",
        ),
        (lambda: directional_derivative(np.sin, [np.ones(2)], [0, 0], [np.ones(2)] * 2), "argnums"),
        (lambda: numeric_jacobian(np.sin, [np.ones(2)], []), "numeric_jacobian: argnums"),
        (
            lambda: directional_derivative(np.sin, [np.ones(2)], 0, [np.ones(3)]),
            "tangent for argument 0 .*shape",
        ),
        (
            lambda: directional_derivative(np.sin, [np.ones(2)], [0], [np.ones(2)] * 2),
            "got 2 tangent",
        ),
        (
            lambda: numeric_jacobian(np.sin, [np.arange(3)], 0),
            "numeric_jacobian: argument 0 is in argnums but has dtype int64",
        ),
        (
            lambda: directional_derivative(np.sin, [np.ones(2, np.float32)], 0, np.full(2, 0.1)),
            "tangent for argument 0 .*float64.* float32",
        ),
        (lambda: directional_derivative(np.sin, [np.ones(2)], 0, np.ones(2), step=0.0), "step"),
        (
            lambda: directional_derivative(np.sin, [np.ones(2)], 0, np.ones(2), max_iter=1),
            "max_iter",
        ),
        (
            lambda: convergence(np.sin, [np.ones(2)], 0, np.ones(2), np.ones(3)),
            "convergence: analytic has 3",
        ),
        (
            lambda: convergence(np.sin, [np.ones(2)], 0, np.ones(2), np.ones(2), steps=[-1.0]),
            "steps",
        ),
    ],
)
def test_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_float32_tangent_exactly_representable_is_accepted():
    x = np.ones(2, np.float32)
    r = directional_derivative(np.sin, [x], 0, np.array([1.0, -2.0]))  # float64, exact in f32
    assert r.value.dtype == np.float32


def test_tableau_stops_once_rounding_noise_is_all_that_is_left():
    """A linear map's error (a reshape's, a sum's) is its rounding noise after NOISE_ROWS
    rows: the tableau stops there; a smooth function's within a row more; one with features
    at the step's scale needs every row.  All bound their actual error."""
    x = np.array([0.2, 0.9, 1.4])
    counted = count_evaluations(lambda y: np.cumsum(3 * y[::-1]) - 2)
    r = directional_derivative(counted, [x], 0, np.ones(3))
    assert counted.calls == 1 + 2 * NOISE_ROWS
    assert np.all(np.abs(r.value - [3.0, 6.0, 9.0]) <= r.error)
    counted = count_evaluations(np.sin)
    r = directional_derivative(counted, [x], 0, np.ones(3))
    assert counted.calls == 1 + 2 * (NOISE_ROWS + 1)
    assert np.all(np.abs(r.value - np.cos(x)) <= r.error)
    x = np.array([0.3])
    counted = count_evaluations(lambda y: np.sin(1000 * y))
    r = directional_derivative(counted, [x], 0, np.ones(1))
    assert counted.calls == 1 + 2 * 6
    assert np.all(np.abs(r.value - 1000 * np.cos(1000 * x)) <= r.error)
