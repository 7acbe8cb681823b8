"""Reductions of 0-d inputs along ``axis=0`` or ``-1`` (gradcheck/ops/rules.py normalize_axis,
reduce.py, cumulative.py).

numpy's ufunc reductions (sum, prod, max, min) take an int axis 0 or -1 on a 0-d array and
reduce nothing, a special case kept for backward compatibility; a tuple naming an axis is out
of bounds, and mean, var, std and linalg.norm refuse both.  The forwards always followed numpy;
the rules read ``axis=-1`` as out of bounds and ``axis=0`` as a size-1 axis to put back, so
every derivative of ``gnp.sum(x, axis=-1)`` on a 0-d ``x`` raised.  Here: each accepted axis
gives numpy's forward and the derivatives of the same op on the 1-element 1-d array (first and
second order, every path), ``gradcheck.check`` passes, and what numpy refuses raises numpy's
own error.  The cumulative ops scan a 0-d input as shape (1,) along an int axis, as numpy's
cumsum does.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import scipy.special as sp
from op_harness import HVP_MODES, JVP_METHODS, assert_passed, engine_vjp

import gradcheck as gc
import gradcheck.nn as gnn
import gradcheck.numpy as gnp
import gradcheck.special as gsp
from gradcheck.engine.tensor import value_of
from gradcheck.ops.rules import normalize_axis, reduction_axes

X = -0.7  # not 0: prod's derivatives are the same either way, but sin(x) * x is then not flat
#: The axes numpy's ufunc reductions accept on a 0-d array, all reducing nothing.
ZERO_D_AXES = [0, -1, np.int64(-1), (), None]
#: Axes numpy refuses on a 0-d array for every reduction.
OUT_OF_BOUNDS = [(0,), (-1,), 1, -2]
#: The reductions that accept ZERO_D_AXES, with numpy's function (logsumexp: numpy's sum, whose
#: axis rules it follows; its value on one entry is the entry).  gnp.amax and amin are max and
#: min themselves (tests/test_ops_reduce.py).
UFUNC_LIKE: list[tuple[Any, Callable[..., Any]]] = [
    (gnp.sum, np.sum), (gnp.prod, np.prod), (gnp.max, np.max), (gnp.min, np.min),
    (gsp.logsumexp, np.sum),
]
#: The reductions numpy refuses axis=0 and -1 for on a 0-d array.
REFUSING: list[tuple[Any, Callable[..., Any]]] = [
    (gnp.mean, np.mean), (gnp.var, np.var), (gnp.std, np.std),
    (gnp.linalg.norm, np.linalg.norm),
]
CUMULATIVE: list[tuple[Any, Callable[..., Any]]] = [
    (gnp.cumsum, np.cumsum), (gnp.cumprod, np.cumprod),
    (gnp.cumlogsumexp, lambda a, axis=None: np.log(np.cumsum(np.exp(a), axis=axis))),
]


def _name(op: Any) -> str:
    return str(op.name)


def _ids(cases: list[tuple[Any, Callable[..., Any]]]) -> list[str]:
    return [_name(op) for op, _ in cases]


def _raised(call: Callable[[], Any]) -> BaseException:
    try:
        call()
    except Exception as error:  # noqa: BLE001 - the error itself is what is compared
        return error
    raise AssertionError("no error raised")


def _assert_same_error(ours: Callable[[], Any], numpys: Callable[[], Any]) -> None:
    """``ours`` raises exactly numpy's error: the same class and the same message."""
    expected, got = _raised(numpys), _raised(ours)
    assert (type(got), str(got)) == (type(expected), str(expected))


def _derivatives(f: Callable[..., Any], x: np.ndarray) -> dict[str, np.ndarray]:
    """Every first- and second-order derivative the engine computes of ``f`` at ``x``, flat
    (so a 0-d input and its 1-element reshape compare entry by entry)."""
    out = np.asarray(value_of(f(x)))
    seed, tangent = np.ones(out.shape), np.full(x.shape, 0.3)
    found = {"forward": out, "vjp": engine_vjp(f, [x], seed)[0]}
    for method in JVP_METHODS:
        found[f"jvp {method}"] = np.asarray(value_of(gc.jvp(f, [x], [tangent], method=method)[1]))
    for mode in HVP_MODES:
        found[f"hvp {mode}"] = np.asarray(value_of(gc.hvp(f, [x], [tangent], mode=mode)[0]))
    return {k: v.reshape(-1) for k, v in found.items()}


