"""TensorFlow (and torch) functions that used to abort a whole check or fail with the
framework's own error: each is now a result, path by path, in gradcheck's words.

- a function that cannot be built into the graph-mode double-VJP (a captured variable, a
  Keras layer, ``x.numpy()``, a gradient of the wrong shape or count) no longer aborts the
  check: variables are captured by tracing the double-VJP in a ``tf.function``; a function
  that runs eagerly only makes the double-VJP alone ``unsupported``; a wrong gradient is a
  ``shape`` or ``error`` finding on the double-VJP, as the eager paths find it;
- the probe tries only the requested paths;
- integer-only inputs say "nothing to differentiate", as for every framework;
- exception texts carry no process-dependent counters (same seed, same JSON, any --jobs);
- integer outputs (``top_k``'s indices) are not differentiated; dict outputs are pytrees;
- a float32 ``input_signature`` is a clear error; a missing first-order gradient is said
  to be the VJP itself, by every path.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from gradcheck.checker.api import check
from gradcheck.checker.evaluation import normalise_error_text
from gradcheck.checker.report import Report
from gradcheck.oracles import framework_target, get_oracle

FAST: dict[str, Any] = {"examples": 1, "seed": 0}


@pytest.fixture(scope="module")
def tf() -> Any:
    return get_oracle("tensorflow").load()  # type: ignore[attr-defined]


def _by_path(report: Report) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for f in report.findings:
        found.setdefault(f.path, []).append(f.kind)
    return found


def _failing_kinds(report: Report) -> set[str]:
    return {f.kind for f in report.failures}


# -- 1. the double-VJP's graph never aborts the whole check --------------------------------
@pytest.mark.tensorflow
def test_a_captured_variable_is_checked_on_every_path(tf: Any) -> None:
    v = tf.Variable(np.array([1.5, -0.5, 2.0]))
    fn = lambda x: tf.reduce_sum(v * tf.tanh(x))  # noqa: E731
    for paths in (["vjp", "jvp"], None):
        report = check(fn, inputs=["real"], shapes="(3)", framework="tensorflow", paths=paths,
                       **FAST)
        assert report.passed, report.findings
        assert all(f.path != "all" for f in report.findings)
    # the double-VJP was computed (traced in a tf.function), and compared
    assert report.cell("double_vjp", "numeric").status == "pass"


@pytest.mark.tensorflow
def test_a_tf_module_with_a_variable_and_an_eager_constant_are_checked(tf: Any) -> None:
    class Layer(tf.Module):  # type: ignore[misc,name-defined]
        def __init__(self) -> None:
            self.w = tf.Variable(np.array([[1.0, 2.0], [0.5, -1.0]]))

        def __call__(self, x: Any) -> Any:
            return tf.tanh(tf.linalg.matvec(self.w, x))

    assert check(Layer(), inputs=["real"], shapes="(2)", **FAST).passed
    c = tf.constant([1.5, -0.5], tf.float64)  # made eagerly, read inside the graph
    report = check(lambda x: tf.reduce_sum(c * tf.sin(x)), inputs=["real"], shapes="(2)",
                   framework="tensorflow", **FAST)
    assert report.passed and report.cell("double_vjp", "numeric").status == "pass"
    # sin's gradient still reads its dummy through a control dependence, found in the
    # tf.function's graph the same way
    (leak,) = [f for f in report.findings if f.kind == "dependence_leak"]
    assert leak.details["dependence"] == "control" and "feed_error" not in leak.details


@pytest.mark.tensorflow
def test_a_function_that_leaves_the_graph_is_a_mismatch_and_no_graph_mode(tf: Any) -> None:
    report = check(lambda x: tf.constant(np.sin(x.numpy())) * x, inputs=["real"],
                   framework="tensorflow", **FAST)
    found = _by_path(report)
    for path in ("vjp", "jvp", "hvp_rev_rev"):  # as torch's .detach() gives
        assert "mismatch" in found[path], found
    (why,) = [f for f in report.findings if f.path == "double_vjp"]
    assert why.kind == "unsupported"
    assert "cannot run <lambda> in graph mode" in why.message
    assert "'SymbolicTensor' object has no attribute 'numpy'" in why.message


@pytest.mark.tensorflow
def test_a_gradient_that_runs_eagerly_only_makes_only_the_double_vjp_unsupported(
        tf: Any) -> None:
    @tf.custom_gradient  # type: ignore[misc]
    def npgrad(x: Any) -> Any:
        return tf.sin(x), lambda up: up * tf.constant(np.cos(x.numpy()))

    report = check(npgrad, inputs=["real"], paths=["vjp", "jvp", "double_vjp"], **FAST)
    assert report.passed
    (why,) = report.findings
    assert why.path == "double_vjp" and why.kind == "unsupported"
    assert "cannot build the VJP of npgrad in graph mode" in why.message


@pytest.mark.tensorflow
def test_a_custom_gradient_of_the_wrong_shape_is_a_shape_finding(tf: Any) -> None:
    @tf.custom_gradient  # type: ignore[misc]
    def summed(x: Any) -> Any:
        return tf.sin(x), lambda up: tf.reduce_sum(up * tf.cos(x))

    report = check(summed, inputs=["real"], shapes="(3)",
                   paths=["vjp", "jvp", "double_vjp"], **FAST)
    found = _by_path(report)
    assert found["vjp"] == ["shape"] and found["double_vjp"] == ["shape"]
    assert "all" not in found


@pytest.mark.tensorflow
def test_a_custom_gradient_with_too_few_gradients_is_an_error_on_each_path(tf: Any) -> None:
    @tf.custom_gradient  # type: ignore[misc]
    def mul(x: Any, y: Any) -> Any:
        return x * y, lambda up: up * y  # one gradient for two inputs

    report = check(mul, inputs=["real", "real"], paths=["vjp", "double_vjp"], **FAST)
    found = _by_path(report)
    assert found == {"vjp": ["error"], "double_vjp": ["error"]}
    (graph,) = [f for f in report.findings if f.path == "double_vjp"]
    assert "2 gradients for the op IdentityN of 3 inputs" in graph.message


@pytest.mark.tensorflow
def test_the_probe_tries_only_the_requested_paths(tf: Any) -> None:
    target = framework_target(lambda x: tf.constant(np.sin(x.numpy())) * x, ["real"],
                              framework="tensorflow")
    assert target.unsupported(("vjp", "jvp")) == {}
    assert set(target.unsupported(("vjp", "double_vjp"))) == {"double_vjp"}


@pytest.mark.tensorflow
def test_integer_only_inputs_have_nothing_to_differentiate(tf: Any) -> None:
    report = check(lambda n: tf.cast(n, tf.float64) * 2.0, inputs=[np.array([1, 2], np.int32)],
                   framework="tensorflow", **FAST)
    (error,) = report.failures
    assert "nothing to differentiate: input 0 is int32 [2]" in error.message


# -- 2. the same seed gives the same text, whatever ran before in the process ---------------
def test_process_counters_in_error_texts_normalise_equal() -> None:
    def text(fwd: str, grad: str, pyfunc: str, address: str) -> str:
        return (f"hvp_rev_fwd raised InternalError: Recorded operation '{fwd}' returned too "
                f"few gradients; s: \"{grad}\"; KeyError: b'{pyfunc}'; <function f at "
                f"{address}>; shape (1000,) of x_2")

    one = text("__forward___forward_b_4294_4587", "CustomGradient-6397", "pyfunc_607",
               "0x7fdc8d2ad300")
    two = text("__forward___forward_b_19_73", "CustomGradient-3", "pyfunc_7", "0x7f0012345678")
    assert one != two and normalise_error_text(one) == normalise_error_text(two)
    # what is not a counter stays: a shape, a small suffix of a name
    assert "shape (1000,) of x_2" in normalise_error_text(one)


# -- 3. integer outputs are not differentiated ----------------------------------------------
@pytest.mark.tensorflow
def test_top_k_indices_are_not_differentiated(tf: Any) -> None:
    report = check(lambda x: tf.math.top_k(x, 2), inputs=["real"], shapes="(4)",
                   framework="tensorflow", **FAST)
    assert report.passed and not report.findings


# -- 4. dict outputs are pytrees -------------------------------------------------------------
@pytest.mark.tensorflow
def test_a_tensorflow_function_may_return_a_dict(tf: Any) -> None:
    report = check(lambda x: {"b": tf.exp(x), "a": tf.tanh(x)}, inputs=["real"],
                   framework="tensorflow", **FAST)
    assert report.passed and not report.failures
    problem: Any = framework_target(lambda x: {"b": tf.exp(x), "a": tf.tanh(x)}, ["real"],
                                    framework="tensorflow").bind(_one_example())
    a, b = problem.forward(problem.primals)  # sorted-key order
    np.testing.assert_allclose(a, np.tanh(problem.primals[0]))
    np.testing.assert_allclose(b, np.exp(problem.primals[0]))


@pytest.mark.tensorflow
def test_a_tensorflow_output_that_is_no_tensor_is_a_clear_error(tf: Any) -> None:
    report = check(lambda x: (tf.sin(x), {1, 2}), inputs=["real"], framework="tensorflow",
                   **FAST)
    message = report.failures[0].message
    assert "<lambda>: output 1 is a set, which TensorFlow cannot make a tensor" in message
    assert "must return tensors, or tuples, lists or dicts of them" in message


@pytest.mark.torch
def test_a_torch_function_may_return_a_dict() -> None:
    import torch

    report = check(lambda x: {"b": torch.exp(x), "a": torch.tanh(x)}, inputs=["real"],
                   framework="torch", **FAST)
    assert report.passed and not report.failures


def _one_example() -> Any:
    from gradcheck.checker.sampling import Example

    x = np.array([0.3, -1.2])
    return Example(args=[x], params={}, dtype="float64", scale=1.0, seed=0, shapes=[x.shape])


# -- 5. a float32 input_signature -------------------------------------------------------------
@pytest.mark.tensorflow
def test_a_float32_input_signature_is_a_clear_error(tf: Any) -> None:
    @tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])  # type: ignore[misc]
    def sig32(x: Any) -> Any:
        return tf.sin(x)

    report = check(sig32, inputs=["real"], shapes="(3)", **FAST)
    message = report.failures[0].message
    assert "sig32: its tf.function input_signature does not accept" in message
    assert "TensorFlow functions are checked in float64" in message
    assert "must accept float64" in message and "Received args" not in message


# -- 6. a missing first-order gradient is the VJP itself, on every path ------------------------
@pytest.mark.tensorflow
def test_a_missing_vjp_is_said_to_be_the_vjp_itself_on_every_path(tf: Any) -> None:
    def weighted(x: Any) -> Any:
        return tf.math.bincount(tf.constant([0, 1, 1, 3]), weights=x, minlength=5)

    for paths in (None, ["vjp", "jvp", "hvp_rev_rev"]):
        report = check(weighted, inputs=["real"], shapes="(4)", paths=paths, **FAST)
        reasons = {f.path: f.message.split("unsupported: ", 1)[-1] for f in report.findings
                   if f.kind == "unsupported"}
        assert set(reasons) == set(paths or reasons) and len(reasons) >= 3
        (reason,) = set(reasons.values())  # one reason, in TensorFlow's words after ours
        assert reason.startswith("TensorFlow has no VJP for weighted (the VJP itself is "
                                 "missing): ")
        assert "DenseBincount" in reason


@pytest.mark.tensorflow
def test_a_missing_second_order_is_said_to_be_the_vjp_of_the_vjp(tf: Any) -> None:
    report = check(tf.nn.softsign, inputs=["real"], paths=["jvp", "hvp_rev_rev"], **FAST)
    (reason,) = {f.message.split("unsupported: ", 1)[-1] for f in report.findings
                 if f.kind == "unsupported"}
    assert reason.startswith("TensorFlow cannot differentiate the VJP of softsign again (no "
                             "second order, so no forward mode either): ")
    assert "SoftsignGrad" in reason
