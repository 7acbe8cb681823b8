"""The TensorFlow adapter, and gradcheck.check on TensorFlow functions: what TensorFlow's
double-VJP does with the dummy cotangent, on the installed TensorFlow (2.21).

The observed rows (the checker's ``double_vjp`` against ``dummy``) record what TensorFlow
2.21 actually does; the forward-mode thread reports TensorFlow 1.x behaviour (sin/cos/log
needed a fed dummy, ELU leaked by value for x < 0, Cholesky needed the dummy).  A new
TensorFlow that changes a row fails here on purpose.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
from oracle_cases import CASES, TOL, Case, check_case

import gradcheck
from gradcheck.checker.report import Cell, Finding, Report
from gradcheck.oracles import Unsupported, get_oracle
from gradcheck.oracles.tensorflow import TensorFlowOracle, TensorFlowProblem
from gradcheck.oracles.tf_dependence import trace_dependence

pytestmark = pytest.mark.tensorflow

X = np.array([-1.3, -0.4, 0.2, 0.9, 1.7])
U = np.array([0.5, -1.0, 2.0, 0.25, -0.75])
PATHS = ["vjp", "double_vjp"]


@pytest.fixture(scope="module")
def oracle() -> TensorFlowOracle:
    oracle = get_oracle("tensorflow")
    assert isinstance(oracle, TensorFlowOracle)
    assert oracle.status() is None
    return oracle


@pytest.fixture(scope="module")
def tf(oracle: TensorFlowOracle) -> Any:
    # Through the oracle, so TensorFlow is imported with its logging quietened.
    return oracle.load()


def _check(fn: Any, x: np.ndarray, **options: Any) -> Report:
    """gradcheck.check on a TensorFlow function at ``x``: the VJP and the double-VJP against
    the numeric derivative, their identities, and the dummy-leak check."""
    options.setdefault("examples", 2)
    return gradcheck.check(fn, inputs=[x], paths=PATHS, references=["numeric", "self"],
                           **options)


def _found(report: Report, kind: str, path: str, reference: str | None = None) -> Finding:
    """The one finding of ``kind`` on ``path`` (against ``reference``)."""
    found = [f for f in report.findings if f.kind == kind and f.path == path
             and reference in (None, f.reference)]
    assert len(found) == 1, [(f.kind, f.path, f.reference) for f in report.findings]
    return found[0]


def _kinds(report: Report) -> set[str]:
    return {f.kind for f in report.findings}


def _cell(report: Report, path: str, reference: str) -> Cell:
    cell = report.cell(path, reference)
    assert cell is not None, (path, reference)
    return cell


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_known_derivatives(oracle: TensorFlowOracle, tf: Any, case: Case) -> None:
    check_case(oracle, tf, case)


def test_forward_mode_is_declared_dependent(oracle: TensorFlowOracle) -> None:
    assert oracle.jvp_is_independent is False


def test_softsign_has_no_second_order_gradient(oracle: TensorFlowOracle, tf: Any) -> None:
    # TF 2.21 registers no gradient for SoftsignGrad.  Forward mode fails too, which shows
    # that ForwardAccumulator differentiates the VJP rather than using a forward rule.
    args, tangents = [X], [U]
    (grad,) = oracle.vjp(tf.nn.softsign, args, 0, np.ones_like(X))
    np.testing.assert_allclose(grad, 1 / (1 + np.abs(X)) ** 2, **TOL)
    for path in (
        lambda: oracle.jvp(tf.nn.softsign, args, 0, tangents),
        lambda: oracle.double_vjp(tf.nn.softsign, args, 0, tangents, np.ones_like(X)),
        lambda: oracle.hvp(tf.nn.softsign, args, 0, tangents, np.ones_like(X)),
    ):
        with pytest.raises(Unsupported, match=r"SoftsignGrad"):
            path()
    # The checker: the double-VJP is unsupported in TensorFlow's own words, so no leak
    # verdict (neither by value nor by dependence) is given; the VJP keeps its verdict.
    report = _check(tf.nn.softsign, X, examples=1)
    unsupported = _found(report, "unsupported", "double_vjp")
    assert "No gradient defined for operation" in unsupported.message
    assert "SoftsignGrad" in unsupported.details["reason"]
    assert _cell(report, "double_vjp", "dummy").status == "unsupported"
    assert not _kinds(report) & {"value_leak", "dependence_leak"}
    assert _cell(report, "vjp", "numeric").status == "pass"


def test_tuple_outputs(oracle: TensorFlowOracle, tf: Any) -> None:
    def fn(a: Any, b: Any) -> tuple[Any, Any]:
        return tf.sin(a) * b, tf.exp(a)

    a, b = np.array([0.3, -1.1]), np.array([2.0, 0.5])
    ta, tb = np.array([1.0, -2.0]), np.array([0.5, 0.25])
    grads = oracle.vjp(fn, [a, b], (0, 1), (np.ones(2), np.ones(2)))
    np.testing.assert_allclose(grads[0], np.cos(a) * b + np.exp(a), **TOL)
    want = (np.cos(a) * b * ta + np.sin(a) * tb, np.exp(a) * ta)
    for path in (
        oracle.jvp(fn, [a, b], (0, 1), [ta, tb]),
        oracle.double_vjp(fn, [a, b], (0, 1), [ta, tb], (np.ones(2), np.ones(2))),
    ):
        for got, expected in zip(path, want, strict=True):
            np.testing.assert_allclose(got, expected, **TOL)


def test_gather_gradients_are_densified(oracle: TensorFlowOracle, tf: Any) -> None:
    # tf.gather's gradient is IndexedSlices, which numpy cannot read nor tf.gradients
    # differentiate again until it is made dense.
    def fn(x: Any) -> Any:
        return tf.gather(x, [0, 2, 2]) ** 2

    x, u, c = np.array([1.0, 2.0, 3.0]), np.array([1.0, 10.0, 100.0]), np.array([1.0, 2.0, 4.0])
    (grad,) = oracle.vjp(fn, [x], 0, c)
    np.testing.assert_allclose(grad, [2.0, 0.0, 6 * (2 + 4)], **TOL)
    want = 2 * x[[0, 2, 2]] * u[[0, 2, 2]]
    np.testing.assert_allclose(oracle.double_vjp(fn, [x], 0, [u], np.ones(3)), want, **TOL)
    (hvp,) = oracle.hvp(fn, [x], 0, [u], c)
    np.testing.assert_allclose(hvp, [2.0 * u[0], 0.0, 2 * (2 + 4) * u[2]], **TOL)


def test_half_output_is_a_clear_error(oracle: TensorFlowOracle, tf: Any) -> None:
    def fn(x: Any) -> Any:
        return tf.cast(x, tf.float16)

    with pytest.raises(ValueError, match=r"fn: the output has dtype float16"):
        oracle.vjp(fn, [X], 0, np.ones_like(X))


def test_float32_output_of_a_float32_only_kernel(oracle: TensorFlowOracle, tf: Any) -> None:
    """A float32-only kernel's float32 output is accepted; its cotangent is cast to it."""
    def fn(x: Any) -> Any:
        return tf.square(tf.cast(x, tf.float32))

    (grad,) = oracle.vjp(fn, [X], 0, np.ones_like(X))
    np.testing.assert_allclose(grad, 2 * X, rtol=1e-6)


