"""gradcheck/ops/fft.py: every transform on a real input where numpy also takes a complex one
(the cotangent is the real part), and numpy's bad arguments in errors that name the op."""

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
    ("rfftn", (3, 4), {"s": (-1, 6), "axes": (0, 1)}),
    ("rfftn", (3, 4), {"s": (2, -1), "axes": (0, 1)}),
    ("irfft2", (3, 3), {}),
    ("irfft2", (4, 3), {"s": (3, 5)}),
    ("irfftn", (2, 2, 3), {}),
    ("irfftn", (3, 4), {"s": (-1, 4), "axes": (0, 1)}),
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


#: (name, input shape, parameters, what the message must say); numpy raises the same type
BAD_ARGUMENTS: list[tuple[str, tuple[int, ...], dict[str, Any], str]] = [
    ("fft", (), {}, "op 'fft': axis -1 is out of bounds for an input a of dimension 0"),
    ("ifft", (), {}, "op 'ifft': axis -1 is out of bounds"),
    ("rfft", (), {}, "op 'rfft': axis -1 is out of bounds"),
    ("irfft", (), {}, "op 'irfft': axis -1 is out of bounds"),
    ("fft", (4,), {"axis": 1}, "op 'fft': axis 1 is out of bounds"),
    ("fft2", (4,), {}, "op 'fft2': axes entry -2 is out of bounds"),
    ("irfft2", (4,), {}, "op 'irfft2': axes entry -2 is out of bounds"),
    ("fftn", (3, 4), {"axes": (2,)}, "op 'fftn': axes entry 2 is out of bounds"),
    ("rfftn", (), {}, "op 'rfftn': no axis to transform"),
    ("irfftn", (3, 4), {"axes": ()}, "op 'irfftn': no axis to transform"),
    ("fft", (4,), {"n": 0}, "op 'fft': n is 0"),
    ("rfft", (4,), {"n": -1}, "op 'rfft': n is -1"),
    ("irfft", (4,), {"n": 0}, "op 'irfft': n is 0"),
    ("irfft", (1,), {}, r"op 'irfft': the default n = 2 \* \(1 - 1\)"),
    ("fft", (0,), {}, "op 'fft': the length along axis -1 .* is 0"),
    ("fft2", (3, 4), {"s": (0, 4)}, r"op 'fft2': s\[0\] \(the length along axis 0\) is 0"),
    ("rfftn", (3, 4), {"s": (3, -2), "axes": (0, 1)}, r"op 'rfftn': s\[1\] .* is -2"),
    ("ifftn", (3, 4), {"s": (3, 4), "axes": (0,)}, "op 'ifftn': s has 2 entries but axes"),
]


@pytest.mark.parametrize(("name", "shape", "params", "message"), BAD_ARGUMENTS)
def test_bad_arguments_raise_numpys_error_naming_the_op(name: str, shape: tuple[int, ...],
                                                        params: dict[str, Any],
                                                        message: str) -> None:
    x = np.ones(shape)
    with pytest.raises(Exception) as numpy_error:
        getattr(np.fft, name)(x, **params)
    with pytest.raises(numpy_error.type, match=message):
        getattr(gnp.fft, name)(x, **params)
