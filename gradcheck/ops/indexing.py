"""Index-driven ops: take / scatter_add, triangles, diagonals, trace and einsum.

``take``'s VJP is ``scatter_add`` and ``scatter_add``'s VJP in its updates is
``take``, so the pair differentiates to any order; ``diagonal`` and ``trace``
put their cotangent back on a diagonal with ``scatter_index``.  ``einsum`` is
a variadic op whose VJP is einsum again with the subscripts rearranged.
Except for einsum (multilinear) every op here is linear.
"""

from __future__ import annotations

import string
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from gradcheck.domains import REAL, Domain
from gradcheck.engine.op import define_op
from gradcheck.engine.tensor import is_float, value_of
from gradcheck.ops.refs import NoEquivalent, formula
from gradcheck.ops.rules import fit, shape_of, unbroadcast
from gradcheck.ops.shape import (
    dims,
    draw_shape,
    moveaxis,
    pick,
    reshape,
    scatter_index,
    tf_constant,
)

#: Names exported in gradcheck.numpy (and other namespaces below).
NUMPY = ["take", "scatter_add", "triu", "tril", "diagonal", "trace", "einsum"]
NN = ["gather"]


# -- take and scatter_add --------------------------------------------------------------------
@dataclass(frozen=True, repr=False)
class AxisIndices(Domain):
    """Integer indices, negative ones too, into input 0 along the ``axis`` parameter.

    ``axis`` None indexes the flattened input, as numpy's ``take`` does.
    """

    differentiable = False

    def sample(self, rng: np.random.Generator, shape: tuple[int, ...], dtype: Any,
               scale: float = 1.0, context: dict[str, Any] | None = None) -> np.ndarray:
        ctx = context or {}
        base = ctx.get("shapes", [()])[0]
        axis = ctx.get("params", {}).get("axis", 0)
        n = int(np.prod(base, dtype=np.int64)) if axis is None else base[axis]
        if n == 0 and int(np.prod(shape, dtype=np.int64)):
            raise ValueError(f"AxisIndices: cannot draw indices of shape {shape} into an empty "
                             f"axis of an array of shape {base}")
        return rng.integers(-n, max(n, 1), shape).astype(np.int64)

    def describe(self) -> str:
        return "indices along axis"


def _indices(op: str, indices: Any) -> np.ndarray:
    indices = value_of(indices)
    idx = np.asarray(indices)
    if idx.size == 0 and isinstance(indices, (list, tuple)):
        idx = idx.astype(np.intp)  # numpy reads an empty list as no indices, not as floats
    if idx.dtype.kind not in "iu":
        raise TypeError(f"{op}: indices must be integers, got dtype {idx.dtype}")
    return idx


def _axis_length(op: str, shape: tuple[int, ...], axis: Any) -> tuple[int | None, int]:
    """The normalized axis (None: flattened) and the length indices run over."""
    if axis is None:
        return None, int(np.prod(shape, dtype=np.int64))
    if not -len(shape) <= axis < len(shape):
        raise ValueError(f"{op}: axis {axis} is out of bounds for an array of dimension "
                         f"{len(shape)}")
    ax = int(axis) % len(shape)
    return ax, shape[ax]


def _resolved(indices: Any, n: int, mode: str) -> np.ndarray:
    """The in-range positions ``take`` read for ``indices`` in ``mode``."""
    idx = _indices("take", indices)
    if mode == "wrap":
        return np.mod(idx, max(n, 1))
    if mode == "clip":
        return np.clip(idx, 0, max(n - 1, 0))
    return idx


def _take_forward(a, indices, axis=None, mode="raise"):
    if mode not in ("raise", "wrap", "clip"):
        raise ValueError(f"take: mode must be 'raise', 'wrap' or 'clip', got {mode!r}")
    return np.take(a, _indices("take", indices), axis=axis, mode=mode)


def _take_vjp(g, out, a, indices, axis=None, mode="raise"):
    from gradcheck.ops.elementwise import zeros_like

    _, n = _axis_length("take", shape_of(a), axis)
    return scatter_add(zeros_like(a), _resolved(indices, n, mode), g, axis=axis)


def _take_shapes(draw, form=None):
    return [draw_shape(draw, 0, 3, min_side=1, form=form), draw_shape(draw, 0, 2, max_side=3)]


def _axis_or_none(shapes):
    nd = len(shapes[0])
    return [None] + list(range(nd)) + [-1] * (nd > 0)


