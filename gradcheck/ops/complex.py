"""Complex parts: real, imag, conj, complex(re, im), angle, and the complex modulus.

Cotangents follow JAX's convention (README "Complex numbers"): the VJP is the transpose
of the JVP under the bilinear pairing ``Re(sum(a * b))``, with no conjugation.  So for
``y = Re z`` the cotangent of ``z`` is ``g`` (a real ``g`` viewed as complex), for
``y = Im z`` it is ``-i g``, and for ``y = conj z`` it is ``conj g``.  Each rule is written
with registered ops, so it can be differentiated again.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gradcheck.domains import REAL
from gradcheck.engine.op import Op, define_op
from gradcheck.ops.rules import dtype_of, fit, unbroadcast

ANY = "(...)"

#: Names exported in gradcheck.numpy.
NUMPY = ["real", "imag", "conj", "conjugate", "angle", "complex"]


def complex_of(dtype: Any) -> np.dtype:
    """The complex dtype of ``dtype``'s precision (float32 -> complex64, else complex128)."""
    dt = np.dtype(dtype)
    if dt.kind == "c":
        return dt
    return np.dtype(np.complex64) if dt == np.float32 else np.dtype(np.complex128)


def real_of(dtype: Any) -> np.dtype:
    """The real dtype of ``dtype``'s precision (complex64 -> float32, complex128 -> float64)."""
    dt = np.dtype(dtype)
    return np.empty(0, dt).real.dtype if dt.kind == "c" else dt


def _is_complex(x: Any) -> bool:
    return dtype_of(x).kind == "c"


def as_complex(x: Any) -> Any:
    """``x`` viewed as complex (``x + 0j``), differentiably; a complex ``x`` unchanged."""
    if _is_complex(x):
        return x
    return complex_(x, zeros_like_real(x))


def zeros_like_real(x: Any) -> np.ndarray:
    return np.zeros(np.shape(x), dtype=real_of(dtype_of(x)))


def _real_forward(x: Any) -> np.ndarray:
    return np.asarray(np.real(x)).copy()


def _imag_forward(x: Any) -> np.ndarray:
    # numpy's imag of a real array is a read-only zero view; the op returns a fresh array
    return np.asarray(np.imag(x)).copy()


def _real_vjp(g: Any, out: Any, x: Any) -> Any:
    return as_complex(g) if _is_complex(x) else g


def _imag_vjp(g: Any, out: Any, x: Any) -> Any:
    if not _is_complex(x):
        from gradcheck.ops.elementwise import zeros_like
        return zeros_like(x)
    # the transpose of t -> Im t under Re(a b): Re(g Im t) = Re((-i g) t)
    return complex_(zeros_like_real(g), -g)


def _imag_jvp(ts: Any, out: Any, x: Any) -> Any:
    if not _is_complex(x):
        from gradcheck.ops.elementwise import zeros_like
        return zeros_like(out)
    return imag(ts[0])


real: Op = define_op(
    "real", _real_forward, vjp=_real_vjp, jvp=lambda ts, out, x: real(ts[0]),
    family="complex", inputs=("complex",), shapes=ANY,
    doc="numpy.real: the real part (a real array; a real input is returned as is).",
    equivalents={"numpy": "real", "jax": "real", "torch": "real", "tensorflow": "math.real"},
)
imag: Op = define_op(
    "imag", _imag_forward, vjp=_imag_vjp, jvp=_imag_jvp,
    family="complex", inputs=("complex",), shapes=ANY,
    doc="numpy.imag: the imaginary part (zeros for a real input).",
    equivalents={"numpy": "imag", "jax": "imag", "torch": "imag", "tensorflow": "math.imag"},
)
conj: Op = define_op(
    "conj", lambda x: np.conj(x), vjp=lambda g, out, x: conj(g), jvp=None, linear=True,
    family="complex", inputs=("complex",), shapes=ANY,
    doc="numpy.conj: the complex conjugate (R-linear, not holomorphic: its VJP is conj g).",
    equivalents={"numpy": "conj", "jax": "conj", "torch": "conj_physical",
                 "tensorflow": "math.conj"},
)
conjugate = conj


