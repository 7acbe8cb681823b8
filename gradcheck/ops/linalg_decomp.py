"""Matrix decompositions and functions: cholesky, qr, eigh, svd, svdvals, expm.

Rules are written with registered ops, so they differentiate again.  Two
conventions differ from a bare LAPACK call, both as in ``jax.numpy.linalg``:

* ``cholesky`` and ``eigh`` symmetrize their input, ``(a + a^T) / 2``, before
  factorizing.  numpy reads one triangle only, so its derivative in a
  non-symmetric direction is not the symmetric gradient every framework
  returns; after symmetrizing, the function and its (symmetric) gradient agree
  in every direction and equal numpy's on symmetric input.
* ``eigh``, ``svd`` and ``qr`` return numpy's vectors with numpy's signs.  The
  rules hold for that gauge: real unit vectors have ``v^T dv = 0``, so only a
  discrete sign is free, and LAPACK keeps it locally constant.

References for the rules: Murray, "Differentiation of the Cholesky algorithm"
(arXiv:1602.07527), as TensorFlow's ``_CholeskyGrad``; Walter and Lehmann,
"Algorithmic differentiation of linear algebra functions" (qr); Townsend,
"Differentiating the singular value decomposition" (svd); Al-Mohy and Higham
(expm's Fréchet derivative as a block exponential).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.linalg

from gradcheck.domains import REAL, SPD, DistinctEig, FullRank, Interval
from gradcheck.engine.op import Op, define_op
from gradcheck.engine.tensor import bind, value_of
from gradcheck.ops import shape
from gradcheck.ops.linalg import (
    NamedResultOp,
    Triangular,
    check_square,
    diag_matrix,
    diagonal_part,
    eye_like,
    inv,
    matmul,
    matrix_shapes,
    matrix_transpose,
    named_result,
    solve_triangular,
    square_shapes,
    with_named_result,
)
from gradcheck.ops.refs import NoEquivalent, formula
from gradcheck.ops.rules import cast_cotangent, dtype_of, fit, shape_of, unbroadcast
from gradcheck.ops.shape import dims

__all__ = ["cholesky", "cholesky_grad", "qr", "eigh", "svd", "svdvals", "expm",
           "expm_frechet", "inverse_gaps", "eig", "eigvals", "EighResult", "EigResult",
           "QRResult", "SVDResult"]

#: Names exported in gradcheck.numpy.linalg (expm is scipy.linalg's, given a home here).
LINALG = ["cholesky", "qr", "eigh", "eig", "eigvals", "svd", "svdvals", "expm"]

mT = matrix_transpose

# numpy 2's result types: ``eigh(a).eigenvalues``, ``svd(a).S``, ``qr(a).R``, ...
EighResult = named_result("EighResult", ("eigenvalues", "eigenvectors"))
EigResult = named_result("EigResult", ("eigenvalues", "eigenvectors"))
QRResult = named_result("QRResult", ("Q", "R"))
SVDResult = named_result("SVDResult", ("U", "S", "Vh"))


def _sym(x: Any) -> Any:
    return (x + mT(x)) * 0.5


def _lower(x: Any, k: int = 0) -> np.ndarray:
    """Constant mask of the lower triangle (below diagonal ``k``) in x's dtype."""
    n = shape_of(x)[-1]
    return np.tril(np.ones((n, n), dtype=dtype_of(x)), k)


def _phi(x: Any) -> np.ndarray:
    """Murray's Phi as a mask: the lower triangle with the diagonal halved."""
    return _lower(x) - 0.5 * eye_like(x)


def inverse_gaps(w: Any) -> Any:
    """F[..., i, j] = 1 / (w_j - w_i) off the diagonal, 0 on it (w distinct)."""
    s = shape_of(w)
    eye = eye_like(w, s[-1])
    row = shape.reshape(w, s[:-1] + (1, s[-1]))
    col = shape.reshape(w, s[:-1] + (s[-1], 1))
    # adding the identity keeps the diagonal away from 0/0; (1 - I) then zeroes it
    return (1 - eye) / (row - col + eye)


def _np_sym(np_: Any, a: Any) -> Any:
    return 0.5 * (a + np_.swapaxes(a, -1, -2))


def _tf_sym(tf: Any, a: Any) -> Any:
    return 0.5 * (a + tf.linalg.matrix_transpose(a))


# -- cholesky and its gradient op ----------------------------------------------------------
def _tri_inverse_times(low: Any, x: Any) -> Any:
    """L^{-1} x for lower-triangular L."""
    return solve_triangular(low, x, lower=True)


