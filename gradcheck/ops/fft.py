"""The FFT family (numpy.fft's names and signatures, every norm mode).

Cotangents follow JAX's convention (README "Complex numbers"): the VJP is the transpose of
the JVP under ``Re(sum(a * b))``.  The DFT matrix ``F`` is symmetric, so the VJP of
``fft(x, norm)`` is ``fft(g, norm)`` itself (the same for ifft), followed by the transpose of
the zero padding or cropping that ``n``/``s`` applied to the input.

The real transforms are where bugs hide: ``rfft`` keeps bins ``0..n//2`` of ``fft``, and
``irfft`` reads each bin other than DC (and, for even ``n``, Nyquist) twice, as ``x_k`` and
``conj(x_k)``.  So

* ``rfft``'s VJP is ``irfft(conj(g) * w)`` with ``w = 1/2`` on the doubled bins and ``1`` on
  DC and Nyquist (``irfft`` doubles them back), in the dual norm mode;
* ``irfft``'s VJP is ``c * conj(rfft(g))`` in the dual norm mode, ``c = 2`` on the doubled
  bins and ``1`` on DC and Nyquist (whose imaginary parts ``irfft`` ignores: their
  cotangents come out real).

A real input where a complex one is expected (numpy reads it with zero imaginary part) gets
the real part of its cotangent, as everywhere (``cast_cotangent``).

An n-D transform is numpy's sequence of 1-D ones (``_steps``: fftn runs the last axis
first, rfftn an rfft over the last axis and then ffts, irfftn ifft over the others and then
an irfft over the last), so its VJP is their transposes in reverse order.  That also holds
when ``axes`` names an axis twice, where numpy transforms it again, cropped or padded to each
length of ``s`` in turn.

All rules are written with registered ops (the transforms themselves, conj, multiply, pad
and getitem), so they differentiate again.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from gradcheck.domains import REAL
from gradcheck.engine.op import Op, define_op
from gradcheck.ops.complex import conj
from gradcheck.ops.refs import NoEquivalent
from gradcheck.ops.rules import cast_cotangent, dtype_of, shape_of

#: Names exported in gradcheck.numpy.fft.
FFT = ["fft", "ifft", "rfft", "irfft", "fft2", "ifft2", "rfft2", "irfft2", "fftn", "ifftn",
       "rfftn", "irfftn"]

NORMS = (None, "backward", "ortho", "forward")
#: The norm mode whose scaling is the transpose's: "backward" scales the inverse by 1/n.
_DUAL = {None: "forward", "backward": "forward", "ortho": "ortho", "forward": "backward"}


def _check_norm(op: str, norm: Any) -> None:
    if norm not in NORMS:
        raise ValueError(f"op {op!r}: norm must be one of None, 'backward', 'ortho', "
                         f"'forward'; got {norm!r}")


def _resize(x: Any, length: int, axis: int) -> Any:
    """``x`` cropped or zero-padded to ``length`` along ``axis`` (differentiably)."""
    from gradcheck.ops.shape import getitem, pad

    shape = shape_of(x)
    have = shape[axis]
    if have == length:
        return x
    if have > length:
        index = tuple(slice(None, length) if i == axis % len(shape) else slice(None)
                      for i in range(len(shape)))
        return getitem(x, index=index)
    width = [(0, length - have) if i == axis % len(shape) else (0, 0) for i in range(len(shape))]
    return pad(x, tuple(width))


def _bin_weights(n: int, bins: int, double: bool, axis: int, ndim: int) -> np.ndarray:
    """Per-bin weights along ``axis`` for a real transform of length ``n``: 2 (``double``)
    or 1/2 on the bins irfft reads twice, 1 on DC and (even ``n``) Nyquist."""
    w = np.full(bins, 2.0 if double else 0.5)
    w[0] = 1.0
    if n % 2 == 0 and n // 2 < bins:
        w[n // 2] = 1.0
    shape = [1] * ndim
    shape[axis % ndim] = bins
    return w.reshape(shape)


def _times(x: Any, w: np.ndarray) -> Any:
    """``x * w`` keeping ``x``'s precision (a float64 weight must not upcast complex64)."""
    return x * w.astype(np.empty(0, dtype_of(x)).real.dtype)


def _rfft_transpose(g: Any, n: int, axis: int, norm: Any) -> Any:
    """The transpose of ``rfft(., n, axis, norm)`` (a real array of length ``n``)."""
    w = _bin_weights(n, shape_of(g)[axis], False, axis, len(shape_of(g)))
    return irfft(_times(conj(g), w), n, axis, _DUAL[norm])