def _ag_take(anp: Any, a: Any, indices: Any, axis: Any = None, mode: str = "raise") -> Any:
    source = anp.ravel(a) if axis is None else a
    ax = 0 if axis is None else int(axis) % max(len(dims(a)), 1)
    return source[(slice(None),) * ax + (_resolved(indices, dims(source)[ax], mode),)]


def _tf_take(tf: Any, a: Any, indices: Any, axis: Any = None, mode: str = "raise") -> Any:
    source = tf.reshape(a, [-1]) if axis is None else a
    ax = 0 if axis is None else int(axis) % max(len(dims(a)), 1)
    n = dims(source)[ax]
    # tf.gather has no modes and no negative indices: numpy's positions (a constant)
    idx = tf_constant(tf, indices, np.int64)
    idx = np.clip(idx, 0, max(n - 1, 0)) if mode == "clip" else np.mod(idx, max(n, 1))
    return tf.gather(source, tf.constant(idx), axis=ax)


take = define_op(
    "take", _take_forward, vjp=(_take_vjp, None), linear=True, family="indexing",
    inputs=(REAL, AxisIndices()), nondiff_argnums=(1,), shapes=_take_shapes,
    params={"axis": _axis_or_none, "mode": ["raise", "wrap", "clip"]},
    doc="numpy.take: elements of ``a`` at ``indices`` along ``axis`` (None: flattened).",
    equivalents={"numpy": "take", "tensorflow": _tf_take,
                 "autograd": formula(_ag_take, "autograd has no rule for take; indexing "
                                               "reads the same elements")},
)


def gather(params: Any, indices: Any, axis: int = 0) -> Any:
    """TensorFlow's ``gather`` (``batch_dims=0``): ``take(params, indices, axis)``."""
    return take(params, indices, axis=axis)


def _scatter_add_forward(x, indices, updates, axis=0):
    idx = _indices("scatter_add", indices)
    out = np.array(x, copy=True)
    ax, _ = _axis_length("scatter_add", out.shape, axis)
    target = out.reshape(-1) if ax is None else out  # a view of the copy
    where = (idx,) if ax is None else (slice(None),) * ax + (idx,)
    want = target.shape[:ax or 0] + idx.shape + (() if ax is None else target.shape[ax + 1:])
    try:
        fits = np.broadcast_shapes(np.shape(updates), want) == want
    except ValueError:
        fits = False
    if not fits:
        raise ValueError(f"scatter_add: updates has shape {np.shape(updates)}, which does not "
                         f"broadcast to the indexed shape {want}")
    np.add.at(target, where, updates)  # unbuffered: repeated indices accumulate
    return out


def _scatter_add_shapes(draw, form=None):
    """x, indices and updates for an axis the params then rediscover (see below)."""
    x = draw_shape(draw, 1, 3, min_side=1, form=form)
    idx = draw_shape(draw, 0, 2, max_side=3)
    ax = pick(draw, [None] + list(range(len(x))))
    updates = idx if ax is None else x[:ax] + idx + x[ax + 1:]
    return [x, idx, updates]


def _scatter_add_params(draw, shapes):
    x, idx, updates = shapes
    axes = [a for a in range(len(x)) if x[:a] + idx + x[a + 1:] == updates]
    axes += [a - len(x) for a in axes]
    return {"axis": pick(draw, axes + ([None] if updates == idx else []))}


def _ag_scatter_add(anp: Any, x: Any, indices: Any, updates: Any, axis: Any = 0) -> Any:
    # x plus autograd's own transpose of indexing (repeated indices accumulate) at updates
    import autograd

    idx = np.asarray(indices)
    shape = dims(x)
    flat = axis is None
    target = (int(np.prod(shape)),) if flat else shape
    ax = 0 if flat else int(axis) % len(shape)
    index = (slice(None),) * ax + (idx,)
    want = target[:ax] + idx.shape + target[ax + 1:]
    pull, _ = autograd.make_vjp(lambda z: z[index])(np.zeros(target))
    added = pull(updates + np.zeros(want))
    return x + (anp.reshape(added, shape) if flat else added)