def _cholesky_grad_forward(factor: Any, grad: Any) -> np.ndarray:
    """TensorFlow's CholeskyGrad: sym(L^{-T} Phi(L^T grad) L^{-1}) / 2 for L = tril(factor)."""
    check_square("linalg.cholesky_grad", factor, "l")
    if np.shape(grad) != np.shape(factor):
        raise ValueError(f"linalg.cholesky_grad: grad must have l's shape "
                         f"{np.shape(factor)}, got {np.shape(grad)}")
    low = np.tril(factor)
    eye = np.broadcast_to(np.eye(low.shape[-1], dtype=low.dtype), low.shape)
    l_inv = solve_triangular.forward(low, eye, lower=True)  # empty batches too
    middle = np.matmul(np.swapaxes(low, -1, -2), grad)
    middle = np.tril(middle) - 0.5 * middle * np.eye(low.shape[-1], dtype=low.dtype)
    grad_a = np.matmul(np.matmul(np.swapaxes(l_inv, -1, -2), middle), l_inv)
    return ((grad_a + np.swapaxes(grad_a, -1, -2)) * 0.5).astype(low.dtype, copy=False)


def _cholesky_grad_z(factor: Any, h: Any) -> tuple[Any, Any]:
    """(Phi(Z), W) with S = sym(h), W = L^{-1} S and Z = W L^{-T} = L^{-1} S L^{-T}."""
    low = factor * _lower(factor)
    w = _tri_inverse_times(low, _sym(h))
    z = mT(_tri_inverse_times(low, mT(w)))
    return z * _phi(z), w


def _cholesky_grad_vjp_l(h, out, factor, grad):
    # d out / d L has two parts: through L^{-1} (the -2 out S L^{-T} term) and through
    # L^T grad (grad Phi(Z)^T); only the lower triangle of l is read.
    phi_z, w = _cholesky_grad_z(factor, h)
    return (matmul(grad, mT(phi_z)) - 2 * matmul(out, mT(w))) * _lower(factor)


def _cholesky_grad_vjp_grad(h, out, factor, grad):
    # The adjoint of the linear map grad -> out: L Phi(L^{-1} sym(h) L^{-T}).  It reads
    # neither grad nor out, so a double-VJP through cholesky never touches its dummy.
    phi_z, _ = _cholesky_grad_z(factor, h)
    return matmul(factor * _lower(factor), phi_z)


def _pair_shapes(draw: Any, form: str | None = None) -> list[tuple[int, ...]]:
    s = square_shapes(draw, form)[0]
    return [s, s]


cholesky_grad: Op = define_op(
    "linalg.cholesky_grad", _cholesky_grad_forward,
    vjp=(_cholesky_grad_vjp_l, _cholesky_grad_vjp_grad),
    transpose_jvp_reason="exercises the transpose fallback: its JVP comes from transposing "
                         "its VJP, as TensorFlow's forward mode does for gradient ops",
    family="linalg", inputs=(Triangular(positive_diagonal=True), REAL), shapes=_pair_shapes,
    grad_of="linalg.cholesky",
    doc="cholesky's gradient op (TensorFlow's CholeskyGrad(l, grad)): the symmetric "
        "cotangent of a for the cotangent grad of l = cholesky(a); reads lower triangles only.",
    equivalents={"tensorflow": lambda tf, factor, grad: tf.raw_ops.CholeskyGrad(l=factor,
                                                                                grad=grad)},
)


def _cholesky_forward(a: Any, upper: bool = False) -> np.ndarray:
    check_square("linalg.cholesky", a)
    try:
        return np.linalg.cholesky((a + np.swapaxes(a, -1, -2)) * 0.5, upper=upper)
    except np.linalg.LinAlgError as error:
        raise np.linalg.LinAlgError(
            f"linalg.cholesky: a is not symmetric positive definite ({error})") from None


def _cholesky_vjp(g, out, a, upper=False):
    if upper:
        return cholesky_grad(mT(out), mT(g))
    return cholesky_grad(out, g)


def _cholesky_jvp(ts, out, a, upper=False):
    low = mT(out) if upper else out
    w = _tri_inverse_times(low, _sym(ts[0]))
    z = mT(_tri_inverse_times(low, mT(w)))
    dl = matmul(low, z * _phi(z))
    return mT(dl) if upper else dl


def _np_cholesky(np_: Any, a: Any, upper: bool = False) -> Any:
    low = np_.linalg.cholesky(_np_sym(np_, a))
    return np_.swapaxes(low, -1, -2) if upper else low


def _tf_cholesky(tf: Any, a: Any, upper: bool = False) -> Any:
    low = tf.linalg.cholesky(_tf_sym(tf, a))
    return tf.linalg.matrix_transpose(low) if upper else low


cholesky: Op = define_op(
    "linalg.cholesky", _cholesky_forward,
    vjp=_cholesky_vjp, jvp=_cholesky_jvp,
    family="linalg", inputs=(SPD(),), shapes=square_shapes, params={"upper": [False, True]},
    grad_op="linalg.cholesky_grad", reference=np.linalg.cholesky,
    doc="numpy.linalg.cholesky of (a + a^T) / 2: lower factor L (upper=True: L^T).",
    equivalents={"numpy": _np_cholesky, "tensorflow": _tf_cholesky},
)


# -- qr -----------------------------------------------------------------------------------
def _times_r_inv(x: Any, r: Any) -> Any:
    """x R^{-1} for upper-triangular R."""
    return mT(solve_triangular(r, mT(x), lower=False, trans=1))