@dataclass(frozen=True)
class Observed:
    """What TensorFlow 2.21's double-VJP does for one op (see the module docstring)."""

    name: str
    fn: Callable[[Any], Callable[..., Any]]  # the function, built from the tf module
    x: np.ndarray
    dependence: str
    reason: str


def _symmetric_cholesky(tf: Any) -> Callable[..., Any]:
    # Cholesky's gradient assumes a symmetric tangent and the checker draws any tangent, so
    # the input is symmetrized first (transpose and add have linear gradients that read no
    # dummy: the row still observes Cholesky's own second-order rule).
    return lambda a: tf.linalg.cholesky((a + tf.linalg.matrix_transpose(a)) / 2)


_SPD = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]])
OBSERVED = [
    Observed(
        "sin",
        lambda tf: tf.sin,
        X,
        "control",
        "_SinGrad runs cos(x) under a control dependency on the upstream gradient",
    ),
    Observed("cos", lambda tf: tf.cos, X, "control", "same pattern as sin"),
    Observed("log", lambda tf: tf.math.log, np.abs(X), "control",
             "reciprocal(x) under the control dep"),
    Observed("square", lambda tf: tf.square, X, "control", "2*x under the control dependency"),
    Observed("tanh", lambda tf: tf.tanh, X, "none", "TanhGrad's gradient is linear in the dummy"),
    Observed("sigmoid", lambda tf: tf.sigmoid, X, "none", "SigmoidGrad's gradient is linear"),
    Observed("elu", lambda tf: tf.nn.elu, X, "none", "the TF 1.x value leak for x < 0 is fixed"),
    Observed("cholesky", _symmetric_cholesky, _SPD, "none", "no longer needs the dummy"),
]


