"""Shape ops: reshape, transpose, joins and splits, padding, tiling, indexing.

All are linear (``pad`` with nonzero ``constant_values`` is affine: its tangent pads with zeros).

Each VJP is another op of this family (a reshape's is a reshape, a pad's is a
slice, indexing's is ``scatter_index``), so rules differentiate again.
``concatenate`` and ``stack`` are variadic ops (the arrays are positional
inputs) behind wrappers with numpy's ``(arrays, axis)`` signature.  ``split``
is a wrapper returning ``getitem`` slices: an op's output count is fixed when
it is defined, numpy's split chooses it per call.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from gradcheck.domains import REAL
from gradcheck.engine.op import Op, define_op
from gradcheck.engine.tensor import is_float, value_of
from gradcheck.ops.refs import NoEquivalent, formula
from gradcheck.ops.rules import shape_of, unbroadcast

ANY = "(...)"

#: Names exported in gradcheck.numpy (and other namespaces below).
NUMPY = ["reshape", "transpose", "moveaxis", "squeeze", "expand_dims", "broadcast_to",
         "concatenate", "stack", "split", "array_split", "flip", "roll", "tile", "repeat", "pad"]


# -- checker metadata helpers (Hypothesis is imported only when the checker draws) ---------
def draw_shape(draw: Any, min_ndim: int = 0, max_ndim: int = 3, min_side: int = 0,
               max_side: int = 4, form: str | None = None) -> tuple[int, ...]:
    """A small shape; with ``min_side=0`` now and then one dimension is zero.  A stratum's
    ``form`` (see gradcheck.checker.sampling.FORMS) gives a shape of that form instead, of
    ``min_ndim`` or more (up to 4) dimensions, none empty."""
    from hypothesis import strategies as st

    if form is not None:
        from gradcheck.ops.forms import formed_shape

        return formed_shape(draw, form, min_ndim, 4)
    ndim = draw(st.integers(min_ndim, max_ndim))
    dims = [draw(st.integers(max(min_side, 1), max_side)) for _ in range(ndim)]
    if min_side == 0 and ndim and draw(st.integers(0, 7)) == 0:
        dims[draw(st.integers(0, ndim - 1))] = 0
    return tuple(dims)


def pick(draw: Any, choices: Sequence[Any]) -> Any:
    """One of ``choices``, drawn (shrinks toward the first)."""
    from hypothesis import strategies as st

    return choices[draw(st.integers(0, len(choices) - 1))]


# -- helpers for the equivalents (their inputs are the framework's tensors) ------------------
def dims(x: Any) -> tuple[int, ...]:
    """The static shape of a framework's tensor (TensorFlow, an autograd box) as ints."""
    return tuple(int(d) for d in x.shape)


def tf_broadcast(tf: Any, *xs: Any) -> list[Any]:
    """TensorFlow tensors broadcast to their common static shape, differentiably (raw ops and
    some nn functions do not broadcast)."""
    shape = np.broadcast_shapes(*(dims(x) for x in xs))
    return [x if dims(x) == shape else tf.broadcast_to(x, shape) for x in xs]


def tf_axes(axis: Any, ndim: int) -> list[int] | None:
    """numpy's ``axis`` (None, an int or a tuple) as the non-negative list TensorFlow takes."""
    if axis is None:
        return None
    return [int(a) % max(ndim, 1) for a in np.atleast_1d(axis)]


def tf_constant(tf: Any, x: Any, dtype: Any = None) -> np.ndarray:
    """A non-differentiable input's value (a tensor's, even in a graph, where it is a
    constant), as numpy."""
    value = tf.get_static_value(x) if tf.is_tensor(x) else x
    return np.asarray(value, dtype=dtype)


def flat_positions(shape: Sequence[int], index: Any) -> np.ndarray:
    """The flat positions numpy's ``x[index]`` reads from an array of ``shape``."""
    return np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)[index]


def _axis(axis: Any, ndim: int, op: str) -> int:
    if not -ndim <= axis < max(ndim, 1) or ndim == 0:
        raise ValueError(f"{op}: axis {axis} is out of bounds for an array of dimension {ndim}")
    return int(axis) % ndim


def _cotangent(ct: Any, x: Any) -> Any:
    """``ct`` cast to ``x``'s dtype; None for a non-float input (it has no cotangent)."""
    return unbroadcast(ct, x) if is_float(x) else None