def _times_r_inv_t(x: Any, r: Any) -> Any:
    """x R^{-T} for upper-triangular R."""
    return mT(solve_triangular(r, mT(x), lower=False))


def _qr_vjp_tall(q: Any, r: Any, gq: Any, gr: Any) -> Any:
    """Cotangent of a = q r (m >= n): (gq + q copyltu(M)) R^{-T}, M = R gr^T - gq^T q."""
    m = matmul(r, mT(gr)) - matmul(mT(gq), q)
    copyltu = m * _lower(m) + mT(m * _lower(m, -1))
    return _times_r_inv_t(gq + matmul(q, copyltu), r)


def _qr_jvp_tall(q: Any, r: Any, t: Any) -> tuple[Any, Any]:
    """(dq, dr) for a = q r (m >= n) along t: q^T dq is skew, dr upper triangular."""
    t_r = _times_r_inv(t, r)
    c = matmul(mT(q), t_r)
    low = c * _lower(c, -1)
    omega = low - mT(low)
    dr = matmul(c - omega, r)
    dq = matmul(q, omega) + t_r - matmul(q, c)
    return dq, dr


def _column_split(a: Any) -> tuple[np.ndarray, np.ndarray]:
    """Constant selectors of a wide (m, n) matrix's first m and last n - m columns."""
    m, n = shape_of(a)[-2:]
    eye = np.eye(n, dtype=dtype_of(a))
    return eye[:, :m], eye[:, m:]


def _qr_vjp(g, out, a, mode="reduced"):
    (gq, gr), (q, r) = g, out
    m, n = shape_of(a)[-2:]
    if m >= n:
        return _qr_vjp_tall(q, r, gq, gr)
    # wide: a = [x | y], r = [u | q^T y]; x = q u is a square QR
    first, rest = _column_split(a)
    y, gu, gv = matmul(a, rest), matmul(gr, first), matmul(gr, rest)
    gx = _qr_vjp_tall(q, matmul(r, first), gq + matmul(y, mT(gv)), gu)
    return matmul(gx, mT(first)) + matmul(matmul(q, gv), mT(rest))


def _qr_jvp(ts, out, a, mode="reduced"):
    (q, r), t = out, ts[0]
    m, n = shape_of(a)[-2:]
    if m >= n:
        return _qr_jvp_tall(q, r, t)
    first, rest = _column_split(a)
    dq, du = _qr_jvp_tall(q, matmul(r, first), matmul(t, first))
    dv = matmul(mT(dq), matmul(a, rest)) + matmul(mT(q), matmul(t, rest))
    return dq, matmul(du, mT(first)) + matmul(dv, mT(rest))


def _qr_forward(a: Any, mode: str = "reduced") -> tuple[np.ndarray, np.ndarray]:
    if np.ndim(a) < 2:
        raise ValueError(f"linalg.qr: a must have shape (..., m, n), got {np.shape(a)}")
    if mode != "reduced":
        raise ValueError(f"linalg.qr: only mode='reduced' is differentiable, got {mode!r}")
    q, r = np.linalg.qr(a, mode="reduced")
    return q, r


def _tf_qr(tf: Any, a: Any, mode: str = "reduced") -> Any:
    if mode != "reduced":
        raise NoEquivalent(f"only the reduced QR is compared, not mode={mode!r}")
    q, r = tf.linalg.qr(a, full_matrices=False)
    return q, r


qr: Op = with_named_result(define_op(
    "linalg.qr", _qr_forward,
    vjp=_qr_vjp, jvp=_qr_jvp, register=False,
    nout=2, family="linalg", inputs=(FullRank(),), shapes=matrix_shapes,
    doc="numpy.linalg.qr (reduced) -> (q, r) with numpy's signs; tall, square or wide "
        "full-rank a (wide: the leading square block must be invertible).",
    # q's columns and r's rows are defined up to one sign each
    gauge=((0, -1), (1, -2)),
    equivalents={"tensorflow": _tf_qr},
), QRResult)


# -- eigh ---------------------------------------------------------------------------------
def _eigh_forward(a: Any, UPLO: str = "L") -> tuple[np.ndarray, np.ndarray]:
    check_square("linalg.eigh", a)
    if UPLO not in ("L", "U"):
        raise ValueError(f"linalg.eigh: UPLO must be 'L' or 'U', got {UPLO!r}")
    if UPLO != "L":  # accepting it would ignore it: neither triangle alone is read
        raise ValueError("linalg.eigh: UPLO='U' is not supported: gradcheck reads the "
                         "symmetric part (a + a^T) / 2 (Hermitian if complex), as JAX does, "
                         "not one triangle as numpy does; pass the symmetric matrix numpy "
                         "would read (triu(a) + triu(a, 1).T) with the default UPLO='L'")
    if np.iscomplexobj(a):  # Hermitian: (a + a^H) / 2, eigenvectors in eig's phase gauge
        herm = (a + np.conj(np.swapaxes(a, -1, -2))) * 0.5
        w, v = np.linalg.eigh(herm)
        return w, _phase_fixed(v)
    w, v = np.linalg.eigh((a + np.swapaxes(a, -1, -2)) * 0.5)
    return w, v


