"""Linear algebra, batched over leading dimensions: products, inverses and solves.

Every rule is written with registered ops (``matmul``, ``solve``,
``solve_triangular``, ``inv``, transposes and masks applied by multiplying with
constant arrays), so each derivative can be differentiated again.  The matrix
decompositions live in :mod:`gradcheck.ops.linalg_decomp`; the helpers here
(``matrix_transpose``, ``diagonal_part``, ``diag_matrix``, ...) are shared with it.
"""

from __future__ import annotations

import dataclasses
import operator
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.linalg

from gradcheck.domains import REAL, Domain, WellConditioned
from gradcheck.engine.op import Op, bind, define_op
from gradcheck.engine.registry import default_registry
from gradcheck.ops import reduce, shape
from gradcheck.ops.elementwise import zeros_like
from gradcheck.ops.refs import NoEquivalent
from gradcheck.ops.rules import cast_cotangent, dtype_of, fit, shape_of, unbroadcast
from gradcheck.ops.shape import dims

__all__ = [
    "Triangular", "named_result", "NamedResultOp", "with_named_result", "SlogdetResult",
    "matrix_transpose", "diagonal_part", "diag_matrix", "eye_like", "column",
    "uncolumn", "check_square", "small_batch", "square_shapes", "matrix_shapes",
    "matmul", "dot", "outer", "inv", "det", "slogdet", "solve", "solve_triangular", "pinv",
]

#: Names exported in gradcheck.numpy and gradcheck.numpy.linalg.
NUMPY = ["matmul", "dot", "outer"]
# solve_triangular is scipy.linalg's; it is listed here so that it has a public home.
LINALG = ["inv", "det", "slogdet", "solve", "solve_triangular", "pinv"]


# -- input domain -------------------------------------------------------------------------
@dataclass(frozen=True, repr=False)
class Triangular(Domain):
    """Square (..., n, n) matrices whose lower and upper triangles are both well conditioned.

    Diagonal magnitudes lie in [1, 2] (positive with ``positive_diagonal``, like a
    Cholesky factor), off-diagonal entries are N(0, 0.3**2).  The other triangle is
    random, not zero, so a triangular op that reads it by mistake is caught.
    """

    positive_diagonal: bool = False

    def sample(self, rng: np.random.Generator, shape: tuple[int, ...], dtype: Any,
               scale: float = 1.0, context: dict[str, Any] | None = None) -> np.ndarray:
        *batch, m, n = shape
        if m != n:
            raise ValueError(f"Triangular: needs square matrices, got shape {tuple(shape)}")
        out = np.empty(shape)
        for idx in np.ndindex(*batch):
            x = 0.3 * rng.standard_normal((n, n))
            d = rng.uniform(1.0, 2.0, n)
            if not self.positive_diagonal:
                d = d * rng.choice([-1.0, 1.0], n)
            x[np.diag_indices(n)] = d
            out[idx] = x
        return (out * max(scale, 1e-2)).astype(dtype)

    def describe(self) -> str:
        kind = "positive diagonal" if self.positive_diagonal else "nonzero diagonal"
        return f"well-conditioned triangles, {kind}"


# -- numpy 2's named results ---------------------------------------------------------------
def named_result(name: str, fields: tuple[str, ...]) -> type[tuple]:
    """A tuple type whose items are also attributes, like numpy 2's ``SlogdetResult``.

    Not a ``namedtuple``: gradcheck's pytree keeps a namedtuple whole as one leaf, while
    this type is flattened item by item like any tuple (and rebuilt from an iterable).
    """
    def __repr__(self: tuple) -> str:
        return f"{name}({', '.join(f'{k}={v!r}' for k, v in zip(fields, self, strict=True))})"

    body: dict[str, Any] = {"__slots__": (), "__repr__": __repr__, "__module__": __name__,
                            "__doc__": f"{name}({', '.join(fields)}): numpy 2's named result."}
    for i, field in enumerate(fields):
        body[field] = property(operator.itemgetter(i), doc=f"item {i}")
    return type(name, (tuple,), body)


SlogdetResult = named_result("SlogdetResult", ("sign", "logabsdet"))


class NamedResultOp(Op):
    """An op of several outputs whose call returns them as its ``result`` type."""

    result: type[tuple] = tuple  # a class attribute, set per op by with_named_result

    def __call__(self, *args: Any, **params: Any) -> Any:
        return self.result(bind(self, *args, **params))


