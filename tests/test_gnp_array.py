"""``gnp.array`` / ``gnp.asarray`` of tensors keep the derivative.  Before, they were numpy's
own: ``gnp.array([v[0] * v[1], v[1]])`` made a constant array, so the gradient and the JVP
through it were silently zero.  Values and derivatives are compared with numpy and autograd."""

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import gradcheck as gc
import gradcheck.numpy as gnp
from gradcheck.engine.tensor import Tensor, value_of

X = np.array([1.0, 2.0, -0.5])

# (name, f(xp, v) written once for autograd.numpy and gradcheck.numpy): scalar out
CASES = [
    ("entries", lambda xp, v: xp.sum(xp.array([v[0] * v[1], v[1]]) ** 2)),
    ("nested", lambda xp, v: xp.sum(xp.sin(xp.array([[v[0], 2.0], [v[1] * v[2], v[0]]])))),
    ("rows", lambda xp, v: xp.sum(xp.array([v * v, xp.exp(v)]) * xp.arange(3.0))),
    ("tuple", lambda xp, v: xp.prod(xp.array((v[2], 3.0, v[0] ** 3)))),
    ("asarray", lambda xp, v: xp.sum(xp.asarray([v[1], v[2] ** 2]) ** 3)),
]


@pytest.mark.parametrize("name, f", CASES, ids=[c[0] for c in CASES])
def test_gradient_and_value_match_autograd(name, f):
    expected = autograd.grad(lambda v: f(anp, v))(X)
    np.testing.assert_allclose(gc.grad(lambda v: f(gnp, v))(X).numpy(), expected, rtol=1e-12)
    assert float(value_of(f(gnp, gc.tensor(X)))) == pytest.approx(float(f(anp, X)), rel=1e-12)


@pytest.mark.parametrize("name, f", CASES, ids=[c[0] for c in CASES])
def test_jvp_and_hvp_match_autograd(name, f):
    u = np.array([0.3, -1.0, 0.7])
    g = autograd.grad(lambda v: f(anp, v))
    _, t = gc.jvp(lambda v: f(gnp, v), (X,), (u,))
    assert float(t.numpy()) == pytest.approx(float(g(X) @ u), rel=1e-12)
    hv = autograd.grad(lambda v: anp.dot(g(v), u))(X)
    for mode in ("fwd_over_rev", "rev_over_rev", "rev_over_fwd"):
        (got,) = gc.hvp(lambda v: f(gnp, v), (X,), (u,), mode=mode)
        np.testing.assert_allclose(value_of(got), hv, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("make, kwargs", [
    (lambda t: [t[0], 1.0], {}),
    (lambda t: [[t[0]], [t[1]]], {"ndmin": 3}),
    (lambda t: [t, [1, 2, 3]], {"dtype": np.complex128}),
    (lambda t: (t.astype(np.float32)[0], np.float32(2.0)), {}),
    (lambda t: [t.astype(np.float32)[0], 2.0], {}),  # a Python float is float64, as in numpy
    (lambda t: [gc.tensor([1, 2]), [3, 4]], {}),
])
def test_shape_and_dtype_are_numpys(make, kwargs):
    t = gc.tensor(X)
    expected = np.array(make(X), **kwargs)
    for fn in (gnp.array,) if "ndmin" in kwargs else (gnp.array, gnp.asarray):
        got = fn(make(t), **kwargs)
        assert type(got) is Tensor
        assert got.shape == expected.shape and got.dtype == expected.dtype
        np.testing.assert_array_equal(got.numpy(), expected)


def test_a_tensor_stays_a_differentiable_tensor():
    t = gc.tensor(X)
    assert gnp.asarray(t) is t
    assert gnp.array(t) is t
    assert gnp.array(t, dtype=np.float32).dtype == np.float32
    np.testing.assert_array_equal(
        gc.grad(lambda v: gnp.sum(gnp.array(v, ndmin=2) ** 2))(X).numpy(), 2 * X)


def test_plain_values_are_numpys_arrays():
    for fn, ref in ((gnp.array, np.array), (gnp.asarray, np.asarray)):
        got = fn([[1, 2], [3, 4]], dtype=np.float32)
        assert type(got) is np.ndarray and got.dtype == np.float32
        np.testing.assert_array_equal(got, ref([[1, 2], [3, 4]], dtype=np.float32))
    a = np.ones(3)
    assert gnp.asarray(a) is a


def test_ragged_entries_are_numpys_error():
    t = gc.tensor(X)
    with pytest.raises(ValueError, match="inhomogeneous"):
        gnp.array([t, [1.0]])


def test_take_with_an_empty_index_list_is_empty_as_in_numpy():
    a = np.arange(6.0).reshape(2, 3)
    assert gnp.take(gc.tensor(a), [], axis=1).shape == np.take(a, [], axis=1).shape == (2, 0)
    assert gnp.take(gc.tensor(a), ()).shape == (0,)
    g = gc.grad(lambda v: gnp.sum(gnp.take(v, [], axis=1)) + gnp.sum(v))(a)
    np.testing.assert_array_equal(g.numpy(), np.ones_like(a))
    with pytest.raises(TypeError, match="take: indices must be integers"):
        gnp.take(gc.tensor(a), np.array([]), axis=1)  # numpy refuses an empty float array too


def test_float_of_a_tensor_being_differentiated_is_an_error_as_in_autograd():
    import math

    with pytest.raises(TypeError):  # autograd: float() argument must be ... not 'ArrayBox'
        autograd.grad(lambda v: math.sqrt(v[0]) * v[1])(X)
    with pytest.raises(TypeError, match=r"float\(\) of a gradcheck Tensor being differentiated"):
        gc.grad(lambda v: math.sqrt(v[0]) * v[1])(X)  # was [0, 1]: sqrt's derivative lost
    with pytest.raises(TypeError, match="would lose its derivative"):
        gc.jvp(lambda v: v * float(v[0]), (X,), (X,))
    t = gc.tensor(X)
    with gc.GradientTape():
        assert float(t[0]) == 1.0  # not watched: a constant, as before
    assert float(gnp.sum(t)) == pytest.approx(2.5)