def _herm(x: Any) -> Any:
    from gradcheck.ops.complex import conj

    return (x + conj(mT(x))) * 0.5


def _eigh_vjp(g, out, a, UPLO="L"):
    (gw, gv), (w, v) = g, out
    if dtype_of(a).kind == "c":  # v^{-1} = v^H; the phase gauge as for eig
        from gradcheck.ops.complex import as_complex, conj

        gbar = _gauge_vjp(gv, v, unit_norm=False)
        inner = diag_matrix(as_complex(gw)) + inverse_gaps(w) * matmul(mT(v), gbar)
        return _herm(matmul(conj(v), matmul(inner, mT(v))))
    inner = diag_matrix(gw) + inverse_gaps(w) * matmul(mT(v), gv)
    return _sym(matmul(v, matmul(inner, mT(v))))


def _eigh_jvp(ts, out, a, UPLO="L"):
    w, v = out
    if dtype_of(a).kind == "c":
        from gradcheck.ops.complex import conj, real

        p = matmul(conj(mT(v)), matmul(_herm(ts[0]), v))
        dv0 = matmul(v, inverse_gaps(w) * p)
        return real(diagonal_part(p)), _gauge_jvp(dv0, v, unit_norm=False)
    p = matmul(mT(v), matmul(_sym(ts[0]), v))
    return diagonal_part(p), matmul(v, inverse_gaps(w) * p)


def _np_eigh(np_: Any, a: Any, UPLO: str = "L") -> tuple[Any, Any]:
    """The framework's eigh of the op's input: the symmetric part, or for a complex matrix
    the Hermitian part with each eigenvector in the op's phase gauge."""
    if getattr(a, "dtype", np.asarray(a).dtype).kind != "c":
        return tuple(np_.linalg.eigh(_np_sym(np_, a), UPLO=UPLO))
    w, v = np_.linalg.eigh(0.5 * (a + np_.conj(np_.swapaxes(a, -1, -2))), UPLO=UPLO)
    size = np_.abs(v)
    top = np_.max(size, axis=-2, keepdims=True)
    pivot = np_.sum(np_.where(size == top, v, 0 * v), axis=-2, keepdims=True)
    return w, v * (np_.abs(pivot) / pivot)


def _tf_eigh(tf: Any, a: Any, UPLO: str = "L") -> tuple[Any, Any]:
    """As :func:`_np_eigh`, with TensorFlow's names (its eigenvalues of a complex matrix come
    complex, with a zero imaginary part)."""
    if not a.dtype.is_complex:
        return tuple(tf.linalg.eigh(_tf_sym(tf, a)))
    w, v = tf.linalg.eigh(0.5 * (a + tf.linalg.adjoint(a)))
    size = tf.abs(v)
    top = tf.reduce_max(size, axis=-2, keepdims=True)
    pivot = tf.reduce_sum(tf.where(size == top, v, tf.zeros_like(v)), axis=-2, keepdims=True)
    return tf.math.real(w), v * (tf.cast(tf.abs(pivot), v.dtype) / pivot)


eigh: Op = with_named_result(define_op(
    "linalg.eigh", _eigh_forward,
    vjp=_eigh_vjp, jvp=_eigh_jvp, register=False,
    nout=2, family="linalg", inputs=(DistinctEig(),), shapes=square_shapes,
    doc="numpy.linalg.eigh of (a + a^T) / 2 -> (w, v), distinct eigenvalues, numpy's signs "
        "(only UPLO='L': gradcheck reads both triangles, numpy one).",
    gauge=((1, -1),),  # each eigenvector (a column of v) up to its sign (a phase if complex)
    complex_inputs=("hermitian",),
    accuracy="normwise",  # LAPACK's eigh is backward stable, as eig (see there)
    # a is symmetrised first, so which triangle LAPACK would read does not matter
    equivalents={"numpy": _np_eigh, "tensorflow": _tf_eigh},
), EighResult)


# -- svd and svdvals ------------------------------------------------------------------------
def _svd_forward(a: Any, full_matrices: bool = True) -> tuple[np.ndarray, ...]:
    if np.ndim(a) < 2:
        raise ValueError(f"linalg.svd: a must have shape (..., m, n), got {np.shape(a)}")
    u, s, vh = np.linalg.svd(a, full_matrices=full_matrices)
    return u, s, vh


def _svd_reduced(a: Any, full_matrices: bool) -> tuple[int, int, int]:
    m, n = shape_of(a)[-2:]
    if full_matrices and m != n:
        raise ValueError(
            f"linalg.svd: the derivative needs full_matrices=False for a non-square a (the "
            f"extra singular vectors are not unique; the singular values alone are "
            f"differentiable: svd(a, compute_uv=False)); got a of shape {shape_of(a)}")
    return m, n, min(m, n)


