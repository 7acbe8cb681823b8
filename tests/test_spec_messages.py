"""Bad input specs get an error naming the target, the input or key, and what was wrong, up
front; a ``jax.jit`` function's static positional argument given in ``inputs=`` works."""

from __future__ import annotations

import functools
import re
from typing import Any

import numpy as np
import pytest

import gradcheck as gc
import gradcheck.numpy as gnp
from gradcheck import domains as D
from gradcheck.checker.specs import check_call, check_given, check_param_refs
from gradcheck.oracles import get_oracle


def f(x):  # type: ignore[no-untyped-def]
    return gnp.sin(x)


def f2(x, y):  # type: ignore[no-untyped-def]
    return x * y


# -- inputs= and wrt= (checked by check() itself) -----------------------------------------------
@pytest.mark.parametrize("table", [{"domain": 3}, {"domain": None}, {"low": 3}])
def test_a_table_without_a_domain_name_is_shown_as_given(table: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match=r"function f, input 0: a table input needs domain = "
                                         r"\"<name>\".*got " + repr(table).replace("{", r"\{")):
        gc.check(f, inputs=[table])


@pytest.mark.parametrize(("value", "words"), [
    (None, r"NoneType None \(as an array: dtype object\); pass a non-array argument in "
           r"params= or bind it with functools.partial"),
    ({1, 2}, r"set \{1, 2\} \(as an array: dtype object\)"),
    (np.array(["a"]), r"ndarray .*\(as an array: dtype <U1\)"),
    (["real"], r"list \['real'\] .*a list is read as an array, so write a domain's name "
               r"without brackets"),
])
def test_an_input_that_is_not_numbers_is_refused_up_front(value: Any, words: str) -> None:
    with pytest.raises(TypeError, match=r"function f2, input 1: not an array of numbers, a "
                                        r"Domain or a domain name: " + words):
        gc.check(f2, inputs=["real", value])


def test_a_domain_class_is_refused_with_the_instance_to_give() -> None:
    with pytest.raises(TypeError, match=r"function f, input 0: the domain class Positive is "
                                        r"given, not a domain; give an instance \(Positive"):
        gc.check(f, inputs=[D.Positive])


@pytest.mark.parametrize("wrt", [0.0, "x", {0: 1}, object()])
def test_wrt_that_is_not_positions_is_named(wrt: Any) -> None:
    with pytest.raises(TypeError, match=r"function f2, wrt= must be a position \(an integer\) "
                                        rf"or a list of positions, got {type(wrt).__name__} "):
        gc.check(f2, inputs=["real", "real"], wrt=wrt)


def test_wrt_as_an_array_of_positions_is_read() -> None:
    report = gc.check(f2, inputs=["real", "real"], wrt=np.array([1]), examples=2, seed=0)
    assert report.passed


# -- the target's signature against inputs= and params= -----------------------------------------
def _kw_only(x, *, k):  # type: ignore[no-untyped-def]
    return x * k


def _pos_only_kw(x, /, **kw):  # type: ignore[no-untyped-def]
    return x


def test_a_param_that_is_also_an_input_is_given_twice() -> None:
    with pytest.raises(ValueError, match=r"function f2, params: 'y' is given twice, as input 1 "
                                         r"\(inputs= gives 2 positional inputs\) and in "
                                         r"params=; give it once"):
        check_call(f2, 2, ["y"], "function f2")
    check_call(f2, 1, ["y"], "function f2")  # y by keyword only: fine


def test_more_inputs_than_the_function_takes_are_named() -> None:
    with pytest.raises(ValueError, match=r"function f: inputs= gives 2 inputs, but it takes 1 "
                                         r"positional argument \(x\)"):
        check_call(f, 2, [], "function f")
    check_call(lambda *a: a, 5, [], "function v")  # *args takes any number


def test_a_parameter_given_nowhere_is_named_unless_params_are_not_all_known() -> None:
    with pytest.raises(ValueError, match=r"function f2: its parameter 'y' has no default and "
                                         r"is given neither in inputs= \(1 input\) nor in "
                                         r"params="):
        check_given(f2, 1, [], "function f2")
    with pytest.raises(ValueError, match=r"its parameter 'k' has no default"):
        check_given(_kw_only, 1, [], "function k")
    check_call(f2, 1, [], "op f2")  # an op's params are not all known: not asked
    check_given(_kw_only, 1, ["k"], "function k")


def test_what_the_signature_allows_is_not_refused() -> None:
    for check in (check_call, check_given):
        check(_pos_only_kw, 1, ["x"], "function p")  # x by keyword goes into **kw
        check(functools.partial(f2, y=2.0), 1, [], "function partial")
        check(np.sin, 1, [], "function sin")  # a ufunc: no signature to read