@pytest.mark.parametrize("row", OBSERVED, ids=lambda r: r.name)
def test_observed_double_vjp_behaviour(tf: Any, row: Observed) -> None:
    report = _check(row.fn(tf), row.x)
    assert "unsupported" not in _kinds(report)
    # no value leak: every dummy gives exactly the result of dummy zeros
    assert "value_leak" not in _kinds(report)
    assert _cell(report, "double_vjp", "dummy").max_abs_err == 0.0
    # the VJP is linear in its cotangent, and the double-VJP is the numeric JVP
    assert _cell(report, "vjp", "linearity").status == "pass"
    numeric = _cell(report, "double_vjp", "numeric")
    assert numeric.status == "pass" and numeric.max_abs_err < 1e-7
    if row.dependence == "none":
        # the graph never reaches the dummy's placeholder: nothing would have to be fed
        assert "dependence_leak" not in _kinds(report), row.reason
        assert _cell(report, "double_vjp", "dummy").status == "pass"
        return
    leak = _found(report, "dependence_leak", "double_vjp", "dummy")
    assert leak.details["dependence"] == row.dependence, row.reason
    assert _cell(report, "double_vjp", "dummy").status == "warn"
    path = leak.details["dependence_path"]
    assert path[0].endswith("(Placeholder)")
    assert any(step.startswith("control:") for step in path)
    # TensorFlow itself refuses to run the graph without a value for the dummy
    assert "must feed a value for placeholder tensor 'v0'" in leak.details["feed_error"]


def test_sin_check_gives_the_jvp_and_is_deterministic(oracle: TensorFlowOracle,
                                                      tf: Any) -> None:
    first = _check(tf.sin, X, seed=3)
    again = _check(tf.sin, X, seed=3)
    assert first.to_json() == again.to_json()
    assert _cell(first, "double_vjp", "numeric").status == "pass"
    np.testing.assert_allclose(oracle.double_vjp(tf.sin, [X], 0, [U], np.ones_like(X)),
                               U * np.cos(X), **TOL)
    assert _found(first, "dependence_leak", "double_vjp", "dummy") in first.warnings


def _custom(tf: Any, grad_of: Any) -> Any:
    """sin(x) with the custom gradient ``grad_of(dy, x)``."""

    @tf.custom_gradient
    def custom_sin(x: Any) -> Any:
        return tf.sin(x), lambda dy: grad_of(dy, x)

    return custom_sin