def _complex_forward(re: Any, im: Any) -> np.ndarray:
    re_, im_ = np.asarray(re), np.asarray(im)
    for name, part in (("re", re_), ("im", im_)):
        if part.dtype.kind not in "fiub":
            raise TypeError(f"op 'complex': {name} must be real, got dtype {part.dtype}")
    dt = complex_of(np.result_type(re_, im_, np.float32))
    out = np.empty(np.broadcast_shapes(re_.shape, im_.shape), dtype=dt)
    out.real, out.imag = re_, im_
    return out


complex_: Op = define_op(
    "complex", _complex_forward,
    vjp=(lambda g, out, re, im: unbroadcast(real(g), re),
         lambda g, out, re, im: unbroadcast(-imag(g), im)),
    jvp=(lambda t, out, re, im: fit(as_complex(t), out),
         lambda t, out, re, im: fit(complex_(zeros_like_real(t), t), out)),
    family="complex", inputs=(REAL, REAL), shapes="(...),(...)",
    doc="re + i im from two real arrays (broadcasting), like torch.complex and "
        "jax.lax.complex.",
    equivalents={"numpy": lambda xp, re, im: re + 1j * im,
                 "jax": lambda jnp, re, im: jnp.asarray(re) + 1j * jnp.asarray(im),
                 "torch": "complex", "tensorflow": "dtypes.complex"},
)
complex = complex_  # noqa: A001 - the name in gradcheck.numpy


def _angle_forward(x: Any) -> np.ndarray:
    return np.asarray(np.angle(x))


def _angle_vjp(g: Any, out: Any, x: Any) -> Any:
    # angle = atan2(Im z, Re z): d angle = Im(conj(z) dz) / |z|^2 = Re((-i conj z / |z|^2) dz)
    if not _is_complex(x):
        from gradcheck.ops.elementwise import zeros_like
        return zeros_like(x)
    from gradcheck.ops.elementwise import square
    w = conj(x) / (square(real(x)) + square(imag(x)))
    return complex_(zeros_like_real(g), -g) * w


def _angle_jvp(ts: Any, out: Any, x: Any) -> Any:
    if not _is_complex(x):
        from gradcheck.ops.elementwise import zeros_like
        return zeros_like(out)
    from gradcheck.ops.elementwise import square
    return imag(conj(x) * ts[0]) / (square(real(x)) + square(imag(x)))


angle: Op = define_op(
    "angle", _angle_forward, vjp=_angle_vjp, jvp=_angle_jvp,
    family="complex", inputs=("complex_cut",), shapes=ANY,
    doc="numpy.angle: the argument of z in (-pi, pi]; jumps across the negative real axis "
        "(the branch cut), so the checker samples away from it.",
    equivalents={"numpy": "angle", "jax": "angle", "torch": "angle", "tensorflow": "math.angle"},
)


def modulus_vjp(g: Any, out: Any, x: Any) -> Any:
    """The VJP of |z| for complex z: ``g conj(z) / |z|`` (a real ``g``; 0 at z = 0)."""
    return as_complex(g) * conj(x) / as_complex(_safe(out))


def modulus_jvp(t: Any, out: Any, x: Any) -> Any:
    """The JVP of |z| for complex z: ``Re(conj(z) t) / |z|`` (0 at z = 0)."""
    return real(conj(x) * t) / _safe(out)


def _safe(r: Any) -> Any:
    """``r`` with zeros replaced by ones, so that ``conj(z) / r`` is 0 (not nan) at z = 0."""
    from gradcheck.ops.binary import where
    from gradcheck.ops.elementwise import ones_like

    rv = np.asarray(r._value if hasattr(r, "_value") else r)
    return where(rv == 0, ones_like(rv), r) if np.any(rv == 0) else r