def _irfft_transpose(g: Any, n: int, bins: int, axis: int, norm: Any) -> Any:
    """The transpose of ``irfft(., n, axis, norm)`` for an input of ``bins`` bins."""
    r = conj(rfft(g, n, axis, _DUAL[norm]))
    r = _times(r, _bin_weights(n, shape_of(r)[axis], True, axis, len(shape_of(r))))
    return _resize(r, bins, axis)


def _check_axis(op: str, name: str, axis: Any, ndim: int) -> int:
    """``axis`` as a non-negative int; numpy's ``AxisError`` (an ``IndexError``) naming
    ``op`` when it is out of bounds for ``a``."""
    if not -ndim <= axis < ndim:
        raise np.exceptions.AxisError(f"op {op!r}: {name} {axis} is out of bounds for an "
                                      f"input a of dimension {ndim}")
    return int(axis) % ndim


def _check_points(op: str, what: str, points: Any) -> None:
    if points < 1:
        raise ValueError(f"op {op!r}: {what} is {points}; a transform needs at least 1 point")


def _check_1d(op: str, a: Any, n: Any, axis: Any, inverse_real: bool = False) -> None:
    """numpy.fft's conditions on ``(a, n, axis)``, in errors that name ``op``."""
    ax = _check_axis(op, "axis", axis, len(shape_of(a)))
    if n is not None:
        _check_points(op, "n", n)
    elif inverse_real:
        bins = shape_of(a)[ax]
        _check_points(op, f"the default n = 2 * ({bins} - 1) for the {bins} bins of a "
                      f"along axis {axis}", 2 * (bins - 1))
    else:
        _check_points(op, f"the length along axis {axis} (from a's shape)", shape_of(a)[ax])


def _axes_of(op: str, x: Any, s: Any, axes: Any, default: Any,
             kind: str) -> tuple[tuple[int, ...], list[int | None]]:
    """numpy.fft's ``(axes, lengths)`` for an n-D transform of ``x``, checked.

    Without ``s`` the lengths are ``x``'s (for ``kind`` "irfft", ``2 (m - 1)`` on the last
    axis).  An entry -1 of ``s`` keeps ``x``'s length; an entry None stays None: the 1-D
    transform's default, which ``_steps`` reads from that step's input.  "rfft" and "irfft"
    need an axis.
    """
    shape = shape_of(x)
    if axes is None:
        axes = default if default is not None else (
            tuple(range(len(shape))) if s is None else
            tuple(range(len(shape) - len(s), len(shape))))
    axes = tuple(_check_axis(op, "axes entry", a, len(shape)) for a in axes)
    if s is not None and len(s) != len(axes):
        raise ValueError(f"op {op!r}: s has {len(s)} entries but axes has {len(axes)} "
                         f"({axes}); give one length per transformed axis")
    if kind in ("rfft", "irfft") and not axes:
        raise IndexError(f"op {op!r}: no axis to transform (axes is empty or a is 0-d); "
                         "a real transform needs one")
    given = [-1] * len(axes) if s is None else list(s)
    lengths = [shape[a] if n == -1 else n for a, n in zip(axes, given, strict=True)]
    if kind == "irfft" and s is None:
        lengths[-1] = 2 * (shape[axes[-1]] - 1)
    for i, length in enumerate(lengths):
        if length is not None:
            _check_points(op, f"the length along axis {axes[i]} (from a's shape)"
                          if given[i] == -1 else f"s[{i}] (the length along axis {axes[i]})",
                          length)
    return axes, lengths


#: One 1-D transform of an n-D one: its name, its axis, the input's length along the axis
#: and ``n`` (the output's length; for "rfft" the output has ``n // 2 + 1`` bins).
Step = tuple[str, int, int, int]


