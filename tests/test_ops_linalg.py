"""The linear-algebra ops (gradcheck/ops/linalg.py and linalg_decomp.py).

One row per case (an op with fixed shapes and parameters: batched, broadcast, non-square,
vector right-hand sides, both triangles), run through the checks of tests/op_harness.py:
forward against numpy/scipy or a direct formula; every derivative path by ``gradcheck.check``
at the case's point (float64, float32, and autograd's declared equivalent), the signs of
eigh/svd/qr vectors aligned by the ops' declared gauge.  eigh, svd and qr are also checked
on functions that do not depend on the vectors' signs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import scipy.linalg
from op_harness import (
    HVP_MODES,
    AutogradChecks,
    OpCase,
    PathChecks,
    assert_close,
    check_at,
    rng_for,
    seed_for,
)

import gradcheck as gc
from gradcheck import default_registry
from gradcheck.domains import SPD, DistinctEig, FullRank, WellConditioned
from gradcheck.engine.tensor import value_of
from gradcheck.ops import linalg, linalg_decomp
from gradcheck.ops.linalg import Triangular
from gradcheck.ops.reduce import sum as gsum
from gradcheck.ops.shape import reshape

# analytic identities and forwards: rounding times the domains' condition numbers (< ~50)
EXACT = 1e-10


# ---------------------------------------------------------------------------------------
# The table
# ---------------------------------------------------------------------------------------
def _sym(a: Any, xp: Any = np) -> Any:
    return (a + xp.swapaxes(a, -1, -2)) / 2


def _cholesky_grad_formula(factor: np.ndarray, grad: np.ndarray) -> np.ndarray:
    """Murray's formula written independently: sym(L^-T Phi(L^T G) L^-1) / 2."""
    low = np.tril(factor)
    inv = np.linalg.inv(low)
    middle = np.swapaxes(low, -1, -2) @ grad
    phi = np.tril(middle) - 0.5 * np.tril(np.triu(middle))
    x = np.swapaxes(inv, -1, -2) @ phi @ inv
    return _sym(x)


def _per_matrix(f: Callable[..., Any]) -> Callable[..., np.ndarray]:
    """f applied to each matrix of a (broadcast) batch, for references that are not batched."""
    def batched(a: np.ndarray, e: np.ndarray) -> np.ndarray:
        a, e = np.broadcast_arrays(a, e)
        out = np.empty(a.shape, dtype=np.result_type(a, e))
        for idx in np.ndindex(*a.shape[:-2]):
            out[idx] = f(a[idx], e[idx])
        return out
    return batched