def with_named_result(op: Op, result: type[tuple], kind: type[NamedResultOp] = NamedResultOp
                      ) -> Any:
    """``op`` (defined with ``register=False``) as a ``kind`` returning ``result``,
    registered."""
    named = kind(**{f.name: getattr(op, f.name) for f in dataclasses.fields(op) if f.init})
    named.result = result
    default_registry.add(named)
    return named


# -- helpers for rules (all differentiable) -----------------------------------------------
def matrix_transpose(x: Any) -> Any:
    """Swap the last two axes (numpy's ``matrix_transpose``), as a registered op."""
    nd = len(shape_of(x))
    return shape.transpose(x, axes=tuple(range(nd - 2)) + (nd - 1, nd - 2))


mT = matrix_transpose


def eye_like(x: Any, n: int | None = None) -> np.ndarray:
    """A constant identity of size ``n`` (default: x's last dimension) in x's dtype."""
    return np.eye(shape_of(x)[-1] if n is None else n, dtype=dtype_of(x))


def diagonal_part(x: Any) -> Any:
    """The diagonals of a stack of square matrices, shape (..., n)."""
    return reduce.sum(x * eye_like(x), axis=-1)


def diag_matrix(v: Any) -> Any:
    """Square matrices with ``v`` (shape (..., n)) on the diagonal."""
    s = shape_of(v)
    return shape.reshape(v, s[:-1] + (1, s[-1])) * eye_like(v)


def column(x: Any) -> Any:
    """Append a unit axis: a stack of vectors as a stack of one-column matrices."""
    return shape.reshape(x, shape_of(x) + (1,))


def uncolumn(x: Any) -> Any:
    """Drop the trailing unit axis added by :func:`column`."""
    return shape.reshape(x, shape_of(x)[:-1])


def check_square(op: str, a: Any, name: str = "a") -> None:
    """Raise a ValueError naming ``op`` unless ``a`` is a stack of square matrices."""
    s = np.shape(a)
    if len(s) < 2 or s[-1] != s[-2]:
        raise ValueError(f"{op}: {name} must have shape (..., n, n), got {s}")


def _sum_to(g: Any, target: tuple[int, ...], dtype: Any) -> Any:
    """Sum ``g`` over broadcast dimensions down to shape ``target`` and cast to ``dtype``."""
    gs = shape_of(g)
    lead = len(gs) - len(target)
    axes = tuple(range(lead)) + tuple(
        i + lead for i, d in enumerate(target) if d == 1 and gs[i + lead] != 1)
    if axes:
        g = reduce.sum(g, axis=axes)
    if shape_of(g) != target:
        g = shape.reshape(g, target)
    return g if dtype_of(g) == dtype else cast_cotangent(g, dtype)


# The shape drawers below take a stratum's ``form`` (see gradcheck.checker.sampling.FORMS):
# ``"long"``, one matrix with a side of 5 or more; ``"vector"``, a plain vector where the op
# takes one, else one matrix of sides 2 to 4; ``"deep"``, two batch dimensions (4 in all).
#: The largest side of a long square matrix: its Jacobian has side**4 entries.
LONG_SQUARE = 6


def small_batch(draw: Any, form: str | None = None) -> tuple[int, ...]:
    """A batch shape for matrix ops: up to two dimensions of size 1 or 2 (cheap Jacobians);
    none in the long and vector forms, two in the deep one."""
    from hypothesis import strategies as st

    if form in ("long", "vector"):
        return ()
    if form == "deep":
        return (draw(st.integers(1, 2)), draw(st.integers(1, 2)))
    return tuple(draw(st.lists(st.integers(1, 2), max_size=2)))


def _side(draw: Any, form: str | None, long: int | None = None) -> int:
    """A matrix side: 5 to ``long`` (the sampler's longest axis by default) in the long
    form, 2 to 4 in the vector form, 2 or 3 in the deep one (beside its batch), 1 to 4
    otherwise."""
    from hypothesis import strategies as st

    from gradcheck.ops.forms import LONG

    if form == "long":
        return draw(st.integers(LONG[0], long or LONG[1]))
    if form == "deep":
        return draw(st.integers(2, 3))
    return draw(st.integers(2 if form == "vector" else 1, 4))


def square_shapes(draw: Any, form: str | None = None) -> list[tuple[int, ...]]:
    """Shapes of one input: a small batch of n x n matrices, n <= 4 (one of n <= 6 in the
    long form)."""
    n = _side(draw, form, LONG_SQUARE)
    return [small_batch(draw, form) + (n, n)]