def _steps(op: str, x: Any, s: Any, axes: Any, default: Any, kind: str) -> list[Step]:
    """The 1-D transforms numpy.fft applies for the n-D ``kind`` ("fft", "ifft", "rfft" or
    "irfft") of ``x``, in its order, checked: fftn and ifftn go from the last axis to the
    first, rfftn runs rfft over the last axis and then fft over the others from the last to
    the first, irfftn ifft over all but the last axis from the first and then irfft over the
    last."""
    ax, lengths = _axes_of(op, x, s, axes, default, kind)
    last = len(ax) - 1
    order = list(range(last, -1, -1))
    names = {i: "ifft" if kind in ("ifft", "irfft") else "fft" for i in order}
    if kind == "rfft":
        order, names[last] = [last, *range(last - 1, -1, -1)], "rfft"
    elif kind == "irfft":
        order, names[last] = list(range(last + 1)), "irfft"
    shape = list(shape_of(x))
    steps = []
    for i in order:
        name, have, n = names[i], shape[ax[i]], lengths[i]
        if n is None:  # the 1-D default, from this step's input
            n = 2 * (have - 1) if name == "irfft" else have
            _check_points(op, f"s[{i}] is None, so the {name} along axis {ax[i]} takes its "
                          f"default n from its input of length {have}, which", n)
        steps.append((name, ax[i], have, n))
        shape[ax[i]] = n // 2 + 1 if name == "rfft" else n
    return steps


def _transpose_step(g: Any, step: Step, norm: Any) -> Any:
    """The transpose of one 1-D transform ``step`` (in ``norm`` mode) applied to ``g``."""
    name, axis, have, n = step
    if name == "irfft":
        return _irfft_transpose(g, n, have, axis, norm)
    if name == "rfft":
        h = _rfft_transpose(g, n, axis, norm)
    else:  # the DFT matrix is symmetric: its transpose is itself
        h = _BY_NAME[name](g, None, axis, norm)
    return _resize(h, have, axis)


def _pull_back(g: Any, a: Any, steps: Sequence[Step], norm: Any) -> Any:
    """The VJP of ``steps`` applied to ``a``: their transposes in reverse order."""
    for step in reversed(steps):
        g = _transpose_step(g, step, norm)
    return cast_cotangent(g, dtype_of(a))


def _step_1d(name: str, a: Any, n: Any, axis: int) -> Step:
    """The one step of ``numpy.fft.<name>(a, n, axis)`` (n None: the default)."""
    have = shape_of(a)[axis]
    if n is None:
        n = 2 * (have - 1) if name == "irfft" else have
    return (name, axis, have, n)


def _vjp_1d(name: str) -> Callable[..., Any]:
    def vjp(g: Any, out: Any, a: Any, n: Any = None, axis: int = -1, norm: Any = None) -> Any:
        return _pull_back(g, a, [_step_1d(name, a, n, axis)], norm)
    return vjp


def _vjp_n(name: str, default: Any, kind: str) -> Callable[..., Any]:
    def vjp(g: Any, out: Any, a: Any, s: Any = None, axes: Any = default,
            norm: Any = None) -> Any:
        return _pull_back(g, a, _steps(name, a, s, axes, default, kind), norm)
    return vjp


