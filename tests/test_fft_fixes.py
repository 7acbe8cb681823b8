"""gradcheck/ops/fft.py: every transform on a real input, also where numpy expects a complex
one (the cotangent is the real part)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from complex_fd import assert_derivatives

import gradcheck as gc
import gradcheck.numpy as gnp

#: (name, shape of the real input, extra parameters)
REAL_INPUTS: list[tuple[str, tuple[int, ...], dict[str, Any]]] = [
    ("fft", (4,), {"n": 6}),
    ("ifft", (2, 4), {"axis": 0}),
    ("rfft", (5,), {}),
    ("irfft", (4,), {}),
    ("irfft", (2, 3), {"axis": 0, "n": 5}),
    ("fft2", (3, 4), {}),
    ("ifft2", (3, 4), {"s": (2, 5)}),
    ("fftn", (2, 3), {"axes": (0,)}),
    ("ifftn", (2, 3), {}),
    ("rfft2", (3, 4), {}),
    ("rfftn", (3, 4), {"s": (3, 6), "axes": (0, 1)}),
    ("irfft2", (3, 3), {}),
    ("irfft2", (4, 3), {"s": (3, 5)}),
    ("irfftn", (2, 2, 3), {}),
    ("irfftn", (3, 4), {"s": (3, 4), "axes": (0, 1)}),
]


@pytest.mark.parametrize("norm", [None, "ortho", "forward"])
@pytest.mark.parametrize(("name", "shape", "params"), REAL_INPUTS)
def test_real_input_derivatives_match_finite_differences(name: str, shape: tuple[int, ...],
                                                         params: dict[str, Any],
                                                         norm: Any) -> None:
    x = np.random.default_rng(len(name) + len(shape)).standard_normal(shape)
    op, ref = getattr(gnp.fft, name), getattr(np.fft, name)
    assert_derivatives(lambda a: op(a, **params, norm=norm), [x],
                       numpy_f=lambda a: ref(a, **params, norm=norm))


@pytest.mark.parametrize("name", ["irfft", "irfft2", "irfftn"])
def test_grad_of_irfft_of_a_real_spectrum_keeps_its_precision(name: str) -> None:
    for dtype in (np.float64, np.float32):
        x = np.arange(1.0, 7.0, dtype=dtype).reshape(2, 3)
        jac = np.stack([getattr(np.fft, name)(e.reshape(2, 3)).ravel()
                        for e in np.eye(6)], axis=1)
        got = np.asarray(gc.grad(lambda a: gnp.sum(getattr(gnp.fft, name)(a)))(x))
        assert got.dtype == dtype
        np.testing.assert_allclose(got, jac.sum(0).reshape(2, 3), atol=1e-6)
