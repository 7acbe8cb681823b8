"""Fixes of a third round: a function target is never bound to a registry op's equivalent
because its name matches, JAX's own refusals to differentiate are ``unsupported`` whatever
their words, and an example the function cannot take (an axis torch or JAX says is out of
range, an empty array its forward refuses) is re-sampled, not an error finding."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import pytest

import gradcheck.numpy as gnp
from gradcheck.checker.api import check
from gradcheck.checker.report import Report
from gradcheck.engine import Registry, default_registry, define_op
from gradcheck.oracles import get_oracle

_LOCAL = Registry()


def _cells(report: Report, reference: str) -> list[tuple[str, str]]:
    return [(c.status, c.note) for c in report.cells if c.reference == reference]


def _errors(report: Report) -> list[str]:
    return [f"{f.path}: {f.message}" for f in report.findings if f.kind == "error"]


# -- 1. references bind registry ops only ----------------------------------------------------
@pytest.mark.torch
@pytest.mark.parametrize("target, params", [
    ("leaky_relu", None),             # torch's slope is 0.01, the registry op's another
    ("elu, alpha=2", None),           # a partial: the keyword is not the op's
    ("softplus", {"beta": 2.0}),      # a parameter the registry op does not take
], ids=["leaky_relu", "partial", "params"])
def test_a_framework_function_is_not_bound_to_the_registry_op_of_its_name(
        target: str, params: Any) -> None:
    torch = get_oracle("torch").load()
    fns = {"leaky_relu": torch.nn.functional.leaky_relu,
           "elu, alpha=2": functools.partial(torch.nn.functional.elu, alpha=2.0),
           "softplus": torch.nn.functional.softplus}
    report = check(fns[target], inputs=["real"], params=params, references=["autograd"],
                   examples=2, seed=0)
    assert report.passed, _errors(report) + [f.message for f in report.failures]
    cells = _cells(report, "autograd")
    assert cells and all(status == "unsupported" for status, _ in cells), cells
    assert all("is a function, not a registry op" in note for _, note in cells), cells


def sin(x: Any) -> Any:
    """Not the registry's sin: a user's function that shares its name."""
    return gnp.sin(2 * x)


def test_a_function_named_like_an_op_is_not_blamed_on_the_reference() -> None:
    report = check(sin, inputs=["real"], references=["autograd"], examples=2, seed=0)
    assert report.passed, [f.message for f in report.failures]
    assert not [f for f in report.findings if f.attributed_to == "autograd"]
    notes = {note for _, note in _cells(report, "autograd")}
    assert notes == {"no equivalent in autograd: sin is a function, not a registry op "
                     "(equivalents are declared with gradcheck's registry ops, so a function "
                     "of the same name is not matched to one); its paths are checked against "
                     "the numeric reference and each other"}


def test_an_op_of_another_registry_named_like_a_registry_op_has_no_equivalent() -> None:
    mine = define_op("sin", np.sin, vjp=lambda g, out, x: g * gnp.cos(x),
                     jvp=lambda ts, out, x: ts[0] * gnp.cos(x), registry=_LOCAL)
    report = check(mine, references=["autograd"], examples=2, seed=0)
    assert {status for status, _ in _cells(report, "autograd")} == {"unsupported"}


def test_a_registry_op_still_runs_its_declared_equivalent() -> None:
    report = check(default_registry.get("sin"), references=["autograd"], examples=2, seed=0)
    assert report.passed
    assert {status for status, _ in _cells(report, "autograd")} == {"pass"}
    named = check("sin", references=["autograd"], examples=2, seed=0)
    assert {status for status, _ in _cells(named, "autograd")} == {"pass"}


# -- 2. JAX's own refusals, in any words -----------------------------------------------------
_UNIT = {"domain": "interval", "low": 0.05, "high": 0.95}


@pytest.mark.jax
def test_jax_refusing_a_derivative_is_unsupported_not_an_error() -> None:
    jax = get_oracle("jax").load()
    betainc = jax.scipy.special.betainc
    report = check(betainc, inputs=["positive", "positive", _UNIT], examples=2, seed=0)
    assert not [e for e in _errors(report) if "raised" in e], _errors(report)
    refused = {f.path: f.message for f in report.findings if f.kind == "unsupported"}
    assert "Betainc gradient with respect to a and b not supported" in refused["vjp"]
    assert "jax cannot compute" in refused["jvp"]
    assert not report.passed  # nothing could be compared: never a pass
    only_x = check(betainc, inputs=["positive", "positive", _UNIT], wrt=[2], examples=2,
                   seed=0)
    assert only_x.passed, [f.message for f in only_x.findings]


@pytest.mark.jax
def test_the_same_words_from_the_users_own_rule_stay_an_error() -> None:
    jax = get_oracle("jax").load()

    @jax.custom_jvp
    def f(x: Any) -> Any:
        return jax.numpy.sin(x)

    @f.defjvp
    def _f_jvp(primals: Any, tangents: Any) -> Any:
        raise ValueError("my rule is not supported here")

    report = check(f, inputs=["real"], examples=1, seed=0, framework="jax")
    assert any("my rule is not supported here" in e for e in _errors(report)), report.findings
    assert not [f for f in report.findings if f.kind == "unsupported"]


# -- 3. an axis torch or JAX says is out of range: re-sampled -------------------------------
@pytest.mark.jax
def test_a_jax_axis_that_does_not_fit_the_drawn_shape_is_resampled() -> None:
    jax = get_oracle("jax").load()
    report = check(jax.nn.log_softmax, inputs=["real"], examples=2, seed=0)
    assert report.passed, _errors(report)
    assert report.stats["skipped"].get("axis", 0) >= 1


@pytest.mark.tensorflow
@pytest.mark.parametrize("call", ["reduce_logsumexp", "softmax", "cumsum", "unstack"])
def test_a_tensorflow_axis_that_does_not_fit_the_drawn_shape_is_resampled(call: str) -> None:
    # TensorFlow words it in its kernels' InvalidArgumentError (or tf.unstack's ValueError);
    # it used to be an error finding where numpy's, torch's and JAX's were re-sampled
    tf = get_oracle("tensorflow").load()
    fn = {"reduce_logsumexp": lambda x: tf.reduce_logsumexp(x, axis=1),
          "softmax": lambda x: tf.nn.softmax(x, axis=1),
          "cumsum": lambda x: tf.math.cumsum(x, axis=1),
          "unstack": lambda x: tf.unstack(x, axis=1)[0]}[call]
    report = check(fn, inputs=["real"], examples=2, seed=0, framework="tensorflow")
    assert report.passed, _errors(report)
    assert report.stats["skipped"].get("axis", 0) >= 1


@pytest.mark.tensorflow
def test_tensorflow_axis_words_raised_by_the_users_code_stay_an_error() -> None:
    tf = get_oracle("tensorflow").load()

    def f(x: Any) -> Any:
        raise ValueError("Argument `axis` = 1 not in range [0, 0)")

    report = check(f, inputs=[np.array([0.5, 1.0])], framework="tensorflow", seed=0)
    assert not report.passed and tf is not None
    assert any("Argument `axis` = 1" in m for m in _errors(report))


@pytest.mark.torch
def test_a_torch_dimension_out_of_range_is_resampled() -> None:
    torch = get_oracle("torch").load()
    report = check(lambda x: torch.softmax(x, 1), inputs=["real"], examples=2, seed=0)
    assert report.passed, _errors(report)
    assert report.stats["skipped"].get("axis", 0) >= 1


@pytest.mark.torch
def test_a_point_whose_axis_never_fits_says_how_to_give_shapes() -> None:
    torch = get_oracle("torch").load()
    report = check(lambda x: torch.softmax(x, 1), inputs=[np.array([0.5, 1.0])], seed=0)
    assert not report.passed
    (message,) = _errors(report)
    assert "give shapes= that fit it" in message and "Dimension out of range" not in message


@pytest.mark.jax
def test_jax_axis_words_raised_by_the_users_code_stay_an_error() -> None:
    get_oracle("jax").load()  # framework="jax" runs it with JAX

    def f(x: Any) -> Any:
        raise ValueError("axis 1 is out of bounds for array of dimension 1")

    report = check(f, inputs=["real"], examples=1, seed=0, framework="jax")
    assert any("axis 1 is out of bounds" in e for e in _errors(report)), report.findings


# -- 4. a forward that refuses empty arrays: the example is skipped --------------------------
def _max(x: Any) -> Any:
    return gnp.max(x)


def test_a_forward_that_refuses_empty_arrays_skips_the_example() -> None:
    report = check(_max, inputs=["real"], seed=0)
    assert report.passed, _errors(report)
    assert report.stats["skipped"].get("empty", 0) >= 1


def test_only_empty_examples_refused_by_the_forward_is_never_a_pass() -> None:
    report = check(_max, inputs=[np.zeros((0, 3))], seed=0)
    assert not report.passed
    (message,) = _errors(report)
    assert "does not take empty arrays" in message and "'(n)'" in message


def test_a_rule_that_crashes_on_empty_arrays_is_still_an_error() -> None:
    crashing = define_op("sin_crashing_on_empty", np.sin,
                         vjp=lambda g, out, x: g * gnp.cos(x) + 0 * gnp.max(x),
                         jvp=lambda ts, out, x: ts[0] * gnp.cos(x), registry=_LOCAL)
    report = check(crashing, inputs=[np.zeros((0, 3))], paths=["vjp"], seed=0)
    assert not report.passed
    assert any("zero-size array" in e for e in _errors(report)), report.findings


@pytest.mark.torch
def test_a_torch_dimension_of_a_0d_tensor_is_resampled() -> None:
    # torch words a 0-d input differently: "Dimension specified as -1 but tensor has no
    # dimensions" (torch.fft.fft); it was an error finding at every seed
    torch = get_oracle("torch").load()
    for seed in range(2):
        report = check(torch.fft.fft, inputs=["real"], examples=3, seed=seed)
        assert report.passed, _errors(report)
        assert report.stats["skipped"].get("axis", 0) >= 1
