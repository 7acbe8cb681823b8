"""A bad spec is an error naming the target, the input and the key, raised by ``check()``
before anything is checked -- never a pass, a clamp, or an ``error`` finding half-way."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

import gradcheck as gc
import gradcheck.numpy as gnp
from gradcheck import domains as D
from gradcheck.checker.explore import draw_examples
from gradcheck.checker.targets import as_target
from gradcheck.domains_complex import ComplexCut


def f(x):  # type: ignore[no-untyped-def]
    return gnp.sin(x)


def two(x, y):  # type: ignore[no-untyped-def]
    return gnp.sin(x) * y, gnp.cos(x)


def drawn_shapes(target: Any) -> list[tuple[int, ...]]:
    """The shapes of the first example ``target`` draws in float64."""
    (example,) = draw_examples(target.strategy("float64"), 1, seed=0)
    return [np.shape(a) for a in example.args]


# -- inputs given to a registered op ------------------------------------------------------------
@pytest.mark.parametrize(("op", "inputs", "extra"), [
    ("sum", ["real", "real"], {}),
    ("mean", ["real", "positive"], {}),
    ("sum", ["real", "real"], {"wrt": [1]}),
    ("matmul", ["real"], {}),
])
def test_an_op_takes_as_many_inputs_as_it_declares(op: str, inputs: list[str],
                                                   extra: dict[str, Any]) -> None:
    nin = gc.default_registry.get(op).nin
    with pytest.raises(ValueError, match=rf"op {op!r}: takes {nin} inputs?, inputs= gives "
                                         rf"{len(inputs)}; it"):
        gc.check(op, inputs=inputs, **extra)


def test_a_variadic_op_takes_any_number_of_inputs() -> None:
    assert gc.default_registry.get("stack").nin is None
    target = as_target("stack", ["real", "real", "real"])
    assert len(drawn_shapes(target)) == 3


def test_a_parameter_given_twice_to_an_op_is_a_type_error() -> None:
    op = gc.default_registry.get("sum")
    x = np.ones((2, 3))
    with pytest.raises(TypeError, match=r"op 'sum': parameter 'axis' given positionally and "
                                        "as a keyword"):
        op(x, 0, axis=1)
    assert op(x, 0).shape == (3,) and op(x, axis=1).shape == (2,)


def test_wrt_of_an_op_is_checked_against_its_inputs_up_front() -> None:
    with pytest.raises(ValueError, match=r"op 'sum', wrt: position 3 is out of range for 1 "
                                         "inputs"):
        gc.check("sum", wrt=[3])


# -- domain arguments -------------------------------------------------------------------------
BAD_TABLES = [
    ({"domain": "interval", "low": 3, "high": -3}, r"low=3 must be below high=-3"),
    ({"domain": "interval", "low": 1, "high": 1}, r"low=1 must be below high=1"),
    ({"domain": "interval", "low": "a", "high": 2}, r"low must be a finite number, got 'a'"),
    ({"domain": "interval", "low": float("nan"), "high": 2}, r"low must be a finite number"),
    ({"domain": "interval", "low": 0, "high": float("inf")}, r"high must be a finite number"),
    ({"domain": "interval", "low": 0, "high": 1, "margin": 0.6},
     r"margin must be in \[0, 0.5\), got 0.6"),
    ({"domain": "interval", "low": 0, "high": 1, "margin": -1}, r"margin must be in"),
    ({"domain": "labels", "high": 0}, r"high must be a positive integer or "
                                       r"'last_dim_of_0', got 0"),
    ({"domain": "labels", "high": -3}, r"high must be a positive integer"),
    ({"domain": "labels", "high": "last_dim_of_O"}, r"got 'last_dim_of_O'"),
    ({"domain": "labels", "high": 2.5}, r"high must be a positive integer"),
    ({"domain": "segment_ids", "num_segments": 0}, r"num_segments must be a positive integer "
                                                    r"or a param's name, got 0"),
    ({"domain": "mask", "p": 2}, r"p must be in \[0, 1\], got 2"),
    ({"domain": "positive", "low": -5}, r"low must be a finite number >= 0, got -5"),
    ({"domain": "probabilities", "axis": "x"}, r"axis must be an integer, got 'x'"),
    ({"domain": "complex_cut", "margin": 4}, r"margin must be in \[0, pi\), got 4"),
    ({"domain": "banded", "lower": 1.5}, r"lower must be a non-negative integer"),
    ({"domain": "lower_triangular", "lower": "yes"}, r"lower must be true or false"),
]


@pytest.mark.parametrize(("table", "message"), BAD_TABLES)
def test_bad_domain_arguments_fail_up_front_naming_the_input(table: dict[str, Any],
                                                             message: str) -> None:
    name = table["domain"]
    with pytest.raises(ValueError, match=rf"function f, input 1: domain {name!r} cannot take "
                                         rf".*{message}"):
        gc.check(lambda x, y: f(x), name="f", inputs=["real", table])


@pytest.mark.parametrize("make", [
    lambda: D.Interval(3.0, -3.0), lambda: D.Interval(0.0, 1.0, margin=0.5),
    lambda: D.IntLabels(high=0), lambda: D.SegmentIds(num_segments=-1),
    lambda: D.BoolMask(p=-0.1), lambda: D.Positive(low=float("nan")),
    lambda: ComplexCut(margin=-0.1), lambda: D.Indices(axis=1.5),
])
def test_domains_validate_their_arguments_when_made(make: Any) -> None:
    with pytest.raises(ValueError):
        make()


def test_good_domain_arguments_still_work() -> None:
    assert D.Interval(-3, -0.1).describe() == "(-3, -0.1)"
    assert D.IntLabels(high="last_dim_of_0").high == "last_dim_of_0"
    assert D.SegmentIds(num_segments="num_segments").num_segments == "num_segments"
    assert D.BoolMask(p=0.0).p == 0.0 and D.BoolMask(p=1).p == 1
    assert D.Indices(axis="axis").axis == "axis"
    assert D.Positive(low=np.float64(1.0)).low == 1.0


def test_a_param_holding_no_segments_is_an_error_not_a_clamp() -> None:
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match=r"num_segments: param 'k' is 0; it must be a "
                                         "positive integer"):
        D.SegmentIds(num_segments="k").sample(rng, (4,), "float64",
                                              context={"params": {"k": 0}})


# -- shapes ---------------------------------------------------------------------------------
@pytest.mark.parametrize(("shapes", "message"), [
    ("(-1)", r"shapes: '-1' in group 1 of '\(-1\)' is not a dimension name, a size or "
             r"'\.\.\.'"),
    ("(n,", r"shapes: bad shape signature '\(n,'"),
    ("abc", r"shapes: bad shape signature 'abc'"),
    ("(n),(n)", r"shapes: '\(n\),\(n\)' has 2 groups for 1 inputs"),
    ("(...,...)", r"shapes: group 1 of '\(\.\.\.,\.\.\.\)' has '\.\.\.' twice"),
    ("(1.5)", r"shapes: '1.5' in group 1"),
])
def test_a_bad_shape_signature_fails_up_front(shapes: str, message: str) -> None:
    with pytest.raises(ValueError, match=rf"gradcheck.check: function f, {message}"):
        gc.check(f, inputs=["real"], shapes=shapes)


@pytest.mark.parametrize("shapes", [3, [(3,)], ("(3)",)])
def test_shapes_that_are_not_a_signature_are_a_type_error(shapes: Any) -> None:
    with pytest.raises(TypeError, match=r"function f, shapes= must be a signature string "
                                        r"such as '\(\.\.\.,n,n\),\(n\)'"):
        gc.check(f, inputs=["real"], shapes=shapes)


@pytest.mark.parametrize(("shapes", "message"), [
    ("(n)", r"input 0 \(symmetric positive definite\) is a batch of square matrices: its "
            r"group '\(n\)' needs two last dimensions"),
    ("(...)", r"its group '\(\.\.\.\)' needs two last dimensions"),
    ("(2,3)", r"its group '\(2,3\)' ends in dimensions '2' and '3'.*the same name or size"),
    ("(n,m)", r"ends in dimensions 'n' and 'm'"),
])
def test_a_matrix_domain_needs_matrix_shapes(shapes: str, message: str) -> None:
    with pytest.raises(ValueError, match=rf"function f, shapes: .*{message}"):
        gc.check(f, inputs=["spd"], shapes=shapes)


def test_good_shapes_still_draw() -> None:
    for inputs, shapes in [(["spd"], "(...,n,n)"), (["spd"], "(3,3)"),
                           (["well_conditioned"], "(2,3)"), (["real"], "(n, 3)"),
                           (["real", "real"], "(...,n),(n)")]:
        target = as_target(f if len(inputs) == 1 else two, inputs, shapes=shapes)
        assert len(drawn_shapes(target)) == len(inputs)


def test_an_ops_shapes_without_inputs_are_used_and_checked() -> None:
    target = as_target("sum", shapes="(7,5)")
    assert drawn_shapes(target) == [(7, 5)]
    with pytest.raises(ValueError, match=r"op 'sum', shapes: '\(n\),\(n\)' has 2 groups for 1 "
                                         "inputs"):
        gc.check("sum", shapes="(n),(n)")


# -- outputs --------------------------------------------------------------------------------
def test_an_ops_outputs_are_checked_against_its_outputs_up_front() -> None:
    with pytest.raises(ValueError, match=r"op 'linalg.eigh', outputs: position 5 is out of "
                                         "range for 2 outputs"):
        gc.check("linalg.eigh", outputs=[5])


@pytest.mark.parametrize("position", [5, -5, 2, -3])
def test_a_functions_outputs_out_of_range_say_how_many_it_returns(position: int) -> None:
    report = gc.check(two, inputs=["real", "real"], outputs=[position], examples=1,
                      dtypes=["float64"], paths=["vjp"])
    assert not report.passed
    assert any(f"outputs=[{position}]: the function returns 2 outputs (positions -2 to 1)"
               in x.message for x in report.findings), [x.message for x in report.findings]


def test_negative_outputs_within_range_still_select() -> None:
    report = gc.check(two, inputs=["real", "real"], outputs=[-1], examples=1,
                      dtypes=["float64"], paths=["vjp"])
    assert report.passed


# -- the inputs container -----------------------------------------------------------------------
@pytest.mark.parametrize("inputs", [{"x": "real"}, (s for s in ["real"]), {"real"}])
def test_inputs_must_be_a_list_or_tuple(inputs: Any) -> None:
    with pytest.raises(TypeError, match=r"function f: inputs= must be a list or tuple with "
                                        r"one entry per positional input, got a "):
        gc.check(f, inputs=inputs)


# -- suites ---------------------------------------------------------------------------------
def test_a_suite_row_with_a_bad_domain_fails_at_load(tmp_path: Path) -> None:
    from gradcheck.cli.suites import SuiteError, load_suite

    path = tmp_path / "bad.toml"
    path.write_text('[[function]]\ntarget = "math:sin"\n'
                    'inputs = [{domain = "interval", low = 3, high = -3}]\n')
    with pytest.raises(SuiteError, match=r"input 0: domain 'interval' cannot take .*low=3 "
                                         "must be below high=-3"):
        load_suite(path)


def test_the_op_count_error_names_the_ops_own_parameters() -> None:
    with pytest.raises(ValueError, match=r"op 'sum': takes 1 input, inputs= gives 2; its "
                                         r"parameters \(axis, dtype, out, keepdims, "
                                         r"initial, where\) go in params=, such "
                                         r"as params=\{'axis': \.\.\.\}"):
        gc.check("sum", inputs=["real", "real"])
    with pytest.raises(ValueError, match=r"op 'sin': takes 1 input, inputs= gives 2; it takes "
                                         "no parameters"):
        gc.check("sin", inputs=["real", "real"])


def test_wrt_on_an_ops_declared_non_differentiable_input_fails_up_front() -> None:
    op = next(o for o in gc.default_registry
              if o.nin and o.meta.get("inputs") and not o.meta["inputs"][-1].differentiable)
    last = op.nin - 1
    with pytest.raises(ValueError, match=rf"op {op.name!r}, wrt: input {last} \(.*\) is not "
                                         "differentiable"):
        gc.check(op.name, wrt=[last])