def matrix_shapes(draw: Any, form: str | None = None) -> list[tuple[int, ...]]:
    """Shapes of one input: a small batch of m x n matrices (tall, square or wide); in the
    long form one matrix, tall or wide, with one long side."""
    from hypothesis import strategies as st

    if form == "long":
        sides = [_side(draw, form), draw(st.integers(1, 3))]
        return [tuple(sides[::-1] if draw(st.booleans()) else sides)]
    return [small_batch(draw, form) + (_side(draw, form), _side(draw, form))]


# -- matmul, dot, outer ------------------------------------------------------------------
def _matmul_forward(x: Any, y: Any) -> Any:
    if np.ndim(x) == 0 or np.ndim(y) == 0:
        raise ValueError(f"matmul: inputs must have at least one dimension, got shapes "
                         f"{np.shape(x)} and {np.shape(y)} (use multiply for scalars)")
    return np.matmul(x, y)


def _as_matrices(g: Any, x: Any, y: Any) -> tuple[Any, tuple[int, ...], tuple[int, ...]]:
    """numpy's 1-D promotion: g reshaped to the (..., m, n) product of the promoted x and y."""
    xs, ys = shape_of(x), shape_of(y)
    x2 = xs if len(xs) > 1 else (1,) + xs
    y2 = ys if len(ys) > 1 else ys + (1,)
    out2 = np.broadcast_shapes(x2[:-2], y2[:-2]) + (x2[-2], y2[-1])
    return (g if shape_of(g) == out2 else shape.reshape(g, out2)), x2, y2


def _matmul_ct(ct2: Any, x: Any, x2: tuple[int, ...]) -> Any:
    """Reduce a promoted cotangent to x's own shape (undoing 1-D promotion and broadcasting)."""
    ct = _sum_to(ct2, x2, dtype_of(x))
    return ct if x2 == shape_of(x) else shape.reshape(ct, shape_of(x))


def _matmul_vjp_x(g, out, x, y):
    g2, x2, y2 = _as_matrices(g, x, y)
    yy = y if len(shape_of(y)) > 1 else shape.reshape(y, y2)
    return _matmul_ct(matmul(g2, mT(yy)), x, x2)


def _matmul_vjp_y(g, out, x, y):
    g2, x2, y2 = _as_matrices(g, x, y)
    xx = x if len(shape_of(x)) > 1 else shape.reshape(x, x2)
    return _matmul_ct(matmul(mT(xx), g2), y, y2)


def _matmul_shapes(draw: Any, form: str | None = None) -> list[tuple[int, ...]]:
    """In the long form a long contraction, in the vector form two vectors."""
    from hypothesis import strategies as st

    if form == "long":
        k = _side(draw, form)
        return [(draw(st.integers(1, 3)), k), (k, draw(st.integers(1, 3)))]
    if form == "vector":
        k = draw(st.integers(2, 8))
        return [(k,), (k,)]
    m, k, n = (draw(st.integers(1, 4)) for _ in range(3))
    batch = small_batch(draw, form)
    if form == "deep":
        return [batch + (m, k), batch + (k, n)]
    kind = draw(st.sampled_from(["batched", "broadcast", "vector-right", "vector-left",
                                 "vectors", "empty"]))
    if kind == "broadcast":  # a batch of matrices times one matrix
        return [batch + (m, k), (k, n)]
    if kind == "vector-right":
        return [batch + (m, k), (k,)]
    if kind == "vector-left":
        return [(k,), batch + (k, n)]
    if kind == "vectors":
        return [(k,), (k,)]
    if kind == "empty":  # a zero-size contraction: the product is all zeros
        return [batch + (m, 0), (0, n)]
    return [batch + (m, k), batch + (k, n)]


def _tf_matmul(tf: Any, x: Any, y: Any) -> Any:
    # tf.linalg.matmul broadcasts batches but takes matrices: numpy's 1-D promotion around it
    xv, yv = len(dims(x)) == 1, len(dims(y)) == 1
    out = tf.linalg.matmul(x[None] if xv else x, y[:, None] if yv else y)
    if yv:  # drop the promoted column
        out = out[..., 0]
    if xv:  # and the promoted row
        out = out[..., 0] if yv else out[..., 0, :]
    return out


