"""gradcheck.check's contract: arguments, targets, reports, determinism, references."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from broken_ops import BROKEN

import gradcheck.numpy as gnp
from gradcheck.checker import FunctionTarget, Report, check
from gradcheck.checker.paths import PATHS
from gradcheck.checker.report import KINDS
from gradcheck.domains import POSITIVE, REAL, Domain


def test_same_seed_gives_byte_identical_json() -> None:
    a = check("sign_error", registry=BROKEN, seed=7).to_json()
    b = check("sign_error", registry=BROKEN, seed=7).to_json()
    assert a == b
    assert check("sign_error", registry=BROKEN, seed=8).to_json() != a


def test_report_round_trips_through_json_and_holds_no_timing() -> None:
    report = check("tanh", seed=1, examples=3)
    text = report.to_json()
    assert Report.from_json(text).to_json() == text
    data = json.loads(text)
    assert "time" not in text and "second" not in text
    assert data["passed"] is True
    conv = data["convergence"]
    assert set(conv) == {"steps", "series", "rounding", "expected_slope"}
    assert conv["expected_slope"] == 2.0 and set(conv["rounding"]) == set(conv["series"])
    assert set(conv["series"]) == set(PATHS)
    assert all(len(errors) == len(conv["steps"]) for errors in conv["series"].values())


def test_cells_cover_every_path_and_internal_reference() -> None:
    report = check("sin", seed=0, examples=2)
    pairs = {(c.path, c.reference) for c in report.cells}
    for path in PATHS:
        assert (path, "numeric") in pairs
    assert {("jvp", "self"), ("double_vjp", "self"), ("hvp_rev_rev", "self"),
            ("vjp", "linearity"), ("jvp", "linearity"), ("double_vjp", "dummy")} <= pairs
    assert all(c.status == "pass" and c.examples > 0 for c in report.cells)
    assert all(c.max_abs_err <= c.tolerance for c in report.cells)


def test_examples_and_dtypes_are_respected() -> None:
    report = check("exp", seed=0, examples=3, dtypes=["float32"], paths=["vjp"])
    assert report.dtypes == ["float32"]
    assert report.stats["examples"] == {"float32": 3}
    assert {c.path for c in report.cells} == {"vjp"}


def test_function_target_with_fixed_inputs() -> None:
    def f(x, y):
        return gnp.sin(x) * y

    x, y = np.linspace(-1, 1, 5), np.full(5, 2.0)
    report = check(f, inputs=(x, y), examples=3)
    assert report.passed and report.op.endswith("f")
    assert report.dtypes == ["float64"]
    assert report.findings == []


def test_function_target_with_domains_finds_a_bug() -> None:
    def wrong(x):  # the raw numpy term is invisible to the tape: its derivative is lost
        return gnp.log(x) + np.sum(np.asarray(x))

    report = check(wrong, inputs=(POSITIVE,), examples=4, dtypes=["float64"])
    assert not report.passed
    assert any(f.kind == "mismatch" and f.path == "vjp" for f in report.findings)


def test_function_target_with_a_signature() -> None:
    target = FunctionTarget(lambda a, b: gnp.matmul(a, b), (REAL, REAL),
                            shapes="(m,k),(k,n)", name="mm")
    report = check(target, examples=3)
    assert report.passed and report.op == "mm"


@pytest.mark.parametrize("kwargs, message", [
    ({"paths": ["vjp", "fwd"]}, "unknown path 'fwd'"),
    ({"references": ["numeric", "pytorch"]}, "unknown reference 'pytorch'"),
    ({"mode": "slow"}, "mode must be 'fast' or 'full'"),
    ({"examples": 0}, "examples must be a positive integer"),
    ({"dtypes": ["float16"]}, "float16"),
    ({"timeout": -1}, "timeout must be positive"),
])
def test_bad_arguments_are_clear_errors(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        check("sin", **kwargs)


def test_unknown_op_and_missing_inputs_are_clear_errors() -> None:
    with pytest.raises(KeyError, match="unknown op 'sinn'"):
        check("sinn")
    with pytest.raises(TypeError, match="needs inputs="):
        check(lambda x: x)


def test_timeout_turns_a_hang_into_an_error_finding() -> None:
    from gradcheck.engine import Registry, define_op

    slow = Registry("slow")

    def hang(x):
        while True:
            pass

    define_op("hang", hang, vjp=lambda g, out, x: g, jvp=lambda ts, out, x: ts[0],
              inputs=(REAL,), registry=slow)
    report = check("hang", registry=slow, timeout=0.5)
    assert [f.kind for f in report.findings] == ["error"]
    assert "timed out after 0.5 s" in report.findings[0].message
    assert not report.passed


def test_a_broken_metadata_is_an_error_finding_not_a_crash() -> None:
    from gradcheck.engine import Registry, define_op

    bad = Registry("bad")

    def shapes(draw):
        raise RuntimeError("cannot draw")

    define_op("badmeta", np.sin, vjp=lambda g, out, x: g, inputs=(REAL,), shapes=shapes,
              registry=bad)
    report = check("badmeta", registry=bad)
    assert report.findings[0].kind == "error" and "cannot draw" in report.findings[0].message
    assert report.findings[0].traceback


def test_finding_fields_are_complete() -> None:
    report = check("sign_error", registry=BROKEN, seed=0, dtypes=["float64"], paths=["jvp"])
    f = report.failures[0]
    assert f.kind in KINDS and f.op == "sign_error" and f.path == "jvp"
    assert f.reference == "numeric" and f.message
    assert f.max_abs_err > f.tolerance > 0 and not math.isnan(f.max_rel_err)
    assert {"inputs", "shapes", "params", "dtype", "seed", "tangent"} <= set(f.counterexample)


def test_an_op_can_be_checked_at_given_inputs() -> None:
    report = check("sign_error", registry=BROKEN, inputs=(np.array([0.3, -1.2]),), examples=2)
    assert report.dtypes == ["float64"] and not report.passed
    f = report.failures[0]
    assert f.counterexample["inputs"] == [[0.3, -1.2]]


def test_a_given_point_on_a_kink_is_tried_once_and_reported() -> None:
    import gradcheck.nn as gnn

    report = check(lambda x: gnn.relu(x), inputs=(np.array([0.0, 1.0]),), examples=2,
                   paths=["vjp"])
    kinds = sorted(f.kind for f in report.findings)
    # the one given point sits on the kink: reported, and nothing usable is left, which is
    # never a pass; trying it again with other directions would only land there again
    assert kinds == ["error", "nondifferentiable"] and not report.passed
    assert report.stats["skipped"]["kink"] == 1
    info = next(f for f in report.findings if f.kind == "nondifferentiable")
    assert "the given point is where" in info.message and "not differentiable" in info.message
    (error,) = report.failures
    assert "no usable example" in error.message and "kink" in error.message
    assert "cannot be re-sampled" in error.message


class _Zeros(Domain):
    def sample(self, rng, shape, dtype, scale=1.0, context=None):  # type: ignore[no-untyped-def]
        return np.zeros(shape, dtype)

    def describe(self) -> str:
        return "zeros"


def test_drawn_samples_on_a_kink_are_drawn_again_then_reported() -> None:
    import gradcheck.nn as gnn

    # every value this domain draws is relu's kink at 0
    report = check(lambda x: gnn.relu(x), examples=2, inputs=[_Zeros()])
    assert report.stats["skipped"]["kink"] > 3 and not report.passed
    info = next(f for f in report.findings if f.kind == "nondifferentiable")
    assert "samples landed on points where" in info.message and "re-sampling" in info.message


def test_overflowing_samples_are_skipped_and_counted_not_failed() -> None:
    # an honest overflow is no mismatch; with no other sample, nothing was checked: a failure
    # that says so, never a pass
    report = check("exp", inputs=(np.array([1000.0]),), examples=2)
    assert [f.kind for f in report.findings] == ["error"] and not report.passed
    assert "no usable example in float64" in report.findings[0].message
    assert report.stats["skipped"]["nonfinite"] > 0 and report.stats["examples"] == {
        "float64": 0}
    assert {c.status for c in report.cells} == {"skipped"}
    drawn = check("exp", examples=2, seed=0)  # drawn samples: the overflowing ones re-sampled
    assert drawn.passed


def _wrong_sin() -> object:
    from gradcheck.engine import define_op
    return define_op("wrong_sin_api", np.sin, vjp=lambda g, out, x: g * 5.0,
                     jvp=lambda ts, out, x: ts[0] * 5.0, register=False)


@pytest.mark.parametrize("spec", [dict(inputs=["real"], shapes="(0)"),
                                  dict(inputs=[np.zeros((0, 3))])])
def test_only_empty_examples_are_an_error_not_a_pass(spec: dict) -> None:
    # zero-size inputs run (a rule must cope with them) but compare no derivative entry
    report = check(_wrong_sin(), examples=2, **spec)
    assert not report.passed
    assert [f.details["reason"] for f in report.failures] == \
        ["only empty examples"] * len(report.dtypes)


def test_empty_outputs_compare_nothing_either() -> None:
    report = check(lambda x: gnp.sin(gnp.reshape(x, (-1,)))[:0], inputs=["real"], examples=2)
    assert not report.passed and "was empty" in report.failures[0].message


def test_empty_strata_among_others_still_pass() -> None:
    report = check("sin", examples=9)  # the empty shape family is one stratum of eight
    assert report.passed, report.failures


def test_a_check_where_no_selected_path_could_run_is_an_error() -> None:
    from gradcheck.engine import define_op
    first = define_op("first_order_sin", np.sin, vjp=lambda g, out, x: g * gnp.cos(x),
                      first_order_only="its rules are numpy", register=False)
    report = check(first, paths=["hvp_rev_rev", "double_vjp"], examples=2)
    assert not report.passed
    (error,) = report.failures
    assert error.details["reason"] == "nothing compared"
    assert "first-order only" in error.message
    assert check(first, paths=["vjp", "hvp_rev_rev"], examples=2).passed


@pytest.mark.parametrize("wrong", [1.0, 1.03])
def test_a_given_rtol_is_relative_to_the_projection_not_to_its_terms(wrong: float) -> None:
    # fast mode compares <vjp(v), u>: an rtol scaled by the sum of |terms| would grow with
    # their count, and a 3% error would pass a 30x30 input
    from gradcheck.engine import define_op
    cube = define_op("cube_rtol", lambda x: x ** 3,
                     vjp=lambda g, out, x: g * (3.0 * wrong) * x * x, register=False)
    x = np.random.default_rng(0).standard_normal((30, 30))
    report = check(cube, inputs=[x], paths=["vjp"], rtol=1e-3, examples=1)
    assert report.passed == (wrong == 1.0), report.failures


def test_a_failing_identity_says_which_path_the_numeric_reference_supports() -> None:
    from gradcheck.engine import define_op
    # the VJP is 10% off, the JVP right: the adjoint identity (jvp's) fails; its message puts
    # the blame on vjp, and the finding is filed under vjp, so jvp's cells do not read "fail"
    sin = define_op("sin_bad_vjp", np.sin, vjp=lambda g, out, x: g * gnp.cos(x) * 1.1,
                    jvp=lambda ts, out, x: ts[0] * gnp.cos(x), register=False)
    report = check(sin, paths=["vjp", "jvp"], examples=2, dtypes=["float64"])
    (identity,) = [f for f in report.failures if f.reference == "self"]
    assert identity.path == "vjp" and identity.details["against"] == "jvp"
    assert "fail" not in {c.status for c in report.cells if c.path == "jvp"}
    assert "supports jvp and rejects vjp here: vjp is wrong" in identity.message
    assert identity.details["numeric_rejects"] == "vjp"
    assert identity.details["numeric_supports"] == "jvp"
    assert {f.path for f in report.failures if f.reference == "numeric"} == {"vjp"}


def test_a_forward_that_raises_is_its_error_not_an_empty_example() -> None:
    def broken(x: np.ndarray) -> np.ndarray:
        raise RuntimeError("no")
    report = check(broken, inputs=["real"], examples=2)
    reasons = [f.details.get("reason") for f in report.failures]
    assert "only empty examples" not in reasons and not report.passed


@pytest.mark.parametrize("kwargs", [dict(dtypes=[]), dict(examples=True)])
def test_empty_dtypes_and_boolean_examples_are_refused(kwargs: dict) -> None:
    with pytest.raises(ValueError, match="dtypes= is empty|examples must be"):
        check("sin", **kwargs)


def test_an_output_that_is_not_an_array_is_named() -> None:
    report = check(lambda x: None, inputs=["real"], examples=2)
    assert [f.message for f in report.failures][0].endswith(
        "output 0 is None, not an array or a number: there is nothing to differentiate")


def test_a_constant_python_float_output_passes() -> None:
    # its derivative is zero on every path (the double-VJP's dummy takes a float's dtype)
    assert check(lambda x: 1.0, inputs=["real"], examples=2).passed