# -- reshaping -------------------------------------------------------------------------------
def _reshape_choices(shapes):
    shape = shapes[0]
    return [(-1,), tuple(reversed(shape)), (1, *shape)]


reshape: Op = define_op(
    "reshape", lambda x, shape: np.reshape(x, shape),
    vjp=lambda g, out, x, shape: reshape(g, shape_of(x)),
    linear=True, family="shape", inputs=(REAL,), shapes=ANY,
    params={"shape": _reshape_choices},
    equivalents={"numpy": "reshape", "tensorflow": "reshape"},
)


def _transpose_params(draw, shapes):
    nd = len(shapes[0])
    kind = pick(draw, ["default", "permutation", "negative"])
    if kind == "default":
        return {"axes": None}
    from hypothesis import strategies as st

    perm = draw(st.permutations(range(nd)))
    return {"axes": tuple(a - nd if kind == "negative" else a for a in perm)}


def _tf_transpose(tf: Any, x: Any, axes: Any = None) -> Any:
    # negative axes break TensorFlow's transpose gradient (InvertPermutation): normalise them
    nd = len(dims(x))
    return tf.transpose(x, perm=list(range(nd))[::-1] if axes is None
                        else [int(a) % nd for a in axes])


transpose: Op = define_op(
    "transpose", lambda x, axes=None: np.transpose(x, axes),
    vjp=lambda g, out, x, axes=None: transpose(
        g, None if axes is None else tuple(np.argsort([a % max(np.ndim(x), 1) for a in axes]))),
    linear=True, family="shape", inputs=(REAL,), shapes=ANY, params=_transpose_params,
    equivalents={"numpy": "transpose", "tensorflow": _tf_transpose},
)


def _moveaxis_params(draw, shapes):
    from hypothesis import strategies as st

    nd = len(shapes[0])
    k = draw(st.integers(1, nd))
    source = draw(st.permutations(range(nd)))[:k]
    destination = [a - nd for a in draw(st.permutations(range(nd)))[:k]]
    if k == 1:
        return {"source": source[0], "destination": destination[0]}
    return {"source": tuple(source), "destination": tuple(destination)}


moveaxis: Op = define_op(
    "moveaxis", lambda a, source, destination: np.moveaxis(a, source, destination),
    vjp=lambda g, out, a, source, destination: moveaxis(g, destination, source),
    linear=True, family="shape", inputs=(REAL,),
    shapes=lambda draw, form=None: [draw_shape(draw, 1, form=form)],
    params=_moveaxis_params,
    # TensorFlow's only moveaxis is its numpy namespace's (a transpose)
    equivalents={"numpy": "moveaxis", "tensorflow": "experimental.numpy.moveaxis"},
)


def _with_ones(draw, form=None):
    """A shape with some size-1 dimensions (what squeeze removes); of a stratum's ``form``,
    the vector's entries and the long axis (the last) kept."""
    shape = list(draw_shape(draw, form=form))
    for i in range(len(shape) - (form is not None)):
        if pick(draw, [False, True]):
            shape[i] = 1
    return [tuple(shape)]


def _squeeze_choices(shapes):
    ones = [i for i, d in enumerate(shapes[0]) if d == 1]
    nd = len(shapes[0])
    return [None] + ones + [i - nd for i in ones] + ([tuple(ones)] if len(ones) > 1 else [])


squeeze = define_op(
    "squeeze", lambda a, axis=None: np.squeeze(a, axis),
    vjp=lambda g, out, a, axis=None: reshape(g, shape_of(a)),
    linear=True, family="shape", inputs=(REAL,), shapes=_with_ones,
    params={"axis": _squeeze_choices},
    equivalents={"numpy": "squeeze",
                 "tensorflow": lambda tf, a, axis=None: tf.squeeze(
                     a, axis=tf_axes(axis, len(dims(a))))},
)


def _expand_choices(shapes):
    nd = len(shapes[0])
    return [0, -1, nd, -nd - 1, (0, -1)]


def _tf_expand_dims(tf: Any, a: Any, axis: Any) -> Any:
    # tf.expand_dims adds one axis: add numpy's several in increasing (final) position
    for ax in sorted(int(v) % (len(dims(a)) + np.size(axis)) for v in np.atleast_1d(axis)):
        a = tf.expand_dims(a, ax)
    return a


