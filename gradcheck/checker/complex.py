"""Complex inputs and outputs, checked as real ones: Cⁿ is R²ⁿ at the problem boundary.

The checker differentiates real functions.  A problem whose primals or outputs are complex
is wrapped in :class:`Realified`, which presents every complex array ``z`` of shape ``S`` as
the real array ``(Re z, Im z)`` of shape ``S + (2,)`` (complex64 as float32 pairs,
complex128 as float64 pairs).  Everything downstream is then untouched: the numeric
reference perturbs real and imaginary parts separately, identities use the real inner
product ``Re⟨a, b⟩ = ⟨(Re a, Im a), (Re b, Im b)⟩``, leak checks hand the framework complex
dummies, and holomorphic and non-holomorphic functions are handled alike (a function of
``z`` and ``z̄`` is just a function of two real variables).

The wrapper maps each path exactly.  With ``M`` the realified Jacobian (the JVP on real
pairs, the same in every framework: a tangent ``ta + i tb`` pushed forward), the realified
VJP must be ``Mᵀ``.  What a framework's VJP returns for a complex cotangent is its
*cotangent convention*, declared by the problem as ``cotangent_convention``:

``"transpose"`` (JAX, autograd, gradcheck's engine)
    ``vjp(c) = c·f'(z)`` for holomorphic ``f``: the transpose of the JVP under the bilinear
    pairing.  Then ``Mᵀ v = conj(vjp(conj(v)))`` on complex positions, with ``v`` packed as
    ``va + i vb``: the cotangent is conjugated on the way in, the result on the way out.
``"conjugate"`` (PyTorch, TensorFlow)
    ``vjp(c) = c·conj(f'(z))``: the adjoint under ``Re⟨·,·⟩``, so ``Mᵀ v = vjp(v)`` with no
    conjugation at all.

Write ``Q`` for "conjugate the complex positions" under the transpose convention (identity
under the conjugate one), ``P``/``U`` for packing pairs into complex arrays and splitting them.
Then, for ``G(x, v) = Mᵀv`` and ``K(x, u) = M u`` (see :mod:`.paths`)::

    vjp(x, v)            = Q U vjp(P x, P Q v)
    jvp(x, u)            =   U jvp(P x, P u)
    double_vjp(x, u, d)  =   U double_vjp(P x, P u, P Q d)          (convention-free)
    hvp_fwd_rev(x,v,u,w) = Q U hvp_fwd_rev(P x, P Q v, P u, P Q w)
    hvp_rev_rev(x, v, s) = (Q U a, U b)  with (a, b) = hvp_rev_rev(P x, P Q v, P s)
    hvp_rev_fwd(x, u, z) = (Q U a, Q U b) with (a, b) = hvp_rev_fwd(P x, P u, P Q z)

Each follows from applying the framework's convention to the map it differentiates (the VJP
of ``c ↦ vjp(c)`` under either convention is ``M``, so the double-VJP needs no ``Q``).  A
rule whose result is real where a complex one is due (or complex where a real one is due)
is a ``dtype`` error of that path; an all-zero real result stands for a complex zero.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from gradcheck.engine import RuleError

__all__ = ["TRANSPOSE", "CONJUGATE", "CONVENTIONS", "ENGINE_CONVENTION", "Realified",
           "realified", "split", "pack", "is_complex", "real_dtype", "complex_dtype",
           "format_complex", "clean_complex", "describe_arrays", "DTYPE_NAMES"]

#: JAX's convention: the VJP of holomorphic f is ``c·f'(z)`` (also autograd's and gradcheck's).
TRANSPOSE = "transpose"
#: PyTorch's and TensorFlow's: the VJP of holomorphic f is ``c·conj(f'(z))``.
CONJUGATE = "conjugate"
CONVENTIONS = (TRANSPOSE, CONJUGATE)
#: The convention of a problem that declares none: gradcheck's engine's.
ENGINE_CONVENTION = TRANSPOSE
#: Dtype names ``check(dtypes=...)`` accepts, with the real precision they check in.
DTYPE_NAMES = {"float64": "float64", "float32": "float32", "complex128": "float64",
               "complex64": "float32"}

Arrays = list[np.ndarray]


def is_complex(a: Any) -> bool:
    """Whether ``a`` is a complex array (or scalar)."""
    return np.asarray(a).dtype.kind == "c"


def real_dtype(dtype: Any) -> np.dtype:
    """float32 for complex64, float64 for complex128; a real dtype as it is."""
    dt = np.dtype(dtype)
    return np.finfo(dt).dtype if dt.kind == "c" else dt


def complex_dtype(dtype: Any) -> np.dtype:
    """complex64 for float32 (and float16), complex128 for float64; complex as it is."""
    dt = np.dtype(dtype)
    if dt.kind == "c":
        return dt
    return np.dtype(np.complex64) if dt.kind == "f" and dt.itemsize <= 4 else \
        np.dtype(np.complex128)


def split(z: Any) -> np.ndarray:
    """A complex array of shape ``S`` as the real array ``(Re, Im)`` of shape ``S + (2,)``
    (a real array is returned as it is)."""
    z = np.asarray(z)
    if z.dtype.kind != "c":
        return z
    return np.stack([z.real, z.imag], axis=-1)


def pack(a: Any, conjugate: bool = False) -> np.ndarray:
    """Real pairs of shape ``S + (2,)`` as the complex array ``a[..., 0] ± i a[..., 1]`` (minus
    with ``conjugate``), in the complex dtype of their precision."""
    a = np.asarray(a)
    if a.ndim == 0 or a.shape[-1] != 2:
        raise ValueError(f"real pairs must have a last axis of length 2, got shape {a.shape}")
    dtype = complex_dtype(a.dtype)
    out = np.empty(a.shape[:-1], dtype=dtype)
    out.real = a[..., 0]
    out.imag = -a[..., 1] if conjugate else a[..., 1]
    return out


class Realified:
    """A :class:`~gradcheck.checker.targets.Problem` with complex primals or outputs, seen as
    real pairs (see the module doc).  Every other attribute is the inner problem's."""

    def __init__(self, inner: Any, convention: str | None = None) -> None:
        self.inner = inner
        self.convention = convention or getattr(inner, "cotangent_convention", None) or \
            ENGINE_CONVENTION
        if self.convention not in CONVENTIONS:
            raise ValueError(f"unknown cotangent convention {self.convention!r} of "
                             f"{_name(inner)}; expected one of {', '.join(CONVENTIONS)}")
        raw = [np.asarray(p) for p in inner.primals]
        #: Per primal: whether it is complex (then it is a pair here).
        self.complex_in = [p.dtype.kind == "c" for p in raw]
        self.primals: Arrays = [split(p) for p in raw]
        #: Per output: whether it is complex (known after the first forward).
        self.complex_out: list[bool] | None = None

    def __getattr__(self, name: str) -> Any:  # counts, accuracy, dependence_details, ...
        return getattr(self.inner, name)

    def pairs(self) -> str:
        """Which primals and outputs are complex, said for a finding ("" when none is): their
        directions, values and indices are real pairs (Re, Im) on a last axis of length 2."""
        ins = [str(k) for k, c in enumerate(self.complex_in) if c]
        outs = [str(k) for k, c in enumerate(self.complex_out or ()) if c]
        if not ins and not outs:
            return ""
        parts = [f"{'primals' if len(ins) > 1 else 'primal'} {', '.join(ins)}" if ins else "",
                 f"{'outputs' if len(outs) > 1 else 'output'} {', '.join(outs)}" if outs else ""]
        return (f"complex {' and '.join(p for p in parts if p)}: each is seen as real pairs "
                "(Re, Im) on a last axis of length 2, in directions, values and indices (an "
                f"index ending in 1 is an imaginary part); cotangent convention of the "
                f"problem: {self.convention}")

    # -- conversions --------------------------------------------------------------------------
    @property
    def _q(self) -> bool:
        return self.convention == TRANSPOSE

    def _outputs_complex(self) -> list[bool]:
        if self.complex_out is None:
            self.forward(self.primals)
        assert self.complex_out is not None
        return self.complex_out

    @staticmethod
    def _in(values: Sequence[Any], flags: Sequence[bool], conjugate: bool = False) -> list[Any]:
        if len(values) != len(flags) or not any(flags):
            return list(values)  # (a count mismatch: the inner problem names it itself)
        return [pack(v, conjugate) if c and v is not None else v  # (None: see EngineProblem)
                for v, c in zip(values, flags, strict=True)]

    def _out(self, path: str, values: Sequence[Any], flags: Sequence[bool], what: str,
             conjugate: bool = False) -> Arrays:
        values = list(values)
        if len(values) != len(flags):
            return [np.asarray(v) for v in values]  # the checker reports the count
        if not any(flags):  # every value real: nothing to convert, only complex to refuse
            real = [np.asarray(v) for v in values]
            if not any(v.dtype.kind == "c" for v in real):
                return real
        out = []
        for k, (v, c) in enumerate(zip(values, flags, strict=True)):
            v = np.asarray(v)
            if c and v.dtype.kind != "c":
                if v.dtype.kind in "fiu" and not np.any(v):  # a real zero: a complex zero
                    v = v.astype(complex_dtype(v.dtype))
                else:
                    raise RuleError(_name(self.inner), path, "dtype",
                                    f"result {k} has dtype {v.dtype} where {what} {k} is "
                                    "complex: its imaginary part is lost")
            elif not c and v.dtype.kind == "c":
                raise RuleError(_name(self.inner), path, "dtype",
                                f"result {k} has dtype {v.dtype} where {what} {k} is real "
                                "(take the real part)")
            if c and conjugate:
                v = np.conj(v)
            out.append(split(v))
        return out

    # -- the paths ----------------------------------------------------------------------------
    def forward(self, primals: Sequence[Any]) -> Arrays:
        outs = [np.asarray(o) for o in self.inner.forward(self._in(primals, self.complex_in))]
        self.complex_out = [o.dtype.kind == "c" for o in outs]
        return [split(o) for o in outs]

    def vjp(self, primals: Sequence[Any], cotangents: Sequence[Any]) -> Arrays:
        cx, co, q = self.complex_in, self._outputs_complex(), self._q
        res = self.inner.vjp(self._in(primals, cx), self._in(cotangents, co, q))
        return self._out("vjp", res, cx, "primal", q)

    def jvp(self, primals: Sequence[Any], tangents: Sequence[Any]) -> Arrays:
        cx, co = self.complex_in, self._outputs_complex()
        res = self.inner.jvp(self._in(primals, cx), self._in(tangents, cx))
        return self._out("jvp", res, co, "output")

    def double_vjp(self, primals: Sequence[Any], tangents: Sequence[Any],
                   dummies: Sequence[Any]) -> tuple[Arrays, Any]:
        cx, co, q = self.complex_in, self._outputs_complex(), self._q
        res, flag = self.inner.double_vjp(self._in(primals, cx), self._in(tangents, cx),
                                          self._in(dummies, co, q))
        return self._out("double_vjp", res, co, "output"), flag

    def hvp_fwd_rev(self, primals: Sequence[Any], cotangents: Sequence[Any],
                    tangents: Sequence[Any], cotangent_tangents: Sequence[Any]) -> Arrays:
        cx, co, q = self.complex_in, self._outputs_complex(), self._q
        res = self.inner.hvp_fwd_rev(self._in(primals, cx), self._in(cotangents, co, q),
                                     self._in(tangents, cx),
                                     self._in(cotangent_tangents, co, q))
        return self._out("hvp_fwd_rev", res, cx, "primal", q)

    def hvp_rev_rev(self, primals: Sequence[Any], cotangents: Sequence[Any],
                    second: Sequence[Any]) -> tuple[Arrays, Arrays]:
        cx, co, q = self.complex_in, self._outputs_complex(), self._q
        a, b = self.inner.hvp_rev_rev(self._in(primals, cx), self._in(cotangents, co, q),
                                      self._in(second, cx))
        return (self._out("hvp_rev_rev", a, cx, "primal", q),
                self._out("hvp_rev_rev", b, co, "output"))

    def hvp_rev_fwd(self, primals: Sequence[Any], tangents: Sequence[Any],
                    cotangents: Sequence[Any]) -> tuple[Arrays, Arrays]:
        cx, co, q = self.complex_in, self._outputs_complex(), self._q
        a, b = self.inner.hvp_rev_fwd(self._in(primals, cx), self._in(tangents, cx),
                                      self._in(cotangents, co, q))
        return (self._out("hvp_rev_fwd", a, cx, "primal", q),
                self._out("hvp_rev_fwd", b, cx, "primal", q))


