"""Linear-algebra ops as a numpy drop-in: empty batches and 0 x 0 matrices through every
derivative (scipy's solve_triangular refuses zero-size batches), eigh's UPLO refused rather
than ignored, and numpy 2's named results (``slogdet(a).logabsdet``, ``svd(a).S``, ...)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import gradcheck as gc
import gradcheck.numpy as gnp
from gradcheck.engine.tensor import value_of

Z = np.zeros


# -- empty batches and 0 x 0 matrices --------------------------------------------------------
def _empty_cases() -> list[tuple[str, Callable[..., Any], list[np.ndarray]]]:
    lin = gnp.linalg
    cases = []
    for batch in [(0,), (2, 0)]:
        for n in [0, 2]:
            sq = batch + (n, n)
            cases += [
                (f"cholesky {sq}", lin.cholesky, [Z(sq)]),
                (f"cholesky upper {sq}", lambda a: lin.cholesky(a, upper=True), [Z(sq)]),
                (f"qr tall {batch + (3, n)}", lin.qr, [Z(batch + (3, n))]),
                (f"qr wide {batch + (n, 3)}", lin.qr, [Z(batch + (n, 3))]),
                (f"solve_triangular vector {sq}",
                 lambda a, b: lin.solve_triangular(a, b, lower=True), [Z(sq), Z((n,))]),
                (f"solve_triangular matrices {sq}",
                 lambda a, b: lin.solve_triangular(a, b, trans=1), [Z(sq), Z(batch + (n, 2))]),
                (f"solve_triangular b broadcast {sq}", lin.solve_triangular,
                 [Z(sq), Z((n, 2))]),
                (f"solve_triangular a broadcast {sq}", lin.solve_triangular,
                 [np.eye(n), Z(batch + (n, 2))]),
                (f"eig {sq}", lin.eig, [Z(sq)]),
                (f"eigvals {sq}", lin.eigvals, [Z(sq)]),
                (f"eigh complex {sq}", lin.eigh, [Z(sq, complex)]),
            ]
    cases += [("eig 0x0", gnp.linalg.eig, [Z((0, 0))]),
              ("eigh complex 0x0", gnp.linalg.eigh, [Z((0, 0), complex)])]
    return cases


EMPTY = _empty_cases()


def _leaves(x: Any) -> list[Any]:
    return list(x) if isinstance(x, tuple) else [x]


def _total(fn: Callable[..., Any]) -> Callable[..., Any]:
    """A real scalar of every output of ``fn``."""
    def total(*xs: Any) -> Any:
        out = 0.0
        for o in _leaves(fn(*xs)):
            out = out + gnp.sum(gnp.real(o))
        return out
    return total


@pytest.mark.parametrize("label,fn,inputs", EMPTY, ids=[c[0] for c in EMPTY])
def test_an_empty_stack_has_empty_derivatives(label: str, fn: Callable[..., Any],
                                              inputs: list[np.ndarray]) -> None:
    value = _leaves(fn(*inputs))
    for argnum, x in enumerate(inputs):
        g = gc.grad(_total(fn), argnum)(*inputs)
        assert np.shape(g) == x.shape, label
    _, tangents = gc.jvp(fn, inputs, [np.zeros_like(x) for x in inputs])
    assert [np.shape(t) for t in _leaves(tangents)] == [np.shape(v) for v in value]


def test_solve_triangular_of_an_empty_stack_is_shaped_as_numpy_would() -> None:
    assert gnp.linalg.solve_triangular(Z((0, 3, 3)), Z((3,))).shape == (0, 3)
    assert gnp.linalg.solve_triangular(Z((0, 3, 3)), Z((4, 1, 3, 2))).shape == (4, 0, 3, 2)
    out = gnp.linalg.solve_triangular(Z((0, 2, 2), np.float32), Z((2, 1), np.float32))
    assert out.shape == (0, 2, 1) and out.dtype == np.float32
    with pytest.raises(ValueError, match=r"linalg.solve_triangular: b must have shape"):
        gnp.linalg.solve_triangular(Z((0, 3, 3)), Z((0, 2, 1)))
    with pytest.raises(ValueError, match=r"linalg.solve_triangular: the batch shapes"):
        gnp.linalg.solve_triangular(Z((0, 3, 3)), Z((2, 3, 1)))


# -- eigh's UPLO and cholesky's upper ---------------------------------------------------------
def test_eigh_refuses_uplo_u_rather_than_ignoring_it() -> None:
    a = np.array([[4.0, 0.0], [2.0, 3.0]])  # only the lower triangle filled, as for LAPACK
    for x in (a, gc.tensor(a)):
        with pytest.raises(ValueError, match=r"linalg.eigh: UPLO='U' is not supported.*"
                                             r"symmetric part \(a \+ a\^T\) / 2"):
            gnp.linalg.eigh(x, UPLO="U")
    sym = np.tril(a) + np.tril(a, -1).T  # what numpy reads: then both agree
    np.testing.assert_allclose(value_of(gnp.linalg.eigh(sym, UPLO="L")[0]),
                               np.linalg.eigh(a)[0])


def test_cholesky_upper_returns_the_upper_factor() -> None:
    a = np.array([[4.0, 2.0], [2.0, 3.0]])
    np.testing.assert_allclose(gnp.linalg.cholesky(a, upper=True), np.linalg.cholesky(a).T)
    np.testing.assert_allclose(gnp.linalg.cholesky(a, upper=True),
                               np.linalg.cholesky(a, upper=True))


# -- numpy 2's named results --------------------------------------------------------------
A = np.array([[2.0, 0.3, 0.1], [0.3, 1.0, -0.2], [0.1, -0.2, 3.0]])
NAMED = ["slogdet", "eigh", "eig", "svd", "qr"]


@pytest.mark.parametrize("name", NAMED)
@pytest.mark.parametrize("tracked", [False, True], ids=["array", "tensor"])
def test_results_carry_numpys_field_names(name: str, tracked: bool) -> None:
    want = getattr(np.linalg, name)(A)
    got = getattr(gnp.linalg, name)(gc.tensor(A) if tracked else A)
    assert isinstance(got, tuple) and len(got) == len(want)
    for i, field in enumerate(want._fields):
        assert getattr(got, field) is got[i]
    assert type(got).__name__ == type(want).__name__
    first, *_ = got  # unpacking still works
    assert first is got[0]


@pytest.mark.parametrize("fn", [
    lambda x: gnp.linalg.slogdet(x),
    lambda x: gnp.linalg.slogdet(x).logabsdet,
    lambda x: gnp.linalg.eigh(x).eigenvalues,
    lambda x: gnp.linalg.svd(x).S,
    lambda x: gnp.sum(gnp.linalg.qr(x).R ** 2),
    lambda x: np.linalg.slogdet(x).logabsdet,  # numpy's own function on a tensor
], ids=["slogdet", "logabsdet", "eigenvalues", "S", "R", "np.linalg.slogdet"])
def test_named_results_are_differentiated_as_tuples(fn: Callable[..., Any]) -> None:
    report = gc.check(fn, inputs=[A], seed=0)
    assert report.passed, [(f.kind, f.path, f.message) for f in report.findings]


def test_a_named_result_is_flattened_item_by_item() -> None:
    out, tangent = gc.jvp(gnp.linalg.slogdet, [A], [np.eye(3)])
    assert type(tangent) is type(out)
    np.testing.assert_allclose(value_of(tangent.logabsdet), np.trace(np.linalg.inv(A)))
    assert value_of(tangent.sign) == 0.0
    g = gc.grad(lambda x: gnp.linalg.slogdet(x).logabsdet)(A)
    np.testing.assert_allclose(value_of(g), np.linalg.inv(A).T)