matmul: Op = define_op(
    "matmul", _matmul_forward,
    vjp=(_matmul_vjp_x, _matmul_vjp_y),
    jvp=(lambda t, out, x, y: matmul(t, y), lambda t, out, x, y: matmul(x, t)),
    family="linalg", inputs=(REAL, REAL), shapes=_matmul_shapes,
    complex_inputs=("complex", "complex"),
    doc="numpy.matmul: batched matrix product; 1-D operands are promoted as in numpy.",
    equivalents={"numpy": "matmul", "tensorflow": _tf_matmul},
)


def _dot_forward(a: Any, b: Any) -> Any:
    if np.ndim(a) and np.ndim(b) and np.shape(a)[-1] != np.shape(b)[max(np.ndim(b) - 2, 0)]:
        raise ValueError(f"dot: shapes {np.shape(a)} and {np.shape(b)} are not aligned "
                         "(last axis of a against the second-to-last of b)")
    return np.asarray(np.dot(a, b))


def _dot_2d(a: Any, b: Any) -> tuple[Any, Any, tuple[int, ...]]:
    """np.dot(a, b) as a (P, k) @ (k, Q) product: the flattened a and b, and b's axis order."""
    sa, sb = shape_of(a), shape_of(b)
    k = sa[-1]
    a2 = shape.reshape(a, (int(np.prod(sa[:-1], dtype=np.int64)), k))
    if len(sb) == 1:
        return a2, shape.reshape(b, (k, 1)), (0,)
    perm = (len(sb) - 2,) + tuple(i for i in range(len(sb)) if i != len(sb) - 2)
    q = int(np.prod([sb[i] for i in perm[1:]], dtype=np.int64))
    return a2, shape.reshape(shape.transpose(b, axes=perm), (k, q)), perm


def _dot_vjp(g, out, a, b):
    if not np.ndim(a) or not np.ndim(b):  # a scalar operand: dot is multiply
        return unbroadcast(g * b, a), unbroadcast(g * a, b)
    a2, b2, perm = _dot_2d(a, b)
    g2 = shape.reshape(g, (shape_of(a2)[0], shape_of(b2)[1]))
    ga = shape.reshape(matmul(g2, mT(b2)), shape_of(a))
    gb2 = matmul(mT(a2), g2)
    sb = shape_of(b)
    if len(sb) == 1:
        gb = shape.reshape(gb2, sb)
    else:
        gb = shape.reshape(gb2, tuple(sb[i] for i in perm))
        gb = shape.transpose(gb, axes=tuple(int(i) for i in np.argsort(perm)))
    return unbroadcast(ga, a), unbroadcast(gb, b)


def _dot_shapes(draw: Any, form: str | None = None) -> list[tuple[int, ...]]:
    """In the long form a long contraction, in the vector form two vectors, in the deep
    form a 4-d a."""
    from hypothesis import strategies as st

    m, k, n = (draw(st.integers(1, 3)) for _ in range(3))
    if form == "long":
        k = _side(draw, form)
        return [(m, k), (k, n)]
    if form == "vector":
        k = draw(st.integers(2, 8))
        return [(k,), (k,)]
    if form == "deep":
        return [(2, draw(st.integers(1, 2)), m, k), (k, n)]
    return draw(st.sampled_from([
        [(k,), (k,)], [(m, k), (k,)], [(m, k), (k, n)], [(k,), (k, n)],
        [(2, m, k), (n, k, 2)],  # N-d: a sum over a's last and b's second-to-last axis
        [(), (m, k)], [(m, k), ()],
    ]))


def _tf_dot(tf: Any, a: Any, b: Any) -> Any:
    na, nb = len(dims(a)), len(dims(b))
    if not na or not nb:  # a scalar operand: dot is multiply
        return a * b
    # numpy's dot sums a's last axis against b's second-to-last (its only axis if 1-D)
    return tf.tensordot(a, b, axes=[[na - 1], [max(nb - 2, 0)]])


dot: Op = define_op(
    "dot", _dot_forward,
    vjp=_dot_vjp,
    jvp=(lambda t, out, a, b: dot(t, b), lambda t, out, a, b: dot(a, t)),
    family="linalg", inputs=(REAL, REAL), shapes=_dot_shapes,
    complex_rules=True,
    doc="numpy.dot: sum product over a's last axis and b's second-to-last (N-d, not batched).",
    equivalents={"numpy": "dot", "tensorflow": _tf_dot},
)