def test_custom_gradient_nonlinear_in_upstream_leaks_by_value(oracle: TensorFlowOracle,
                                                              tf: Any) -> None:
    fn = _custom(tf, lambda dy, x: dy * dy * tf.cos(x))
    report = _check(fn, X)
    leak = _found(report, "value_leak", "double_vjp", "dummy")
    assert leak in report.failures and leak.ratio > 1e6
    # d/dv <v*v*cos(x), u> = 2 v u cos(x): zero at the checker's primary dummy (zeros), so
    # the double-VJP is identically zero where the numeric JVP is not, at every example
    wrong = _found(report, "silently_zero", "double_vjp", "numeric")
    assert wrong.counterexample["dummy"] == [np.zeros_like(X).tolist()]
    # the same values through the adapter: 0 at dummy zeros, 2 u cos(x) at dummy ones,
    # 2000x that at a dummy of 1e3
    zeros = oracle.double_vjp(fn, [X], 0, [U], np.zeros_like(X))
    ones = oracle.double_vjp(fn, [X], 0, [U], np.ones_like(X))
    large = oracle.double_vjp(fn, [X], 0, [U], 1e3 * np.ones_like(X))
    np.testing.assert_allclose(zeros, np.zeros_like(X), **TOL)
    np.testing.assert_allclose(ones, 2 * U * np.cos(X), **TOL)
    assert np.max(np.abs(ones - zeros)) == pytest.approx(np.max(np.abs(2 * U * np.cos(X))))
    assert np.max(np.abs(large - zeros)) > 1e2
    # a value leak reads the dummy's data, and TensorFlow needs it fed
    problem = TensorFlowProblem(fn, [X], [0], "custom_sin")
    problem.double_vjp([X], [U], [np.ones_like(X)])
    details = problem.dependence_details()
    assert details["dependence"] == "data" and "must feed" in details["feed_error"]
    # and the first-order VJP is not linear in its cotangent
    assert _found(report, "nonlinear", "vjp", "linearity") in report.failures


def test_custom_gradient_affine_in_upstream_is_caught_by_linearity_not_value(
        oracle: TensorFlowOracle, tf: Any) -> None:
    # dy + 1 is affine: its derivative in dy does not depend on dy, so no value leak (and the
    # double-VJP is even right); only the linearity check of the VJP itself catches it.
    fn = _custom(tf, lambda dy, x: dy * tf.cos(x) + 1.0)
    report = _check(fn, X)
    assert not _kinds(report) & {"value_leak", "dependence_leak"}
    assert _cell(report, "double_vjp", "dummy").status == "pass"
    nonlinear = _found(report, "nonlinear", "vjp", "linearity")
    assert nonlinear.details["property"] == "zero" and nonlinear.max_abs_err > 0.1
    assert _cell(report, "double_vjp", "numeric").status == "pass"
    np.testing.assert_allclose(oracle.double_vjp(fn, [X], 0, [U], np.ones_like(X)),
                               U * np.cos(X), **TOL)


def test_forward_mode_ignores_a_custom_gradient(oracle: TensorFlowOracle, tf: Any) -> None:
    # A custom gradient 3x the true one: the reverse paths use it, ForwardAccumulator
    # differentiates the forward ops instead (documented in gradcheck.oracles.tensorflow).
    fn = _custom(tf, lambda dy, x: 3.0 * dy * tf.cos(x))
    (grad,) = oracle.vjp(fn, [X], 0, U)
    np.testing.assert_allclose(grad, 3 * U * np.cos(X), **TOL)
    np.testing.assert_allclose(oracle.double_vjp(fn, [X], 0, [U], np.ones_like(X)),
                               3 * U * np.cos(X), **TOL)
    np.testing.assert_allclose(oracle.jvp(fn, [X], 0, [U]), U * np.cos(X), **TOL)


def test_custom_gradient_reading_the_dummys_size_is_a_shape_dependence(
        oracle: TensorFlowOracle, tf: Any) -> None:
    # raw_ops.Size keeps a real Size op (tf.size would fold the static size to a constant).
    fn = _custom(
        tf, lambda dy, x: dy * tf.cos(x) * tf.cast(tf.raw_ops.Size(input=dy), tf.float64) / X.size
    )
    report = _check(fn, X)
    leak = _found(report, "dependence_leak", "double_vjp", "dummy")
    assert leak.details["dependence"] == "shape"
    assert any(step.startswith("shape:") and "(Size)" in step
               for step in leak.details["dependence_path"])
    assert "value_leak" not in _kinds(report)
    assert _cell(report, "double_vjp", "numeric").status == "pass"
    np.testing.assert_allclose(oracle.double_vjp(fn, [X], 0, [U], np.ones_like(X)),
                               U * np.cos(X), **TOL)