def _svd_values_vjp(gs, out, a, full_matrices):
    """The VJP when only the singular values have a cotangent: u diag(gs) vh with the first k
    vectors.  It needs no extra vectors, so a non-square a with full_matrices=True (numpy's
    default) is fine: its extra vectors are not unique, but nothing here reads them."""
    m, n = shape_of(a)[-2:]
    if full_matrices and m != n:  # the reduced svd: second order goes through its rule
        return _svdvals_vjp(gs, None, a)
    u, _, vh = out
    k = shape_of(gs)[-1]
    return matmul(u * shape.reshape(gs, shape_of(gs)[:-1] + (1, k)), vh)


def _zeros_for(g, like):
    """A missing cotangent (the output was not used) as a constant zero array."""
    return np.zeros(shape_of(like), dtype_of(like)) if g is None else g


def _svd_vjp(g, out, a, full_matrices=True):
    # fill_zeros=False: a cotangent is None when its output was not used, which says
    # structurally (not by its values, so the rule stays linear in g) that s alone is needed
    if g[0] is None and g[2] is None:
        return _svd_values_vjp(g[1], out, a, full_matrices)
    m, n, k = _svd_reduced(a, full_matrices)
    (gu, gs, gvh), (u, s, vh) = [_zeros_for(c, o) for c, o in zip(g, out, strict=True)], out
    v, gv = mT(vh), mT(gvh)
    f = inverse_gaps(s * s)
    j = f * matmul(mT(u), gu)
    kk = f * matmul(vh, gv)
    s_row = shape.reshape(s, shape_of(s)[:-1] + (1, k))  # s_j in column j
    s_col = mT(s_row)
    pbar = diag_matrix(gs) + (j + mT(j)) * s_row + s_col * (kk + mT(kk))
    ga = matmul(u, matmul(pbar, vh))
    if m > k:  # the part of gu outside span(u)
        ga = ga + matmul((gu - matmul(u, matmul(mT(u), gu))) / s_row, vh)
    if n > k:  # the part of gvh outside span(v)
        ga = ga + matmul(u / s_row, gvh - matmul(matmul(gvh, v), vh))
    return ga


def _svd_jvp(ts, out, a, full_matrices=True):
    m, n, k = _svd_reduced(a, full_matrices)
    (u, s, vh), t = out, ts[0]
    v = mT(vh)
    f = inverse_gaps(s * s)
    p = matmul(mT(u), matmul(t, v))
    s_row = shape.reshape(s, shape_of(s)[:-1] + (1, k))
    s_col = mT(s_row)
    du = matmul(u, f * (p * s_row + mT(p * s_row)))
    dv = matmul(v, f * (s_col * p + mT(s_col * p)))
    if m > k:
        tv = matmul(t, v)
        du = du + (tv - matmul(u, matmul(mT(u), tv))) / s_row
    if n > k:
        ttu = matmul(mT(t), u)
        dv = dv + (ttu - matmul(v, matmul(vh, ttu))) / s_row
    return du, diagonal_part(p), mT(dv)


def _svd_params(shapes: list[tuple[int, ...]]) -> list[bool]:
    m, n = shapes[0][-2:]
    return [False, True] if m == n else [False]


def _ag_svd(anp: Any, a: Any, full_matrices: bool = True) -> Any:
    m, n = dims(a)[-2:]
    if full_matrices and m != n:
        raise NoEquivalent("autograd's svd rule needs full_matrices=False for non-square a")
    return tuple(anp.linalg.svd(a, full_matrices=full_matrices))


def _tf_svd(tf: Any, a: Any, full_matrices: bool = True) -> Any:
    s, u, v = tf.linalg.svd(a, full_matrices=full_matrices)  # TensorFlow returns v, not vh
    return u, s, tf.linalg.matrix_transpose(v)


class _NumpySvd(NamedResultOp):
    """The svd op called with numpy's signature, returning an :data:`SVDResult`.
    ``compute_uv=False`` returns the singular values alone, one array as numpy does, which
    an op of three outputs cannot: that is :data:`svdvals`."""

    def __call__(self, a: Any, full_matrices: bool = True, compute_uv: bool = True,
                 hermitian: bool = False) -> Any:
        if hermitian:  # numpy then decomposes one triangle with eigh: another function
            raise ValueError("linalg.svd: hermitian=True is not supported (numpy then reads "
                             "one triangle of a through eigh); use linalg.eigh, or svd of the "
                             "symmetric matrix itself")
        if not compute_uv:
            return svdvals(a)
        return self.result(bind(self, a, full_matrices=full_matrices))


svd: Op = with_named_result(define_op(
    "linalg.svd", _svd_forward,
    vjp=_svd_vjp, jvp=_svd_jvp,
    nout=3, family="linalg", inputs=(FullRank(),), shapes=matrix_shapes,
    params={"full_matrices": _svd_params}, fill_zeros=False, register=False,
    doc="numpy.linalg.svd -> (u, s, vh), numpy's signs; compute_uv=False -> s (svdvals). "
        "Differentiable for distinct nonzero singular values; u and vh need "
        "full_matrices=False (or square a), s alone does not.",
    gauge=((0, -1), (2, -2)),  # u's k-th column and vh's k-th row share one sign
    # LAPACK's svd is accurate norm-wise: with Tolerance(2.0) in its place, full mode at seed 0
    # failed (hvp_rev_fwd 1.3 times the allowance, the numeric side's estimate too small)
    accuracy="normwise",
    equivalents={"numpy": lambda np_, a, full_matrices=True: tuple(
        np_.linalg.svd(a, full_matrices=full_matrices)),
        "autograd": _ag_svd, "tensorflow": _tf_svd},
), SVDResult, _NumpySvd)