expand_dims = define_op(
    "expand_dims", lambda a, axis: np.expand_dims(a, axis),
    vjp=lambda g, out, a, axis: reshape(g, shape_of(a)),
    linear=True, family="shape", inputs=(REAL,), shapes=ANY,
    params={"axis": _expand_choices},
    equivalents={"numpy": "expand_dims", "tensorflow": _tf_expand_dims},
)


def _broadcast_choices(shapes):
    shape = shapes[0]
    grown = tuple(3 if d == 1 else d for d in shape)
    return [(2, *shape), grown]


broadcast_to = define_op(
    "broadcast_to", lambda x, shape: np.broadcast_to(x, shape).copy(),
    vjp=lambda g, out, x, shape: unbroadcast(g, x),
    linear=True, family="shape", inputs=(REAL,), shapes=ANY,
    params={"shape": _broadcast_choices},
    equivalents={
        "numpy": "broadcast_to", "tensorflow": "broadcast_to",
        "autograd": formula(lambda anp, x, shape: x + np.zeros(shape),
                            "autograd's broadcast_to rule cannot add leading axes; adding "
                            "zeros broadcasts the same way"),
    },
)


# -- joining and splitting -------------------------------------------------------------------
def _concatenate_vjp(g, out, *arrays, axis=0):
    if axis is None:  # the arrays were flattened and joined
        sizes = [int(np.prod(shape_of(a), dtype=np.int64)) for a in arrays]
        lead: tuple[slice, ...] = ()
    else:
        ax = _axis(axis, len(shape_of(out)), "concatenate")
        sizes = [shape_of(a)[ax] for a in arrays]
        lead = (slice(None),) * ax
    cts, start = [], 0
    for a, n in zip(arrays, sizes, strict=True):
        piece = getitem(g, index=lead + (slice(start, start + n),))
        if axis is None:
            piece = reshape(piece, shape_of(a))
        cts.append(_cotangent(piece, a))
        start += n
    return tuple(cts)


def _concatenate_shapes(draw, form=None):
    """Three shapes that differ along one axis; of a stratum's ``form``, the long axis (the
    last) kept in all three."""
    base = list(draw_shape(draw, 1, form=form))
    axis = pick(draw, list(range(max(1, len(base) - (form == "long")))))
    shapes = []
    for _ in range(3):
        base[axis] = pick(draw, [1, 2, 0, 3])
        shapes.append(tuple(base))
    return shapes


def _concatenate_params(draw, shapes):
    nd = len(shapes[0])
    first = shapes[0]
    axes = [a for a in range(nd)
            if all(s[:a] + s[a + 1:] == first[:a] + first[a + 1:] for s in shapes)]
    return {"axis": pick(draw, axes + [a - nd for a in axes] + [None])}


def _ag_concatenate(anp: Any, *arrays: Any, axis: Any = 0) -> Any:
    if axis is None:  # autograd's rule needs an axis: flatten first, as numpy does
        return anp.concatenate([anp.ravel(a) for a in arrays], axis=0)
    return anp.concatenate(arrays, axis=axis)


def _tf_concatenate(tf: Any, *arrays: Any, axis: Any = 0) -> Any:
    if axis is None:
        return tf.concat([tf.reshape(a, [-1]) for a in arrays], axis=0)
    return tf.concat(arrays, axis=axis)


concatenate_op = define_op(
    "concatenate", lambda *arrays, axis=0: np.concatenate(arrays, axis=axis),
    vjp=_concatenate_vjp, linear=True, family="shape", inputs=(REAL, REAL, REAL),
    shapes=_concatenate_shapes, params=_concatenate_params,
    doc="numpy.concatenate with the arrays as positional inputs (see ``concatenate``).",
    variadic=True,
    equivalents={"numpy": lambda np_, *arrays, axis=0: np_.concatenate(arrays, axis=axis),
                 "autograd": _ag_concatenate, "tensorflow": _tf_concatenate},
)


def concatenate(arrays: Sequence[Any], axis: int | None = 0) -> Any:
    """Join ``arrays`` along an existing ``axis`` (None: flatten them first), as numpy does."""
    return concatenate_op(*arrays, axis=axis)


def _stack_vjp(g, out, *arrays, axis=0):
    ax = _axis(axis, len(shape_of(out)), "stack")
    return tuple(_cotangent(getitem(g, index=(slice(None),) * ax + (i,)), a)
                 for i, a in enumerate(arrays))


