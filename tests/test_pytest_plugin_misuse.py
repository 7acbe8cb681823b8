"""The pytest plugin given wrong values: a marker's option values ``gradcheck.check``
refuses, and a ``--gradcheck-report`` path that leads through a symlink.

Every refusal reads as one paragraph naming the test, the marker's op and what is wrong
(``check``'s own message), never as a traceback through the plugin or the checker.
"""

from __future__ import annotations

import pytest

FAST = ["-p", "no:cacheprovider", "-p", "no:randomly"]

FUNCTIONS = '''
import pytest
import gradcheck.numpy as gnp

def f(x, y):
    return gnp.sin(x) * y
'''

TARGET_VALUES = FUNCTIONS + '''
@pytest.mark.gradcheck(ops=[f], inputs=["real", "postive"])
def test_inputs(): pass

@pytest.mark.gradcheck(ops=[f], inputs=["real"], params={"z": 1.0})
def test_params(): pass

@pytest.mark.gradcheck(ops=["elu"], params={"alpha": []})
def test_choices(): pass

@pytest.mark.gradcheck(ops=["elu"], wrt=[5])
def test_wrt(): pass

@pytest.mark.gradcheck(ops=["elu"], outputs=[3])
def test_outputs(): pass

@pytest.mark.gradcheck(ops=["elu"], shapes="(n")
def test_shapes(): pass

@pytest.mark.gradcheck(ops=["elu"], name="mine")
def test_name(): pass

@pytest.mark.gradcheck(ops=["elu"], framework="torch")
def test_framework(): pass

@pytest.mark.gradcheck(ops=[f])
def test_no_inputs(): pass

@pytest.mark.gradcheck(ops=[3])
def test_not_an_op(): pass

@pytest.mark.gradcheck(ops=[f], inputs=["real", "positive"], params={}, wrt=[0],
                       shapes="(...),(...)", name="scaled_sin")
def test_valid(): pass
'''


def test_target_values_check_refuses_are_errors_at_collection(
        pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_values=TARGET_VALUES)
    result = pytester.runpytest(*FAST)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.assert_outcomes()  # nothing ran, not even the bodies
    marker = "*test_values.py::{}: @pytest.mark.gradcheck op {}: gradcheck.check: {}"
    result.stderr.fnmatch_lines([marker.format(*line) for line in [
        ("test_inputs", "f", "function f, input 1: unknown domain 'postive'; "
                             "did you mean 'positive'?*"),
        ("test_params", "f", "function f, params: unknown parameter 'z' *"),
        ("test_choices", "'elu'", "op 'nn.elu', params[[]'alpha']: an empty list of choices"),
        ("test_wrt", "'elu'", "op 'nn.elu', wrt: position 5 is out of range for 1 inputs"),
        ("test_outputs", "'elu'", "op 'nn.elu', outputs: position 3 is out of range *"),
        ("test_shapes", "'elu'", "op 'nn.elu', shapes: bad shape signature '(n'*"),
        ("test_name", "'elu'", "name= names a function or an Op; *"),
        ("test_framework", "'elu'", "framework='torch' names the framework of a function*"),
        ("test_no_inputs", "f", "a function target (f) needs inputs=*"),
        ("test_not_an_op", "3", "cannot check a int; *"),
    ]])
    err = result.stderr.str()
    assert "test_valid" not in err
    assert "Traceback" not in err and "pytest_plugin.py" not in err


