"""The paths as computed by the engine, the mutation guard, and the tolerance arithmetic."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

import gradcheck
import gradcheck.numpy as gnp
from gradcheck.checker.paths import EngineProblem, Guard, InputMutated
from gradcheck.checker.tolerances import Tolerances, elementwise, largest_finite, scalar


def f(x, y):
    return gnp.sin(x) * y


X, Y = np.array([0.3, -1.1, 2.0]), np.array([1.5, 0.5, -2.0])
V, U, W, S = (np.array(a) for a in ([0.7, -0.2, 1.3], [1.0, 2.0, -1.0], [0.1, 0.4, -0.3],
                                     [-0.5, 0.9, 0.2]))


@pytest.fixture
def problem() -> EngineProblem:
    return EngineProblem(f, [X, Y], {}, [0, 1])


def test_first_order_paths(problem: EngineProblem) -> None:
    gx, gy = problem.vjp([X, Y], [V])
    np.testing.assert_allclose(gx, V * np.cos(X) * Y)
    np.testing.assert_allclose(gy, V * np.sin(X))
    (t,) = problem.jvp([X, Y], [U, W])
    expected = U * np.cos(X) * Y + np.sin(X) * W
    np.testing.assert_allclose(t, expected)
    (d,), read = problem.double_vjp([X, Y], [U, W], [np.zeros(3)])
    np.testing.assert_allclose(d, expected)
    assert read is False
    assert problem.counts == {"vjp": 1, "jvp": 1, "double_vjp": 1}


def test_second_order_paths_agree_with_the_engines_hvp(problem: EngineProblem) -> None:
    hess = gradcheck.hvp(f, [X, Y], [S, -S], mode="fwd_over_rev", cotangent=V)
    hess = [np.asarray(h) for h in hess]
    fwd_rev = problem.hvp_fwd_rev([X, Y], [V], [S, -S], [np.zeros(3)])
    rev_rev_x, rev_rev_v = problem.hvp_rev_rev([X, Y], [V], [S, -S])
    rev_fwd_x, rev_fwd_u = problem.hvp_rev_fwd([X, Y], [S, -S], [V])
    for got in (fwd_rev, rev_rev_x, rev_fwd_x):
        for a, b in zip(got, hess, strict=True):
            np.testing.assert_allclose(a, b, rtol=1e-12)
    # the parts linear in the cotangent (or tangent) are J s and J^T v
    np.testing.assert_allclose(rev_rev_v[0], problem.jvp([X, Y], [S, -S])[0], rtol=1e-12)
    for a, b in zip(rev_fwd_u, problem.vjp([X, Y], [V]), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    # forward over reverse with a tangent on the cotangent adds J^T w
    with_w = problem.hvp_fwd_rev([X, Y], [V], [S, -S], [W])
    for a, b, c in zip(with_w, fwd_rev, problem.vjp([X, Y], [W]), strict=True):
        np.testing.assert_allclose(a, b + c, rtol=1e-12)


def test_guard_names_what_changed() -> None:
    a, b = np.arange(3.0), np.ones(2)
    guard = Guard()
    guard.watch("primal 0", a)
    guard.watch("params", {"index": b})
    guard.verify()
    b[1] = np.nan
    with pytest.raises(InputMutated, match=r"params") as info:
        guard.verify()
    assert info.value.names == ["params"]


def test_guard_lends_read_only_arrays_and_copies_the_rest() -> None:
    frozen, plain = np.arange(3.0), np.ones(2)
    frozen.flags.writeable = False
    guard = Guard()
    assert guard.lend("tangent 0", frozen) is frozen  # numpy refuses every write into it
    copy = guard.lend("tangent 1", plain)
    assert copy is not plain and np.array_equal(copy, plain)
    guard.verify()
    copy[0] = 5.0  # what the call got was written into: the copy's original says so
    with pytest.raises(InputMutated) as info:
        guard.verify()
    assert info.value.names == ["tangent 1"]


def test_a_lent_array_made_writeable_again_counts_as_changed() -> None:
    frozen = np.arange(3.0)
    frozen.flags.writeable = False
    guard = Guard()
    guard.lend("cotangent 0", frozen)
    frozen.flags.writeable = True  # (it owns its memory, so numpy allows it)
    with pytest.raises(InputMutated) as info:
        guard.verify()
    assert info.value.names == ["cotangent 0"]


def test_a_write_into_a_lent_array_is_input_mutated_naming_it() -> None:
    """The call that tried to write into a read-only cotangent runs again under copies, which
    name what it wrote into, as they did before anything was lent."""
    from gradcheck.engine import Registry, define_op

    def vjp(g: Any, out: Any, x: Any) -> Any:
        np.multiply(g, 2.0, out=g)  # into the cotangent it was given
        return g

    op = define_op("doubles_in_place", lambda x: 2.0 * x, vjp, registry=Registry())
    mine = EngineProblem(op, [X], {}, [0])
    v = np.ones(3)
    v.flags.writeable = False
    with pytest.raises(InputMutated) as info:
        mine.vjp([X], [v])
    assert info.value.names == ["cotangent 0"]
    assert mine.counts == {"vjp": 1}  # one call counted, however many were made
    assert np.array_equal(v, np.ones(3))


def test_elementwise_tolerance_and_non_finite_values() -> None:
    tol = Tolerances("float64")
    v = elementwise([np.array([1.0, np.nan, np.inf])], [np.array([1.0, np.nan, np.inf])], tol)
    assert v.passed and v.max_abs_err == 0
    v = elementwise([np.array([1.0, np.nan])], [np.array([1.0, 2.0])], tol)
    assert not v.passed and math.isinf(v.max_abs_err) and v.worst == 1
    v = elementwise([np.array([1.0, 2.0 + 1e-6])], [np.array([1.0, 2.0])], tol,
                    numeric_error=[np.array([0.0, 2e-7])])
    assert v.passed and v.ratio < 1  # 8 x the numeric error estimate covers it
    assert not elementwise([np.array([2.0 + 1e-6])], [np.array([2.0])], tol).passed


def test_a_call_that_refuses_a_read_only_array_runs_again_on_copies() -> None:
    """A library that refuses read-only arrays with an error of its own (not numpy's) gets
    the copy every call got before arrays were lent; an error the call raises on copies
    too is raised as it is."""
    def picky(x: Any) -> Any:
        if not np.asarray(x).flags.writeable:
            raise TypeError("this library wants a writeable buffer")
        return gnp.sin(x)

    mine = EngineProblem(picky, [X], {}, [0])
    (got,) = mine.forward([mine.primals[0]])  # the primals are read-only views
    np.testing.assert_array_equal(got, np.sin(X))
    assert mine.counts == {"forward": 1}

    def broken(x: Any) -> Any:
        raise TypeError("broken whatever it gets")

    failing = EngineProblem(broken, [X], {}, [0])
    with pytest.raises(TypeError, match="broken whatever"):
        failing.forward([failing.primals[0]])
    assert failing.counts == {"forward": 1}


@pytest.mark.parametrize("values", [
    [], [0.0], [-0.0, -0.0], [-3.0, 2.0], [1.5, -0.25], [np.nan, -2.0], [np.inf, 1.0, -4.0],
    [-np.inf, np.nan], [5e-324, -1e308], "float32", "random"])
def test_largest_finite_is_the_largest_finite_magnitude(values: Any) -> None:
    rng = np.random.default_rng(1)
    a = rng.standard_normal((7, 5)).astype(np.float32) if values == "float32" else \
        rng.standard_normal(1000) * 1e3 if values == "random" else np.array(values)
    masked = float(np.max(np.abs(a), where=np.isfinite(a), initial=0.0))
    got = largest_finite(a)
    assert got == masked and math.copysign(1.0, got) == 1.0  # never -0.0


def test_scalar_tolerance_scales_with_the_terms() -> None:
    tol = Tolerances("float32")
    assert scalar(1.0, 1.0 + 1e-5, 100.0, tol).passed  # cancellation of large terms
    assert not scalar(1.0, 1.0 + 1e-5, 1.0, tol).passed
    assert Tolerances("float32", cond=10.0).relative == pytest.approx(
        10 * Tolerances("float32").relative)
