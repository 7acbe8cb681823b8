"""gradcheck/ops/fft.py: every transform and norm mode against finite differences over R²ⁿ,
and the rfft/irfft bins that are not doubled (DC, and Nyquist for even lengths)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from complex_fd import assert_derivatives, engine_vjp, numeric_vjp

import gradcheck.numpy as gnp
from gradcheck.ops import fft as fft_ops

NORMS = [None, "ortho", "forward"]


def _complex(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


#: (name, input kind, shapes, extra parameters)
CASES_1D: list[tuple[str, str, tuple[int, ...], dict[str, Any]]] = [
    ("fft", "complex", (5,), {}),
    ("fft", "complex", (2, 4), {"axis": 0}),
    ("fft", "complex", (4,), {"n": 6}),
    ("fft", "complex", (6,), {"n": 3}),
    ("fft", "real", (4,), {}),
    ("ifft", "complex", (4,), {}),
    ("ifft", "complex", (3,), {"n": 5}),
    ("rfft", "real", (6,), {}),
    ("rfft", "real", (5,), {}),
    ("rfft", "real", (2, 4), {"axis": 0}),
    ("rfft", "real", (4,), {"n": 7}),
    ("rfft", "real", (7,), {"n": 4}),
    ("irfft", "complex", (4,), {}),
    ("irfft", "complex", (4,), {"n": 7}),
    ("irfft", "complex", (3,), {"n": 8}),
    ("irfft", "complex", (6,), {"n": 4}),
    ("irfft", "complex", (2, 3), {"axis": 0}),
]

CASES_ND: list[tuple[str, str, tuple[int, ...], dict[str, Any]]] = [
    ("fft2", "complex", (3, 4), {}),
    ("ifft2", "complex", (2, 3, 4), {}),
    ("fftn", "complex", (2, 3, 2), {}),
    ("fftn", "complex", (3, 4), {"s": (4, 3), "axes": (0, 1)}),
    ("ifftn", "complex", (3, 2), {"axes": (0,)}),
    ("rfft2", "real", (3, 4), {}),
    ("rfft2", "real", (3, 5), {"s": (2, 6)}),
    ("irfft2", "complex", (3, 3), {}),
    ("irfft2", "complex", (4, 3), {"s": (3, 5)}),
    ("rfftn", "real", (2, 3, 4), {}),
    ("irfftn", "complex", (2, 2, 3), {}),
]


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize(("name", "kind", "shape", "params"), CASES_1D + CASES_ND)
def test_transform_derivatives_match_finite_differences(name: str, kind: str,
                                                        shape: tuple[int, ...],
                                                        params: dict[str, Any],
                                                        norm: Any) -> None:
    rng = np.random.default_rng(len(name) + len(shape))
    x = _complex(rng, shape) if kind == "complex" else rng.standard_normal(shape)
    op, ref = getattr(gnp.fft, name), getattr(np.fft, name)
    assert_derivatives(lambda a: op(a, **params, norm=norm), [x],
                       numpy_f=lambda a: ref(a, **params, norm=norm))


def test_values_match_numpy_in_single_precision() -> None:
    x = np.arange(6, dtype=np.float32)
    assert gnp.fft.rfft(x).dtype == np.complex64
    np.testing.assert_allclose(gnp.fft.rfft(x), np.fft.rfft(x), rtol=1e-6)


@pytest.mark.parametrize("n", [4, 5])
def test_rfft_vjp_does_not_double_dc_or_nyquist(n: int) -> None:
    """A cotangent on one bin: the transpose spreads it over the signal once, so the DC and
    (even n) Nyquist bins must not be halved/doubled like the others."""
    x = np.random.default_rng(1).standard_normal(n)
    for k in range(n // 2 + 1):
        ct = np.zeros(n // 2 + 1, complex)
        ct[k] = 1.0
        (got,) = engine_vjp(gnp.fft.rfft, [x], ct)
        # Re(sum_j ct_k e^{-2 pi i k j / n} t_j): the k-th row of the DFT, real part
        want = np.cos(2 * np.pi * k * np.arange(n) / n)
        np.testing.assert_allclose(got, want, atol=1e-12)


def test_irfft_ignores_imaginary_dc_and_nyquist() -> None:
    """irfft reads Re(x_0) and Re(x_{n/2}) only: their imaginary parts get zero cotangent and
    the other bins count twice."""
    rng = np.random.default_rng(2)
    x = _complex(rng, (5,))  # n = 8: bin 4 is Nyquist
    g = rng.standard_normal(8)
    (got,) = engine_vjp(gnp.fft.irfft, [x], g)
    (want,) = numeric_vjp(np.fft.irfft, [x], g)
    np.testing.assert_allclose(got, want, atol=1e-8)
    assert got[0].imag == 0 and got[4].imag == 0
    dft = np.fft.rfft(g, norm="forward")
    np.testing.assert_allclose(got[1:4], 2 * np.conj(dft[1:4]), atol=1e-12)


def test_bad_input_names_the_op_and_argument() -> None:
    with pytest.raises(ValueError, match="op 'fft': norm must be one of"):
        gnp.fft.fft(np.ones(3), norm="unit")
    with pytest.raises(TypeError, match="op 'rfft': a must be real"):
        gnp.fft.rfft(np.ones(3) + 1j)


def test_every_transform_is_exported() -> None:
    assert sorted(fft_ops.FFT) == sorted(gnp.fft.__all__)
    for name in fft_ops.FFT:
        assert getattr(gnp.fft, name).family == "fft"