def _outer_vjp(g, out, a, b):
    a1 = shape.reshape(a, (-1,)) if shape_of(a) != () else shape.reshape(a, (1,))
    b1 = shape.reshape(b, (-1,)) if shape_of(b) != () else shape.reshape(b, (1,))
    return (unbroadcast(shape.reshape(matmul(g, b1), shape_of(a)), a),
            unbroadcast(shape.reshape(matmul(a1, g), shape_of(b)), b))


def _outer_shapes(draw: Any, form: str | None = None) -> list[tuple[int, ...]]:
    """In the long form a long vector beside a short one, in the vector form two vectors,
    in the deep form a 4-d a (outer flattens its inputs)."""
    from hypothesis import strategies as st

    from gradcheck.ops.forms import formed_shape

    if form is not None:
        a, b = formed_shape(draw, form, 1, 4), (draw(st.integers(1, 3)),)
        if form == "vector":
            b = (draw(st.integers(2, 8)),)
        return [a, b] if form != "long" or draw(st.booleans()) else [b, a[-1:]]
    dims = st.lists(st.sampled_from([1, 2, 3, 0]), max_size=2).map(tuple)  # shrinks to 1
    return [draw(dims), draw(dims)]


outer: Op = define_op(
    "outer", lambda a, b: np.outer(a, b),
    vjp=_outer_vjp,
    jvp=(lambda t, out, a, b: outer(t, b), lambda t, out, a, b: outer(a, t)),
    family="linalg", inputs=(REAL, REAL), shapes=_outer_shapes,
    complex_rules=True,
    doc="numpy.outer: the outer product of the flattened inputs.",
    equivalents={
        "numpy": "outer",
        # autograd's outer rule needs vectors (numpy flattens the inputs anyway)
        "autograd": lambda anp, a, b: anp.outer(anp.ravel(a), anp.ravel(b)),
        "tensorflow": lambda tf, a, b: tf.tensordot(tf.reshape(a, [-1]), tf.reshape(b, [-1]),
                                                    axes=0),
    },
)


# -- inverse and determinants -------------------------------------------------------------
def _inv_forward(a: Any) -> Any:
    check_square("linalg.inv", a)
    return np.linalg.inv(a)


inv: Op = define_op(
    "linalg.inv", _inv_forward,
    vjp=lambda g, out, a: -matmul(mT(out), matmul(g, mT(out))),
    jvp=lambda ts, out, a: -matmul(out, matmul(ts[0], out)),
    family="linalg", inputs=(WellConditioned(),), shapes=square_shapes,
    complex_inputs=("complex_well_conditioned",),
    reference=np.linalg.inv, doc="numpy.linalg.inv: the inverse of each square matrix.",
    equivalents={"numpy": "linalg.inv", "tensorflow": "linalg.inv"},
)


def _scalar_per_matrix(s: Any) -> Any:
    """(...,) -> (..., 1, 1), to scale a stack of matrices."""
    return shape.reshape(s, shape_of(s) + (1, 1))


def _det_forward(a: Any) -> Any:
    check_square("linalg.det", a)
    return np.asarray(np.linalg.det(a))


def _logdet_jvp(t: Any, a: Any) -> Any:
    """d log|det a| along t: trace(inv(a) t)."""
    return reduce.sum(mT(inv(a)) * t, axis=(-2, -1))


det: Op = define_op(
    "linalg.det", _det_forward,
    vjp=lambda g, out, a: _scalar_per_matrix(g * out) * mT(inv(a)),
    jvp=lambda ts, out, a: out * _logdet_jvp(ts[0], a),
    family="linalg", inputs=(WellConditioned(),), shapes=square_shapes,
    complex_inputs=("complex_well_conditioned",),
    reference=np.linalg.det, doc="numpy.linalg.det: the determinant of each square matrix.",
    equivalents={"numpy": "linalg.det", "tensorflow": "linalg.det"},
)


def _tf_slogdet(tf: Any, a: Any) -> tuple[Any, Any]:
    """TensorFlow's slogdet; of a complex matrix its log|det| comes complex (a zero imaginary
    part), numpy's real."""
    sign, logabsdet = tf.linalg.slogdet(a)
    return sign, tf.math.real(logabsdet) if logabsdet.dtype.is_complex else logabsdet


def _slogdet_forward(a: Any) -> tuple[Any, Any]:
    check_square("linalg.slogdet", a)
    sign, logabsdet = np.linalg.slogdet(a)
    return np.asarray(sign), np.asarray(logabsdet)


