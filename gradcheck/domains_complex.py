"""Complex input domains, registered by name in ``gradcheck.domains.NAMED``.

Each samples magnitudes and phases separately (a complex normal would rarely probe small
or large moduli at a given phase).  The dtype a domain is given names a precision:
float32 and complex64 sample complex64, anything else complex128.

``"complex"``                  the plane: log-normal moduli around ``scale``, uniform phases;
``"complex_nonzero"``          moduli in [0.5, 2]·scale, uniform phases (reciprocal, abs);
``"complex_cut"``              as ``complex_nonzero``, at least 0.3 rad from the negative real
                               axis, the branch cut of log, sqrt, angle and power;
``"hermitian"``                Hermitian (..., n, n) matrices, eigenvalues at least 0.5 apart
                               (its directions are Hermitian: a function that reads one
                               triangle is checked as a function of Hermitian matrices);
``"complex_well_conditioned"`` square or rectangular complex matrices, singular values in
                               [1, 3];
``"complex_distinct_eig"``     square complex matrices V diag(λ) V⁻¹ with a well-conditioned V
                               and eigenvalues at least 0.5 apart (eig, eigvals).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from gradcheck.domains import Domain

__all__ = ["Complex", "ComplexNonZero", "ComplexCut", "Hermitian", "ComplexWellConditioned",
           "ComplexDistinctEig", "COMPLEX_NAMED", "complex_dtype"]


def complex_dtype(dtype: Any) -> np.dtype:
    """complex64 for float32/complex64, complex128 otherwise."""
    dt = np.dtype(dtype)
    if dt.kind == "c":
        return dt
    return np.dtype(np.complex64) if dt == np.float32 else np.dtype(np.complex128)


def _polar(rng: np.random.Generator, shape: tuple[int, ...], modulus: np.ndarray,
           low: float = -np.pi, high: float = np.pi) -> np.ndarray:
    phase = rng.uniform(low, high, shape)
    return modulus * np.exp(1j * phase)


@dataclass(frozen=True, repr=False)
class Complex(Domain):
    """The complex plane: moduli log-normal around ``scale``, phases uniform."""

    def sample(self, rng, shape, dtype, scale=1.0, context=None):
        modulus = scale * np.exp(rng.normal(0.0, 0.5, shape))
        return _polar(rng, shape, modulus).astype(complex_dtype(dtype))

    def describe(self) -> str:
        return "complex"


@dataclass(frozen=True, repr=False)
class ComplexNonZero(Domain):
    """Moduli in [0.5, 2]·scale, phases uniform: away from 0."""

    def sample(self, rng, shape, dtype, scale=1.0, context=None):
        modulus = scale * rng.uniform(0.5, 2.0, shape)
        return _polar(rng, shape, modulus).astype(complex_dtype(dtype))

    def describe(self) -> str:
        return "complex, nonzero"


@dataclass(frozen=True, repr=False)
class ComplexCut(Domain):
    """Moduli in [0.5, 2]·scale, phases within pi - ``margin`` of 0: away from 0 and from
    the principal branch cut (the negative real axis) of log, sqrt, angle and power."""

    margin: float = 0.3

    def __post_init__(self) -> None:
        if not (isinstance(self.margin, (int, float, np.integer, np.floating))
                and not isinstance(self.margin, (bool, np.bool_)) and 0 <= self.margin < np.pi):
            raise ValueError(f"{type(self).__name__}: margin must be in [0, pi), got "
                             f"{self.margin!r}")

    def sample(self, rng, shape, dtype, scale=1.0, context=None):
        modulus = scale * rng.uniform(0.5, 2.0, shape)
        bound = np.pi - self.margin
        return _polar(rng, shape, modulus, -bound, bound).astype(complex_dtype(dtype))

    def describe(self) -> str:
        return "complex, away from the negative real axis"


def _unitary(rng: np.random.Generator, m: int, k: int) -> np.ndarray:
    q, _ = np.linalg.qr(rng.standard_normal((m, k)) + 1j * rng.standard_normal((m, k)))
    return q


def _batched(rng: np.random.Generator, shape: tuple[int, ...], make: Any) -> np.ndarray:
    *batch, m, n = shape
    out = np.empty(shape, dtype=np.complex128)
    for idx in np.ndindex(*batch):
        out[idx] = make(rng, m, n)
    return out


@dataclass(frozen=True, repr=False)
class Hermitian(Domain):
    """Hermitian (..., n, n) matrices with eigenvalues at least 0.5 apart."""

    signature = "(...,n,n)"
    square = True

    def project(self, direction: np.ndarray) -> np.ndarray:
        """The Hermitian part of a complex direction (a real one: its symmetric part)."""
        d = np.asarray(direction)
        return (d + np.conj(np.swapaxes(d, -1, -2))) / 2

    def sample(self, rng, shape, dtype, scale=1.0, context=None):
        def make(rng: np.random.Generator, m: int, n: int) -> np.ndarray:
            q = _unitary(rng, n, n)
            eig = np.arange(n) * 1.0 - n / 2 + rng.uniform(0.0, 0.5, n)
            a = (q * eig) @ q.conj().T
            return (a + a.conj().T) / 2 * max(scale, 1e-2)
        return _batched(rng, shape, make).astype(complex_dtype(dtype))

    def describe(self) -> str:
        return "Hermitian, distinct eigenvalues"


@dataclass(frozen=True, repr=False)
class ComplexWellConditioned(Domain):
    """Complex (..., m, n) matrices with singular values in [1, 3]."""

    signature = "(...,n,n)"

    def sample(self, rng, shape, dtype, scale=1.0, context=None):
        def make(rng: np.random.Generator, m: int, n: int) -> np.ndarray:
            k = min(m, n)
            u, v = _unitary(rng, m, k), _unitary(rng, n, k)
            s = np.sort(rng.uniform(1.0, 3.0, k))[::-1]
            return (u * s) @ v.conj().T * max(scale, 1e-2)
        return _batched(rng, shape, make).astype(complex_dtype(dtype))

    def describe(self) -> str:
        return "well-conditioned complex matrix"


@dataclass(frozen=True, repr=False)
class ComplexDistinctEig(Domain):
    """Square complex matrices V diag(λ) V⁻¹: V within 0.3 of unitary in norm, eigenvalues
    on a spiral at least 0.5 apart."""

    signature = "(...,n,n)"
    square = True

    def sample(self, rng, shape, dtype, scale=1.0, context=None):
        def make(rng: np.random.Generator, m: int, n: int) -> np.ndarray:
            q = _unitary(rng, n, n)
            e = rng.standard_normal((n, n)) + 1j * rng.standard_normal((n, n))
            v = q + 0.3 * e / np.linalg.norm(e, 2)
            k = np.arange(n)
            eig = (1.0 + 0.8 * k) * np.exp(1j * (rng.uniform(-np.pi, np.pi) + 2.0 * k))
            return (v * eig) @ np.linalg.inv(v) * max(scale, 1e-2)
        return _batched(rng, shape, make).astype(complex_dtype(dtype))

    def describe(self) -> str:
        return "complex, distinct eigenvalues"


#: The names this module adds to ``gradcheck.domains.NAMED``.
COMPLEX_NAMED: dict[str, Domain] = {
    "complex": Complex(), "complex_nonzero": ComplexNonZero(), "complex_cut": ComplexCut(),
    "hermitian": Hermitian(), "complex_well_conditioned": ComplexWellConditioned(),
    "complex_distinct_eig": ComplexDistinctEig(),
}