def _assert_same_derivatives(f0: Callable[..., Any], f1: Callable[..., Any]) -> None:
    """``f0`` at the 0-d ``X`` and ``f1`` at ``[X]``: the same numbers on every path."""
    zero_d, one = _derivatives(f0, np.array(X)), _derivatives(f1, np.array([X]))
    for path, expected in one.items():
        np.testing.assert_allclose(zero_d[path], expected, rtol=1e-15, atol=0, err_msg=path)


# -- the axis rules --------------------------------------------------------------------
@pytest.mark.parametrize("axis", ZERO_D_AXES, ids=repr)
def test_reduction_axes_read_0d_axes_as_numpy(axis: Any) -> None:
    assert reduction_axes(axis, 0) == ()
    assert np.sum(np.float64(2.0), axis=axis) == 2.0  # numpy takes it, reducing nothing


@pytest.mark.parametrize("axis", OUT_OF_BOUNDS, ids=repr)
def test_reduction_axes_refuse_what_numpy_refuses(axis: Any) -> None:
    _assert_same_error(lambda: reduction_axes(axis, 0),
                       lambda: np.sum(np.float64(2.0), axis=axis))


@pytest.mark.parametrize("axis", [0, -1, *OUT_OF_BOUNDS], ids=repr)
def test_normalize_axis_finds_no_axis_in_a_0d_array(axis: Any) -> None:
    """Outside reductions an axis must name a dimension (axis 0 was read as one)."""
    _assert_same_error(lambda: normalize_axis(axis, 0),
                       lambda: np.sum(np.float64(2.0), axis=(axis,) if np.ndim(axis) == 0
                                      else axis))


@pytest.mark.parametrize("read", [normalize_axis, reduction_axes], ids=lambda f: f.__name__)
def test_both_keep_their_other_readings(read: Callable[[Any, int], tuple[int, ...]]) -> None:
    assert read(-1, 1) == (0,)
    assert read((-1, 0), 3) == (0, 2)
    assert read(None, 2) == (0, 1)
    assert read(None, 0) == read((), 0) == ()
    _assert_same_error(lambda: read(2, 2), lambda: np.sum(np.ones((1, 1)), axis=2))


# -- sum, prod, max, min, logsumexp ----------------------------------------------------------
@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("axis", ZERO_D_AXES, ids=repr)
@pytest.mark.parametrize("op,numpy_fn", UFUNC_LIKE, ids=_ids(UFUNC_LIKE))
def test_forward_is_numpys(op: Any, numpy_fn: Any, axis: Any, keepdims: bool) -> None:
    x = np.array(X)
    out = np.asarray(op(x, axis=axis, keepdims=keepdims))
    expected = np.asarray(numpy_fn(x, axis=axis, keepdims=keepdims))
    assert out.shape == expected.shape == ()
    assert out == expected == X


@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("axis", ZERO_D_AXES, ids=repr)
@pytest.mark.parametrize("op", [c[0] for c in UFUNC_LIKE], ids=_name)
def test_derivatives_are_those_of_the_one_entry_array(op: Any, axis: Any,
                                                      keepdims: bool) -> None:
    # sin(x) * x: a second derivative that is not zero, through the reduction's rules
    one_d_axis = 0 if isinstance(axis, (int, np.integer)) else axis
    _assert_same_derivatives(
        lambda a: op(gnp.sin(a) * a, axis=axis, keepdims=keepdims),
        lambda a: op(gnp.sin(a) * a, axis=one_d_axis, keepdims=keepdims))


@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("axis", [0, -1], ids=repr)
@pytest.mark.parametrize("op", [c[0] for c in UFUNC_LIKE], ids=_name)
def test_check_passes_on_0d_inputs(op: Any, axis: int, keepdims: bool) -> None:
    assert_passed(gc.check(lambda t: op(t, axis=axis, keepdims=keepdims), inputs=["real"],
                           shapes="()", seed=0))


@pytest.mark.parametrize("axis", [0, -1])
@pytest.mark.parametrize("op", [gnp.sum, gnp.prod], ids=_name)
def test_check_passes_on_any_shape(op: Any, axis: int) -> None:
    """As reported: with drawn shapes, the 0-d ones made every reverse path an error."""
    assert_passed(gc.check(lambda t: op(t, axis=axis), inputs=["real"], seed=0))


