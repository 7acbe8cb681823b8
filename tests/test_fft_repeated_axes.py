"""gradcheck/ops/fft.py: n-D transforms whose ``axes`` name one axis twice (``(1, 1)``, or
``(1, -1)`` on a 2-D input).  numpy transforms that axis again, cropped or padded to each
length of ``s`` in turn; the VJPs must transpose those 1-D steps one by one."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from complex_fd import assert_derivatives

import gradcheck as gc
import gradcheck.numpy as gnp

#: numpy's warning for an entry None of s (the 1-D transform's default length).
NONE_IN_S = pytest.mark.filterwarnings(
    "ignore:Passing an array containing `None`:DeprecationWarning")

#: (name, input kind, input shape, parameters) whose VJP was wrong
WRONG_VJP: list[Any] = [
    ("fftn", "complex", (3, 4), {"s": (5, 2), "axes": (1, 1)}),
    ("fftn", "real", (3, 4), {"s": (5, 2), "axes": (1, 1)}),
    ("fftn", "complex", (3, 4), {"s": (2, 5), "axes": (1, -1)}),
    ("fftn", "complex", (3, 4), {"s": (2, 3, 5), "axes": (1, 0, 1)}),
    ("ifftn", "complex", (3, 4), {"s": (5, 2), "axes": (1, 1)}),
    ("fft2", "complex", (3, 4), {"s": (5, 2), "axes": (0, 0)}),
    ("ifft2", "complex", (3, 4), {"s": (3, 6), "axes": (-1, 1)}),
    ("rfftn", "real", (3, 4), {"s": (3, 5, 2), "axes": (1, 1, 1)}),
    ("irfftn", "complex", (3, 4), {"s": (5, 2), "axes": (1, 1)}),
    ("irfftn", "complex", (3, 4), {"s": (2, 7), "axes": (1, -1)}),
    ("irfftn", "complex", (3, 4), {"s": (3, 5, 6), "axes": (1, 1, 1)}),
    ("irfftn", "real", (3, 4), {"s": (3, 5), "axes": (1, 1)}),
    ("irfft2", "complex", (3, 4), {"s": (5, 4), "axes": (0, 0)}),
    pytest.param("irfftn", "complex", (3, 4), {"s": (3, None), "axes": (1, 1)},
                 marks=NONE_IN_S),
]

#: right before the rewrite of the rules into 1-D steps, and kept right by it
KEPT: list[Any] = [
    ("fftn", "complex", (3, 4), {"axes": (1, 1)}),
    ("fftn", "complex", (3, 4), {"axes": (1, -1)}),
    ("rfftn", "real", (3, 4), {"axes": (1, 1)}),
    ("rfftn", "real", (3, 4), {"s": (5, 2), "axes": (1, 1)}),
    ("rfftn", "real", (3, 4), {"s": (2, 7), "axes": (1, -1)}),
    ("rfft2", "real", (3, 4), {"s": (3, 6), "axes": (0, 0)}),
    ("irfftn", "complex", (3, 4), {"axes": (1, 1)}),
    ("irfftn", "complex", (3, 4), {"axes": (0, 1, 0)}),
    pytest.param("fftn", "complex", (3, 4), {"s": (None, 2), "axes": (1, 1)},
                 marks=NONE_IN_S),
    pytest.param("rfftn", "real", (3, 4), {"s": (None, 6), "axes": (1, 1)},
                 marks=NONE_IN_S),
]


def _input(kind: str, shape: tuple[int, ...]) -> np.ndarray:
    rng = np.random.default_rng(sum(shape))
    x = rng.standard_normal(shape)
    return x + 1j * rng.standard_normal(shape) if kind == "complex" else x


@pytest.mark.parametrize("norm", [None, "ortho", "forward"])
@pytest.mark.parametrize(("name", "kind", "shape", "params"), WRONG_VJP + KEPT)
def test_values_and_derivatives_match_numpy(name: str, kind: str, shape: tuple[int, ...],
                                            params: dict[str, Any], norm: Any) -> None:
    x = _input(kind, shape)
    op, ref = getattr(gnp.fft, name), getattr(np.fft, name)
    np.testing.assert_allclose(np.asarray(op(x, **params, norm=norm)),
                               ref(x, **params, norm=norm), rtol=1e-12, atol=1e-12)
    assert_derivatives(lambda a: op(a, **params, norm=norm), [x],
                       numpy_f=lambda a: ref(a, **params, norm=norm))


@pytest.mark.parametrize("mode", ["fast", "full"])
@pytest.mark.parametrize(("name", "kind", "shape", "params"), WRONG_VJP)
def test_check_passes(name: str, kind: str, shape: tuple[int, ...], params: dict[str, Any],
                      mode: str) -> None:
    op = getattr(gnp.fft, name)
    report = gc.check(lambda a: op(a, **params), inputs=[_input(kind, shape)], mode=mode,
                      seed=0)
    assert report.passed, report.failures


@NONE_IN_S
def test_a_default_irfft_length_comes_from_the_ifft_before_it() -> None:
    # the ifft makes axis 1 three long, so the irfft's default n is 2 * (3 - 1) = 4,
    # whatever the input's length 1 along that axis would give
    x = _input("complex", (3, 1))
    got = gnp.fft.irfftn(x, s=(3, None), axes=(1, 1))
    np.testing.assert_allclose(np.asarray(got), np.fft.irfftn(x, s=(3, None), axes=(1, 1)))


@NONE_IN_S
def test_a_default_irfft_length_below_one_names_the_op() -> None:
    with pytest.raises(ValueError, match=r"op 'irfftn': s\[1\] is None, so the irfft along "
                                         r"axis 1 .* of length 1, which is 0"):
        gnp.fft.irfftn(_input("complex", (3, 2)), s=(1, None), axes=(1, 1))