# -- complex to complex ----------------------------------------------------------------
def _forward(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    def forward(a: Any, n: Any = None, axis: int = -1, norm: Any = None) -> np.ndarray:
        _check_norm(name, norm)
        _check_1d(name, a, n, axis, inverse_real=name == "irfft")
        return np.asarray(fn(a, n, axis, norm))
    forward.__doc__ = f"numpy.fft.{name}(a, n, axis, norm)."
    return forward


def _forward_n(name: str, fn: Callable[..., Any], default: Any,
               kind: str) -> Callable[..., Any]:
    def forward(a: Any, s: Any = None, axes: Any = default, norm: Any = None) -> np.ndarray:
        _check_norm(name, norm)
        _steps(name, a, s, axes, default, kind)
        return np.asarray(fn(a, s, axes, norm))
    forward.__doc__ = f"numpy.fft.{name}(a, s, axes, norm)."
    return forward


# -- the equivalents: numpy-style namespaces share numpy's signature ------------------
def _torch(name: str, nd: bool = False) -> Callable[..., Any]:
    if nd:
        def call_n(torch: Any, a: Any, s: Any = None, axes: Any = None, norm: Any = None) -> Any:
            dims = {} if axes is None else {"dim": axes}
            return getattr(torch.fft, name)(a, s=s, norm=norm, **dims)
        return call_n

    def call(torch: Any, a: Any, n: Any = None, axis: int = -1, norm: Any = None) -> Any:
        return getattr(torch.fft, name)(a, n=n, dim=axis, norm=norm)
    return call


def _tf(name: str, inverse: bool) -> Callable[..., Any]:
    """tf.signal's transform of the innermost axis, scaled for ``norm``."""
    def call(tf: Any, a: Any, n: Any = None, axis: int = -1, norm: Any = None) -> Any:
        ndim = len(a.shape)
        if n is not None or axis % ndim != ndim - 1:
            raise NoEquivalent(f"tf.signal.{name} transforms the innermost axis, without "
                               "numpy's n= (a frame length parameter with other semantics)")
        length = float(int(a.shape[-1]))
        x = tf.cast(a, tf.complex128) if name in ("fft", "ifft") else a
        y = getattr(tf.signal, name)(x)
        scale = _tf_scale(norm, inverse, length if name != "irfft" else
                          float(2 * (length - 1)))
        # a Python float becomes a float32 constant: give its precision explicitly
        return y if scale == 1.0 else y * tf.cast(tf.constant(scale, tf.float64), y.dtype)
    return call


def _tf_scale(norm: Any, inverse: bool, n: float) -> float:
    """What turns TensorFlow's fixed "backward" scaling into ``norm``'s."""
    if norm in (None, "backward"):
        return 1.0
    if norm == "ortho":
        return float(np.sqrt(n)) if inverse else 1.0 / float(np.sqrt(n))
    return n if inverse else 1.0 / n


def _eq(name: str, inverse: bool, nd: bool = False, tf: bool = True) -> dict[str, Any]:
    out: dict[str, Any] = {"numpy": f"fft.{name}", "torch": _torch(name, nd)}
    if tf and not nd:
        out["tensorflow"] = _tf(name, inverse)
    return out


def _params_1d(shapes: list[tuple[int, ...]]) -> list[Any]:
    return list(NORMS)


def _line(draw: Any, form: str | None = None) -> list[tuple[int, ...]]:
    """A 1-D or 2-D input whose transformed (last) axis has 2 to 6 entries; a stratum's
    ``form`` (see gradcheck.checker.sampling.FORMS) makes that axis long, the input a plain
    vector, or 4-D."""
    from hypothesis import strategies as st

    from gradcheck.ops.forms import formed_shape

    if form is not None:
        return [formed_shape(draw, form, 1, 4)]
    lead = draw(st.sampled_from([(), (2,)]))
    return [(*lead, draw(st.integers(2, 6)))]


def _plane(draw: Any, form: str | None = None) -> list[tuple[int, ...]]:
    """A 2-D or 3-D input; a stratum's ``form`` makes its last axis long, the input one
    plane, or 4-D."""
    from hypothesis import strategies as st

    from gradcheck.ops.forms import formed_shape

    if form is not None:
        return [formed_shape(draw, form, 2, 4)]
    lead = draw(st.sampled_from([(), (2,)]))
    return [(*lead, draw(st.integers(2, 4)), draw(st.integers(2, 5)))]


#: fft and ifft, looked up when a rule runs (rules refer to their own op).
_BY_NAME: dict[str, Any] = {}


fft: Op = define_op(
    "fft", _forward("fft", np.fft.fft), vjp=_vjp_1d("fft"), linear=True, family="fft",
    inputs=("complex",), shapes=_line, params={"norm": _params_1d},
    doc="numpy.fft.fft(a, n, axis, norm): the DFT along one axis.",
    equivalents=_eq("fft", False),
)
ifft: Op = define_op(
    "ifft", _forward("ifft", np.fft.ifft), vjp=_vjp_1d("ifft"), linear=True,
    family="fft", inputs=("complex",), shapes=_line, params={"norm": _params_1d},
    doc="numpy.fft.ifft(a, n, axis, norm): the inverse DFT along one axis.",
    equivalents=_eq("ifft", True),
)
fftn: Op = define_op(
    "fftn", _forward_n("fftn", np.fft.fftn, None, "fft"), vjp=_vjp_n("fftn", None, "fft"),
    linear=True, family="fft", inputs=("complex",), shapes=_plane,
    params={"norm": _params_1d},
    doc="numpy.fft.fftn(a, s, axes, norm): the DFT over several axes (all by default).",
    equivalents=_eq("fftn", False, nd=True),
)
ifftn: Op = define_op(
    "ifftn", _forward_n("ifftn", np.fft.ifftn, None, "ifft"),
    vjp=_vjp_n("ifftn", None, "ifft"), linear=True, family="fft", inputs=("complex",),
    shapes=_plane, params={"norm": _params_1d},
    doc="numpy.fft.ifftn(a, s, axes, norm): the inverse DFT over several axes.",
    equivalents=_eq("ifftn", True, nd=True),
)
fft2: Op = define_op(
    "fft2", _forward_n("fft2", np.fft.fft2, (-2, -1), "fft"),
    vjp=_vjp_n("fft2", (-2, -1), "fft"), linear=True, family="fft", inputs=("complex",),
    shapes=_plane, params={"norm": _params_1d},
    doc="numpy.fft.fft2(a, s, axes, norm): the DFT over the last two axes.",
    equivalents=_eq("fft2", False, nd=True),
)
ifft2: Op = define_op(
    "ifft2", _forward_n("ifft2", np.fft.ifft2, (-2, -1), "ifft"),
    vjp=_vjp_n("ifft2", (-2, -1), "ifft"), linear=True, family="fft", inputs=("complex",),
    shapes=_plane, params={"norm": _params_1d},
    doc="numpy.fft.ifft2(a, s, axes, norm): the inverse DFT over the last two axes.",
    equivalents=_eq("ifft2", True, nd=True),
)
_BY_NAME.update(fft=fft, ifft=ifft)


# -- real to complex and back -------------------------------------------------------------
def _rfft_forward(a: Any, n: Any = None, axis: int = -1, norm: Any = None) -> np.ndarray:
    """numpy.fft.rfft(a, n, axis, norm): bins 0..n//2 of the DFT of a real array."""
    _check_norm("rfft", norm)
    _check_1d("rfft", a, n, axis)
    if np.iscomplexobj(a):
        raise TypeError("op 'rfft': a must be real, got a complex array (use fft)")
    return np.asarray(np.fft.rfft(a, n, axis, norm))


rfft: Op = define_op(
    "rfft", _rfft_forward, vjp=_vjp_1d("rfft"), linear=True, family="fft", inputs=(REAL,),
    shapes=_line, params={"norm": _params_1d},
    equivalents=_eq("rfft", False),
)
irfft: Op = define_op(
    "irfft", _forward("irfft", np.fft.irfft), vjp=_vjp_1d("irfft"), linear=True, family="fft",
    inputs=("complex",), shapes=_line, params={"norm": _params_1d},
    doc="numpy.fft.irfft(a, n, axis, norm): the real signal of length n (default "
        "2 (m - 1)) whose rfft is a; the imaginary parts of the DC and (even n) Nyquist "
        "bins are ignored.",
    equivalents=_eq("irfft", True),
)


def _rfftn_forward(default: Any, name: str) -> Callable[..., Any]:
    def forward(a: Any, s: Any = None, axes: Any = default, norm: Any = None) -> np.ndarray:
        _check_norm(name, norm)
        if np.iscomplexobj(a):
            raise TypeError(f"op {name!r}: a must be real, got a complex array")
        _steps(name, a, s, axes, default, "rfft")
        return np.asarray(np.fft.rfftn(a, s, axes, norm))
    forward.__doc__ = f"numpy.fft.{name}(a, s, axes, norm): rfft over the last of the axes, " \
                      "fft over the others."
    return forward


def _irfftn_forward(default: Any, name: str) -> Callable[..., Any]:
    def forward(a: Any, s: Any = None, axes: Any = default, norm: Any = None) -> np.ndarray:
        _check_norm(name, norm)
        _steps(name, a, s, axes, default, "irfft")
        return np.asarray(np.fft.irfftn(a, s, axes, norm))
    forward.__doc__ = f"numpy.fft.{name}(a, s, axes, norm): ifft over all but the last of " \
                      "the axes, irfft over the last."
    return forward


rfftn: Op = define_op(
    "rfftn", _rfftn_forward(None, "rfftn"), vjp=_vjp_n("rfftn", None, "rfft"), linear=True,
    family="fft", inputs=(REAL,), shapes=_plane, params={"norm": _params_1d},
    equivalents=_eq("rfftn", False, nd=True),
)
irfftn: Op = define_op(
    "irfftn", _irfftn_forward(None, "irfftn"), vjp=_vjp_n("irfftn", None, "irfft"), linear=True,
    family="fft", inputs=("complex",), shapes=_plane, params={"norm": _params_1d},
    equivalents=_eq("irfftn", True, nd=True),
)
rfft2: Op = define_op(
    "rfft2", _rfftn_forward((-2, -1), "rfft2"), vjp=_vjp_n("rfft2", (-2, -1), "rfft"), linear=True,
    family="fft", inputs=(REAL,), shapes=_plane, params={"norm": _params_1d},
    equivalents=_eq("rfft2", False, nd=True),
)
irfft2: Op = define_op(
    "irfft2", _irfftn_forward((-2, -1), "irfft2"), vjp=_vjp_n("irfft2", (-2, -1), "irfft"),
    linear=True, family="fft", inputs=("complex",), shapes=_plane, params={"norm": _params_1d},
    equivalents=_eq("irfft2", True, nd=True),
)