def test_dependence_walk_on_a_hand_built_graph(tf: Any) -> None:
    graph = tf.Graph()
    with graph.as_default():
        v = tf.compat.v1.placeholder(tf.float64, [2], name="v")
        x = tf.constant([1.0, 2.0], dtype=tf.float64)
        by_data = tf.identity(v) * x
        by_shape = tf.raw_ops.OnesLike(x=v) * x
        with tf.control_dependencies([v]):
            by_control = tf.identity(x)
        unrelated = x * 2.0
    assert trace_dependence([v.op], [by_data]).kind == "data"
    assert trace_dependence([v.op], [by_shape]).kind == "shape"
    assert trace_dependence([v.op], [by_control]).kind == "control"
    assert trace_dependence([v.op], [unrelated]).kind == "none"
    # The strongest path wins when several reach the results.
    assert trace_dependence([v.op], [by_control, by_shape]).kind == "shape"
    path = trace_dependence([v.op], [by_control]).path
    assert path[0] == "v (Placeholder)" and path[-1].startswith("control: ")


def test_cumulative_logsumexp_double_vjp_is_nan_at_a_zero_dummy(oracle: TensorFlowOracle,
                                                                 tf: Any) -> None:
    # TensorFlow 2.21's _CumulativeLogsumexpGrad takes the log of the upstream gradient: the
    # first-order VJP is right, but its derivative in the dummy is nan where the dummy is 0.
    def fn(x: Any) -> Any:
        return tf.math.cumulative_logsumexp(x, axis=0)

    x = np.array([0.3, -1.0, 2.0])
    report = _check(fn, x)
    assert _cell(report, "vjp", "numeric").status == "pass"
    leak = _found(report, "value_leak", "double_vjp", "dummy")
    assert leak.max_abs_err == float("inf")  # finite at another dummy, nan at zeros
    assert leak.tolerance < 1e-8  # the nan does not widen the tolerance
    assert np.isnan(oracle.double_vjp(fn, [x], 0, [np.ones(3)], np.zeros(3))).all()
    assert np.isfinite(oracle.double_vjp(fn, [x], 0, [np.ones(3)], np.ones(3))).all()


def test_the_unfed_dummy_named_is_the_first_one_tensorflow_needs(tf: Any) -> None:
    """With several dummies unfed at once, TensorFlow names whichever placeholder its
    executor reaches first (linalg.svd's sweep named 'v0' in one run and 'v2' in another):
    each is left out alone, in order, so the message is the same every time."""
    def svd(a: Any) -> Any:  # (s, u, v): all three dummies must be fed
        return tf.linalg.svd(a, full_matrices=False)

    def second(x: Any) -> Any:
        return 2.0 * x, tf.cos(x)

    a, da = np.array([[1.0081947047872388]]), np.array([[0.28621037305701835]])
    cases = {"svd": (svd, a, da, [np.ones(1), np.ones((1, 1)), np.ones((1, 1))]),
             "second": (second, X, U, [np.ones_like(X), np.ones_like(X)])}
    messages = {}
    for name, (fn, x, u, dummies) in cases.items():
        found = set()
        for _ in range(8):  # all three unfed at once, svd named each of them in 30 runs
            problem = TensorFlowProblem(fn, [x], [0], name)
            problem.double_vjp([x], [u], dummies)
            found.add(problem.dependence_details()["feed_error"])
        assert len(found) == 1, found
        messages[name] = found.pop()
    assert "placeholder tensor 'v0'" in messages["svd"]
    # a linear first output's JVP needs no value of its dummy: the second's is named
    assert "placeholder tensor 'v1'" in messages["second"]
