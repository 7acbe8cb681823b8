"""Framework functions the oracles once misjudged: a torch function's nested-tuple output
(stacked into a tensor cut from the graph: a false mismatch blamed on torch), torch and
TensorFlow functions with no floating output (passed with nothing compared), and the error
texts of common mistakes (None or a string in a torch output, float32 module state, JAX's
complex64, ``inputs="real"``)."""

from __future__ import annotations

from collections import namedtuple
from typing import Any

import numpy as np
import pytest

from gradcheck.checker.api import check
from gradcheck.checker.report import Report
from gradcheck.oracles import get_oracle
from gradcheck.oracles.torch import TorchProblem


def _torch() -> Any:
    return get_oracle("torch").load()  # Unavailable, with the install hint, when missing


def _findings(report: Report) -> list[str]:
    return [f"{f.kind} {f.path}: {f.message}" for f in report.findings if f.kind != "unsupported"]


def _forward_error(report: Report) -> str:
    errors = [f.message for f in report.findings if (f.kind, f.path) == ("error", "forward")]
    assert not report.passed and errors, _findings(report)
    return errors[0]


# -- torch: nested outputs are flattened leaf by leaf -------------------------------------------
Pair = namedtuple("Pair", ["c", "d"])


def _nested_outputs() -> list[Any]:
    torch = _torch()
    return [
        lambda x: (torch.sin(x), (torch.cos(x), 2.0 * x)),
        lambda x: [torch.sin(x), [torch.exp(x), (x * x, torch.tanh(x))]],
        lambda x: (torch.sin(x), {"b": torch.cos(x), "a": (3.0 * x, x ** 3)}),
        lambda x: (torch.sin(x), Pair(torch.cos(x), x.sum())),
    ]


NESTED_IDS = ["tuple in tuple", "lists and tuples", "dict in tuple", "namedtuple in tuple"]


@pytest.mark.torch
@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("k", range(4), ids=NESTED_IDS)
def test_a_correct_nested_output_passes_on_drawn_inputs(k: int, seed: int) -> None:
    fn = _nested_outputs()[k]
    report = check(fn, inputs=["real"], seed=seed, examples=3, framework="torch")
    assert report.passed and not _findings(report), _findings(report)


@pytest.mark.torch
@pytest.mark.parametrize("x", [0.3, -1.7, 2.5])
@pytest.mark.parametrize("k", range(4), ids=NESTED_IDS)
def test_a_correct_nested_output_passes_at_a_0d_point(k: int, x: float) -> None:
    torch = _torch()
    fn = _nested_outputs()[k]
    report = check(fn, inputs=[torch.tensor(x, dtype=torch.float64)], seed=0, examples=2)
    assert report.passed and not _findings(report), _findings(report)


@pytest.mark.torch
def test_nested_leaves_keep_their_graph_and_order() -> None:
    torch = _torch()
    x = np.array([0.2, -0.7, 1.1])
    problem = TorchProblem(lambda t: (torch.sin(t), (torch.cos(t), 2.0 * t)), (x,), (0,), "f")
    outs = problem.forward(problem.primals)
    assert problem.returns_tuple
    np.testing.assert_allclose(outs[2], 2.0 * x)
    ones, zeros = np.ones_like(x), np.zeros_like(x)
    (grad,) = problem.vjp(problem.primals, [zeros, zeros, ones])  # the inner tuple's 2 * x
    np.testing.assert_allclose(grad, 2.0 * ones)
    tangents = problem.jvp(problem.primals, [ones])  # J u, one per output leaf
    for got, want in zip(tangents, [np.cos(x), -np.sin(x), 2.0 * ones], strict=True):
        np.testing.assert_allclose(got, want)


@pytest.mark.torch
def test_a_wrong_derivative_inside_a_nested_output_is_still_found() -> None:
    torch = _torch()

    class Doubled(torch.autograd.Function):
        """3 x, whose backward and jvp say 6 (broken)."""

        @staticmethod
        def forward(x: Any) -> Any:
            return 3.0 * x

        @staticmethod
        def setup_context(ctx: Any, inputs: Any, output: Any) -> None:
            pass

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            return 6.0 * g

        @staticmethod
        def jvp(ctx: Any, t: Any) -> Any:
            return 6.0 * t

    report = check(lambda x: (torch.sin(x), (torch.cos(x), Doubled.apply(x))),
                   inputs=["real"], seed=0, examples=2, framework="torch")
    kinds = {(f.kind, f.path) for f in report.findings}
    assert {("mismatch", "vjp"), ("mismatch", "jvp")} <= kinds, _findings(report)
    assert "forward" not in {p for _, p in kinds}, _findings(report)