def _svdvals_forward(a: Any) -> np.ndarray:
    if np.ndim(a) < 2:
        raise ValueError(f"linalg.svdvals: a must have shape (..., m, n), got {np.shape(a)}")
    return np.linalg.svd(a, compute_uv=False)


def _svdvals_vjp(g, out, a):
    # The vectors come from the svd op, so the second derivative goes through its rule;
    # u_i v_i^T does not depend on their signs.
    u, _, vh = svd(a, full_matrices=False)
    k = shape_of(g)[-1]
    return matmul(u * shape.reshape(g, shape_of(g)[:-1] + (1, k)), vh)


def _svdvals_jvp(ts, out, a):
    u, _, vh = svd(a, full_matrices=False)
    return diagonal_part(matmul(mT(u), matmul(ts[0], mT(vh))))


svdvals: Op = define_op(
    "linalg.svdvals", _svdvals_forward,
    vjp=_svdvals_vjp, jvp=_svdvals_jvp,
    family="linalg", inputs=(FullRank(),), shapes=matrix_shapes,
    reference=lambda a: np.linalg.svd(a, compute_uv=False),
    doc="numpy.linalg.svdvals: singular values in descending order (distinct for second "
        "order: it goes through svd's vectors).",
    equivalents={"numpy": lambda np_, a: np_.linalg.svd(a, compute_uv=False),
                 "tensorflow": lambda tf, a: tf.linalg.svd(a, compute_uv=False)},
)


# -- expm ---------------------------------------------------------------------------------
def _expm_forward(a: Any) -> np.ndarray:
    check_square("linalg.expm", a)
    return np.asarray(scipy.linalg.expm(a))


def _embeddings(a: Any, e: Any) -> tuple[np.ndarray, np.ndarray]:
    """Constant (2n, n) maps onto the top and bottom halves of a 2n-vector."""
    n = shape_of(a)[-1]
    dt = np.result_type(dtype_of(a), dtype_of(e))
    return np.eye(2 * n, n, dtype=dt), np.eye(2 * n, n, -n, dtype=dt)


def _block(top: np.ndarray, bottom: np.ndarray, diag: Any, corner: Any) -> Any:
    """[[diag, corner], [0, diag]] from n x n blocks (registered ops, so differentiable)."""
    return (matmul(top, matmul(diag, top.T)) + matmul(top, matmul(corner, bottom.T))
            + matmul(bottom, matmul(diag, bottom.T)))


def _expm_frechet_forward(a: Any, e: Any) -> np.ndarray:
    check_square("linalg.expm_frechet", a)
    if np.shape(e)[-2:] != np.shape(a)[-2:]:
        raise ValueError(f"linalg.expm_frechet: e must have shape (..., n, n) matching a "
                         f"{np.shape(a)}, got {np.shape(e)}")
    top, bottom = _embeddings(a, e)
    sigma = _magnitude(e)
    return top.T @ scipy.linalg.expm(_block(top, bottom, a, e / sigma)) @ bottom * sigma


def _magnitude(e: Any) -> np.ndarray:
    """Per-matrix max |e| (1 where e is zero), a constant.

    The result is linear in e, so L(a, e) = s L(a, e / s) for any constant s.  Scaling e
    to unit size keeps the block [[a, e], [0, a]] as well conditioned as a: with a large e
    its exponential loses accuracy, and so would every derivative computed through it.
    Reading the value (not the op) is right: s is a constant of the identity, not of e.
    """
    m = np.max(np.abs(value_of(e)), axis=(-2, -1), keepdims=True, initial=0.0)
    return np.where(m > 0, m, 1.0).astype(dtype_of(e))


def _expm_frechet_vjp_a(g, out, a, e):
    # out = top^T expm(B) bottom with B = [[a, e], [0, a]]: pull g back through expm at B
    # (its VJP is the Fréchet derivative at B^T) and then through B's diagonal blocks.
    top, bottom = _embeddings(a, e)
    sigma = _magnitude(e)
    gb = expm_frechet(mT(_block(top, bottom, a, e / sigma)), matmul(top, matmul(g, bottom.T)))
    ga = matmul(top.T, matmul(gb, top)) + matmul(bottom.T, matmul(gb, bottom))
    return unbroadcast(ga * sigma, a)


def _expm_frechet_jvp_a(t, out, a, e):
    top, bottom = _embeddings(a, e)
    sigma = _magnitude(e)
    db = _block(top, bottom, t, t * 0.0)
    dl = expm_frechet(_block(top, bottom, a, e / sigma), db)
    return fit(matmul(top.T, matmul(dl, bottom)) * sigma, out)