def _stack_shapes(draw, form=None):
    return [draw_shape(draw, form=form)] * 3


stack_op = define_op(
    "stack", lambda *arrays, axis=0: np.stack(arrays, axis=axis),
    vjp=_stack_vjp, linear=True, family="shape", inputs=(REAL, REAL, REAL),
    shapes=_stack_shapes,
    params={"axis": lambda shapes: [0, -1, len(shapes[0]), -len(shapes[0]) - 1]},
    doc="numpy.stack with the arrays as positional inputs (see ``stack``).",
    variadic=True,
    equivalents={"numpy": lambda np_, *arrays, axis=0: np_.stack(arrays, axis=axis),
                 "tensorflow": lambda tf, *arrays, axis=0: tf.stack(arrays, axis=axis)},
)


def stack(arrays: Sequence[Any], axis: int = 0) -> Any:
    """Join equally shaped ``arrays`` along a new ``axis``, as numpy does."""
    return stack_op(*arrays, axis=axis)


def _split(name: str, ary: Any, indices_or_sections: Any, axis: int, equal: bool) -> list[Any]:
    shape = shape_of(ary)
    ax = _axis(axis, len(shape), name)
    n = shape[ax]
    if np.ndim(indices_or_sections) == 0:
        sections = int(indices_or_sections)
        if sections <= 0:
            raise ValueError(f"{name}: the number of sections must be positive, got {sections}")
        if equal and n % sections:
            raise ValueError(f"{name}: an axis of length {n} does not split into {sections} "
                             "equal sections (use array_split)")
        each, extra = divmod(n, sections)
        sizes = [each + 1] * extra + [each] * (sections - extra)
        points = [int(p) for p in np.cumsum([0] + sizes)]
    else:
        points = [0] + [int(i) for i in indices_or_sections] + [n]
    lead = (slice(None),) * ax
    return [getitem(ary, index=lead + (slice(start, stop),))
            for start, stop in zip(points[:-1], points[1:], strict=True)]


def split(ary: Any, indices_or_sections: Any, axis: int = 0) -> list[Any]:
    """numpy.split: equal sections, or pieces cut at the given indices; each is a slice."""
    return _split("split", ary, indices_or_sections, axis, equal=True)


def array_split(ary: Any, indices_or_sections: Any, axis: int = 0) -> list[Any]:
    """numpy.array_split: like ``split`` but sections may differ in length by one."""
    return _split("array_split", ary, indices_or_sections, axis, equal=False)


# -- reordering and repeating ----------------------------------------------------------------
def _axis_choices(shapes):
    nd = len(shapes[0])
    return [None] + ([0, -1] if nd else []) + ([(0, -1)] if nd >= 2 else [])


def _ag_flip(anp: Any, m: Any, axis: Any = None) -> Any:
    nd = len(dims(m))
    index = [slice(None)] * nd
    for a in range(nd) if axis is None else np.atleast_1d(axis):
        index[int(a)] = slice(None, None, -1)
    return m[tuple(index)]


def _tf_flip(tf: Any, m: Any, axis: Any = None) -> Any:
    nd = len(dims(m))
    return tf.reverse(m, axis=list(range(nd)) if axis is None else tf_axes(axis, nd))


flip: Op = define_op(
    "flip", lambda m, axis=None: np.flip(m, axis),
    vjp=lambda g, out, m, axis=None: flip(g, axis),
    linear=True, family="shape", inputs=(REAL,), shapes=ANY, params={"axis": _axis_choices},
    equivalents={"numpy": "flip", "tensorflow": _tf_flip,
                 "autograd": formula(_ag_flip, "autograd has no rule for flip; a reversing "
                                               "slice is the same function")},
)


def _roll_params(draw, shapes):
    axis = pick(draw, _axis_choices(shapes))
    shifts = [-5, -1, 0, 1, 2, 7]
    if isinstance(axis, tuple):
        return {"axis": axis, "shift": (pick(draw, shifts), pick(draw, shifts))}
    return {"axis": axis, "shift": pick(draw, shifts)}


def _ag_roll(anp: Any, a: Any, shift: Any, axis: Any = None) -> Any:
    if np.ndim(shift) == 0:
        return anp.roll(a, shift, axis)
    for s, ax in zip(shift, axis, strict=True):  # autograd's rule negates a scalar shift only
        a = anp.roll(a, s, ax)
    return a