# -- torch and TensorFlow: no floating output is an error, never a pass -------------------------
@pytest.mark.torch
@pytest.mark.parametrize("case", ["argmax", "comparison", "sort indices"])
def test_a_torch_function_with_no_floating_output_is_an_error(case: str) -> None:
    torch = _torch()
    fn, options = {
        "argmax": (lambda x: torch.argmax(x, -1), {"shapes": "(3)"}),
        "comparison": (lambda x: x > 0, {}),
        "sort indices": (lambda x: torch.sort(x, -1), {"shapes": "(3)", "outputs": [1]}),
    }[case]
    report = check(fn, inputs=["real"], seed=0, examples=3, framework="torch", **options)
    assert "nothing to differentiate" in _forward_error(report)


@pytest.mark.torch
def test_a_torch_integer_output_beside_a_floating_one_is_still_checked() -> None:
    torch = _torch()
    report = check(lambda x: torch.sort(x, -1), inputs=["real"], shapes="(3)", seed=0,
                   examples=2)
    assert report.passed and not _findings(report), _findings(report)


@pytest.mark.tensorflow
@pytest.mark.parametrize("case", ["argmax", "comparison", "top_k indices"])
def test_a_tensorflow_function_with_no_floating_output_is_an_error(case: str) -> None:
    tf = get_oracle("tensorflow").load()
    fn, options = {
        "argmax": (lambda x: tf.argmax(x, -1), {"shapes": "(3)"}),
        "comparison": (lambda x: x > 0, {}),
        "top_k indices": (lambda x: tf.math.top_k(x, 2), {"shapes": "(4)", "outputs": [1]}),
    }[case]
    report = check(fn, inputs=["real"], seed=0, examples=2, framework="tensorflow", **options)
    assert "nothing to differentiate" in _forward_error(report)


# -- error texts of common mistakes -------------------------------------------------------------
@pytest.mark.torch
@pytest.mark.parametrize(("extra", "said"), [
    (None, "output 1 is None"),
    ("info", "output 1 is a str ('info')"),
    ((1.0, None), "output 2 (out[1][1]) is None"),
], ids=["None", "str", "nested None"])
def test_a_torch_output_that_is_not_a_tensor_is_named(extra: Any, said: str) -> None:
    torch = _torch()
    report = check(lambda x: (torch.sin(x), extra), inputs=["real"], seed=0, examples=2,
                   framework="torch")
    message = _forward_error(report)
    assert said in message and "not a tensor or a number" in message, message


@pytest.mark.torch
def test_float32_module_state_says_to_call_double() -> None:
    torch = _torch()
    torch.manual_seed(0)
    report = check(torch.nn.Linear(3, 2), inputs=["real"], shapes="(n,3)", seed=0,
                   examples=2)
    assert ".double()" in _forward_error(report)


@pytest.mark.torch
def test_a_float32_tensor_in_params_says_to_give_float64() -> None:
    torch = _torch()
    report = check(torch.nn.functional.linear, inputs=["real"], shapes="(n,3)", seed=0,
                   examples=2, params={"weight": torch.ones(2, 3)})
    message = _forward_error(report)
    assert "float64 tensors in params=" in message, message


@pytest.mark.jax
@pytest.mark.parametrize("dtypes", [["complex64"], "complex64"])
def test_jax_complex64_is_refused_in_complex_words(dtypes: Any) -> None:
    jnp = get_oracle("jax").load().numpy
    with pytest.raises(ValueError) as info:
        check(jnp.sin, inputs=["complex"], seed=0, examples=2, dtypes=dtypes)
    message = str(info.value)
    assert "complex64" in message and "dtypes='complex128'" in message, message
    assert "dtypes='float64'" not in message, message


@pytest.mark.torch
def test_inputs_given_as_a_string_says_inputs_is_a_list() -> None:
    torch = _torch()
    with pytest.raises(TypeError, match=r"inputs= must be a list or tuple with one entry per "
                                        r"positional input, got the string 'real'; for one "
                                        r"input write inputs=\['real'\]"):
        check(torch.sin, inputs="real", seed=0, examples=2)


def test_inputs_given_as_a_string_for_a_numpy_like_function() -> None:
    import gradcheck.numpy as gnp

    with pytest.raises(TypeError, match=r"got the string 'positive'"):
        check(lambda x: gnp.log(x), inputs="positive", seed=0, examples=2)
