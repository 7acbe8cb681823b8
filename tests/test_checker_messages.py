"""Findings that say what is wrong, first: a nan rule is not called affine, and a framework
function gradcheck took for a numpy one says how to name its framework."""

import numpy as np
import pytest

import gradcheck as gc
import gradcheck.numpy as gnp


def test_a_nan_vjp_is_reported_as_nan_not_as_an_affine_rule():
    # exp(-x) / (1 + exp(-x))**2 is inf / inf = nan at large -x
    op = gc.define_op("sigmoid_overflowing_rule", lambda x: 1 / (1 + np.exp(-x)),
                      vjp=lambda g, out, x: g * gnp.exp(-x) / (1 + gnp.exp(-x)) ** 2,
                      jvp=lambda ts, out, x: ts[0] * out * (1 - out), register=False)
    report = gc.check(op, seed=0)
    first = report.failures[0]
    assert (first.path, first.reference) == ("vjp", "numeric")
    assert "is nan where the forward and the numeric derivative are finite" in first.message
    assert not [f for f in report.findings if f.kind == "nonlinear"]


def test_a_nonlinear_rule_is_still_found():
    op = gc.define_op("abs_g_rule", np.sin, vjp=lambda g, out, x: gnp.abs(g) * gnp.cos(x),
                      jvp=lambda ts, out, x: ts[0] * gnp.cos(x), register=False)
    kinds = {(f.path, f.kind) for f in gc.check(op, seed=0).failures}
    assert ("vjp", "nonlinear") in kinds


def test_a_function_taken_for_numpy_says_how_to_name_its_framework():
    report = gc.check(lambda x: x.tanh() + 2 * x, inputs=["real"], examples=2)
    (error,) = report.failures
    assert "'numpy.ndarray' object has no attribute 'tanh'" in error.message
    assert "pass framework='torch'" in error.message


def test_other_errors_keep_their_own_words():
    def broken(x):
        raise TypeError("my own bug")

    (error,) = gc.check(broken, inputs=["real"], examples=2).failures
    assert error.message.endswith("my own bug")


def test_an_axis_that_does_not_fit_a_drawn_shape_skips_that_example():
    # axis=0 of a 0-d input is no example of mean: drawn again, not an error finding
    report = gc.check("mean", params={"axis": [0, -1]}, examples=3)
    assert report.passed and report.stats["skipped"]["axis"] > 0
    # (every usable example asked for, and a stratum of ordinary magnitude per choice)
    assert set(report.stats["examples"]) == {"float64", "float32"}
    assert min(report.stats["examples"].values()) >= 3
    # a function's own axis too
    assert gc.check(lambda x: gnp.sum(x, axis=1), inputs=["real"], examples=3).passed


def test_a_given_point_no_axis_fits_says_how_to_fix_it():
    (error,) = gc.check("mean", inputs=[np.array(3.0)], params={"axis": 0}).failures
    assert "the given point was skipped (axis: an axis" in error.message
    assert "give shapes= that fit it" in error.message


@pytest.mark.tensorflow
def test_tf_function_side_judges_only_its_own_jvp():
    import tensorflow as tf

    @tf.custom_gradient
    def badsin(x):
        def grad(up):
            return up * tf.cos(x) * 1.1
        return tf.sin(x), grad

    report = gc.check(badsin, inputs=["real"], references=["tf_function"], examples=2)
    assert not report.passed
    # the eager VJP is the target's: its bug is the target's, not tf_function's
    assert not [f for f in report.failures if f.attributed_to == "tf_function"]


def test_outputs_of_a_dict_result_count_its_values_in_sorted_key_order():
    from gradcheck.checker.specs import select_outputs

    out = {"b": "sin", "a": "square"}
    assert select_outputs(out, (1,)) == "sin" and select_outputs(out, (0, 1)) == ("square", "sin")
    report = gc.check(lambda x: {"b": gnp.sin(x), "a": x * x}, inputs=["real"], outputs=[1],
                      examples=2)
    assert report.passed