def _tf_roll(tf: Any, a: Any, shift: Any, axis: Any = None) -> Any:
    if axis is None:  # numpy rolls the flattened array
        return tf.reshape(tf.roll(tf.reshape(a, [-1]), shift, 0), dims(a))
    return tf.roll(a, shift, axis)


roll: Op = define_op(
    "roll", lambda a, shift, axis=None: np.roll(a, shift, axis),
    vjp=lambda g, out, a, shift, axis=None: roll(g, tuple(-np.asarray(shift).ravel()) if
                                                 np.ndim(shift) else -shift, axis),
    linear=True, family="shape", inputs=(REAL,), shapes=ANY, params=_roll_params,
    equivalents={"numpy": "roll", "autograd": _ag_roll, "tensorflow": _tf_roll},
)


def _tile_vjp(g, out, x, reps):
    from gradcheck.ops.reduce import sum as sum_

    shape = shape_of(x)
    reps = tuple(int(r) for r in np.ravel(reps))
    nd = max(len(shape), len(reps))
    full_shape = (1,) * (nd - len(shape)) + shape
    full_reps = (1,) * (nd - len(reps)) + reps
    # out = x tiled, block index major: out.reshape(r0, d0, r1, d1, ...)[i0, :, i1, :] = x
    interleaved = tuple(v for r, d in zip(full_reps, full_shape, strict=True) for v in (r, d))
    summed = sum_(reshape(g, interleaved), axis=tuple(range(0, 2 * nd, 2)))
    return reshape(summed, shape)


def _ag_tile(anp: Any, a: Any, reps: Any) -> Any:
    if 0 in np.atleast_1d(reps) or 0 in dims(a):
        raise NoEquivalent("autograd's tile rule fails for empty tiles (it stacks nothing)")
    return anp.tile(a, reps)


def _tf_tile(tf: Any, a: Any, reps: Any) -> Any:
    # numpy's conventions for tf.tile: reps and a's shape padded with leading ones
    reps = tuple(int(r) for r in np.ravel(reps))
    shape = dims(a)
    nd = max(len(shape), len(reps))
    a = tf.reshape(a, (1,) * (nd - len(shape)) + shape)
    return tf.tile(a, (1,) * (nd - len(reps)) + reps)


tile = define_op(
    "tile", lambda A, reps: np.tile(A, reps),
    vjp=_tile_vjp, linear=True, family="shape", inputs=(REAL,), shapes=ANY,
    params={"reps": [2, (2, 1), (1, 3, 2), (0, 2), ()]},
    equivalents={"numpy": "tile", "autograd": _ag_tile, "tensorflow": _tf_tile},
)


def _repeat_vjp(g, out, a, repeats, axis=None):
    shape = shape_of(a)
    if axis is None:
        size = int(np.prod(shape, dtype=np.int64))
        source = np.repeat(np.arange(size), repeats)
        return reshape(scatter_index(g, shape=(size,), index=(source,)), shape)
    ax = _axis(axis, len(shape), "repeat")
    source = np.repeat(np.arange(shape[ax]), repeats)
    return scatter_index(g, shape=shape, index=(slice(None),) * ax + (source,))


def _repeat_params(draw, shapes):
    from hypothesis import strategies as st

    shape = shapes[0]
    axis = pick(draw, [None] + ([0, -1] if shape else []))
    n = int(np.prod(shape, dtype=np.int64)) if axis is None else shape[axis]
    if pick(draw, [False, True]):
        repeats: Any = np.array(draw(st.lists(st.integers(0, 3), min_size=n, max_size=n)),
                                dtype=np.int64)
    else:
        repeats = pick(draw, [2, 1, 0, 3])
    return {"repeats": repeats, "axis": axis}


def _ag_repeat(anp: Any, a: Any, repeats: Any, axis: Any = None) -> Any:
    if np.ndim(repeats):
        raise NoEquivalent("autograd's repeat rule takes a scalar count only")
    if not dims(a) or int(repeats) == 0:
        raise NoEquivalent("autograd's repeat rule fails for scalars and zero repeats")
    return anp.repeat(a, int(repeats), axis)


def _tf_repeat(tf: Any, a: Any, repeats: Any, axis: Any = None) -> Any:
    counts = int(np.ravel(repeats)[0]) if np.size(repeats) == 1 else np.asarray(repeats)
    return tf.repeat(a, counts, axis=axis)  # axis None: flattened, as numpy