def _slogdet_vjp(g: Any, out: Any, a: Any) -> Any:
    if dtype_of(a).kind != "c":  # the sign is locally constant: g[0] contributes nothing
        return _scalar_per_matrix(g[1]) * mT(inv(a))
    # tau = trace(inv(a) da): d log|det| = Re tau, d sign = sign * i Im tau; transposed
    # under Re(x y): (g[1] + i Im(g[0] sign)) inv(a)^T
    from gradcheck.ops.complex import complex_, imag
    return _scalar_per_matrix(complex_(g[1], imag(g[0] * out[0]))) * mT(inv(a))


def _slogdet_jvp(ts: Any, out: Any, a: Any) -> Any:
    tau = _logdet_jvp(ts[0], a)
    if dtype_of(a).kind != "c":
        return zeros_like(out[0]), tau
    from gradcheck.ops.complex import complex_, imag, real, zeros_like_real
    return out[0] * complex_(zeros_like_real(tau), imag(tau)), real(tau)


slogdet: Op = with_named_result(define_op(
    "linalg.slogdet", _slogdet_forward, vjp=_slogdet_vjp, jvp=_slogdet_jvp, register=False,
    nout=2, family="linalg", inputs=(WellConditioned(),), shapes=square_shapes,
    complex_inputs=("complex_well_conditioned",),
    doc="numpy.linalg.slogdet: (sign, log|det|) of each square matrix; the sign has zero "
        "derivative.",
    equivalents={"numpy": lambda np_, a: tuple(np_.linalg.slogdet(a)),
                 "tensorflow": _tf_slogdet},
), SlogdetResult)


# -- solves -------------------------------------------------------------------------------
def _solve_forward(a: Any, b: Any) -> Any:
    check_square("linalg.solve", a)
    n, sb = np.shape(a)[-1], np.shape(b)
    row = sb[0] if len(sb) == 1 else (sb[-2] if len(sb) >= 2 else None)
    if row != n:
        raise ValueError(f"linalg.solve: b must have shape ({n},) or (..., {n}, k) for a of "
                         f"shape {np.shape(a)}, got {sb}")
    return np.linalg.solve(a, b)


def _solve_vjp(g, out, a, b):
    vec = len(shape_of(b)) == 1  # numpy 2: a 1-D b is one vector, otherwise matrices
    g2, x2 = (column(g), column(out)) if vec else (g, out)
    gb2 = solve(mT(a), g2)
    ga = unbroadcast(-matmul(gb2, mT(x2)), a)
    return ga, unbroadcast(uncolumn(gb2) if vec else gb2, b)


def _solve_jvp_a(t, out, a, b):
    vec = len(shape_of(b)) == 1
    dx = -solve(a, matmul(t, column(out) if vec else out))
    return fit(uncolumn(dx) if vec else dx, out)


def _rhs_shapes(draw: Any, form: str | None = None) -> list[tuple[int, ...]]:
    """A square stack and a right-hand side: a vector, a stack, or broadcast either way; in
    the long form one long matrix and columns, in the vector form one matrix and a vector,
    in the deep form a batch of two dimensions."""
    from hypothesis import strategies as st

    n = _side(draw, form, LONG_SQUARE)
    k = draw(st.sampled_from([1, 2, 3, 0]))  # k = 0: no columns
    batch = small_batch(draw, form)
    if form == "long":
        return [(n, n), (n, max(k, 1))]
    if form == "vector":
        return [(n, n), (n,)]
    if form == "deep":
        return [batch + (n, n), batch + (n, k)]
    kind = draw(st.sampled_from(["matrix", "vector", "a-broadcast", "b-broadcast"]))
    if kind == "vector":
        return [batch + (n, n), (n,)]
    if kind == "a-broadcast":
        return [(n, n), batch + (n, k)]
    if kind == "b-broadcast":
        return [batch + (n, n), (n, k)]
    return [batch + (n, n), batch + (n, k)]


def _ag_solve(anp: Any, a: Any, b: Any) -> Any:
    vector = len(dims(b)) == 1
    if (vector and dims(a)[:-2]) or (not vector and dims(a)[:-2] != dims(b)[:-2]):
        raise NoEquivalent("autograd's solve rule cannot broadcast a against b, nor solve a "
                           "batch of matrices for one vector")
    return anp.linalg.solve(a, b)


