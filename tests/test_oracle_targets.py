"""TensorFlow and autograd functions checked directly with ``gradcheck.check``.

The leak rows record what the installed TensorFlow (2.21) does: sin needs its dummy fed
through a control dependency only; tanh does not; a custom gradient that is not linear in the
upstream gradient leaks by value.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from gradcheck.checker.api import check
from gradcheck.checker.report import Report
from gradcheck.domains import REAL
from gradcheck.oracles import framework_target, get_oracle
from gradcheck.oracles.targets import FrameworkTarget, framework_of

X = np.array([-1.3, -0.4, 0.2, 0.9, 1.7])
CHECK: dict[str, Any] = {"references": ["numeric", "self", "tensorflow"], "examples": 3}


@pytest.fixture(scope="module")
def tf() -> Any:
    return get_oracle("tensorflow").load()  # type: ignore[attr-defined]


def _kinds(report: Report, path: str) -> list[str]:
    return sorted(f.kind for f in report.findings if f.path == path)


def _cell(report: Report, path: str, reference: str) -> Any:
    cell = report.cell(path, reference)
    assert cell is not None, (path, reference, [(c.path, c.reference) for c in report.cells])
    return cell


@pytest.mark.tensorflow
def test_sin_is_correct_but_needs_its_dummy_through_a_control_dependency(tf: Any) -> None:
    report = check(tf.sin, inputs=(X,), **CHECK)
    assert report.passed and report.family == "tensorflow"
    for path in ("vjp", "jvp", "double_vjp", "hvp_fwd_rev", "hvp_rev_rev", "hvp_rev_fwd"):
        assert _cell(report, path, "numeric").status == "pass", path
    # TensorFlow's own double-VJP (graph mode, placeholder dummy) is the target's path:
    # the one leak check reads its graph and says how the dummy is read
    (leak,) = [f for f in report.findings if f.path == "double_vjp"]
    assert leak.kind == "dependence_leak" and leak.severity == "warning"
    assert leak.reference == "dummy" and leak.details["dependence"] == "control"
    assert "only through control dependencies" in leak.message
    assert any(step.startswith("control:") for step in leak.details["dependence_path"])
    assert _cell(report, "double_vjp", "dummy").status == "warn"
    assert _cell(report, "vjp", "tensorflow").status == "skipped"  # the target is TF's


@pytest.mark.tensorflow
def test_default_references_flag_the_dependence_from_the_graph(tf: Any) -> None:
    # the checker's own leak check reads the graph: the JVP of sin reaches the dummy
    report = check(tf.sin, inputs=(X,), examples=2)
    assert report.cell("vjp", "tensorflow") is None
    assert _kinds(report, "double_vjp") == ["dependence_leak"]
    assert _kinds(check(tf.tanh, inputs=(X,), examples=2), "double_vjp") == []


@pytest.mark.tensorflow
def test_tanh_is_clean(tf: Any) -> None:
    report = check(tf.tanh, inputs=(X,), **CHECK)
    assert report.passed
    assert _kinds(report, "double_vjp") == []
    assert _cell(report, "double_vjp", "dummy").status == "pass"


@pytest.mark.tensorflow
def test_custom_gradient_not_linear_in_the_upstream_gradient_leaks_by_value(tf: Any) -> None:
    @tf.custom_gradient
    def squared_upstream(x: Any) -> Any:
        return tf.sin(x), lambda dy: dy * dy * tf.cos(x)

    report = check(squared_upstream, inputs=(X,), **CHECK)
    assert not report.passed
    assert report.op == "squared_upstream"
    (leak,) = [f for f in report.findings if f.path == "double_vjp" and f.reference == "dummy"]
    assert leak.kind == "value_leak" and leak.severity == "failure"
    assert "changes with the dummy cotangent" in leak.message
    assert leak.max_abs_err > leak.tolerance
    # the checker's own paths see it too: the VJP is not linear in the cotangent
    assert "nonlinear" in _kinds(report, "vjp")
    assert _cell(report, "double_vjp", "dummy").status == "fail"


@pytest.mark.tensorflow
def test_missing_second_order_gradient_is_unsupported_not_an_error(tf: Any) -> None:
    report = check(tf.nn.softsign, inputs=(X,), **CHECK)
    assert report.passed
    assert _cell(report, "vjp", "numeric").status == "pass"
    for path in ("jvp", "double_vjp", "hvp_rev_rev"):
        cell = _cell(report, path, "numeric")
        assert cell.status == "unsupported" and "SoftsignGrad" in cell.note, path
    assert not [f for f in report.findings if f.kind == "error"]


@pytest.mark.tensorflow
def test_wrong_custom_gradient_is_a_mismatch_against_numeric(tf: Any) -> None:
    @tf.custom_gradient
    def doubled(x: Any, y: Any) -> Any:
        return tf.sin(x) * y, lambda dy: (2 * dy * tf.cos(x) * y, dy * tf.sin(x))

    report = check(doubled, inputs=(X, X + 2), **CHECK)
    mismatch = next(f for f in report.findings if f.path == "vjp" and f.reference == "numeric")
    assert mismatch.kind == "mismatch" and mismatch.attributed_to == ""


@pytest.mark.tensorflow
def test_tensorflow_function_on_a_domain(tf: Any) -> None:
    def fn(x: Any, y: Any) -> Any:
        return tf.math.log1p(tf.exp(x)) * tf.tanh(y)

    report = check(fn, inputs=(REAL, REAL), **CHECK)
    assert report.passed, [f.message for f in report.failures]
    assert report.dtypes == ["float64"]
    assert framework_of(fn) == "tensorflow"


@pytest.mark.tensorflow
def test_tensorflow_function_refuses_float32_clearly(tf: Any) -> None:
    with pytest.raises(ValueError, match="sin is a TensorFlow function, checked in float64 "
                                         "only"):
        check(tf.sin, inputs=(REAL,), dtypes=["float32"], examples=2)
    # beside float64 it is said, not an error
    report = check(tf.sin, inputs=(REAL,), dtypes=["float64", "float32"], examples=2)
    assert report.passed and report.dtypes == ["float64"]
    said = [f for f in report.findings if f.kind == "unsupported"]
    assert [f.details["dtype"] for f in said] == ["float32"]


@pytest.mark.autograd
def test_autograd_function_is_checked_with_autograds_own_paths() -> None:
    import autograd.numpy as anp

    def fn(x: Any, y: Any) -> Any:
        return anp.sin(x) * anp.exp(y / 10)

    report = check(fn, inputs=(REAL, REAL), references=["numeric", "self"], examples=3)
    assert report.passed, [f.message for f in report.failures]
    assert report.family == "autograd" and report.dtypes == ["float64", "float32"]


@pytest.mark.autograd
def test_autograd_primitive_with_a_wrong_vjp_is_caught() -> None:
    import autograd.numpy as anp
    from autograd.extend import defjvp, defvjp, primitive

    @primitive
    def wrong_sin(x: Any) -> Any:
        return np.sin(x)

    defvjp(wrong_sin, lambda ans, x: lambda g: 2 * g * anp.cos(x))
    defjvp(wrong_sin, lambda g, ans, x: g * anp.cos(x))
    report = check(wrong_sin, inputs=(X,), references=["numeric", "self"], examples=3)
    assert report.op == "wrong_sin"
    assert "mismatch" in _kinds(report, "vjp")
    # the forward rule is right: the JVP agrees with the numbers, not with the VJP, so the
    # failing adjoint identity is filed under the VJP and no jvp cell reads "fail"
    assert _cell(report, "jvp", "numeric").status == "pass"
    assert _cell(report, "jvp", "self").status != "fail"
    selves = {f.path: f.details.get("numeric_rejects") for f in report.failures
              if f.reference == "self"}
    assert "jvp" not in selves and selves["vjp"] == "vjp"


@pytest.mark.autograd
def test_autograd_missing_forward_rule_is_unsupported() -> None:
    import autograd.numpy as anp

    target = framework_target(anp.linalg.det, (np.eye(3) * 2 + 0.1,))
    assert isinstance(target, FrameworkTarget)
    assert "JVP of det" in target.unsupported()["jvp"]
    assert "double_vjp" not in target.unsupported()  # reverse over reverse works


def test_framework_detection_without_importing_anything() -> None:
    import math

    def plain(x: Any) -> Any:
        return math.sin(x)

    assert framework_of(plain) is None
    assert framework_of("sin") is None
    with pytest.raises(TypeError, match=r"pass framework='tensorflow' or 'autograd'"):
        framework_target(plain, (X,))
    with pytest.raises(ValueError, match=r"unknown framework 'mxnet'"):
        FrameworkTarget(plain, (X,), framework="mxnet")
