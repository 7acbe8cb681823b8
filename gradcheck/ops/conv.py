"""Convolutions and pooling in TensorFlow's layouts (``nn.<name>``).

Inputs are NHWC (NWC for conv1d), filters HWIO (WIO); ``strides`` and ``dilations`` are an int,
an ``(h, w)`` pair or TensorFlow's ``[1, h, w, 1]``; ``padding`` is ``"VALID"``, ``"SAME"``
(TensorFlow's split: the odd pixel goes after) or explicit: an int, ``(ph, pw)`` or
``((top, bottom), (left, right))``.  Forwards are numpy (strided window views and einsum).

As in TensorFlow, the convolution's VJPs are the gradient ops ``nn.conv2d_backprop_input``
(Conv2DBackpropInput) and ``nn.conv2d_backprop_filter`` (Conv2DBackpropFilter).  The three ops
are bilinear and each one's derivatives are the other two (the transposition relations
``<conv2d(x, f), dy> = <x, backprop_input(f, dy)> = <f, backprop_filter(x, dy)>``), so every
order of derivative stays inside the family.

Pooling mirrors TensorFlow too: avg_pool2d's VJP is ``nn.avg_pool2d_grad`` (AvgPoolGrad; with
SAME padding a window's mean is over its real entries only) whose VJP is avg_pool2d again;
max_pool2d's VJP is ``nn.max_pool2d_grad`` (MaxPoolGrad: the upstream gradient added at each
window's argmax) whose VJP in the upstream gradient is ``nn.max_pool2d_grad_grad``
(MaxPoolGradGrad: a gather at the argmax positions).  At ties the argmax is the first maximal
entry of the window in row-major order (as TensorFlow's CPU kernel and PyTorch choose); the
derivative does not exist there, so the pooling ops declare ``kinks="ties"``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from gradcheck.domains import REAL
from gradcheck.engine.op import Op, define_op
from gradcheck.ops.elementwise import zeros_like
from gradcheck.ops.forms import LONG
from gradcheck.ops.params import is_int, positive_int
from gradcheck.ops.refs import NoEquivalent
from gradcheck.ops.rules import shape_of, unbroadcast
from gradcheck.ops.shape import expand_dims, pick, reshape

#: Names exported in gradcheck.nn.
NN = ["conv1d", "conv2d", "conv2d_backprop_input", "conv2d_backprop_filter", "avg_pool2d",
      "max_pool2d"]


# -- geometry ---------------------------------------------------------------------------------
def pair(op: str, name: str, value: Any) -> tuple[int, int]:
    """An int, an (h, w) pair or TensorFlow's [1, h, w, 1] as two positive ints.  A value
    that is not made of ints (a bool, a float) is a TypeError, anything else a ValueError."""
    raw = value.tolist() if isinstance(value, np.ndarray) else value
    v = tuple(raw) if isinstance(raw, (tuple, list)) else (raw,)
    if not all(is_int(a) for a in v):
        raise TypeError(f"op {op!r}: {name} must be a positive int, an (h, w) pair or "
                        f"[1, h, w, 1] of ints, got {type(value).__name__} {value!r}")
    if len(v) == 4 and v[0] == v[3] == 1:
        v = v[1:3]
    if len(v) == 1:
        v = (v[0], v[0])
    if len(v) != 2 or not all(a >= 1 for a in v):
        raise ValueError(f"op {op!r}: {name} must be a positive int, an (h, w) pair or "
                         f"[1, h, w, 1], got {value!r}")
    return int(v[0]), int(v[1])


def _explicit(op: str, padding: Any) -> tuple[tuple[int, int], tuple[int, int]]:
    try:
        p = np.asarray(padding)
        ok = p.dtype.kind in "iu" and p.shape in ((), (2,), (2, 2), (4, 2)) and (p >= 0).all()
    except (ValueError, TypeError):
        ok = False
    if not ok:
        raise ValueError(f"{op}: padding must be 'VALID', 'SAME', a non-negative int, (ph, pw), "
                         f"((top, bottom), (left, right)) or TensorFlow's 4x2 list, "
                         f"got {padding!r}")
    if p.shape == (4, 2):
        if p[0].any() or p[3].any():
            raise ValueError(f"{op}: padding the batch or channel axis is not supported, "
                             f"got {padding!r}")
        p = p[1:3]
    p = np.broadcast_to(p.reshape(-1, 1) if p.shape == (2,) else p, (2, 2))
    return (int(p[0, 0]), int(p[0, 1])), (int(p[1, 0]), int(p[1, 1]))


Pair = tuple[int, int]


@dataclass(frozen=True)
class Geometry:
    """Where a sliding window goes: per spatial axis the input size, kernel size, stride,
    dilation, padding (before, after), the dilated kernel's span and the output size."""

    size: Pair
    kernel: Pair
    strides: Pair
    dilations: Pair
    pads: tuple[Pair, Pair]
    span: Pair
    out: Pair

    @property
    def padded(self) -> Pair:
        return (self.size[0] + sum(self.pads[0]), self.size[1] + sum(self.pads[1]))