def test_a_domain_naming_a_missing_param_is_refused() -> None:
    segments = D.as_domain({"domain": "segment_ids", "num_segments": "nseg"})
    with pytest.raises(ValueError, match=r"function g, input 1 \(sorted segment ids < nseg\): "
                                         r"num_segments names the param 'nseg', which is not "
                                         r"among the params \(num_segments\)"):
        check_param_refs([D.REAL, segments], {"num_segments": [3]}, "function g")
    indices = D.as_domain({"domain": "indices", "axis": "ax"})
    with pytest.raises(ValueError, match=r"input 1 \(indices\): axis names the param 'ax', "
                                         r"which is not among the params \(none\)"):
        check_param_refs([D.REAL, indices], None, "function g")
    check_param_refs([D.REAL, segments], {"nseg": [2, 3]}, "function g")
    check_param_refs([D.REAL, segments], lambda draw, shapes: {}, "function g")  # drawn whole


def _segments(x, ids, num_segments=3):  # type: ignore[no-untyped-def]
    return x


@pytest.mark.parametrize(("target", "inputs", "params", "words"), [
    (f2, ["real", "real"], {"y": 2.0},
     r"function f2, params: 'y' is given twice, as input 1 \(inputs= gives 2"),
    (f, ["real", "real"], None,
     r"function f: inputs= gives 2 inputs, but it takes 1 positional argument \(x\)"),
    (f2, ["real"], None, r"function f2: its parameter 'y' has no default"),
    (_segments, ["real", {"domain": "segment_ids", "num_segments": "nseg"}],
     {"num_segments": 3}, r"function _segments, input 1 \(sorted segment ids < nseg\): "
                          r"num_segments names the param 'nseg'"),
    (_segments, ["real", {"domain": "indices", "axis": "ax"}], None,
     r"function _segments, input 1 \(indices\): axis names the param 'ax'"),
])
def test_check_refuses_inputs_and_params_the_target_cannot_take(
        target: Any, inputs: list[Any], params: Any, words: str) -> None:
    with pytest.raises(ValueError, match=words):
        gc.check(target, inputs=inputs, params=params)


# -- JAX: a jax.jit function's static positional arguments ---------------------------------------
@pytest.fixture(name="jax")
def _jax() -> Any:
    return get_oracle("jax").load()


@pytest.mark.jax
@pytest.mark.parametrize("static", [{"static_argnums": 1}, {"static_argnums": -1},
                                    {"static_argnames": "n"}])
def test_a_static_argument_given_as_an_input_is_a_python_int(jax: Any,
                                                             static: dict[str, Any]) -> None:
    fn = jax.jit(lambda x, n: jax.numpy.roll(x, n) * x, **static)
    report = gc.check(fn, inputs=["real", 2], shapes="(n),()", seed=0, examples=2)
    assert report.passed and report.cells, [f.message for f in report.findings]


@pytest.mark.jax
def test_a_wrong_rule_with_a_static_argument_is_found(jax: Any) -> None:
    @functools.partial(jax.custom_jvp, nondiff_argnums=(1,))
    def power(x, n):  # type: ignore[no-untyped-def]
        return x ** n

    @power.defjvp
    def _power_jvp(n, primals, tangents):  # type: ignore[no-untyped-def]
        (x,), (t,) = primals, tangents
        return power(x, n), (n - 1) * x ** (n - 1) * t  # should be n * x ** (n - 1)

    report = gc.check(jax.jit(power, static_argnums=1), inputs=["positive", 3], seed=0,
                      examples=2)
    assert not report.passed
    assert any(f.kind == "mismatch" for f in report.findings), \
        [f"{f.kind} {f.message}" for f in report.findings]


@pytest.mark.jax
@pytest.mark.parametrize(("second", "extra", "words"), [
    (np.array([1, 2]), {"shapes": "(2),(2)"},
     r"input 1 is a static argument of the jax.jit function \(static_argnums or "
     r"static_argnames\), but an array of shape \(2,\), which JAX cannot hash: give it in "
     r"params= or bind it with functools.partial"),
    (2.0, {}, r"input 1 is a static argument of the jax.jit function \(static_argnums or "
              r"static_argnames\), which JAX cannot differentiate: hold it fixed"),
    (2, {"outputs": [0]}, r"a static argument of a jax.jit function got an array, which JAX "
                          r"cannot hash .*: give it in params= or bind it with "
                          r"functools.partial"),
])
def test_a_static_argument_jax_cannot_take_is_named(jax: Any, second: Any,
                                                    extra: dict[str, Any], words: str) -> None:
    def scaled(x, s):  # type: ignore[no-untyped-def]
        return x * jax.numpy.sum(jax.numpy.asarray(s))

    report = gc.check(jax.jit(scaled, static_argnums=1), inputs=["real", second], seed=0,
                      examples=1, **extra)
    assert not report.passed
    errors = [f.message for f in report.findings if f.kind == "error"]
    assert any(re.search("scaled: " + words, m) for m in errors), errors


def test_as_domain_shows_a_table_without_a_domain_name_as_given() -> None:
    from gradcheck.domains import as_domain

    with pytest.raises(ValueError, match=r"got \{'domain': 3, 'low': 1\}"):
        as_domain({"domain": 3, "low": 1})
