"""A drawn example whose rank is too low for the function (``x[..., 0]`` of a 0-d array,
TensorFlow's ``softmax`` of a scalar) is re-sampled like an axis out of range, in numpy's,
gradcheck.numpy's, torch's, JAX's and TensorFlow's words; a given point, or a failure at a
rank the function should take, is still reported, and examples all re-sampled never pass."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import gradcheck.numpy as gnp
from gradcheck.checker.api import check
from gradcheck.checker.report import Report
from gradcheck.oracles import get_oracle


def _errors(report: Report) -> list[str]:
    return [f"{f.path}: {f.message}" for f in report.findings if f.kind == "error"]


def _resampled(report: Report) -> None:
    assert report.passed, _errors(report)
    assert report.stats["skipped"].get("axis", 0) >= 1


@pytest.mark.parametrize("fn", [lambda x: x[..., 0], lambda x: gnp.diff(x),
                                lambda x: gnp.trace(x)], ids=["index", "diff", "trace"])
def test_a_numpy_rank_too_low_for_the_function_is_resampled(fn: Any) -> None:
    _resampled(check(fn, inputs=["real"], examples=3, seed=0))


@pytest.mark.tensorflow
@pytest.mark.parametrize("call", ["softmax", "log_softmax", "sort", "roll", "top_k", "index"])
def test_a_tensorflow_rank_too_low_for_the_function_is_resampled(call: str) -> None:
    # "logits must have >= 1 dimension", "input must be 1-D or higher", "Attempting to slice
    # scalar input": each was an error finding on the drawn 0-d example
    tf = get_oracle("tensorflow").load()
    fn = {"softmax": tf.nn.softmax, "log_softmax": tf.nn.log_softmax, "sort": tf.sort,
          "roll": lambda x: tf.roll(x, shift=1, axis=0),
          "top_k": lambda x: tf.math.top_k(x, k=1).values,
          "index": lambda x: x[..., 0]}[call]
    _resampled(check(fn, inputs=["real"], examples=3, seed=0, framework="tensorflow"))


@pytest.mark.torch
@pytest.mark.parametrize("call", ["ellipsis", "first", "diff"])
def test_a_torch_rank_too_low_for_the_function_is_resampled(call: str) -> None:
    torch = get_oracle("torch").load()
    fn = {"ellipsis": lambda x: x[..., 0] * 2.0, "first": lambda x: x[0] * 2.0,
          "diff": torch.diff}[call]
    _resampled(check(fn, inputs=["real"], examples=3, seed=0, framework="torch"))


@pytest.mark.jax
def test_a_jax_rank_too_low_for_the_function_is_resampled() -> None:
    jnp = get_oracle("jax").load().numpy
    _resampled(check(lambda x: jnp.asarray(x)[..., 0], inputs=["real"], examples=3, seed=0,
                     framework="jax"))


def test_a_rank_no_drawn_example_has_is_never_a_pass_and_says_shapes() -> None:
    report = check(lambda x: x[..., 0, 0, 0, 0, 0, 0], inputs=["real"], examples=2, seed=0)
    assert not report.passed
    assert report.stats["skipped"].get("axis", 0) >= 1
    assert all("give shapes= that fit it" in e for e in _errors(report)), _errors(report)


def test_a_given_point_of_too_low_a_rank_is_reported_in_the_functions_words() -> None:
    report = check(lambda x: x[..., 0], inputs=[np.array(0.5)], seed=0)
    assert not report.passed
    assert any("too many indices" in e for e in _errors(report)), _errors(report)


def test_a_rank_error_at_a_rank_the_function_takes_is_reported() -> None:
    # the sum is 0-d whatever x's rank: a bug in the function, not an example it cannot take
    report = check(lambda x: gnp.matmul(gnp.sum(x, axis=-1), x), inputs=["real"],
                   shapes="(n)", examples=2, seed=0)
    assert not report.passed
    assert any("at least one dimension" in e for e in _errors(report)), _errors(report)


@pytest.mark.torch
def test_a_torch_index_of_a_0d_intermediate_is_reported() -> None:
    get_oracle("torch").load()
    report = check(lambda x: x.sum()[0], inputs=["real"], shapes="(n)", examples=2, seed=0,
                   framework="torch")
    assert not report.passed
    assert any("invalid index of a 0-dim tensor" in e for e in _errors(report)), \
        _errors(report)