def realified(problem: Any) -> Any:
    """``problem`` wrapped in :class:`Realified` unless it is already; a problem without
    complex values passes through the wrapper unchanged (its outputs may turn out complex
    only at the first forward, so every problem is wrapped)."""
    return problem if isinstance(problem, Realified) else Realified(problem)


def _name(problem: Any) -> str:
    return str(getattr(problem, "name", None) or type(problem).__name__)


# -- reports ------------------------------------------------------------------------------------
def format_complex(value: complex, digits: int = 17) -> str:
    """``1.5-0.2j``: Python's shortest round-tripping form without parentheses (``complex()``
    parses it back); ``digits`` significant digits when fewer are wanted."""
    value = complex(value)
    if digits >= 17:
        text = repr(value)
    else:
        re, im = f"{value.real:.{digits}g}", f"{value.imag:.{digits}g}"
        sign = "" if im.startswith("-") else "+"
        text = f"{im}j" if value.real == 0 and not np.signbit(value.real) else \
            f"{re}{sign}{im}j"
    return text[1:-1] if text.startswith("(") else text


def clean_complex(value: Any) -> Any:
    """A JSON-safe, deterministic form of a complex scalar (nested lists too): its
    :func:`format_complex` string.  Anything else is returned as it is."""
    if isinstance(value, (complex, np.complexfloating)):
        return format_complex(complex(value))
    if isinstance(value, list):
        return [clean_complex(v) for v in value]
    return value


def describe_arrays(arrays: Sequence[Any]) -> list[Any]:
    """Arrays as nested lists for a counterexample: complex entries as ``"1.5-0.2j"``."""
    return [clean_complex(np.asarray(a).tolist()) for a in arrays]