RUN_VALUES = FUNCTIONS + '''
@pytest.mark.gradcheck(ops=["elu"], examples=0)
def test_examples(): pass

@pytest.mark.gradcheck(ops=["elu"], examples=1.5)
def test_examples_float(): pass

@pytest.mark.gradcheck(ops=["elu"], dtypes=["int32"])
def test_dtypes(): pass

@pytest.mark.gradcheck(ops=["elu"], dtypes=[])
def test_no_dtypes(): pass

@pytest.mark.gradcheck(ops=[f], inputs=["real", "real"], paths=["vjpp"])
def test_paths(): pass

@pytest.mark.gradcheck(ops=["elu"], references=["torchh"])
def test_references(): pass

@pytest.mark.gradcheck(ops=["elu"], mode="slow")
def test_mode(): pass

@pytest.mark.gradcheck(ops=["elu"], seed="a")
def test_seed(): pass

@pytest.mark.gradcheck(ops=["elu"], timeout=0)
def test_timeout(): pass

@pytest.mark.gradcheck(ops=["elu"], atol=-1)
def test_atol(): pass

@pytest.mark.gradcheck(ops=["elu"], rtol="x")
def test_rtol(): pass

@pytest.mark.gradcheck(ops=["elu"], eps=0)
def test_eps(): pass

@pytest.mark.gradcheck(ops=[f], inputs=["real", "positive"], paths=["vjp"], examples=1,
                       dtypes=["float64"], references=["numeric"], mode="fast", seed=1,
                       timeout=600, atol=1e-6, rtol=1e-6, eps=1e-4)
def test_valid(): pass
'''


@pytest.mark.parametrize("seeds", [[], ["--gradcheck-seeds=0,1"]], ids=["seed", "seeds"])
def test_other_values_check_refuses_fail_the_test_with_its_message(
        pytester: pytest.Pytester, seeds: list[str]) -> None:
    pytester.makepyfile(test_values=RUN_VALUES)
    result = pytester.runpytest(*FAST, *seeds)
    result.assert_outcomes(passed=1, failed=12)
    marker = "*test_values.py::{}: @pytest.mark.gradcheck op {}: gradcheck.check: {}"
    result.stdout.fnmatch_lines([marker.format(*line) for line in [
        ("test_examples", "'elu'", "examples must be a positive integer, got 0"),
        ("test_examples_float", "'elu'", "examples must be a positive integer, got 1.5"),
        ("test_dtypes", "'elu'", "dtype 'int32' is not supported; *"),
        ("test_no_dtypes", "'elu'", "dtypes= is empty: *"),
        ("test_paths", "f", "unknown path 'vjpp'; known: vjp, *"),
        ("test_references", "'elu'", "unknown reference 'torchh'; known: *"),
        ("test_mode", "'elu'", "mode must be 'fast' or 'full', got 'slow'"),
        ("test_seed", "'elu'", "seed must be an integer, got str 'a'"),
        ("test_timeout", "'elu'", "timeout must be positive, got 0"),
        ("test_atol", "'elu'", "atol must be a positive finite number, got -1 *"),
        ("test_rtol", "'elu'", "rtol must be a positive finite number, got str 'x'"),
        ("test_eps", "'elu'", "eps must be a positive finite number, got 0 *"),
    ]], consecutive=False)
    out = result.stdout.str()
    # one paragraph each: no traceback, no frame of the plugin or the checker
    assert "Traceback" not in out and "During handling" not in out
    assert "pytest_plugin.py" not in out and "api.py" not in out


def test_report_through_a_symlink_into_a_missing_folder(pytester: pytest.Pytester) -> None:
    # As `gradcheck run --json` does: the folder the symlink points into is created.
    pytester.makepyfile(test_one="def test_one(gradcheck):\n"
                                 "    gradcheck.check('elu', examples=1, paths=['vjp'])\n")
    target = pytester.path / "elsewhere" / "deeper" / "gc.json"
    (pytester.path / "gc.json").symlink_to(target)
    result = pytester.runpytest(*FAST, "--gradcheck-report=gc.json")
    result.assert_outcomes(passed=1)
    assert result.ret == pytest.ExitCode.OK
    assert (pytester.path / "gc.json").is_symlink()
    assert '"nn.elu"' in target.read_text()
    assert "nn.elu" in (pytester.path / "gc.html").read_text()