def _phase_fixed_eig(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """numpy's eig with each eigenvector's largest-modulus entry made real positive."""
    w, v = np.linalg.eig(a)
    pivot = np.take_along_axis(v, np.argmax(np.abs(v), axis=-2)[..., None, :], axis=-2)
    return w, v * (np.abs(pivot) / pivot)


def _tuple(f: Callable[..., Any]) -> Callable[..., tuple[Any, ...]]:
    return lambda *a, **p: tuple(f(*a, **p))


NO_EQUIVALENT = "the op declares no autograd equivalent (autograd has none)"
AG_SOLVE = ("autograd's solve rule cannot broadcast a against b, nor solve a batch of matrices "
            "for one vector (the equivalent says so: unsupported)")
AG_TRIANGULAR = "autograd's solve_triangular handles single matrices, not batches"
# Inputs come from the ops' declared domains; the signs of eigenvectors, singular vectors and
# qr factors are a convention the ops declare (gauge=), which check() aligns.
CASES = [
    OpCase("matmul", np.matmul, shapes=((2, 3, 4), (4, 2)),
           label="matmul-batched-broadcast"),
    OpCase("matmul", np.matmul, shapes=((4,), (2, 4, 3)), label="matmul-vector-left"),
    OpCase("matmul", np.matmul, shapes=((2, 3, 4), (4,)),
           label="matmul-vector-right"),
    OpCase("dot", np.dot, shapes=((2, 3), (2, 3, 2)), label="dot-nd"),
    OpCase("dot", np.dot, shapes=((3, 4), (4,)), label="dot-matrix-vector"),
    # autograd's outer needs 1-D inputs
    OpCase("outer", np.outer, shapes=((2, 3), (3,)), label="outer-flattens"),
    OpCase("outer", np.outer, shapes=((4,), (3,)), label="outer-vectors"),
    OpCase("linalg.inv", np.linalg.inv, shapes=((2, 3, 3),), label="inv"),
    OpCase("linalg.det", np.linalg.det, shapes=((2, 3, 3),), label="det"),
    OpCase("linalg.slogdet", _tuple(np.linalg.slogdet),
           shapes=((2, 3, 3),), label="slogdet"),
    OpCase("linalg.solve", np.linalg.solve, shapes=((2, 3, 3), (2, 3, 2)),
           label="solve-batched-matrix"),
    OpCase("linalg.solve", np.linalg.solve, shapes=((2, 3, 3), (3, 2)),
           label="solve-broadcast-matrix", no_autograd=AG_SOLVE),
    OpCase("linalg.solve", np.linalg.solve, shapes=((2, 3, 3), (3,)), label="solve-vector",
           no_autograd=AG_SOLVE),
    OpCase("linalg.solve_triangular", scipy.linalg.solve_triangular, params={"lower": True},
           shapes=((2, 3, 3), (2, 3, 2)), label="solve_triangular-lower",
           no_autograd=AG_TRIANGULAR),
    OpCase("linalg.solve_triangular", scipy.linalg.solve_triangular, {"lower": False, "trans": 1},
           ((3, 3), (3, 2)), label="solve_triangular-upper-trans"),
    OpCase("linalg.solve_triangular", scipy.linalg.solve_triangular,
           params={"lower": True, "unit_diagonal": True}, shapes=((2, 3, 3), (3,)),
           label="solve_triangular-unit-vector", no_autograd=AG_TRIANGULAR),
    OpCase("linalg.pinv", np.linalg.pinv, shapes=((2, 4, 3),),
           label="pinv-tall"),
    OpCase("linalg.pinv", np.linalg.pinv, shapes=((3, 4),), label="pinv-wide"),
    OpCase("linalg.cholesky", lambda a: np.linalg.cholesky(_sym(a)),
           shapes=((2, 3, 3),), label="cholesky"),
    OpCase("linalg.cholesky", lambda a, upper: np.linalg.cholesky(_sym(a)).T,
           params={"upper": True}, shapes=((3, 3),), label="cholesky-upper"),
    OpCase("linalg.cholesky_grad", _cholesky_grad_formula, shapes=((2, 3, 3), (2, 3, 3)),
           label="cholesky_grad", no_autograd=NO_EQUIVALENT),
    OpCase("linalg.qr", _tuple(np.linalg.qr), shapes=((2, 4, 3),), label="qr-tall",
           no_autograd=NO_EQUIVALENT),
    OpCase("linalg.qr", _tuple(np.linalg.qr), shapes=((3, 3),), label="qr-square",
           no_autograd=NO_EQUIVALENT),
    OpCase("linalg.qr", _tuple(np.linalg.qr), shapes=((2, 3, 4),), label="qr-wide",
           no_autograd=NO_EQUIVALENT),
    OpCase("linalg.eigh", lambda a: tuple(np.linalg.eigh(_sym(a))),
           shapes=((2, 3, 3),), label="eigh",
           # a framework finding (check() attributes it to autograd): autograd's eigh VJP,
           # differentiated in its cotangent, changes with the dummy (error 1 at eigenvector
           # entries); every path of ours passes against the numeric reference
           no_autograd="autograd's double-VJP of eigh leaks the dummy by value"),
    OpCase("linalg.svd", _tuple(np.linalg.svd), {"full_matrices": False},
           ((2, 4, 3),), label="svd-tall"),
    OpCase("linalg.svd", _tuple(np.linalg.svd), {"full_matrices": False},
           ((3, 4),), label="svd-wide"),
    OpCase("linalg.svd", _tuple(np.linalg.svd), shapes=((2, 3, 3),), label="svd-square-default",
           no_autograd="autograd has no svd rule for full_matrices=True (it says so)"),
    OpCase("linalg.eig", lambda a: _phase_fixed_eig(a), shapes=((2, 3, 3),), label="eig",
           no_autograd=NO_EQUIVALENT),
    OpCase("linalg.eigvals", np.linalg.eigvals, shapes=((2, 3, 3),), label="eigvals",
           no_autograd=NO_EQUIVALENT),
    OpCase("linalg.svdvals", np.linalg.svdvals,
           shapes=((2, 3, 4),), label="svdvals"),
    OpCase("linalg.expm", scipy.linalg.expm, shapes=((2, 3, 3),), label="expm",
           no_autograd=NO_EQUIVALENT),
    OpCase("linalg.expm_frechet",
           _per_matrix(lambda a, e: scipy.linalg.expm_frechet(a, e, compute_expm=False)),
           shapes=((2, 3, 3), (3, 3)), label="expm_frechet", no_autograd=NO_EQUIVALENT),
]


class TestLinalgOps(PathChecks, AutogradChecks):
    cases = CASES
    forward_tolerance = (EXACT, None)


# ---------------------------------------------------------------------------------------
# Sign conventions: losses that do not depend on them, and exact reconstructions
# ---------------------------------------------------------------------------------------
def _row(s: Any) -> Any:
    """(..., k) -> (..., 1, k): scales the columns of a matrix."""
    shape = np.shape(value_of(s))
    return reshape(s, shape[:-1] + (1, shape[-1]))


def _qr_recon(a: Any) -> Any:
    q, r = linalg_decomp.qr(a)
    return linalg.matmul(q, r)


def _svd_recon(a: Any) -> Any:
    u, s, vh = linalg_decomp.svd(a, full_matrices=False)
    return linalg.matmul(u * _row(s), vh)


def _eigh_recon(a: Any) -> Any:
    w, v = linalg_decomp.eigh(a)
    return linalg.matmul(v * _row(w), linalg.matrix_transpose(v))


def _cholesky_recon(a: Any) -> Any:
    low = linalg_decomp.cholesky(a)
    return linalg.matmul(low, linalg.matrix_transpose(low))


RECONSTRUCTIONS = [
    ("qr-tall", _qr_recon, FullRank(), (2, 4, 3), False),
    ("qr-wide", _qr_recon, FullRank(), (3, 4), False),
    ("svd-tall", _svd_recon, FullRank(), (2, 4, 3), False),
    ("svd-wide", _svd_recon, FullRank(), (3, 4), False),
    ("eigh", _eigh_recon, DistinctEig(), (2, 3, 3), True),
    ("cholesky", _cholesky_recon, SPD(), (2, 3, 3), True),
]


@pytest.mark.parametrize("label,recon,domain,shape,symmetric", RECONSTRUCTIONS,
                         ids=[r[0] for r in RECONSTRUCTIONS])
def test_reconstruction_has_the_identity_derivative(label, recon, domain, shape, symmetric):
    """q r, u s vh, v w v^T and L L^T rebuild a (sym(a)): their derivatives are exact."""
    rng = rng_for(label, "reconstruction")
    a = domain.sample(rng, shape, np.float64)
    c, u = rng.standard_normal(shape), rng.standard_normal(shape)
    project = _sym if symmetric else (lambda x: x)
    out, vjp_fn = gc.vjp(recon, a)
    assert_close(out, project(a), EXACT, f"{label}: reconstruction")
    assert_close(vjp_fn(c)[0], project(c), EXACT, f"{label}: VJP")
    _, t = gc.jvp(recon, [a], [u])
    assert_close(t, project(u), EXACT, f"{label}: JVP")
    for mode in HVP_MODES:  # a linear function of a: no curvature
        h = gc.hvp(lambda x: gsum(recon(x) * c), [a], [u], mode=mode)[0]
        assert_close(h, np.zeros(shape), EXACT, f"{label}: {mode}")


SIGN_FREE = [
    ("eigh", lambda a: (lambda w, v: (w, v * v))(*linalg_decomp.eigh(a)), (2, 3, 3)),
    ("svd", lambda a: (lambda u, s, vh: (u * u, s, vh * vh))(
        *linalg_decomp.svd(a, full_matrices=False)), (2, 4, 3)),
    ("qr", lambda a: (lambda q, r: (q * q, r * r))(*linalg_decomp.qr(a)), (2, 3, 4)),
]


@pytest.mark.parametrize("label,features,shape", SIGN_FREE, ids=[s[0] for s in SIGN_FREE])
def test_sign_free_features_match_central_differences(label, features, shape):
    """Squares of the vectors do not depend on the sign convention; every derivative path
    of them (by the vectors' rules) passes check() with no gauge to align."""
    op = {"eigh": "linalg.eigh", "svd": "linalg.svd", "qr": "linalg.qr"}[label]
    domain = default_registry.get(op).meta["inputs"][0]
    a = domain.sample(rng_for(label, "sign"), shape, np.float64)
    check_at(lambda x: features(x), [a], seed=seed_for(label, "sign"))


# ---------------------------------------------------------------------------------------
# Conventions, metadata and errors
# ---------------------------------------------------------------------------------------
def test_cholesky_gradient_is_tensorflows_symmetric_one():
    rng = np.random.default_rng(7)
    a = SPD().sample(rng, (2, 3, 3), np.float64)
    g = rng.standard_normal((2, 3, 3))
    _, vjp_fn = gc.vjp(linalg_decomp.cholesky, a)
    ct = value_of(vjp_fn(g)[0])
    assert_close(ct, np.swapaxes(ct, -1, -2), EXACT, "symmetric")
    assert_close(ct, _cholesky_grad_formula(np.linalg.cholesky(a), g), EXACT,
                 "CholeskyGrad")


def test_gradient_ops_are_linked_and_only_cholesky_grad_lacks_a_native_jvp():
    ops = [op for op in default_registry if op.family == "linalg"]
    names = {op.name for op in ops}
    assert {c.name for c in CASES} == names
    assert [op.name for op in ops if not op.has_native_jvp] == ["linalg.cholesky_grad"]
    assert default_registry.get("linalg.cholesky_grad").transpose_jvp_reason
    for fwd, grad in [("linalg.cholesky", "linalg.cholesky_grad"),
                      ("linalg.expm", "linalg.expm_frechet")]:
        assert default_registry.get(fwd).meta["grad_op"] == grad
        assert default_registry.get(grad).meta["grad_of"] == fwd


def test_exports():
    import gradcheck.numpy as gnp

    for name in ("inv", "det", "slogdet", "solve", "solve_triangular", "pinv", "cholesky",
                 "qr", "eigh", "svd", "svdvals", "expm"):
        assert getattr(gnp.linalg, name) is default_registry.get(f"linalg.{name}")
    for name in ("matmul", "dot", "outer"):
        assert getattr(gnp, name) is default_registry.get(name)
    x = gc.tensor(np.eye(2) * 2.0)
    assert np.allclose(value_of(gnp.linalg.inv(x)), np.eye(2) / 2)


def test_triangular_domain():
    rng = np.random.default_rng(3)
    x = Triangular(positive_diagonal=True).sample(rng, (2, 4, 4), np.float32)
    assert x.dtype == np.float32 and x.shape == (2, 4, 4)
    assert np.all(np.diagonal(x, axis1=-2, axis2=-1) >= 1.0)
    rows, cols = np.triu_indices(4, 1)
    assert np.all(x[:, rows, cols] != 0)  # the unused triangle is not zero
    for lower in (np.tril, np.triu):
        assert np.max(np.linalg.cond(lower(x.astype(np.float64)))) < 50
    with pytest.raises(ValueError, match="square"):
        Triangular().sample(rng, (3, 4), np.float64)


@pytest.mark.parametrize("call,error,match", [
    (lambda: linalg.inv(np.ones((2, 3))), ValueError, r"linalg.inv: a must have shape"),
    (lambda: linalg.det(np.ones(3)), ValueError, r"linalg.det: a must have shape"),
    (lambda: linalg.solve(np.eye(3), np.ones((2, 2))), ValueError, r"linalg.solve: b must"),
    (lambda: linalg.solve_triangular(np.eye(2), np.ones(2), trans="X"), ValueError,
     r"linalg.solve_triangular: trans must be"),
    (lambda: linalg.matmul(np.ones(()), np.ones(2)), ValueError, r"matmul: inputs"),
    (lambda: linalg.dot(np.ones((2, 3)), np.ones((2, 3))), ValueError, r"dot: shapes"),
    (lambda: linalg_decomp.cholesky(-np.eye(2)), np.linalg.LinAlgError,
     r"linalg.cholesky: a is not symmetric positive definite"),
    (lambda: linalg_decomp.qr(np.eye(3), mode="complete"), ValueError,
     r"linalg.qr: only mode='reduced'"),
    (lambda: linalg_decomp.eigh(np.eye(2), UPLO="X"), ValueError, r"UPLO must be"),
    (lambda: linalg_decomp.cholesky_grad(np.eye(2), np.ones((3, 3))), ValueError,
     r"linalg.cholesky_grad: grad must have l's shape"),
    (lambda: gc.vjp(linalg_decomp.svd, np.ones((3, 2)) + np.eye(3, 2))[1](
        (np.ones((3, 3)), np.ones(2), np.ones((2, 2)))), ValueError,
     r"linalg.svd: the derivative needs full_matrices=False"),
])
def test_bad_input_names_the_op(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_zero_size_right_hand_side():
    a = WellConditioned().sample(np.random.default_rng(0), (2, 3, 3), np.float64)
    b = np.zeros((3, 0))
    out, vjp_fn = gc.vjp(linalg.solve, a, b)
    ga, gb = vjp_fn(np.zeros((2, 3, 0)))
    assert value_of(out).shape == (2, 3, 0)
    assert np.all(value_of(ga) == 0) and value_of(gb).shape == (3, 0)


def test_expm_frechet_second_order_with_a_large_direction():
    """A large e makes the block [[a, e], [0, a]] badly scaled; the op rescales e (it is
    linear in e), so second derivatives through nested blocks stay accurate."""
    rng = np.random.default_rng(11)
    a = rng.uniform(-2.0, 2.0, (4, 4))
    e = 2e3 * rng.standard_normal((4, 4))
    w = rng.standard_normal((4, 4))

    def loss(x: Any, y: Any) -> Any:
        out = linalg_decomp.expm_frechet(x, y)
        return gsum(w * out * out)

    check_at(loss, [a, e], seed=seed_for("expm_frechet", "large direction"))
