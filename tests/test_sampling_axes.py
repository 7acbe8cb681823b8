"""A rule that mixes up its axes needs an array of two or more dimensions at an ordinary
magnitude: the batched strata (magnitudes 1, 1e3 and 0.1) of an input without core
dimensions draw one every time.  Before, they drew 1 to 3 dimensions, and a softmax
gradient summed over the wrong axis passed at some seeds (found with a torch
``autograd.Function`` that torch's own gradcheck catches on one ``randn(2, 4)``)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import gradcheck as gc
import gradcheck.numpy as gnp
from gradcheck.checker.explore import draw_one
from gradcheck.checker.sampling import Stratum, draw_shapes
from gradcheck.oracles import get_oracle


def _softmax(x: Any) -> Any:
    e = np.exp(x - np.max(x, axis=-1, keepdims=True))
    return e / np.sum(e, axis=-1, keepdims=True)


def _wrong_axis_vjp(g: Any, out: Any, x: Any) -> Any:
    return out * (g - gnp.sum(g * out, axis=0, keepdims=True))  # should be axis=-1


SOFTMAX = gc.define_op("softmax_wrong_axis", _softmax, vjp=_wrong_axis_vjp, register=False)


@pytest.mark.parametrize("seed", range(10))
def test_a_gradient_summed_over_the_wrong_axis_is_found_at_every_seed(seed: int) -> None:
    report = gc.check(SOFTMAX, inputs=["real"], seed=seed, examples=2, paths=["vjp"])
    assert not report.passed


@pytest.mark.parametrize("seed", range(20))
def test_batched_strata_without_core_dimensions_have_two_or_more(seed: int) -> None:
    for k in (0, 1, 7):  # the batched strata: magnitudes 1, 1e3, 0.1
        family = Stratum.number(k).family
        assert family == "batched"
        shapes = draw_one(draw_shapes("(...)", family), seed)
        assert shapes is not None and len(shapes[0]) >= 2
        # with core dimensions one batch dimension is enough (a matrix is already 2-d)
        (shape,) = draw_one(draw_shapes("(...,n,n)", family), seed)
        assert len(shape) >= 3


@pytest.mark.torch
def test_a_torch_softmax_backward_over_the_wrong_dim_is_found() -> None:
    torch = get_oracle("torch").load()

    class Softmax(torch.autograd.Function):
        @staticmethod
        def forward(x: Any) -> Any:
            return torch.softmax(x, -1)

        @staticmethod
        def setup_context(ctx: Any, inputs: Any, output: Any) -> None:
            ctx.save_for_backward(output)

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            (y,) = ctx.saved_tensors
            return y * (g - (g * y).sum(0, keepdim=True))  # should be sum(-1)

    missed = [s for s in range(5) if gc.check(Softmax.apply, inputs=["real"], seed=s,
                                               examples=2).passed]
    assert missed == []