repeat = define_op(
    "repeat", lambda a, repeats, axis=None: np.repeat(a, repeats, axis),
    vjp=_repeat_vjp, family="shape", inputs=(REAL,), shapes=ANY, params=_repeat_params,
    transpose_jvp_reason="no JVP rule on purpose: its JVP transposes the scatter in the VJP, "
                         "which exercises the fallback through scatter_index's own VJP",
    complex_rules=True,
    equivalents={"numpy": "repeat", "autograd": _ag_repeat, "tensorflow": _tf_repeat},
)


# -- padding ---------------------------------------------------------------------------------
PAD_MODES = ("constant", "edge", "reflect", "symmetric", "wrap")


def _pad_pairs(pad_width: Any, ndim: int) -> list[tuple[int, int]]:
    """numpy's pad_width forms (int, (before, after), one pair per axis) as one pair per axis."""
    widths = np.asarray(value_of(pad_width))
    if widths.size and widths.dtype.kind not in "iu":
        raise TypeError(f"pad: pad_width must be integers, got {pad_width!r}")
    if ndim == 0:  # nothing to pad; numpy accepts any width
        return []
    try:
        pairs = np.broadcast_to(widths, (ndim, 2))
    except ValueError:
        raise ValueError(f"pad: pad_width {pad_width!r} does not fit an array of dimension "
                         f"{ndim}") from None
    if (pairs < 0).any():
        raise ValueError(f"pad: pad_width must be non-negative, got {pad_width!r}")
    return [(int(b), int(a)) for b, a in pairs]


def _pad_forward(array, pad_width, mode="constant", constant_values=0):
    pairs = _pad_pairs(pad_width, np.ndim(array))
    if not pairs:  # a 0-d array has no axis to pad (numpy returns it unchanged)
        return np.array(array, copy=True)
    if mode == "constant":
        return np.pad(array, pairs, mode="constant", constant_values=constant_values)
    if mode not in PAD_MODES:
        raise ValueError(f"pad: mode must be one of {PAD_MODES}, got {mode!r}")
    if np.any(np.asarray(constant_values) != 0):
        raise ValueError(f"pad: constant_values is for mode 'constant', not {mode!r}")
    return np.pad(array, pairs, mode=mode)


def _pad_vjp(g, out, array, pad_width, mode="constant", constant_values=0):
    shape = shape_of(array)
    pairs = _pad_pairs(pad_width, len(shape))
    if mode == "constant":
        kept = tuple(slice(b, b + n) for (b, _), n in zip(pairs, shape, strict=True))
        return getitem(g, index=kept)
    # Every output element copies one input element; padding the index ranges the same
    # way says which, axis by axis, and the VJP adds the copies back (repeats accumulate).
    sources = [np.pad(np.arange(n), p, mode=mode) for n, p in zip(shape, pairs, strict=True)]
    return scatter_index(g, shape=shape, index=np.ix_(*sources))


def _pad_params(draw, shapes):
    shape = shapes[0]
    mode = pick(draw, PAD_MODES)
    form = pick(draw, ["int", "pair", "per_axis"])
    if form == "int" and (mode == "constant" or all(shape)):
        width: Any = pick(draw, [1, 2, 0])
    elif form == "pair" and (mode == "constant" or all(shape)):
        width = (pick(draw, [0, 1, 2]), pick(draw, [1, 0, 3]))
    else:  # non-constant modes cannot pad an empty axis
        width = tuple((pick(draw, [1, 0, 2]), pick(draw, [0, 2, 1])) if d or mode == "constant"
                      else (0, 0) for d in shape)
    params: dict[str, Any] = {"pad_width": width, "mode": mode}
    if mode == "constant":
        params["constant_values"] = pick(draw, [0, 1.5])
    return params


def _ag_pad(anp: Any, array: Any, pad_width: Any, mode: str = "constant",
            constant_values: Any = 0) -> Any:
    if mode != "constant":
        raise NoEquivalent(f"autograd's pad rule supports mode='constant' only, not {mode!r}")
    if not dims(array):  # autograd's rule fails for 0-d arrays, which numpy leaves unchanged
        return array * 1.0
    return anp.pad(array, pad_width, mode="constant", constant_values=constant_values)