def tf_solver(tf: Any, solve: Any, a: Any, b: Any) -> Any:
    """``solve(a, b)`` (a TensorFlow solver) with numpy's conventions: a 1-D b is one vector,
    else batches broadcast (TensorFlow's solvers broadcast neither)."""
    if len(dims(b)) == 1:
        out = solve(a, tf.broadcast_to(tf.reshape(b, (-1, 1)), dims(a)[:-2] + (dims(b)[0], 1)))
        return tf.squeeze(out, -1)
    batch = np.broadcast_shapes(dims(a)[:-2], dims(b)[:-2])
    return solve(tf.broadcast_to(a, batch + dims(a)[-2:]), tf.broadcast_to(b, batch + dims(b)[-2:]))


solve: Op = define_op(
    "linalg.solve", _solve_forward,
    vjp=_solve_vjp,
    jvp=(_solve_jvp_a, lambda t, out, a, b: fit(solve(a, t), out)),
    family="linalg", inputs=(WellConditioned(), REAL), shapes=_rhs_shapes,
    complex_inputs=("complex_well_conditioned", "complex"),
    doc="numpy.linalg.solve: x with a @ x = b; b is a vector if 1-D, else a stack of matrices.",
    equivalents={"numpy": "linalg.solve", "autograd": _ag_solve,
                 "tensorflow": lambda tf, a, b: tf_solver(tf, tf.linalg.solve, a, b)},
)


def _trans_flag(trans: Any) -> int:
    flags = {0: 0, 1: 1, 2: 1, "N": 0, "T": 1, "C": 1}  # real matrices: 'C' is 'T'
    if trans not in flags:
        raise ValueError(f"linalg.solve_triangular: trans must be 0, 1, 2, 'N', 'T' or 'C', "
                         f"got {trans!r}")
    return flags[trans]


def _triangle(a: Any, lower: bool, unit_diagonal: bool) -> np.ndarray:
    """The constant mask of the entries of ``a`` that a triangular solve reads."""
    n = shape_of(a)[-1]
    ones = np.ones((n, n), dtype=dtype_of(a))
    mask = np.tril(ones) if lower else np.triu(ones)
    return mask - np.eye(n, dtype=mask.dtype) if unit_diagonal else mask


def _solve_triangular_forward(a, b, trans=0, lower=False, unit_diagonal=False):
    check_square("linalg.solve_triangular", a)
    _trans_flag(trans)
    out_shape = _solve_triangular_shape(np.shape(a), np.shape(b))
    if 0 in out_shape[:-1]:  # scipy refuses zero-size batches: the solution is as empty
        one = scipy.linalg.solve_triangular(np.eye(1, dtype=np.asarray(a).dtype),
                                            np.ones(1, dtype=np.asarray(b).dtype))
        return np.zeros(out_shape, dtype=one.dtype)
    return np.asarray(scipy.linalg.solve_triangular(
        a, b, trans=trans, lower=lower, unit_diagonal=unit_diagonal))


def _solve_triangular_shape(sa: tuple[int, ...], sb: tuple[int, ...]) -> tuple[int, ...]:
    """The solution's shape: b is one vector if 1-D, else a stack of (n, k) matrices whose
    batch broadcasts against a's."""
    n = sa[-1]
    if len(sb) == 1 and sb[0] == n:
        return sa[:-2] + (n,)
    if len(sb) < 2 or sb[-2] != n:
        raise ValueError(f"linalg.solve_triangular: b must have shape ({n},) or (..., {n}, k) "
                         f"for a of shape {sa}, got {sb}")
    try:
        return np.broadcast_shapes(sa[:-2], sb[:-2]) + sb[-2:]
    except ValueError:
        raise ValueError(f"linalg.solve_triangular: the batch shapes of a {sa} and b {sb} "
                         "do not broadcast") from None


def _solve_triangular_vjp(g, out, a, b, trans=0, lower=False, unit_diagonal=False):
    t = _trans_flag(trans)
    vec = len(shape_of(b)) == 1
    g2, x2 = (column(g), column(out)) if vec else (g, out)
    gb2 = solve_triangular(a, g2, trans=1 - t, lower=lower, unit_diagonal=unit_diagonal)
    ga = -(matmul(gb2, mT(x2)) if t == 0 else matmul(x2, mT(gb2)))
    ga = unbroadcast(ga * _triangle(a, lower, unit_diagonal), a)
    return ga, unbroadcast(uncolumn(gb2) if vec else gb2, b)


