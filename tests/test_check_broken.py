"""Every deliberately broken op is caught, with the right kind of finding."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from broken_ops import BROKEN, CASES, Case

from gradcheck.checker import Finding, Report, assert_gradients, check
from gradcheck.checker.report import FAILURE_KINDS


def _check(case: Case, **extra: object) -> Report:
    return check(case.op, registry=BROKEN, seed=0, **{**case.options, **extra})


@pytest.mark.parametrize("case", CASES, ids=[c.op for c in CASES])
def test_broken_op_is_caught_with_the_right_kind(case: Case) -> None:
    report = _check(case)
    found = [(f.kind, f.path) for f in report.findings]
    assert any(f.kind == case.kind and (case.path is None or f.path == case.path)
               for f in report.findings), f"{case.op} ({case.reason}): got {found}"
    if case.kind in FAILURE_KINDS:
        assert not report.passed
    else:  # a dependence leak is a warning: correct but wasteful
        assert report.passed and report.warnings


def _finding(report: Report, kind: str, path: str) -> Finding:
    return next(f for f in report.findings if f.kind == kind and f.path == path)


def test_region_bug_counterexample_is_in_the_region() -> None:
    report = check("region_far", registry=BROKEN, seed=0, dtypes=["float64"])
    f = _finding(report, "mismatch", "vjp")
    x = np.asarray(f.counterexample["inputs"][0])
    assert np.max(np.abs(x)) > 3
    assert f.details["shrunk"]
    assert x.size <= 2  # Hypothesis shrank the shape


def test_large_region_bug_counterexample_is_large() -> None:
    f = _finding(check("region_large", registry=BROKEN, seed=1), "mismatch", "vjp")
    assert np.max(np.asarray(f.counterexample["inputs"][0])) > 20


def test_transposition_bug_shows_only_batched_or_non_square() -> None:
    f = _finding(check("bad_transpose", registry=BROKEN, seed=0), "mismatch", "vjp")
    x_shape, y_shape = (tuple(s) for s in f.counterexample["shapes"])
    assert len(y_shape) > 2 or y_shape[-1] != y_shape[-2]
    assert f.worst_index is not None  # confirmed in full mode: the Jacobian entry is named


def test_value_leak_names_the_gradient_op_and_the_dummy() -> None:
    f = _finding(check("elu_leaky", registry=BROKEN, seed=0), "value_leak", "double_vjp")
    assert "elu_leaky_grad" in f.message
    assert f.details["dummy"] in ("ones", "random", "random with exact zeros", "large")
    assert "dummy" in f.counterexample and "tangent" in f.counterexample


def test_a_right_op_with_a_wrong_jvp_leaves_the_vjp_alone() -> None:
    report = check("wrong_jvp", registry=BROKEN, seed=0)
    assert not any(f.path == "vjp" for f in report.failures)
    assert report.cell("vjp", "numeric").status == "pass"
    assert report.cell("jvp", "numeric").status == "fail"


def test_mutation_names_the_array() -> None:
    f = _finding(check("in_place", registry=BROKEN, seed=0), "input_mutated", "vjp")
    assert "cotangent" in f.message


def test_first_order_only_paths_are_unsupported_not_failed() -> None:
    report = check("in_place", registry=BROKEN, seed=0, paths=["double_vjp", "hvp_rev_rev"])
    kinds = {(f.kind, f.path) for f in report.findings}
    assert kinds == {("unsupported", "double_vjp"), ("unsupported", "hvp_rev_rev"),
                     ("error", "all")}
    assert report.cell("hvp_rev_rev", "numeric").status == "unsupported"
    # unsupported paths are not failures; but with nothing else selected nothing was
    # compared, which is an error, never a pass
    assert [f.details["reason"] for f in report.failures] == ["nothing compared"]


def test_assert_gradients_message_is_readable() -> None:
    with pytest.raises(AssertionError) as info:
        assert_gradients("sign_error", registry=BROKEN, dtypes=["float64"])
    text = str(info.value)
    for piece in ("'sign_error'", "[mismatch] vjp vs numeric", "tolerance", "ratio",
                  "worst index", "counterexample", "inputs=", "cotangent="):
        assert piece in text, piece


def test_full_mode_catches_without_projections() -> None:
    report = check("small_error", registry=BROKEN, mode="full", seed=0, examples=2,
                   paths=["vjp", "jvp"], dtypes=["float64"])
    f = _finding(report, "mismatch", "vjp")
    assert f.details["mode"] == "full"
    assert 5e-5 < f.max_rel_err < 2e-4


def test_a_mismatch_carries_the_values_at_its_worst_index() -> None:
    # full mode: the worst element of the Jacobian, so the two values are J entries
    report = check(BROKEN.get("missing_chain"), seed=0, dtypes=["float64"], mode="full")
    (f,) = [f for f in report.failures if f.path == "vjp" and f.reference == "numeric"]
    got, expected = f.details["analytic"], f.details["numeric"]
    assert abs(got - expected) == pytest.approx(f.max_abs_err, rel=1e-9)
    assert f.max_abs_err > f.tolerance


def test_a_second_order_capable_rule_that_writes_into_its_input_is_input_mutated() -> None:
    from gradcheck.engine import Registry, define_op
    from gradcheck.numpy import cos

    def vjp(g: Any, out: Any, x: Any) -> Any:
        result = g * cos(x)
        x -= 0.0 * x + 1e-3  # writes into the primal when it is a plain array
        return result

    local = Registry()
    op = define_op("sin_writes", np.sin, vjp, jvp=lambda ts, out, x: ts[0] * cos(x),
                   registry=local)
    report = check(op, seed=0, dtypes=["float64"], examples=2)
    kinds = {f.kind for f in report.failures}
    assert "input_mutated" in kinds and "error" not in kinds, report.failures
    assert not [f for f in report.findings if f.path == "all"]  # no collapse into one error


def test_nan_inputs_and_integer_inputs_are_never_a_pass() -> None:
    import gradcheck.numpy as gnp

    nan = check(lambda x: gnp.sin(x), inputs=[np.array([1.0, np.nan])])
    assert not nan.passed and "no usable example" in nan.failures[0].message
    ints = check(lambda x: x * 2, inputs=[np.array([1, 2])])
    assert not ints.passed and "nothing to differentiate" in ints.failures[0].message


def test_a_non_finite_derivative_beside_a_finite_forward_is_an_unstable_formula() -> None:
    from gradcheck.engine import Registry, define_op
    from gradcheck.numpy import exp

    # softplus' derivative as exp(x) / (1 + exp(x)): inf / inf = nan once exp overflows
    local = Registry()
    op = define_op("naive_softplus", lambda x: np.logaddexp(0.0, x),
                   lambda g, out, x: g * exp(x) / (1.0 + exp(x)),
                   jvp=lambda ts, out, x: ts[0] * exp(x) / (1.0 + exp(x)), registry=local)
    report = check(op, inputs=[np.array([0.5, 800.0])], seed=0, paths=["vjp", "jvp"])
    (f,) = [f for f in report.failures if f.path == "jvp" and f.reference == "numeric"]
    assert f.kind == "mismatch" and "unstable formula?" in f.message


def test_a_derivative_that_is_identically_zero_is_silently_zero() -> None:
    from gradcheck.engine import Registry, define_op
    from gradcheck.numpy import cos, zeros_like

    local = Registry()
    # the forward-mode rule forgot the op: its JVP is zeros (TensorFlow's None -> zeros)
    op = define_op("sin_no_jvp", np.sin, lambda g, out, x: g * cos(x),
                   jvp=lambda ts, out, x: zeros_like(x), registry=local)
    report = check(op, seed=0, dtypes=["float64"], paths=["vjp", "jvp"])
    (f,) = [f for f in report.failures if f.path == "jvp" and f.reference == "numeric"]
    assert f.kind == "silently_zero" and "identically zero" in f.message
    assert f.severity == "failure"


def test_exploration_covers_every_magnitude_family_and_region_at_every_seed() -> None:
    from gradcheck.checker.api import _strata
    from gradcheck.checker.explore import stream_seed
    from gradcheck.checker.sampling import FAMILIES, STRATUM_SCALES
    from gradcheck.checker.targets import as_target

    relu = as_target("nn.relu")
    for seed in (0, 1, 2):
        drawn = _strata(relu, "float64", 8, stream_seed(seed, "nn.relu", "float64"))
        assert sorted(e.scale for e in drawn) == sorted(STRATUM_SCALES)
        shapes = [e.shapes[0] for e in drawn]
        assert any(s == () for s in shapes) and any(0 in s for s in shapes)
        assert any(len(s) >= 1 and 0 not in s for s in shapes)
        large = [e.args[0] for e in drawn if e.scale >= 100 and e.args[0].size >= 2]
        assert large and all(a.min() < 0 < a.max() for a in large)
        scalars = [float(e.args[0]) for e in drawn if e.shapes[0] == ()]
        assert min(scalars) < 0 < max(scalars)  # both sides of relu's kink as 0-d inputs
        batched = [e.args[0] for e in drawn if e.args[0].size >= 2]
        assert all(a.min() < 0 < a.max() for a in batched)  # and within every array
    assert set(FAMILIES) == {"batched", "scalar", "broadcast", "empty"}


def test_a_bug_at_large_magnitudes_is_found_at_every_seed() -> None:
    for seed in range(4):
        report = check("region_large", registry=BROKEN, seed=seed, dtypes=["float64"])
        assert "mismatch" in {f.kind for f in report.failures}, seed