_TF_PAD_MODES = {"constant": "CONSTANT", "reflect": "REFLECT", "symmetric": "SYMMETRIC"}


def _tf_pad(tf: Any, array: Any, pad_width: Any, mode: str = "constant",
            constant_values: Any = 0) -> Any:
    shape = dims(array)
    if not shape:
        return tf.identity(array)
    if mode not in _TF_PAD_MODES:
        raise NoEquivalent(f"tf.pad has no mode {mode!r}")
    pairs = np.broadcast_to(np.asarray(pad_width), (len(shape), 2))
    limit = {"reflect": 1, "symmetric": 0}.get(mode)
    if limit is not None and any(max(p) > n - limit for p, n in zip(pairs, shape, strict=True)):
        raise NoEquivalent(f"tf.pad in mode {mode!r} cannot pad beyond the axis length, "
                           "which numpy does by repeating the reflection")
    return tf.pad(array, pairs.tolist(), mode=_TF_PAD_MODES[mode],
                  constant_values=constant_values if mode == "constant" else 0)


pad: Op = define_op(
    "pad", _pad_forward, vjp=_pad_vjp,
    # The tangent pads with zeros: constant_values shifts the value, not the derivative.
    jvp=lambda ts, out, array, pad_width, mode="constant", constant_values=0: pad(
        ts[0], pad_width, mode=mode),
    family="shape", inputs=(REAL,), shapes=ANY, params=_pad_params,
    complex_rules=True,
    doc="numpy.pad in modes constant, edge, reflect, symmetric and wrap.",
    equivalents={"numpy": "pad", "autograd": _ag_pad, "tensorflow": _tf_pad},
)


# -- indexing --------------------------------------------------------------------------------
def plain_index(index: Any) -> Any:
    """``index`` with tensors replaced by their arrays and lists by integer/bool arrays."""
    if isinstance(index, tuple):
        return tuple(plain_index(i) for i in index)
    index = value_of(index)
    if isinstance(index, list):  # an empty list selects nothing, as in numpy (not floats)
        return np.asarray(index) if index else np.zeros(0, dtype=np.intp)
    return index


def _scatter_forward(g, shape, index):
    out = np.zeros(shape, dtype=np.asarray(g).dtype)
    np.add.at(out, plain_index(index), g)  # unbuffered: repeated indices accumulate
    return out


def _scatter_index_params(draw, shapes):
    """A target shape and an index whose selection has the update's shape ``shapes[0]``."""
    from hypothesis import strategies as st

    u = shapes[0]
    kinds = ["ellipsis_int"] + (["repeated", "strided", "mask"] if u else []) + \
        (["newaxis"] if u and u[0] == 1 else [])
    kind = pick(draw, kinds)
    if kind == "ellipsis_int":
        m = draw(st.integers(1, 3))
        return {"shape": (*u, m), "index": (Ellipsis, draw(st.integers(-m, m - 1)))}
    rest = tuple(u[1:])
    if kind == "repeated":
        m = draw(st.integers(1, 3))
        idx = draw(st.lists(st.integers(-m, m - 1), min_size=u[0], max_size=u[0]))
        return {"shape": (m, *rest), "index": (np.array(idx, dtype=np.int64),)}
    if kind == "strided":
        return {"shape": (2 * u[0], *rest), "index": (slice(None, None, pick(draw, [2, -2])),)}
    if kind == "mask":
        mask = np.array(draw(st.permutations([True] * u[0] + [False] * 2)))
        return {"shape": (u[0] + 2, *rest), "index": (mask,)}
    return {"shape": rest, "index": (None, Ellipsis)}


def _ag_scatter_index(anp: Any, g: Any, shape: Any, index: Any) -> Any:
    import autograd

    pull, _ = autograd.make_vjp(lambda x: x[index])(np.zeros(shape))
    return pull(g)


def _tf_scatter_index(tf: Any, g: Any, shape: Any, index: Any) -> Any:
    # zeros(shape) with g added at index: a scatter at the flat positions numpy selects
    where = flat_positions(tuple(shape), index)
    flat = tf.tensor_scatter_nd_add(tf.zeros([int(np.prod(shape))], dtype=g.dtype),
                                    tf.constant(where.reshape(-1, 1)),
                                    tf.reshape(tf.broadcast_to(g, where.shape), [-1]))
    return tf.reshape(flat, tuple(shape))