def _tf_scatter_add(tf: Any, x: Any, indices: Any, updates: Any, axis: Any = 0) -> Any:
    tnp = tf.experimental.numpy
    flat = axis is None
    target = tf.reshape(x, [-1]) if flat else x
    ax = 0 if flat else int(axis) % len(dims(x))
    idx = np.mod(tf_constant(tf, indices, np.int64), max(dims(target)[ax], 1))
    moved = tnp.moveaxis(target, ax, 0)
    want = dims(target)[:ax] + idx.shape + dims(target)[ax + 1:]
    upd = tf.broadcast_to(updates, want)
    if idx.ndim == 0:  # tensor_scatter_nd_add wants at least one index axis
        idx, upd = idx[None], tf.expand_dims(upd, ax)
    # bring the index axes of the updates first, as tensor_scatter_nd_add wants them
    upd = tnp.moveaxis(upd, list(range(ax, ax + idx.ndim)), list(range(idx.ndim)))
    out = tnp.moveaxis(tf.tensor_scatter_nd_add(moved, tf.constant(idx[..., None]), upd), 0, ax)
    return tf.reshape(out, dims(x)) if flat else out


scatter_add = define_op(
    "scatter_add", _scatter_add_forward,
    vjp=(lambda g, out, x, indices, updates, axis=0: g,
         None,
         lambda g, out, x, indices, updates, axis=0: unbroadcast(take(g, indices, axis=axis),
                                                                  updates)),
    linear=True, family="indexing", inputs=(REAL, AxisIndices(), REAL), nondiff_argnums=(1,),
    shapes=_scatter_add_shapes, params=_scatter_add_params,
    doc="``x`` with ``updates`` added at ``indices`` along ``axis``, like np.add.at.",
    equivalents={
        "tensorflow": _tf_scatter_add,
        "autograd": formula(_ag_scatter_add, "numpy has no differentiable scatter-add; "
                                             "autograd's VJP of indexing is one"),
    },
)


# -- triangles, diagonals, trace -------------------------------------------------------------
def _tf_triangle(upper: bool) -> Any:
    def call(tf: Any, m: Any, k: int = 0) -> Any:
        if len(dims(m)) < 2:  # numpy makes a vector the rows of a square matrix
            m = tf.broadcast_to(m, dims(m) * 2)
        rows, cols = dims(m)[-2:]

        def band(below: int, above: int) -> Any:
            # keeps -below <= j - i <= above (-1: no bound); bounds may not exceed the sides
            return tf.linalg.band_part(m, min(below, rows), min(above, cols))

        if upper:  # keep j - i >= k
            return band(-k, -1) if k <= 0 else m - band(-1, k - 1)
        return band(-1, k) if k >= 0 else m - band(-k - 1, -1)  # keep j - i <= k
    return call


def _triangle(name: str, forward: Any) -> Any:
    def vjp(g, out, m, k=0):
        from gradcheck.ops.reduce import sum as sum_

        ct = op(g, k=k)
        # numpy makes a 1-d input the rows of a square matrix: add the rows back up
        return sum_(ct, axis=0) if np.ndim(value_of(m)) < 2 else ct

    op = define_op(
        name, lambda m, k=0: forward(m, k=k), vjp=vjp, linear=True, family="indexing",
        inputs=(REAL,), shapes="(...,m,n)", params={"k": [0, 1, -1, 3, -4]},
        doc=f"numpy.{name}: the {'upper' if name == 'triu' else 'lower'} triangle from "
            "diagonal ``k`` of the last two axes.",
        equivalents={"numpy": name, "tensorflow": _tf_triangle(name == "triu")},
    )
    return op


triu = _triangle("triu", np.triu)
tril = _triangle("tril", np.tril)


def _diagonal_positions(n1: int, n2: int, offset: int) -> tuple[np.ndarray, np.ndarray]:
    length = max(0, min(n1 - max(-offset, 0), n2 - max(offset, 0)))
    diag = np.arange(length)
    return diag + max(-offset, 0), diag + max(offset, 0)


def embed_diagonal(g: Any, shape: tuple[int, ...], offset: int, axis1: int, axis2: int) -> Any:
    """Zeros of ``shape`` with ``g`` on the diagonal ``diagonal`` reads (its transpose)."""
    nd = len(shape)
    a1, a2 = axis1 % nd, axis2 % nd
    moved = tuple(d for i, d in enumerate(shape) if i not in (a1, a2)) + (shape[a1], shape[a2])
    rows, cols = _diagonal_positions(shape[a1], shape[a2], int(offset))
    embedded = scatter_index(g, shape=moved, index=(Ellipsis, rows, cols))
    return moveaxis(embedded, (-2, -1), (a1, a2))


def _diagonal_params(draw, shapes):
    nd = len(shapes[0])
    pairs = [(a, b) for a in range(nd) for b in range(nd) if a != b]
    a1, a2 = pick(draw, pairs)
    if pick(draw, [False, True]):
        a1, a2 = a1 - nd, a2 - nd
    return {"offset": pick(draw, [0, 1, -1, 2, -5]), "axis1": a1, "axis2": a2}