def _same_pads(n: int, stride: int, span: int) -> Pair:
    """TensorFlow's SAME: out = ceil(n / stride), the odd padding pixel after."""
    total = max((-(-n // stride) - 1) * stride + span - n, 0)
    return total // 2, total - total // 2


def _parameters(op: str, strides: Any, padding: Any, dilations: Any,
                explicit_ok: bool) -> tuple[Pair, Pair, tuple[Any, Any]]:
    """Strides, dilations and per spatial axis its padding ("SAME" or (before, after)),
    validated (the error names the op and the argument)."""
    s, d = pair(op, "strides", strides), pair(op, "dilations", dilations)
    if isinstance(padding, str) and padding == "VALID":
        return s, d, ((0, 0), (0, 0))
    if isinstance(padding, str) and padding == "SAME":
        return s, d, ("SAME", "SAME")
    if isinstance(padding, str):
        raise ValueError(f"{op}: padding must be 'VALID' or 'SAME' (upper case, as in "
                         f"TensorFlow) or explicit, got {padding!r}")
    if not explicit_ok:
        raise ValueError(f"{op}: padding must be 'VALID' or 'SAME', got {padding!r}")
    return s, d, _explicit(op, padding)


def _axis_pads(n: int, stride: int, span: int, pads: Any) -> Pair:
    return _same_pads(n, stride, span) if pads == "SAME" else pads


@functools.lru_cache(maxsize=65536)
def _axis_out(n: int, k: int, stride: int, dilation: int, pads: Any) -> int | None:
    """One spatial axis's output size; None where the window is larger than the padded input."""
    span = (k - 1) * dilation + 1
    before, after = _axis_pads(n, stride, span, pads)
    padded = n + before + after
    return None if padded < span else (padded - span) // stride + 1


def geometry(op: str, size: Any, kernel: Any, strides: Any, padding: Any,
             dilations: Any = 1, explicit_ok: bool = True) -> Geometry:
    """The window geometry of ``op``, validated (the error names the op and the argument)."""
    s, d, spec = _parameters(op, strides, padding, dilations, explicit_ok)
    size, kernel = (int(size[0]), int(size[1])), (int(kernel[0]), int(kernel[1]))
    span = ((kernel[0] - 1) * d[0] + 1, (kernel[1] - 1) * d[1] + 1)
    pads = (_axis_pads(size[0], s[0], span[0], spec[0]),
            _axis_pads(size[1], s[1], span[1], spec[1]))
    out = (_axis_out(size[0], kernel[0], s[0], d[0], spec[0]),
           _axis_out(size[1], kernel[1], s[1], d[1], spec[1]))
    if out[0] is None or out[1] is None:
        padded = (size[0] + sum(pads[0]), size[1] + sum(pads[1]))
        raise ValueError(f"{op}: the window (dilated size {span}) is larger than the padded "
                         f"input {padded}: the output would be empty")
    return Geometry(size, kernel, s, d, pads, span, (out[0], out[1]))


def windows(xp: np.ndarray, geo: Geometry) -> np.ndarray:
    """The windows of a padded NHWC array: a view shaped (N, out_h, out_w, C, k_h, k_w)."""
    view = sliding_window_view(xp, geo.span, axis=(1, 2))
    (sh, sw), (dh, dw) = geo.strides, geo.dilations
    return view[:, ::sh, ::sw, :, ::dh, ::dw]


def pad_spatial(x: np.ndarray, geo: Geometry, value: float = 0.0) -> np.ndarray:
    (t, b), (le, r) = geo.pads
    return np.pad(x, ((0, 0), (t, b), (le, r), (0, 0)), constant_values=value)


def scatter_windows(contrib: np.ndarray, geo: Geometry, shape: tuple[int, ...]) -> np.ndarray:
    """The transpose of ``windows`` (then cropping the padding): adds each window entry
    ``contrib[n, i, j, c, a, b]`` back where it was read from."""
    (sh, sw), (dh, dw) = geo.strides, geo.dilations
    (oh, ow), (ph, pw) = geo.out, geo.padded
    acc = np.zeros((shape[0], ph, pw, shape[3]), contrib.dtype)
    for a in range(geo.kernel[0]):
        for b in range(geo.kernel[1]):
            rows = slice(a * dh, a * dh + sh * (oh - 1) + 1, sh)
            cols = slice(b * dw, b * dw + sw * (ow - 1) + 1, sw)
            acc[:, rows, cols, :] += contrib[..., a, b]
    (t, _), (le, _) = geo.pads
    return acc[:, t:t + shape[1], le:le + shape[2], :]


def _check_rank(op: str, name: str, x: Any, rank: int, layout: str) -> None:
    if np.ndim(x) != rank:
        raise ValueError(f"{op}: {name} must be {rank}-D ({layout}), got shape {np.shape(x)}")


def _conv_geometry(op: str, x_shape: tuple[int, ...], f_shape: tuple[int, ...], strides: Any,
                   padding: Any, dilations: Any) -> Geometry:
    if x_shape[3] != f_shape[2]:
        raise ValueError(f"{op}: the input has {x_shape[3]} channels but the filter expects "
                         f"{f_shape[2]} (input {x_shape}, filter {f_shape})")
    return geometry(op, x_shape[1:3], f_shape[:2], strides, padding, dilations)


def _check_out(op: str, geo: Geometry, dy: Any, n: int, channels: int) -> None:
    want = (n, *geo.out, channels)
    if np.shape(dy) != want:
        raise ValueError(f"{op}: out_backprop has shape {np.shape(dy)}, but the convolution's "
                         f"output has shape {want}")


def _sizes(op: str, name: str, value: Any) -> tuple[int, int, int, int]:
    v = np.asarray(value).ravel().tolist()
    if len(v) != 4:
        raise ValueError(f"op {op!r}: {name} must be four positive sizes, got {value!r}")
    a, b, c, d = (positive_int(op, f"each of {name}", size) for size in v)
    return a, b, c, d


# -- forwards ---------------------------------------------------------------------------------
def _conv2d(x: Any, filters: Any, strides: Any = 1, padding: Any = "VALID",
            dilations: Any = 1) -> np.ndarray:
    """TensorFlow's conv2d (a cross-correlation): NHWC input, HWIO filter -> NHWO."""
    op = "nn.conv2d"
    _check_rank(op, "the input", x, 4, "NHWC")
    _check_rank(op, "the filter", filters, 4, "HWIO")
    geo = _conv_geometry(op, np.shape(x), np.shape(filters), strides, padding, dilations)
    win = windows(pad_spatial(np.asarray(x), geo), geo)
    return np.einsum("nhwcij,ijco->nhwo", win, filters)


def _backprop_input(filters: Any, out_backprop: Any, input_sizes: Any, strides: Any = 1,
                    padding: Any = "VALID", dilations: Any = 1) -> np.ndarray:
    """Conv2DBackpropInput: the gradient of conv2d with respect to its input (of shape
    ``input_sizes``) for the upstream gradient ``out_backprop``."""
    op = "nn.conv2d_backprop_input"
    _check_rank(op, "the filter", filters, 4, "HWIO")
    sizes = _sizes(op, "input_sizes", input_sizes)
    geo = _conv_geometry(op, sizes, np.shape(filters), strides, padding, dilations)
    _check_out(op, geo, out_backprop, sizes[0], np.shape(filters)[3])
    contrib = np.einsum("nhwo,ijco->nhwcij", out_backprop, filters)
    return scatter_windows(contrib, geo, sizes)


def _backprop_filter(x: Any, out_backprop: Any, filter_sizes: Any, strides: Any = 1,
                     padding: Any = "VALID", dilations: Any = 1) -> np.ndarray:
    """Conv2DBackpropFilter: the gradient of conv2d with respect to its filter (of shape
    ``filter_sizes``) for the upstream gradient ``out_backprop``."""
    op = "nn.conv2d_backprop_filter"
    _check_rank(op, "the input", x, 4, "NHWC")
    sizes = _sizes(op, "filter_sizes", filter_sizes)
    geo = _conv_geometry(op, np.shape(x), sizes, strides, padding, dilations)
    _check_out(op, geo, out_backprop, np.shape(x)[0], sizes[3])
    win = windows(pad_spatial(np.asarray(x), geo), geo)
    return np.einsum("nhwcij,nhwo->ijco", win, out_backprop)


# -- checker metadata: a small space of geometries --------------------------------------------
STRIDES = (1, 2, (1, 2))
DILATIONS = (1, 2, (2, 1))
PADDINGS: tuple[Any, ...] = ("VALID", "SAME", 1, ((1, 0), (0, 2)))
SIZES = range(1, 6)


def _memo(compute: Callable[..., Any]) -> Callable[..., Any]:
    """``compute`` with its answers kept (by argument type too: ``True`` is not ``1``); an
    unhashable argument is worked out afresh."""
    known = functools.lru_cache(maxsize=8192, typed=True)(compute)

    @functools.wraps(compute)
    def lookup(*args: Any) -> Any:
        try:
            return known(*args)
        except TypeError:
            return compute(*args)
    return lookup


@_memo
def _axes(strides: Any, padding: Any, dilations: Any,
          explicit_ok: bool) -> tuple[tuple[int, int, Any], ...] | None:
    """Per spatial axis (stride, dilation, padding) as :func:`geometry` takes them; None
    where it refuses them with a ValueError."""
    try:
        s, d, spec = _parameters("", strides, padding, dilations, explicit_ok)
    except ValueError:
        return None
    return (s[0], d[0], spec[0]), (s[1], d[1], spec[1])


def _window_out(size: Any, kernel: Any, strides: Any, padding: Any, dilations: Any,
                explicit_ok: bool) -> tuple[int, int] | None:
    """``geometry(...).out`` axis by axis, or None where :func:`geometry` raises a ValueError.
    Drawing one example of a backprop or pooling-gradient op asks this of thousands of sizes
    and geometries (kept per axis, with the parameters' validation, not recomputed)."""
    axes = _axes(strides, padding, dilations, explicit_ok)
    if axes is None:
        return None
    h = _axis_out(int(size[0]), int(kernel[0]), *axes[0])
    w = _axis_out(int(size[1]), int(kernel[1]), *axes[1])
    return None if h is None or w is None else (h, w)


def _out_size(size: Any, kernel: Any, strides: Any, padding: Any,
              dilations: Any) -> tuple[int, int] | None:
    return _window_out(size, kernel, strides, padding, dilations, explicit_ok=True)


def conv_geometries(size: Any, kernel: Any) -> list[dict[str, Any]]:
    """The checker's sweep of (strides, padding, dilations) for a ``size`` input and a
    ``kernel``: every combination of STRIDES, PADDINGS and DILATIONS with a nonempty output."""
    return [{"strides": s, "padding": p, "dilations": d}
            for p in PADDINGS for s in STRIDES for d in DILATIONS
            if _out_size(size, kernel, s, p, d)]


Shape = tuple[int, ...]


def _spatial(draw: Callable[..., Any], form: str, axis: int | None) -> tuple[int, Pair]:
    """The spatial axis (0 height, 1 width; drawn where ``axis`` is None) and the spatial
    size of a ``"long"`` or ``"vector"`` form: that axis of LONG entries beside one of 1 to
    3, or of 2 to LONG[1] beside a unit one."""
    a = pick(draw, [1, 0]) if axis is None else axis
    if form == "long":
        first, other = pick(draw, range(LONG[0], LONG[1] + 1)), pick(draw, [2, 1, 3])
    else:
        first, other = pick(draw, range(2, LONG[1] + 1)), 1
    return a, ((first, other) if a == 0 else (other, first))


def _keeping(form: str, geos: list[dict[str, Any]], out: Callable[..., Any],
             axis: int) -> list[Any]:
    """The geometries whose output keeps the ``form``: ``axis`` long (LONG[0] or more
    entries), or for ``"vector"`` the other axis of one entry."""
    if form == "long":
        return [g for g in geos if out(**g)[axis] >= LONG[0]]
    return [g for g in geos if out(**g)[1 - axis] == 1]


def _conv_draw(draw: Callable[..., Any], form: str | None = None,
               axis: int | None = None) -> tuple[Shape, Shape, Shape]:
    """x (NHWC), filter (HWIO) and the output shape of one geometry of the sweep; with a
    stratum's ``form`` (see :mod:`gradcheck.ops.forms`): ``"long"``, batch 1, one or two
    channels and one spatial axis (``axis``, drawn where None) of LONG entries in the input
    and the output; ``"vector"``, a single image and channel, one spatial axis of 2 to
    LONG[1] (the other 1, in the output too); ``"deep"``, batch and channels of 2 or more."""
    if form is None:  # the draws of every stratum without a form: unchanged
        n, c, o = pick(draw, [1, 2]), pick(draw, [2, 1, 3]), pick(draw, [2, 1, 3])
        size = (pick(draw, [4, 3, 5, 1, 2]), pick(draw, [3, 5, 4, 2, 1]))
        kernel = (pick(draw, [2, 1, 3]), pick(draw, [3, 1, 2]))
        params = pick(draw, conv_geometries(size, kernel))
    elif form == "deep":
        n, c, o = 2, pick(draw, [2, 3]), pick(draw, [2, 3])
        size = (pick(draw, [3, 2, 4]), pick(draw, [3, 4, 2]))
        kernel = (pick(draw, [2, 1, 3]), pick(draw, [3, 1, 2]))
        params = pick(draw, conv_geometries(size, kernel))
    else:
        a, size = _spatial(draw, form, axis)
        if form == "long":
            n, c, o = 1, pick(draw, [1, 2]), pick(draw, [2, 1])
            kernel = (pick(draw, [2, 1, 3]), pick(draw, [3, 1, 2]))
        else:
            k = pick(draw, [2, 1, 3])
            n, c, o, kernel = 1, 1, 1, ((k, 1) if a == 0 else (1, k))
        params = pick(draw, _keeping(form, conv_geometries(size, kernel),
                                     functools.partial(_out_size, size, kernel), a))
    out = _out_size(size, kernel, **params)
    assert out is not None
    return (n, *size, c), (*kernel, c, o), (n, *out, o)


def _conv2d_shapes(draw: Callable[..., Any], form: str | None = None) -> list[Shape]:
    return list(_conv_draw(draw, form)[:2])


def _backprop_input_shapes(draw: Callable[..., Any], form: str | None = None) -> list[Shape]:
    return list(_conv_draw(draw, form)[1:])


def _backprop_filter_shapes(draw: Callable[..., Any], form: str | None = None) -> list[Shape]:
    x, _, dy = _conv_draw(draw, form)
    return [x, dy]


def _reaching(out: int) -> range:
    """The sizes of a spatial axis that a window of the sweep (span up to 5, stride up to 2,
    padding up to 4) can take to ``out`` entries."""
    return range(max(1, out - 4), 2 * out + 5)


def _sizes_to(out: Shape, found: Callable[[range, range], list[Any]]) -> list[Any]:
    """``found(heights, widths)`` over SIZES, or where none fits (an output longer than the
    sweep's inputs make, drawn by the long form) over the sizes that can reach ``out``."""
    return found(SIZES, SIZES) or found(_reaching(out[0]), _reaching(out[1]))


def _conv_params(draw: Callable[..., Any], shapes: list[tuple[int, ...]]) -> dict[str, Any]:
    x, f = shapes
    return pick(draw, conv_geometries(x[1:3], f[:2]))


def _backprop_input_params(draw: Callable[..., Any],
                           shapes: list[tuple[int, ...]]) -> dict[str, Any]:
    """An input size and geometry whose convolution output has ``out_backprop``'s shape."""
    f, dy = shapes
    found = _sizes_to(dy[1:3], functools.partial(_conv_inputs, tuple(f[:2]), tuple(dy[1:3])))
    return pick(draw, [{"input_sizes": (dy[0], h, w, f[2]), **g} for h, w, g in found])


@functools.lru_cache(maxsize=4096)
def _conv_inputs(kernel: Pair, out: Pair, heights: range,
                 widths: range) -> list[tuple[int, int, dict[str, Any]]]:
    """The input sizes and geometries of the sweep that convolve to ``out`` (kept: drawing
    one example asks it of hundreds of them)."""
    return [(h, w, g) for h in heights for w in widths for g in conv_geometries((h, w), kernel)
            if _out_size((h, w), kernel, **g) == out]


def _backprop_filter_params(draw: Callable[..., Any],
                            shapes: list[tuple[int, ...]]) -> dict[str, Any]:
    """A filter size and geometry whose convolution of ``x`` has ``out_backprop``'s shape."""
    x, dy = shapes
    found = [{"filter_sizes": (kh, kw, x[3], dy[3]), **g}
             for kh in (1, 2, 3) for kw in (1, 2, 3) for g in conv_geometries(x[1:3], (kh, kw))
             if _out_size(x[1:3], (kh, kw), **g) == dy[1:3]]
    return pick(draw, found)


# -- TensorFlow equivalents: its conv and pooling functions, its raw gradient ops --------------
def _tf_pads(op: str, padding: Any) -> Any:
    """The op's padding as tf.nn.conv2d takes it: 'VALID', 'SAME' or four (before, after)."""
    if isinstance(padding, str):
        return padding
    return [[0, 0], *(list(p) for p in _explicit(op, padding)), [0, 0]]


def _tf_conv_args(op: str, strides: Any, padding: Any, dilations: Any) -> dict[str, Any]:
    """The raw Conv2D* ops' geometry attributes (``padding="EXPLICIT"`` with a flat list)."""
    d = pair(op, "dilations", dilations)
    if max(d) > 1:  # the forward would run (with unit strides); its gradient ops would not
        raise NoEquivalent("TensorFlow's CPU Conv2DBackpropInput and Conv2DBackpropFilter "
                           "do not support dilations > 1")
    pads = _tf_pads(op, padding)
    explicit = [] if isinstance(pads, str) else [int(v) for p in pads for v in p]
    return {"strides": [1, *pair(op, "strides", strides), 1],
            "padding": pads if isinstance(pads, str) else "EXPLICIT",
            "explicit_paddings": explicit, "dilations": [1, *d, 1]}


def _tf_conv2d(tf: Any, x: Any, filters: Any, strides: Any = 1, padding: Any = "VALID",
               dilations: Any = 1) -> Any:
    geo = _tf_conv_args("nn.conv2d", strides, padding, dilations)  # refuses dilations > 1
    return tf.nn.conv2d(x, filters, strides=geo["strides"], padding=_tf_pads("nn.conv2d", padding),
                        dilations=geo["dilations"])


def _tf_backprop_input(tf: Any, filters: Any, dy: Any, input_sizes: Any, strides: Any = 1,
                       padding: Any = "VALID", dilations: Any = 1) -> Any:
    sizes = tf.constant([int(a) for a in np.ravel(input_sizes)], dtype=tf.int32)
    return tf.raw_ops.Conv2DBackpropInput(
        input_sizes=sizes, filter=filters, out_backprop=dy,
        **_tf_conv_args("nn.conv2d_backprop_input", strides, padding, dilations))


def _tf_backprop_filter(tf: Any, x: Any, dy: Any, filter_sizes: Any, strides: Any = 1,
                        padding: Any = "VALID", dilations: Any = 1) -> Any:
    sizes = tf.constant([int(a) for a in np.ravel(filter_sizes)], dtype=tf.int32)
    return tf.raw_ops.Conv2DBackpropFilter(
        input=x, filter_sizes=sizes, out_backprop=dy,
        **_tf_conv_args("nn.conv2d_backprop_filter", strides, padding, dilations))


# -- the ops ----------------------------------------------------------------------------------
GEOMETRY_PARAMS = ("strides", "padding", "dilations")


def _geo(params: dict[str, Any]) -> dict[str, Any]:
    """The geometry parameters among an op's parameters (not the sizes)."""
    return {k: v for k, v in params.items() if k in GEOMETRY_PARAMS}


def _input_ct(f: Any, dy: Any, x: Any, p: dict[str, Any]) -> Any:
    return unbroadcast(conv2d_backprop_input(f, dy, shape_of(x), **_geo(p)), x)


def _filter_ct(x: Any, dy: Any, f: Any, p: dict[str, Any]) -> Any:
    return unbroadcast(conv2d_backprop_filter(x, dy, shape_of(f), **_geo(p)), f)


conv2d: Op = define_op(
    "nn.conv2d", _conv2d,
    vjp=(lambda g, out, x, f, **p: _input_ct(f, g, x, p),
         lambda g, out, x, f, **p: _filter_ct(x, g, f, p)),
    jvp=(lambda t, out, x, f, **p: conv2d(t, f, **p),
         lambda t, out, x, f, **p: conv2d(x, t, **p)),
    family="nn", inputs=(REAL, REAL), shapes=_conv2d_shapes,
    params=_conv_params, grad_op="nn.conv2d_backprop_input",
    doc="TensorFlow's conv2d (NHWC input, HWIO filter); its VJPs are nn.conv2d_backprop_input "
        "and nn.conv2d_backprop_filter.",
    equivalents={"tensorflow": _tf_conv2d},
)
conv2d_backprop_input: Op = define_op(
    "nn.conv2d_backprop_input", _backprop_input,
    # <w, BI(f, dy)> = <conv2d(w, f), dy>: the filter's part is BF(w, dy), dy's conv2d(w, f)
    vjp=(lambda w, out, f, dy, **p: _filter_ct(w, dy, f, p),
         lambda w, out, f, dy, **p: unbroadcast(conv2d(w, f, **_geo(p)), dy)),
    jvp=(lambda t, out, f, dy, **p: conv2d_backprop_input(t, dy, **p),
         lambda t, out, f, dy, **p: conv2d_backprop_input(f, t, **p)),
    family="nn", inputs=(REAL, REAL), shapes=_backprop_input_shapes,
    params=_backprop_input_params, grad_of="nn.conv2d",
    equivalents={"tensorflow": _tf_backprop_input},
)
conv2d_backprop_filter: Op = define_op(
    "nn.conv2d_backprop_filter", _backprop_filter,
    # <w, BF(x, dy)> = <conv2d(x, w), dy>: the input's part is BI(w, dy), dy's conv2d(x, w)
    vjp=(lambda w, out, x, dy, **p: _input_ct(w, dy, x, p),
         lambda w, out, x, dy, **p: unbroadcast(conv2d(x, w, **_geo(p)), dy)),
    jvp=(lambda t, out, x, dy, **p: conv2d_backprop_filter(t, dy, **p),
         lambda t, out, x, dy, **p: conv2d_backprop_filter(x, t, **p)),
    family="nn", inputs=(REAL, REAL),
    shapes=_backprop_filter_shapes,
    params=_backprop_filter_params, grad_of="nn.conv2d",
    equivalents={"tensorflow": _tf_backprop_filter},
)


# -- conv1d: conv2d with a unit height --------------------------------------------------------
def _as_2d(stride: Any = 1, padding: Any = "VALID", dilations: Any = 1) -> dict[str, Any]:
    """conv1d's parameters as conv2d's for an image of height 1, validated."""
    op = "nn.conv1d"
    s, d = positive_int(op, "stride", stride), positive_int(op, "dilations", dilations)
    if not isinstance(padding, str):
        p = np.asarray(padding)
        if p.dtype.kind not in "iu" or p.shape not in ((), (2,)) or (p < 0).any():
            raise ValueError(f"{op}: padding must be 'VALID', 'SAME', a non-negative int or "
                             f"(left, right), got {padding!r}")
        padding = ((0, 0), tuple(int(a) for a in np.broadcast_to(p, (2,))))
    return {"strides": (1, s), "padding": padding, "dilations": (1, d)}


def _conv1d(x: Any, filters: Any, stride: Any = 1, padding: Any = "VALID",
            dilations: Any = 1) -> np.ndarray:
    """TensorFlow's conv1d: NWC input, WIO filter -> NWO (conv2d on a height-1 image)."""
    _check_rank("nn.conv1d", "the input", x, 3, "NWC")
    _check_rank("nn.conv1d", "the filter", filters, 3, "WIO")
    p = _as_2d(stride, padding, dilations)
    return _conv2d(np.asarray(x)[:, None], np.asarray(filters)[None], **p)[:, 0]


def _conv1d_vjp_x(g: Any, out: Any, x: Any, f: Any, **p: Any) -> Any:
    ct = conv2d_backprop_input(expand_dims(f, 0), expand_dims(g, 1),
                               (shape_of(x)[0], 1, *shape_of(x)[1:]), **_as_2d(**p))
    return unbroadcast(reshape(ct, shape_of(x)), x)


def _conv1d_vjp_f(g: Any, out: Any, x: Any, f: Any, **p: Any) -> Any:
    ct = conv2d_backprop_filter(expand_dims(x, 1), expand_dims(g, 1), (1, *shape_of(f)),
                                **_as_2d(**p))
    return unbroadcast(reshape(ct, shape_of(f)), f)


def _conv1d_params(draw: Callable[..., Any], shapes: list[tuple[int, ...]]) -> dict[str, Any]:
    x, f = shapes
    found = [{"stride": s, "padding": p, "dilations": d}
             for s in (1, 2) for p in ("VALID", "SAME", 1, (0, 2)) for d in (1, 2)
             if _out_size((1, x[1]), (1, f[0]), **_as_2d(s, p, d))]
    return pick(draw, found)


def _conv1d_shapes(draw: Callable[..., Any], form: str | None = None) -> list[Shape]:
    """conv2d's draw without its height (the long or vector axis is the width)."""
    x, f, _ = _conv_draw(draw, form, axis=None if form is None else 1)
    return [(x[0], x[2], x[3]), f[1:]]


def _tf_conv1d(tf: Any, x: Any, filters: Any, stride: Any = 1, padding: Any = "VALID",
               dilations: Any = 1) -> Any:
    if int(dilations) > 1:
        raise NoEquivalent("TensorFlow's CPU Conv2DBackpropInput and Conv2DBackpropFilter "
                           "do not support dilations > 1")
    if isinstance(padding, str):
        return tf.nn.conv1d(x, filters, stride=int(stride), padding=padding)
    # tf.nn.conv1d takes 'SAME' or 'VALID' only: explicit padding through conv2d on a
    # height-1 image, which is how tf.nn.conv1d computes
    out = _tf_conv2d(tf, tf.expand_dims(x, 1), tf.expand_dims(filters, 0),
                     **_as_2d(stride, padding, dilations))
    return tf.squeeze(out, 1)


conv1d: Op = define_op(
    "nn.conv1d", _conv1d,
    vjp=(_conv1d_vjp_x, _conv1d_vjp_f),
    jvp=(lambda t, out, x, f, **p: conv1d(t, f, **p),
         lambda t, out, x, f, **p: conv1d(x, t, **p)),
    family="nn", inputs=(REAL, REAL), shapes=_conv1d_shapes, params=_conv1d_params,
    equivalents={"tensorflow": _tf_conv1d},
)


# -- pooling ----------------------------------------------------------------------------------
def _pool_geometry(op: str, size: Any, ksize: Any, strides: Any, padding: Any) -> Geometry:
    return geometry(op, size, pair(op, "ksize", ksize), strides, padding, explicit_ok=False)


def _window_counts(geo: Geometry, dtype: Any) -> np.ndarray:
    """How many real (unpadded) entries each window holds, shaped (1, out_h, out_w, 1)."""
    ones = np.ones((1, *geo.size, 1), dtype)
    return windows(pad_spatial(ones, geo), geo).sum(axis=(-2, -1))


def _avg_pool2d(x: Any, ksize: Any, strides: Any, padding: str = "VALID") -> np.ndarray:
    """TensorFlow's avg_pool2d (NHWC): window means; with SAME padding each window's mean is
    over its real entries only (the padding is not counted)."""
    _check_rank("nn.avg_pool2d", "the input", x, 4, "NHWC")
    x = np.asarray(x)
    geo = _pool_geometry("nn.avg_pool2d", x.shape[1:3], ksize, strides, padding)
    sums = windows(pad_spatial(x, geo), geo).sum(axis=(-2, -1))
    return sums / _window_counts(geo, x.dtype)


def _avg_pool2d_grad(grad: Any, orig_input_shape: Any, ksize: Any, strides: Any,
                     padding: str = "VALID") -> np.ndarray:
    """AvgPoolGrad: each window's upstream gradient shared evenly among its real entries."""
    op = "nn.avg_pool2d_grad"
    sizes = _sizes(op, "orig_input_shape", orig_input_shape)
    geo = _pool_geometry(op, sizes[1:3], ksize, strides, padding)
    _check_out(op, geo, grad, sizes[0], sizes[3])
    grad = np.asarray(grad)
    share = grad / _window_counts(geo, grad.dtype)
    return scatter_windows(np.broadcast_to(share[..., None, None], share.shape + geo.kernel),
                           geo, sizes)


def _argmax(op: str, x: Any, ksize: Any, strides: Any, padding: str) -> np.ndarray:
    """For each output of max pooling, the flat index into ``x`` of its window's maximum:
    the first maximal entry in row-major window order (padding is -inf, never chosen)."""
    _check_rank(op, "the input", x, 4, "NHWC")
    x = np.asarray(x)
    n, h, w, c = x.shape
    geo = _pool_geometry(op, (h, w), ksize, strides, padding)
    win = windows(pad_spatial(x, geo, -np.inf), geo)
    kh, kw = geo.kernel
    first = np.argmax(win.reshape(*win.shape[:4], kh * kw), axis=-1)
    (sh, sw), ((top, _), (left, _)) = geo.strides, geo.pads
    rows = first // kw + (np.arange(geo.out[0]) * sh - top)[:, None, None]
    cols = first % kw + (np.arange(geo.out[1]) * sw - left)[:, None]
    batch = np.arange(n)[:, None, None, None]
    return ((batch * h + rows) * w + cols) * c + np.arange(c)


def _max_pool2d(x: Any, ksize: Any, strides: Any, padding: str = "VALID") -> np.ndarray:
    """TensorFlow's max_pool2d (NHWC): window maxima (SAME pads with -inf)."""
    _check_rank("nn.max_pool2d", "the input", x, 4, "NHWC")
    x = np.asarray(x)
    geo = _pool_geometry("nn.max_pool2d", x.shape[1:3], ksize, strides, padding)
    return windows(pad_spatial(x, geo, -np.inf), geo).max(axis=(-2, -1))


def _max_pool2d_grad(x: Any, grad: Any, ksize: Any, strides: Any,
                     padding: str = "VALID") -> np.ndarray:
    """MaxPoolGrad: ``grad`` added at each window's argmax in ``x`` (TensorFlow also takes the
    forward's output; the argmax is recomputed from ``x`` here, so that input is dropped)."""
    op = "nn.max_pool2d_grad"
    idx = _argmax(op, x, ksize, strides, padding)
    if np.shape(grad) != idx.shape:
        raise ValueError(f"{op}: grad has shape {np.shape(grad)}, but max pooling gives "
                         f"{idx.shape}")
    grad = np.asarray(grad)
    out = np.zeros(np.size(x), grad.dtype)
    np.add.at(out, idx.ravel(), grad.ravel())  # overlapping windows may share an argmax
    return out.reshape(np.shape(x))


def _max_pool2d_grad_grad(x: Any, grad: Any, ksize: Any, strides: Any,
                          padding: str = "VALID") -> np.ndarray:
    """MaxPoolGradGrad: ``grad`` (shaped like ``x``) read at each window's argmax in ``x``."""
    op = "nn.max_pool2d_grad_grad"
    idx = _argmax(op, x, ksize, strides, padding)
    if np.shape(grad) != np.shape(x):
        raise ValueError(f"{op}: grad has shape {np.shape(grad)}, but the input has shape "
                         f"{np.shape(x)}")
    return np.asarray(grad).ravel()[idx]


# checker metadata: pooling geometries of the sweep
KSIZES: tuple[Any, ...] = (2, 1, 3, (2, 1))
POOL_STRIDES: tuple[Any, ...] = (1, 2, (2, 1))


def _pool_out(size: Any, ksize: Any, strides: Any, padding: str) -> tuple[int, int] | None:
    """``_pool_geometry(...).out``, or None where it raises a ValueError."""
    kernel = _pool_kernel(ksize)
    return None if kernel is None else \
        _window_out(size, kernel, strides, padding, 1, explicit_ok=False)


@_memo
def _pool_kernel(ksize: Any) -> tuple[int, int] | None:
    try:
        return pair("", "ksize", ksize)
    except ValueError:
        return None


def _pool_geometries(size: Any) -> list[dict[str, Any]]:
    return [{"ksize": k, "strides": s, "padding": p} for p in ("VALID", "SAME")
            for k in KSIZES for s in POOL_STRIDES if _pool_out(size, k, s, p)]


def _pool_draw(draw: Callable[..., Any], form: str | None = None) -> tuple[Shape, Shape]:
    """An NHWC input and the pooled shape under one geometry of the sweep; with a stratum's
    ``form`` as :func:`_conv_draw` draws it (``"long"``: the output keeps the long axis)."""
    if form is None:  # the draws of every stratum without a form: unchanged
        n, c = pick(draw, [1, 2]), pick(draw, [2, 1, 3])
        size = (pick(draw, [4, 3, 5, 1, 2]), pick(draw, [3, 5, 4, 2, 1]))
        geos = _pool_geometries(size)
    elif form == "deep":
        n, c = 2, pick(draw, [2, 3])
        size = (pick(draw, [3, 2, 4]), pick(draw, [3, 4, 2]))
        geos = _pool_geometries(size)
    else:
        a, size = _spatial(draw, form, None)
        n, c = 1, (pick(draw, [1, 2]) if form == "long" else 1)
        geos = _keeping(form, _pool_geometries(size), functools.partial(_pool_out, size), a)
    out = _pool_out(size, **pick(draw, geos))
    assert out is not None
    return (n, *size, c), (n, *out, c)


def _pool_input_shape(draw: Callable[..., Any], form: str | None = None) -> list[Shape]:
    return [_pool_draw(draw, form)[0]]


def _pooled_shape(draw: Callable[..., Any], form: str | None = None) -> list[Shape]:
    return [_pool_draw(draw, form)[1]]


def _pool_twice(draw: Callable[..., Any], form: str | None = None) -> list[Shape]:
    return [_pool_draw(draw, form)[0]] * 2


def _pool_shapes(draw: Callable[..., Any], form: str | None = None) -> list[Shape]:
    return list(_pool_draw(draw, form))


def _pool_params(draw: Callable[..., Any], shapes: list[tuple[int, ...]]) -> dict[str, Any]:
    return pick(draw, _pool_geometries(shapes[0][1:3]))


def _pool_grad_params(draw: Callable[..., Any], shapes: list[tuple[int, ...]]) -> dict[str, Any]:
    """A geometry pooling ``shapes[0]`` to ``shapes[1]``'s shape."""
    x, out = shapes
    return pick(draw, [g for g in _pool_geometries(x[1:3])
                       if _pool_out(x[1:3], **g) == out[1:3]])


def _avg_grad_params(draw: Callable[..., Any], shapes: list[tuple[int, ...]]) -> dict[str, Any]:
    """An input shape and geometry that avg_pool2d maps to ``grad``'s shape."""
    grad = shapes[0]
    found = _sizes_to(grad[1:3], functools.partial(_pool_inputs, tuple(grad[1:3])))
    return pick(draw, [{"orig_input_shape": (grad[0], h, w, grad[3]), **g} for h, w, g in found])


@functools.lru_cache(maxsize=4096)
def _pool_inputs(out: Pair, heights: range,
                 widths: range) -> list[tuple[int, int, dict[str, Any]]]:
    """The input sizes and pooling geometries of the sweep that pool to ``out`` (kept)."""
    return [(h, w, g) for h in heights for w in widths for g in _pool_geometries((h, w))
            if _pool_out((h, w), **g) == out]


def _pool(p: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in p.items() if k in ("ksize", "strides", "padding")}


def _tf_pool_args(op: str, ksize: Any, strides: Any, padding: str) -> dict[str, Any]:
    return {"ksize": [1, *pair(op, "ksize", ksize), 1],
            "strides": [1, *pair(op, "strides", strides), 1], "padding": padding}


def _tf_avg_pool2d_grad(tf: Any, grad: Any, orig_input_shape: Any, ksize: Any, strides: Any,
                        padding: str = "VALID") -> Any:
    shape = tf.constant([int(a) for a in np.ravel(orig_input_shape)], dtype=tf.int32)
    return tf.raw_ops.AvgPoolGrad(orig_input_shape=shape, grad=grad, **_tf_pool_args(
        "nn.avg_pool2d_grad", ksize, strides, padding))


def _tf_max_pool2d_grad(tf: Any, x: Any, grad: Any, ksize: Any, strides: Any,
                        padding: str = "VALID") -> Any:
    args = _tf_pool_args("nn.max_pool2d_grad", ksize, strides, padding)
    return tf.raw_ops.MaxPoolGrad(orig_input=x, orig_output=tf.raw_ops.MaxPool(input=x, **args),
                                  grad=grad, **args)


def _tf_max_pool2d_grad_grad(tf: Any, x: Any, grad: Any, ksize: Any, strides: Any,
                             padding: str = "VALID") -> Any:
    args = _tf_pool_args("nn.max_pool2d_grad_grad", ksize, strides, padding)
    return tf.raw_ops.MaxPoolGradGrad(orig_input=x,
                                      orig_output=tf.raw_ops.MaxPool(input=x, **args),
                                      grad=grad, **args)


avg_pool2d_grad: Op = define_op(
    "nn.avg_pool2d_grad", _avg_pool2d_grad,
    vjp=lambda w, out, grad, **p: avg_pool2d(w, **_pool(p)),
    linear=True, family="nn", inputs=(REAL,), shapes=_pooled_shape,
    params=_avg_grad_params, grad_of="nn.avg_pool2d",
    equivalents={"tensorflow": _tf_avg_pool2d_grad},
)
avg_pool2d: Op = define_op(
    "nn.avg_pool2d", _avg_pool2d,
    vjp=lambda g, out, x, **p: avg_pool2d_grad(g, shape_of(x), **p),
    linear=True, family="nn", inputs=(REAL,), shapes=_pool_input_shape,
    params=_pool_params, grad_op="nn.avg_pool2d_grad",
    equivalents={"tensorflow": lambda tf, x, ksize, strides, padding="VALID": tf.nn.avg_pool2d(
        x, **_tf_pool_args("nn.avg_pool2d", ksize, strides, padding))},
)
max_pool2d_grad_grad: Op = define_op(
    "nn.max_pool2d_grad_grad", _max_pool2d_grad_grad,
    # TensorFlow's _MaxPoolGradGradGrad: zero for x (the argmax is piecewise constant)
    vjp=(lambda w, out, x, grad, **p: zeros_like(x),
         lambda w, out, x, grad, **p: max_pool2d_grad(x, w, **p)),
    jvp=(None, lambda t, out, x, grad, **p: max_pool2d_grad_grad(x, t, **p)),
    family="nn", inputs=(REAL, REAL), kinks="ties",
    shapes=_pool_twice, params=_pool_params,
    grad_of="nn.max_pool2d_grad",
    equivalents={"tensorflow": _tf_max_pool2d_grad_grad},
)
max_pool2d_grad: Op = define_op(
    "nn.max_pool2d_grad", _max_pool2d_grad,
    # TensorFlow's _MaxPoolGradGrad: zero for x, MaxPoolGradGrad for the upstream gradient
    vjp=(lambda w, out, x, grad, **p: zeros_like(x),
         lambda w, out, x, grad, **p: max_pool2d_grad_grad(x, w, **p)),
    jvp=(None, lambda t, out, x, grad, **p: max_pool2d_grad(x, t, **p)),
    family="nn", inputs=(REAL, REAL), kinks="ties",
    shapes=_pool_shapes, params=_pool_grad_params,
    grad_of="nn.max_pool2d", grad_op="nn.max_pool2d_grad_grad",
    equivalents={"tensorflow": _tf_max_pool2d_grad},
)
max_pool2d: Op = define_op(
    "nn.max_pool2d", _max_pool2d,
    vjp=lambda g, out, x, **p: max_pool2d_grad(x, g, **p),
    jvp=lambda ts, out, x, **p: max_pool2d_grad_grad(x, ts[0], **p),
    family="nn", inputs=(REAL,), kinks="ties",
    shapes=_pool_input_shape, params=_pool_params,
    grad_op="nn.max_pool2d_grad",
    equivalents={"tensorflow": lambda tf, x, ksize, strides, padding="VALID": tf.nn.max_pool2d(
        x, **_tf_pool_args("nn.max_pool2d", ksize, strides, padding))},
)