def _tf_expm_frechet(tf: Any, a: Any, e: Any) -> Any:
    # The top-right block of expm([[a, e], [0, a]]), with e scaled to unit size (as the op's
    # forward: L(a, e) = s L(a, e / s); the stopped gradient only marks s as a constant).
    m = tf.stop_gradient(tf.reduce_max(tf.abs(e), axis=[-2, -1], keepdims=True))
    s = tf.where(m > 0, m, tf.ones_like(m))
    n = dims(a)[-1]
    top = tf.concat([a, e / s], axis=-1)
    bottom = tf.concat([tf.zeros_like(a), a], axis=-1)
    return tf.linalg.expm(tf.concat([top, bottom], axis=-2))[..., :n, n:] * s


expm_frechet: Op = define_op(
    "linalg.expm_frechet", _expm_frechet_forward,
    # Linear in e; its adjoint in e is the Fréchet derivative at a^T, which reads neither e
    # nor out: a double-VJP through expm does not touch its dummy.
    vjp=(_expm_frechet_vjp_a, lambda g, out, a, e: unbroadcast(expm_frechet(mT(a), g), e)),
    jvp=(_expm_frechet_jvp_a, lambda t, out, a, e: fit(expm_frechet(a, t), out)),
    family="linalg", inputs=(Interval(-2.0, 2.0), REAL), shapes=_pair_shapes,
    grad_of="linalg.expm",
    # the top-right block of scipy's expm, accurate to ulps of the block's largest entry:
    # with Tolerance(4.0) in its place, full mode failed at seeds 4, 8, 10, 11, ... (second
    # order, up to 1.3 times the allowance)
    accuracy="normwise",
    doc="expm's gradient op: the Fréchet derivative of expm at a along e, the top-right "
        "block of expm([[a, e], [0, a]]) (scipy.linalg.expm_frechet, batched).",
    equivalents={"tensorflow": formula(_tf_expm_frechet, "TensorFlow has no Fréchet "
                                                         "derivative of expm: the block "
                                                         "exponential through tf.linalg.expm")},
)

expm: Op = define_op(
    "linalg.expm", _expm_forward,
    # The adjoint of the Fréchet derivative at a is the Fréchet derivative at a^T.
    vjp=lambda g, out, a: expm_frechet(mT(a), g),
    jvp=lambda ts, out, a: expm_frechet(a, ts[0]),
    # expm grows like e^{|a|}: entries in (-2, 2) keep values representable in float32.
    family="linalg", inputs=(Interval(-2.0, 2.0),), shapes=square_shapes,
    grad_op="linalg.expm_frechet", reference=scipy.linalg.expm,
    # scipy's expm is accurate to about 10 ulps of the largest entry, not of each entry: at
    # seed 3 of the full suite d expm(a)[0, 0] / d a[4, 0] (-0.0077, largest entry 3.7) came
    # out 3.4e-11 off numerically where rounding of each entry's own size estimated 6.6e-13
    accuracy="normwise",
    doc="scipy.linalg.expm, batched: the matrix exponential.",
    equivalents={"tensorflow": "linalg.expm"},  # numpy has none (autograd has no expm rule)
)


# -- eig and eigvals (general matrices, complex results) -----------------------------------
# Cotangents follow JAX's convention: the VJP is the transpose of the JVP under Re(sum(x y)).
# numpy's eigenvectors have unit norm and an arbitrary phase; the forward fixes the phase so
# each vector's largest-modulus entry is real and positive, a gauge that is locally smooth,
# and the rules are those of that gauge (the checker is told the phase is free: ``gauge=``).
def _complex_dtype(a: Any) -> np.dtype:
    return np.result_type(dtype_of(a), np.complex64)


def _phase_fixed(v: np.ndarray) -> np.ndarray:
    """Columns of ``v`` rotated so that each one's largest-modulus entry is real positive."""
    if v.size == 0:  # no columns to rotate (argmax of an empty column would raise)
        return v
    pivot = np.take_along_axis(v, np.argmax(np.abs(v), axis=-2)[..., None, :], axis=-2)
    return v * (np.abs(pivot) / pivot)


def _pivot_mask(v: Any) -> np.ndarray:
    """A constant one-hot mask of each column's largest-modulus entry (the phase pivot)."""
    vv = np.asarray(value_of(v))
    if vv.size == 0:
        return np.zeros(vv.shape, dtype=vv.dtype)
    rows = np.argmax(np.abs(vv), axis=-2)
    return (np.arange(vv.shape[-2])[:, None] == rows[..., None, :]).astype(vv.dtype)


def _eig_forward(a: Any) -> tuple[np.ndarray, np.ndarray]:
    check_square("linalg.eig", a)
    w, v = np.linalg.eig(a)
    dt = _complex_dtype(a)
    return w.astype(dt), _phase_fixed(v.astype(dt))


def _column_sums(x: Any) -> Any:
    from gradcheck.ops.reduce import sum as sum_
    return sum_(x, axis=-2, keepdims=True)