def _diagonal_shapes(draw, form=None):
    return [draw_shape(draw, 2, 4, max_side=3, form=form)]


def _ag_diagonal(anp: Any, a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Any:
    moved = anp.moveaxis(a, (axis1, axis2), (-2, -1))
    n1, n2 = dims(moved)[-2:]
    rows, cols = _diagonal_positions(n1, n2, int(offset))
    return moved[..., rows, cols]


diagonal = define_op(
    "diagonal",
    lambda a, offset=0, axis1=0, axis2=1: np.diagonal(a, offset, axis1, axis2).copy(),
    vjp=lambda g, out, a, offset=0, axis1=0, axis2=1:
        embed_diagonal(g, shape_of(a), offset, axis1, axis2),
    linear=True, family="indexing", inputs=(REAL,), shapes=_diagonal_shapes,
    params=_diagonal_params,
    doc="numpy.diagonal: the diagonal ``offset`` of axes ``axis1``, ``axis2``, moved last.",
    equivalents={
        "numpy": "diagonal",
        "autograd": formula(_ag_diagonal, "autograd's diagonal rule takes offset 0 of the "
                                          "last two axes only; indexing reads the same entries"),
        # tf.linalg.diag_part reads the last two axes only: numpy's namespace moves them
        "tensorflow": "experimental.numpy.diagonal",
    },
)


def _trace_vjp(g, out, a, offset=0, axis1=0, axis2=1):
    from gradcheck.ops.shape import broadcast_to

    shape = shape_of(a)
    nd = len(shape)
    rows, _ = _diagonal_positions(shape[axis1 % nd], shape[axis2 % nd], int(offset))
    gshape = shape_of(g)
    along = broadcast_to(reshape(g, gshape + (1,)), gshape + (len(rows),))
    return embed_diagonal(along, shape, offset, axis1, axis2)


def _tf_trace(tf: Any, a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Any:
    if offset == 0:  # tf.linalg.trace sums the diagonal of the last two axes
        return tf.linalg.trace(tf.experimental.numpy.moveaxis(a, (axis1, axis2), (-2, -1)))
    return tf.experimental.numpy.trace(a, offset, axis1, axis2)


trace = define_op(
    "trace", lambda a, offset=0, axis1=0, axis2=1: np.trace(a, offset, axis1, axis2),
    vjp=_trace_vjp, linear=True, family="indexing", inputs=(REAL,), shapes=_diagonal_shapes,
    params=_diagonal_params,
    doc="numpy.trace: the sum along the diagonal ``offset`` of axes ``axis1``, ``axis2``.",
    equivalents={
        "numpy": "trace",
        # autograd's trace rule takes the offset only: move the two axes first
        "autograd": lambda anp, a, offset=0, axis1=0, axis2=1: anp.trace(
            anp.moveaxis(a, (axis1, axis2), (0, 1)), offset),
        "tensorflow": _tf_trace,
    },
)


# -- einsum ----------------------------------------------------------------------------------
def parse_einsum(subscripts: str, shapes: Sequence[tuple[int, ...]]) -> tuple[list[str], str]:
    """Explicit labels per operand and for the output, with every ``...`` spelled out.

    The implicit output is numpy's: the broadcast (``...``) axes, then the labels
    used exactly once, in alphabetical order.
    """
    subs = subscripts.replace(" ", "")
    if subs.count("->") > 1:
        raise ValueError(f"einsum: subscripts {subscripts!r} have more than one '->'")
    lhs, arrow, rhs = subs.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(shapes):
        raise ValueError(f"einsum: subscripts {subscripts!r} name {len(terms)} operands, "
                         f"got {len(shapes)}")
    labels = [c for c in subs if c.isalpha()]
    spare = [c for c in string.ascii_letters if c not in labels]
    ranks = []
    for term, shape in zip(terms, shapes, strict=True):
        named = len(term.replace("...", ""))
        rank = len(shape) - named if "..." in term else 0
        if rank < 0 or ("..." not in term and named != len(shape)):
            raise ValueError(f"einsum: operand term {term!r} does not fit an operand of "
                             f"shape {shape}")
        ranks.append(rank)
    broadcast = "".join(spare[:max(ranks, default=0)])
    if len(broadcast) < max(ranks, default=0):
        raise ValueError("einsum: too many labels to spell out the '...' axes")
    inputs = [t.replace("...", broadcast[len(broadcast) - r:]) for t, r in zip(terms, ranks,
                                                                                strict=True)]
    if arrow:
        output = rhs.replace("...", broadcast)
    else:
        once = Counter("".join(terms).replace("...", ""))
        output = broadcast + "".join(sorted(c for c, k in once.items() if k == 1))
    return inputs, output


def _einsum_forward(*operands, subscripts, optimize=False):
    try:
        return np.asarray(np.einsum(subscripts, *operands, optimize=optimize))
    except ValueError as error:
        shapes = [np.shape(x) for x in operands]
        raise ValueError(f"einsum: subscripts {subscripts!r} do not fit operands of shapes "
                         f"{shapes}: {error}") from None


def _einsum_operand_vjp(g, terms, output, operands, i, optimize):
    """The cotangent of operand ``i``: einsum of ``g`` with the others, then fitted back."""
    from gradcheck.ops.reduce import sum as sum_
    from gradcheck.ops.shape import broadcast_to

    term, x = terms[i], operands[i]
    shape = shape_of(x)
    own = {c: shape[p] for p, c in enumerate(term)}
    others = [j for j in range(len(operands)) if j != i]
    unique = "".join(dict.fromkeys(term))
    reachable = set(output).union(*(terms[j] for j in others))
    kept = "".join(c for c in unique if c in reachable)
    spec = ",".join([output] + [terms[j] for j in others]) + "->" + kept
    h = einsum_op(g, *(operands[j] for j in others), subscripts=spec, optimize=optimize)
    # labels only this operand sums over come back as size-1 axes, then broadcast
    hshape = dict(zip(kept, shape_of(h), strict=True))
    h = reshape(h, tuple(hshape.get(c, 1) for c in unique))
    grown = tuple(p for p, c in enumerate(unique) if own[c] == 1 and hshape.get(c, 1) != 1)
    if grown:  # this operand was broadcast (size 1) against the others along those labels
        h = sum_(h, axis=grown, keepdims=True)
    h = broadcast_to(h, tuple(own[c] for c in unique))
    if unique != term:  # repeated labels: the cotangent lives on the diagonal
        index = tuple(
            np.arange(own[c]).reshape(tuple(-1 if c == u else 1 for u in unique))
            for c in term)
        h = scatter_index(h, shape=shape, index=index)
    return unbroadcast(h, x)


def _einsum_vjp(g, out, *operands, subscripts, optimize=False):
    terms, output = parse_einsum(subscripts, [shape_of(x) for x in operands])
    return tuple(_einsum_operand_vjp(g, terms, output, operands, i, optimize)
                 if is_float(x) else None for i, x in enumerate(operands))


def _einsum_jvp(tangents, out, *operands, subscripts, optimize=False):
    total = None
    for i, t in enumerate(tangents):  # multilinear: one term per operand's tangent
        if t is None:
            continue
        args = list(operands)
        args[i] = t
        term = einsum_op(*args, subscripts=subscripts, optimize=optimize)
        total = term if total is None else total + term
    return None if total is None else fit(total, out)


#: Two-operand subscripts the checker sweeps: contractions, implicit output, batches,
#: ``...`` broadcasting, outer products, repeated labels (diagonals, traces).
EINSUM_SWEEP = (
    "ij,jk->ik", "ij,jk", "bij,bjk->bik", "...ij,...jk->...ik", "i,i->", "i,j->ij",
    "ij,ij->ij", "ii,i->i", "ii,->", "ij,->ji", "iij,jk->ik", "ij,kj->", "i...,i->...",
    "ba,ac",
)


def _einsum_shapes(draw, form=None):
    """Operands of a subscripts of the sweep; a stratum's ``form`` (see
    gradcheck.checker.sampling.FORMS) gives one label a long axis, two vectors, or a
    batched matmul of 4-d operands."""
    if form is not None:
        return _formed_einsum(draw, form)
    subscripts = pick(draw, EINSUM_SWEEP)
    from hypothesis import strategies as st

    sizes = {c: pick(draw, [2, 1, 3, 0]) for c in sorted(set(subscripts) - set(",->."))}
    batch = draw_shape(draw, 0, 2, min_side=1, max_side=3)
    shapes = []
    for term in subscripts.partition("->")[0].split(","):
        head, dots, tail = term.partition("...")
        mine = batch[draw(st.integers(0, len(batch))):] if dots else ()
        mine = tuple(1 if pick(draw, [False, False, True]) else d for d in mine)
        shapes.append(tuple(sizes[c] for c in head) + mine + tuple(sizes[c] for c in tail))
    return shapes


def _formed_einsum(draw, form):
    from hypothesis import strategies as st

    from gradcheck.ops.forms import LONG

    if form == "vector":
        n = draw(st.integers(2, LONG[1]))
        return [(n,), (n if pick(draw, [True, False]) else draw(st.integers(2, LONG[1])),)]
    if form == "deep":
        batch = (draw(st.integers(1, 2)), draw(st.integers(1, 2)))
        i, j, k = (pick(draw, [2, 1, 3]) for _ in range(3))
        return [(*batch, i, j), (*batch, j, k)]
    subscripts = pick(draw, EINSUM_SWEEP)
    labels = sorted(set(subscripts) - set(",->."))
    sizes = {c: pick(draw, [2, 1, 3]) for c in labels}
    sizes[pick(draw, labels)] = draw(st.integers(*LONG))
    shapes = []
    for term in subscripts.partition("->")[0].split(","):
        head, _, tail = term.partition("...")
        shapes.append(tuple(sizes[c] for c in head + tail))
    return shapes


def _einsum_params(draw, shapes):
    zeros = [np.zeros(s) for s in shapes]
    fitting = []
    for subscripts in EINSUM_SWEEP:
        try:
            np.einsum(subscripts, *zeros)
        except ValueError:
            continue
        fitting.append(subscripts)
    return {"subscripts": pick(draw, fitting)}


def _tf_einsum(tf: Any, *operands: Any, subscripts: str, optimize: Any = False) -> Any:
    terms, _ = parse_einsum(subscripts, [dims(o) for o in operands])
    sizes: dict[str, set[int]] = {}
    for term, operand in zip(terms, operands, strict=True):
        for label, size in zip(term, dims(operand), strict=True):
            sizes.setdefault(label, set()).add(size)
    # numpy broadcasts a named axis of size 1, and '...' axes of sizes 1 and 0; TensorFlow
    # broadcasts '...' axes of other sizes only
    named = set(subscripts)
    if any(len(s) > 1 and (label in named or 0 in s) for label, s in sizes.items()):
        raise NoEquivalent("TensorFlow's einsum does not broadcast this axis of size 1 (a "
                           "named axis, or a '...' axis against size 0)")
    return tf.einsum(subscripts, *operands)


einsum_op = define_op(
    "einsum", _einsum_forward, vjp=_einsum_vjp, jvp=_einsum_jvp, family="indexing",
    inputs=(REAL, REAL), shapes=_einsum_shapes, params=_einsum_params,
    complex_rules=True,
    doc="numpy.einsum with the operands as positional inputs (see ``einsum``).",
    variadic=True,
    equivalents={"numpy": lambda np_, *operands, subscripts, optimize=False: np_.einsum(
        subscripts, *operands), "tensorflow": _tf_einsum},
)


def _interleaved(args: Sequence[Any]) -> tuple[str, list[Any]]:
    """numpy's ``einsum(op0, sublist0, op1, sublist1, ..., [sublistout])`` as a string."""
    rest = list(args)
    output = rest.pop() if len(rest) % 2 else None
    operands, sublists = rest[0::2], rest[1::2]

    def spell(sublist: Sequence[Any]) -> str:
        letters = []
        for s in sublist:
            if s is Ellipsis:
                letters.append("...")
            elif isinstance(s, (int, np.integer)) and 0 <= s < 52:
                # numpy's own spelling (0 -> 'A', 26 -> 'a'), so the implicit output's
                # alphabetical order is the labels' numeric order, as in numpy
                letters.append((string.ascii_uppercase + string.ascii_lowercase)[s])
            else:
                raise ValueError(f"einsum: sublist labels must be integers in [0, 52) or "
                                 f"Ellipsis, got {s!r}")
        return "".join(letters)

    subscripts = ",".join(spell(s) for s in sublists)
    if output is not None:
        subscripts += "->" + spell(output)
    return subscripts, operands


def einsum(*operands: Any, optimize: bool | str = False) -> Any:
    """numpy.einsum on tensors: ``einsum("ij,jk->ik", a, b)`` or the interleaved form."""
    if not operands:
        raise TypeError("einsum: expected subscripts and at least one operand")
    if isinstance(operands[0], str):
        subscripts, arrays = operands[0], list(operands[1:])
    else:
        subscripts, arrays = _interleaved(operands)
    return einsum_op(*arrays, subscripts=subscripts, optimize=optimize)
