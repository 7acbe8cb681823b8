"""TensorFlow's double-VJP checks the function the user wrote, with TensorFlow 2 semantics.

It used to be built in a plain ``tf.compat.v1`` Graph, where ``tensor == c`` is Python
identity (always False) instead of the elementwise ``tf.equal`` of eager mode and
``tf.function``: a custom gradient that branches on ``dy == 0`` passed although nested
GradientTapes show its value leak, and a correct ``tf.where(m == 1.0, ...)`` was a false
mismatch blamed on TensorFlow.  A Python ``if`` on a tensor silently took its False branch,
and a ``tf.Variable`` made inside ``fn`` was never initialised (an ``error`` finding on a
correct function).  The graph is now a ``tf.function``'s (:mod:`gradcheck.oracles.tf_graph`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from gradcheck.checker.api import check
from gradcheck.checker.report import Report
from gradcheck.oracles import get_oracle

pytestmark = pytest.mark.tensorflow

FAST: dict[str, Any] = {"examples": 1, "seed": 0, "framework": "tensorflow"}
X = np.array([0.3, -1.2])
U = np.array([1.0, 1.0])
MASK = np.array([1.0, 0.0, 1.0])


@pytest.fixture(scope="module")
def tf() -> Any:
    return get_oracle("tensorflow").load()


def _double_path(report: Report) -> list[str]:
    return sorted(f.kind for f in report.findings if f.path == "double_vjp")


def _zero_when_dy_is_zero(tf: Any) -> Any:
    """tanh with a gradient that returns fresh zeros where ``dy == 0``: right to first order,
    but its derivative in ``dy`` is zero at a zero dummy (a value leak)."""

    @tf.custom_gradient
    def leaky_tanh(x: Any) -> Any:
        y = tf.tanh(x)
        return y, lambda dy: tf.where(dy == 0, tf.zeros_like(dy), dy) * (1 - y * y)

    return leaky_tanh


def _nested_tapes(tf: Any, fn: Any, dummy: np.ndarray) -> np.ndarray:
    """TensorFlow 2's own double-VJP JVP (eager nested tapes) at ``dummy``."""
    x, v = tf.constant(X), tf.constant(dummy)
    with tf.GradientTape() as outer:
        outer.watch(v)
        with tf.GradientTape() as inner:
            inner.watch(x)
            y = fn(x)
        g = inner.gradient(y, x, output_gradients=v)
    return np.asarray(outer.gradient(g, v, output_gradients=tf.constant(U)))


def test_a_gradient_branching_on_dy_equal_zero_is_a_value_leak(tf: Any) -> None:
    fn = _zero_when_dy_is_zero(tf)
    oracle = get_oracle("tensorflow")
    for dummy in (np.zeros_like(X), np.ones_like(X)):  # the graph computes what TF2 computes
        np.testing.assert_array_equal(oracle.double_vjp(fn, [X], 0, [U], dummy),
                                      _nested_tapes(tf, fn, dummy))
    report = check(fn, inputs=["real"], **FAST)
    assert not report.passed
    leak = [f for f in report.findings if f.kind == "value_leak" and f.path == "double_vjp"]
    assert leak and leak[0] in report.failures


#: The same mask, selected by ``==`` and by ``!=``.
SELECTS = {"eq": lambda m: m == 1.0, "ne": lambda m: m != 0.0}


@pytest.mark.parametrize("select", sorted(SELECTS))
def test_a_mask_compared_elementwise_is_checked_as_written(tf: Any, select: str) -> None:
    def where(x: Any, m: Any) -> Any:
        return tf.where(SELECTS[select](m), tf.sin(x), tf.cos(x))

    report = check(where, inputs=["real", MASK], wrt=[0], shapes="(3),(3)", **FAST)
    assert report.passed, [(f.kind, f.path, f.message) for f in report.failures]
    assert report.cell("double_vjp", "numeric").status == "pass"  # type: ignore[union-attr]
    x = np.array([0.5, 0.5, 0.5])
    np.testing.assert_allclose(
        get_oracle("tensorflow").double_vjp(where, [x, MASK], 0, [np.ones(3)], np.ones(3)),
        np.where(MASK == 1.0, np.cos(x), -np.sin(x)), rtol=1e-12)


def test_a_python_if_on_dy_is_refused_not_read_as_false(tf: Any) -> None:
    @tf.custom_gradient
    def branchy_tanh(x: Any) -> Any:
        y = tf.tanh(x)

        def grad(dy: Any) -> Any:
            if dy == 0:  # eagerly a real test; a plain Graph took the False branch silently
                return tf.zeros_like(dy)
            return dy * (1 - y * y)

        return y, grad

    report = check(branchy_tanh, inputs=["real"], shapes="()", **FAST)
    (why,) = [f for f in report.findings if f.path == "double_vjp"]
    assert why.kind == "unsupported" and "graph mode" in why.message


def test_a_variable_made_inside_fn_is_not_an_error_finding(tf: Any) -> None:
    def scaled_sin(x: Any) -> Any:
        return tf.Variable(np.array([2.0, 3.0])) * tf.sin(x)

    report = check(scaled_sin, inputs=["real"], shapes="(2)", **FAST)
    # a plain Graph never ran the variable's initialiser: FailedPreconditionError, a failing
    # "error" finding; tf.function refuses a variable made at each call, as TensorFlow says
    assert report.passed, [(f.kind, f.path, f.message) for f in report.failures]
    assert _double_path(report) == ["unsupported"]
    assert report.cell("vjp", "numeric").status == "pass"  # type: ignore[union-attr]
