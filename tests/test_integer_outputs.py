"""Integer and boolean outputs of a ``gradcheck.numpy`` function are not differentiated.

Beside a floating output they get no cotangent and no dummy, and every path (the double-VJP
JVP and the second-order ones too) checks the floating outputs alone; a function with no
floating output at all is an ``error`` saying there is nothing to differentiate, as it is for
torch.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from broken_ops import elu_leaky, sign_error

import gradcheck as gc
import gradcheck.numpy as gnp
from gradcheck.checker.paths import PATHS, EngineProblem
from gradcheck.engine.functional import double_vjp, jvp

X = np.array([[0.3, -1.2, 2.0], [1.1, 0.4, -0.7]])
U = np.array([[1.0, 0.5, -2.0], [0.25, -1.0, 3.0]])


def sort_and_indices(x: Any) -> Any:
    return gnp.sort(x, axis=-1), gnp.argsort(x, axis=-1)


def sine_and_sign(x: Any) -> Any:
    return gnp.sin(x), x > 0


def tanh_and_argmax(x: Any) -> Any:
    return {"y": gnp.tanh(x) * 2.0, "i": np.argmax(x)}


def indices_in_between(x: Any, y: Any) -> Any:
    return x * y, gnp.argsort(x, axis=-1), gnp.exp(y)


def argmax_only(x: Any) -> Any:
    return np.argmax(x)


def constant_three(x: Any) -> Any:
    return 3


def sign_and_indices(x: Any) -> Any:
    return x > 0, gnp.argsort(x, axis=-1)


def _report(fn: Any, **options: Any) -> Any:
    n = fn.__code__.co_argcount
    return gc.check(fn, inputs=["real"] * n, shapes=",".join(["(...,3)"] * n), examples=3,
                    **options)


@pytest.mark.parametrize("fn", [sort_and_indices, sine_and_sign, tanh_and_argmax,
                                indices_in_between])
@pytest.mark.parametrize("mode", ["fast", "full"])
def test_non_floating_outputs_beside_floating_ones_pass(fn: Any, mode: str) -> None:
    report = _report(fn, mode=mode)
    assert report.findings == []
    assert report.passed
    assert {c.path for c in report.cells if c.status == "pass"} == set(PATHS)


@pytest.mark.parametrize("fn, dtypes", [(argmax_only, "int64"), (constant_three, "int64"),
                                        (sign_and_indices, "bool, int64")])
def test_no_floating_output_is_an_error_naming_the_function(fn: Any, dtypes: str) -> None:
    report = _report(fn)
    assert not report.passed
    assert [(f.kind, f.path) for f in report.findings] == [("error", "forward")]
    message = report.findings[0].message
    assert f"{fn.__name__}: no output is floating or complex (output dtypes: {dtypes})" \
        in message
    assert "nothing to differentiate" in message and "GradientTape" not in message


def test_selecting_only_an_integer_output_is_the_same_error() -> None:
    report = _report(sine_and_sign, outputs=[1])
    assert not report.passed
    assert "no output is floating or complex (output dtypes: bool)" in \
        report.findings[0].message


@pytest.mark.parametrize("broken, kind", [(sign_error, "mismatch"),
                                          (elu_leaky, "value_leak")])
def test_a_wrong_derivative_beside_an_integer_output_is_still_found(broken: Any,
                                                                    kind: str) -> None:
    def fn(x: Any) -> Any:
        return broken(x), gnp.argsort(x, axis=-1)

    report = _report(fn)
    assert not report.passed
    assert kind in {f.kind for f in report.findings}
    assert "error" not in {f.kind for f in report.findings}


def test_engine_double_vjp_gives_integer_outputs_a_zero_tangent_like_jvp() -> None:
    _, native = jvp(sort_and_indices, (X,), (U,))
    for dummy in (None, [np.ones(X.shape), np.ones(X.shape, dtype=np.int64)],
                  [np.ones(X.shape), None]):
        _, transposed = double_vjp(sort_and_indices, (X,), (U,), dummy=dummy)
        for got, want in zip(transposed, native, strict=True):
            assert np.asarray(got).dtype == np.asarray(want).dtype
            np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-14)
    _, only = double_vjp(argmax_only, (X,), (U,))
    assert np.asarray(only).dtype == np.int64 and np.asarray(only) == 0


def test_second_order_paths_take_an_integer_cotangent_for_an_integer_output() -> None:
    problem = EngineProblem(sort_and_indices, [X], {}, [0], name="sort_and_indices")
    v_float = [np.ones(X.shape), np.ones(X.shape)]
    v_int = [np.ones(X.shape), np.ones(X.shape, dtype=np.int64)]
    w = [U, U]
    for path, call in [("hvp_fwd_rev", lambda v: problem.hvp_fwd_rev([X], v, [U], w)),
                       ("hvp_rev_rev", lambda v: problem.hvp_rev_rev([X], v, [U])),
                       ("hvp_rev_fwd", lambda v: problem.hvp_rev_fwd([X], [U], v)),
                       ("double_vjp", lambda v: problem.double_vjp([X], [U], v)),
                       ("vjp", lambda v: problem.vjp([X], v))]:
        got, want = np.hstack(_flat(call(v_int))), np.hstack(_flat(call(v_float)))
        np.testing.assert_array_equal(got, want, err_msg=path)


def test_engine_problem_refuses_a_function_with_no_floating_output() -> None:
    problem = EngineProblem(argmax_only, [X], {}, [0], name="argmax_only")
    with pytest.raises(ValueError, match=r"^argmax_only: no output is floating or complex "
                                         r"\(output dtypes: int64\), so there is nothing"):
        problem.forward([X])
    with pytest.raises(ValueError, match="nothing to differentiate"):
        problem.vjp([X], [np.ones(())])


def _flat(value: Any) -> list[np.ndarray]:
    if isinstance(value, (tuple, list)):
        return [a for v in value for a in _flat(v)]
    return [np.ravel(np.asarray(value, dtype=np.float64))]