scatter_index = define_op(
    "scatter_index", _scatter_forward,
    vjp=lambda g, out, upd, shape, index: getitem(g, index=index),
    linear=True, family="indexing", inputs=(REAL,), shapes=ANY,
    params=_scatter_index_params, grad_of="getitem",
    doc="Adds ``g`` into zeros of ``shape`` at ``index`` (the transpose of indexing).",
    equivalents={
        "tensorflow": _tf_scatter_index,
        # numpy's API has no differentiable add-at: the transpose of indexing is autograd's
        # own VJP of x[index], which is linear in g
        "autograd": formula(_ag_scatter_index, "numpy has no differentiable scatter-add; "
                                               "autograd's VJP of indexing is one"),
    },
)


def _int_list(draw, n, size_low=0, size_high=3):
    from hypothesis import strategies as st

    return np.array(draw(st.lists(st.integers(-n, n - 1), min_size=size_low,
                                  max_size=size_high)), dtype=np.int64)


def _basic_item(draw, d):
    from hypothesis import strategies as st

    if d and pick(draw, [False, True]):
        return draw(st.integers(-d, d - 1))
    ends = [None, 0, 1, -1, d, d + 1, -d - 1]
    return slice(pick(draw, ends), pick(draw, ends), pick(draw, [None, 2, -1, -2]))


def draw_index(draw: Any, shape: tuple[int, ...]) -> Any:
    """An index for an array of ``shape``: basic, advanced (repeats too), or boolean."""
    from hypothesis import strategies as st

    nd = len(shape)
    if nd == 0:
        return pick(draw, [(), None, Ellipsis, True, np.array(False)])
    kinds = ["basic", "ellipsis", "newaxis", "mask"]
    if shape[0]:
        kinds += ["array", "array_2d"]
        if nd >= 2 and shape[1]:
            kinds += ["two_arrays", "slice_array"]
    kind = pick(draw, kinds)
    if kind == "basic":
        k = draw(st.integers(1, nd))
        return tuple(_basic_item(draw, d) for d in shape[:k])
    if kind == "ellipsis":
        return (Ellipsis, _basic_item(draw, shape[-1]))
    if kind == "newaxis":
        return (slice(None), None) if pick(draw, [False, True]) else (None, Ellipsis, None)
    if kind == "mask":
        if pick(draw, [False, True]):
            return np.array(draw(st.lists(st.booleans(), min_size=shape[0], max_size=shape[0])),
                            dtype=bool)
        size = int(np.prod(shape))
        flat = draw(st.lists(st.booleans(), min_size=size, max_size=size))
        return np.array(flat, dtype=bool).reshape(shape)
    if kind == "array":
        return (_int_list(draw, shape[0], 0, 4),)
    if kind == "array_2d":
        return (_int_list(draw, shape[0], 2, 2).reshape(1, 2), Ellipsis)
    if kind == "two_arrays":
        k = draw(st.integers(0, 3))
        return (_int_list(draw, shape[0], k, k), _int_list(draw, shape[1], k, k))
    # an array after a slice keeps its place; the slice's axis is kept
    return (slice(None, None, -1), _int_list(draw, shape[1], 1, 3))


def _is_basic(index: Any) -> bool:
    items = index if isinstance(index, tuple) else (index,)
    return all(i is None or i is Ellipsis or isinstance(i, (slice, int, np.integer))
               and not isinstance(i, bool) for i in items)


def _tf_getitem(tf: Any, x: Any, index: Any) -> Any:
    if _is_basic(index):  # TensorFlow's own strided slice
        return x[index]
    # arrays and masks: a gather at the flat positions numpy's indexing reads
    where = flat_positions(dims(x), index)
    return tf.reshape(tf.gather(tf.reshape(x, [-1]), tf.constant(where.reshape(-1))),
                      where.shape)


getitem: Op = define_op(
    "getitem", lambda x, index: np.asarray(x[plain_index(index)]),
    vjp=lambda g, out, x, index: scatter_index(g, shape=shape_of(x), index=index),
    linear=True, family="indexing", inputs=(REAL,), shapes=ANY,
    params=lambda draw, shapes: {"index": draw_index(draw, shapes[0])},
    grad_op="scatter_index",
    doc="x[index] for basic and advanced indexing; repeated indices accumulate.",
    equivalents={"numpy": lambda np_, x, index: x[index], "tensorflow": _tf_getitem},
)