def _gauge_jvp(dv0: Any, v: Any, unit_norm: bool) -> Any:
    """``dv0`` plus the multiple of each eigenvector that keeps the gauge: unit norm
    (``Re(v^H dv) = 0``, when ``unit_norm``) and a real pivot entry."""
    from gradcheck.ops.complex import complex_, conj, imag, real, zeros_like_real

    mask = _pivot_mask(v)
    pivot = real(_column_sums(mask * v))  # real and positive by the forward's gauge
    s = imag(_column_sums(mask * dv0)) / pivot
    r = real(_column_sums(conj(v) * dv0)) if unit_norm else zeros_like_real(s)
    return dv0 - v * complex_(r, s)


def _gauge_vjp(gv: Any, v: Any, unit_norm: bool) -> Any:
    """The transpose of :func:`_gauge_jvp` in ``dv0``."""
    from gradcheck.ops.complex import as_complex, complex_, conj, imag, real, zeros_like_real

    mask = _pivot_mask(v)
    pivot = real(_column_sums(mask * v))
    along = _column_sums(gv * v)  # sum_i gv_ik v_ik per column
    out = gv + mask * complex_(zeros_like_real(pivot), -imag(along) / pivot)
    if unit_norm:
        out = out - conj(v) * as_complex(real(along))
    return out


def _eig_jvp(ts, out, a):
    w, v = out
    from gradcheck.ops.complex import as_complex

    t = as_complex(ts[0])
    p = matmul(inv(v), matmul(t, v))
    dv0 = matmul(v, inverse_gaps(w) * p)
    return diagonal_part(p), _gauge_jvp(dv0, v, unit_norm=True)


def _eig_vjp(g, out, a):
    (gw, gv), (w, v) = g, out
    vi_t = mT(inv(v))
    gbar = _gauge_vjp(gv, v, unit_norm=True)
    inner = diag_matrix(gw) + inverse_gaps(w) * matmul(mT(v), gbar)
    return cast_cotangent(matmul(vi_t, matmul(inner, mT(v))), dtype_of(a))


def _tf_eig_order(tf: Any, a: Any) -> Any:
    raise NoEquivalent("tf.linalg.eig orders the eigenvalues differently from LAPACK's geev "
                       "(numpy's, torch's), so outputs cannot be matched position by position")


def _np_eig(np_: Any, a: Any) -> tuple[Any, Any]:
    """The framework's eig in this op's gauge (its phases are the framework's own choice)."""
    w, v = np_.linalg.eig(a)
    size = np_.abs(v)
    top = np_.max(size, axis=-2, keepdims=True)
    pivot = np_.sum(np_.where(size == top, v, 0 * v), axis=-2, keepdims=True)
    return w, v * (np_.abs(pivot) / pivot)


def _torch_eig(torch: Any, a: Any) -> tuple[Any, Any]:
    """As :func:`_np_eig`, with torch's names."""
    w, v = torch.linalg.eig(a)
    size = v.abs()
    top = size.amax(dim=-2, keepdim=True)
    pivot = torch.where(size == top, v, torch.zeros_like(v)).sum(dim=-2, keepdim=True)
    return w, v * (pivot.abs() / pivot)


eig: Op = with_named_result(define_op(
    "linalg.eig", _eig_forward, vjp=_eig_vjp, jvp=_eig_jvp, register=False,
    nout=2, family="linalg", inputs=("complex_distinct_eig",), shapes=square_shapes,
    doc="numpy.linalg.eig -> (w, v), complex, distinct eigenvalues; each eigenvector has unit "
        "norm and its largest-modulus entry real positive (numpy's phase is arbitrary).",
    gauge=((1, -1),),  # each eigenvector (a column of v) up to a phase
    # LAPACK's eig is backward stable: accurate to ulps of the largest entry, not of each
    accuracy="normwise",
    equivalents={"numpy": _np_eig, "torch": _torch_eig, "tensorflow": _tf_eig_order},
), EigResult)


def _eigvals_forward(a: Any) -> np.ndarray:
    check_square("linalg.eigvals", a)
    return np.linalg.eigvals(a).astype(_complex_dtype(a))


def _eigvals_vjp(g, out, a):
    v = eig(a)[1]  # an op: the rule differentiates again
    return cast_cotangent(matmul(mT(inv(v)), matmul(diag_matrix(g), mT(v))), dtype_of(a))


def _eigvals_jvp(ts, out, a):
    from gradcheck.ops.complex import as_complex

    v = eig(a)[1]
    return diagonal_part(matmul(inv(v), matmul(as_complex(ts[0]), v)))


eigvals: Op = define_op(
    "linalg.eigvals", _eigvals_forward, vjp=_eigvals_vjp, jvp=_eigvals_jvp,
    family="linalg", inputs=("complex_distinct_eig",), shapes=square_shapes,
    doc="numpy.linalg.eigvals (complex, distinct eigenvalues, LAPACK's order).",
    accuracy="normwise",  # as eig: LAPACK's eigenvalues are accurate norm-wise
    equivalents={"numpy": "linalg.eigvals", "torch": "linalg.eigvals",
                 "tensorflow": _tf_eig_order},
)