def _solve_triangular_jvp_a(ta, out, a, b, trans=0, lower=False, unit_diagonal=False):
    t = _trans_flag(trans)
    vec = len(shape_of(b)) == 1
    da = ta * _triangle(a, lower, unit_diagonal)
    rhs = matmul(da if t == 0 else mT(da), column(out) if vec else out)
    dx = -solve_triangular(a, rhs, trans=t, lower=lower, unit_diagonal=unit_diagonal)
    return fit(uncolumn(dx) if vec else dx, out)


def _ag_solve_triangular(anp: Any, a: Any, b: Any, trans: Any = 0, lower: bool = False,
                         unit_diagonal: bool = False) -> Any:
    import autograd.scipy.linalg

    if len(dims(a)) > 2 or len(dims(b)) > 2:
        raise NoEquivalent("autograd's solve_triangular rule handles single matrices, not "
                           "batches")
    return autograd.scipy.linalg.solve_triangular(a, b, trans=trans, lower=lower,
                                                  unit_diagonal=unit_diagonal)


def _tf_solve_triangular(tf: Any, a: Any, b: Any, trans: Any = 0, lower: bool = False,
                         unit_diagonal: bool = False) -> Any:
    adjoint = _trans_flag(trans) == 1
    if unit_diagonal:  # TensorFlow has no unit-diagonal flag: put ones on the diagonal
        n = dims(a)[-1]
        a = a * tf.constant(1.0 - np.eye(n), dtype=a.dtype) + tf.eye(n, dtype=a.dtype)
    return tf_solver(tf, lambda m, r: tf.linalg.triangular_solve(m, r, lower=lower,
                                                                 adjoint=adjoint), a, b)


solve_triangular: Op = define_op(
    "linalg.solve_triangular", _solve_triangular_forward,
    vjp=_solve_triangular_vjp,
    jvp=(_solve_triangular_jvp_a,
         lambda t, out, a, b, **p: fit(solve_triangular(a, t, **p), out)),
    family="linalg", inputs=(Triangular(), REAL), shapes=_rhs_shapes,
    params={"lower": [True, False], "trans": [0, 1], "unit_diagonal": [False, True]},
    doc="scipy.linalg.solve_triangular, batched: x with op(A) x = b for the lower or upper "
        "triangle A of a (op: transpose when trans); the other triangle is never read.",
    # numpy has no triangular solve (scipy.linalg's is autograd.scipy.linalg's)
    equivalents={"autograd": _ag_solve_triangular, "tensorflow": _tf_solve_triangular},
)


# -- pseudo-inverse -----------------------------------------------------------------------
def _pinv_forward(a: Any) -> Any:
    if np.ndim(a) < 2:
        raise ValueError(f"linalg.pinv: a must have shape (..., m, n), got {np.shape(a)}")
    return np.linalg.pinv(a)


def _pinv_projectors(out: Any, a: Any) -> tuple[Any, Any]:
    """(I - A A+, I - A+ A): zero for square a, one of them zero for full-rank a."""
    return (eye_like(a, shape_of(a)[-2]) - matmul(a, out),
            eye_like(a) - matmul(out, a))


def _pinv_vjp(g, out, a):
    left, right = _pinv_projectors(out, a)
    p_t, g_t = mT(out), mT(g)
    return (-matmul(p_t, matmul(g, p_t))
            + matmul(left, matmul(g_t, matmul(out, p_t)))
            + matmul(matmul(p_t, out), matmul(g_t, right)))


def _pinv_jvp(ts, out, a):
    left, right = _pinv_projectors(out, a)
    t_t, p_t = mT(ts[0]), mT(out)
    return (-matmul(out, matmul(ts[0], out))
            + matmul(matmul(out, p_t), matmul(t_t, left))
            + matmul(right, matmul(t_t, matmul(p_t, out))))


pinv: Op = define_op(
    "linalg.pinv", _pinv_forward,
    vjp=_pinv_vjp, jvp=_pinv_jvp,
    family="linalg", inputs=(WellConditioned(),), shapes=matrix_shapes,
    reference=np.linalg.pinv,
    accuracy="normwise",  # numpy's pinv is svd's: accurate norm-wise (see svd)
    doc="numpy.linalg.pinv for full-rank matrices (the derivative of the constant-rank "
        "pseudo-inverse; it does not exist where the rank changes).",
    equivalents={"numpy": "linalg.pinv", "tensorflow": "linalg.pinv"},
)