@pytest.mark.tensorflow
@pytest.mark.parametrize("axis", [0, -1])
@pytest.mark.parametrize("name", ["sum", "prod", "max", "min", "special.logsumexp"])
def test_tensorflow_equivalent_reduces_nothing(name: str, axis: int) -> None:
    """The op's declared TensorFlow equivalent takes numpy's 0-d axis (TensorFlow has none)."""
    report = gc.check(name, inputs=[np.array(X)], params={"axis": axis, "keepdims": True},
                      references=["numeric", "self", "tensorflow"], dtypes=["float64"], seed=0)
    assert_passed(report)
    assert any(c.reference == "tensorflow" and c.status == "pass" for c in report.cells)


# -- what numpy refuses ------------------------------------------------------------------
@pytest.mark.parametrize("axis", OUT_OF_BOUNDS, ids=repr)
@pytest.mark.parametrize("op,numpy_fn", UFUNC_LIKE, ids=_ids(UFUNC_LIKE))
def test_out_of_bounds_axes_raise_numpys_error(op: Any, numpy_fn: Any, axis: Any) -> None:
    x = np.array(X)
    _assert_same_error(lambda: op(x, axis=axis), lambda: numpy_fn(x, axis=axis))


@pytest.mark.parametrize("axis", [0, -1, *OUT_OF_BOUNDS], ids=repr)
@pytest.mark.parametrize("op,numpy_fn", REFUSING, ids=_ids(REFUSING))
def test_reductions_numpy_refuses_raise_its_error(op: Any, numpy_fn: Any, axis: Any) -> None:
    x = np.array(X)
    _assert_same_error(lambda: op(x, axis=axis), lambda: numpy_fn(x, axis=axis))


# -- cumsum, cumprod, cumlogsumexp --------------------------------------------------------
@pytest.mark.parametrize("axis", [0, -1, None], ids=repr)
@pytest.mark.parametrize("op,numpy_fn", CUMULATIVE, ids=_ids(CUMULATIVE))
def test_cumulative_ops_scan_a_0d_input_as_one_entry(op: Any, numpy_fn: Any, axis: Any) -> None:
    x = np.array(X)
    out, expected = np.asarray(op(x, axis=axis)), numpy_fn(x, axis=axis)
    assert out.shape == expected.shape == (1,)
    np.testing.assert_allclose(out, expected, rtol=1e-15)
    one_d_axis = 0 if axis is not None else None
    _assert_same_derivatives(lambda a: op(gnp.sin(a) * a, axis=axis),
                             lambda a: op(gnp.sin(a) * a, axis=one_d_axis))
    assert_passed(gc.check(lambda t: op(t, axis=axis), inputs=["real"], shapes="()", seed=0))


@pytest.mark.parametrize("shape", [(), (2,)], ids=str)
@pytest.mark.parametrize("axis", [(), (0,), 1, -2, True], ids=repr)
@pytest.mark.parametrize("op", [c[0] for c in CUMULATIVE], ids=_name)
def test_cumulative_axes_numpy_refuses_raise_its_error(op: Any, axis: Any,
                                                       shape: tuple[int, ...]) -> None:
    """cumlogsumexp has no numpy function: it takes the axes numpy's cumsum takes (it took a
    tuple, and any axis on a 0-d input)."""
    x = np.full(shape, X)
    _assert_same_error(lambda: op(x, axis=axis), lambda: np.cumsum(x, axis=axis))


def test_logsumexp_value_is_scipys() -> None:
    """scipy's logsumexp agrees in value (it also takes ``(0,)`` and gives shape (1,) with
    ``keepdims``: gradcheck follows numpy's reductions there)."""
    for axis in (0, -1, None):
        assert gsp.logsumexp(np.array(X), axis=axis) == sp.logsumexp(np.array(X), axis=axis)


@pytest.mark.parametrize("axis", [0, -1])
@pytest.mark.parametrize("op", [gnn.softmax, gnn.log_softmax], ids=_name)
def test_softmax_still_needs_an_axis(op: Any, axis: int) -> None:
    """nn.softmax is not a reduction: a 0-d input has no axis for it (TensorFlow's rule), now
    the same clear error for axis 0 (it was numpy's AxisError from inside the forward)."""
    with pytest.raises(ValueError, match=rf"{op.name}: bad axis {axis} for an input of "
                                         "dimension 0"):
        op(np.array(X), axis=axis)
