"""Misused functional helpers and custom_gradient functions: clear errors naming what was called."""

import numpy as np
import pytest

import gradcheck as gc
import gradcheck.numpy as gnp

X = np.array([[0.3, -0.7], [1.2, 0.4]])


@pytest.mark.parametrize("helper", [gc.jvp, gc.hvp, gc.double_vjp])
@pytest.mark.parametrize("bare", ["primals", "tangents"])
@pytest.mark.parametrize("kind", [np.asarray, gc.tensor])
def test_bare_array_primals_or_tangents_are_refused(helper, bare, kind):
    """A 2x2 array is not split into two arguments f(X[0], X[1]): only a tuple or list is."""
    f = lambda a, b: gnp.sum(a ** 2 * b)  # noqa: E731
    primals, tangents = kind(X), kind(np.ones((2, 2)))
    if bare == "tangents":
        primals = [primals[0], primals[1]]
    with pytest.raises(TypeError, match=rf"^{helper.__name__}: {bare} must be a tuple or list"):
        helper(f, primals, tangents)


@pytest.mark.parametrize("helper", [gc.jvp, gc.hvp])
def test_single_argument_needs_a_one_tuple(helper):
    with pytest.raises(TypeError, match=r"wrap a single array in a tuple: \(x,\)"):
        helper(gnp.sin, np.array([0.3, -0.7, 1.2]), np.ones(3))
    # the documented form works, with a tuple or a list
    for wrap in (tuple, list):
        assert len(helper(gnp.sin, wrap([np.ones(3)]), wrap([np.ones(3)]))) == \
            (2 if helper is gc.jvp else 1)


@pytest.mark.parametrize("mode", ["fwd_over_rev", "rev_over_rev", "rev_over_fwd"])
def test_hvp_errors_name_hvp(mode):
    f = lambda a: gnp.sum(a ** 3)  # noqa: E731
    with pytest.raises(ValueError, match=r"^hvp: 1 primals but 2 tangents"):
        gc.hvp(f, (np.ones(2),), (np.ones(2), np.ones(2)), mode=mode)
    with pytest.raises(ValueError, match=r"^hvp: tangents\[0\] has shape \(3,\), "
                                         r"primals\[0\] has shape \(2,\)"):
        gc.hvp(f, (np.ones(2),), (np.ones(3),), mode=mode)
    with pytest.raises(ValueError, match=r"^hvp: cotangent has shape \(3,\), f's output"):
        gc.hvp(lambda a: a ** 3, (np.ones(2),), (np.ones(2),), mode=mode, cotangent=np.ones(3))
    with pytest.raises(ValueError, match=r"^hvp: tangents\[0\] is complex but primals\[0\]"):
        gc.hvp(f, (np.ones(2),), (1j * np.ones(2),), mode=mode)
    with pytest.raises(ValueError, match=r"^hvp: ForwardAccumulator: primal 0 has dtype int64"
                       if mode != "rev_over_rev" else r"^hvp: GradientTape") as info:
        gc.hvp(f, (np.arange(2),), (np.ones(2),), mode=mode)  # the engine's message, named
    assert info.value.__cause__ is not None


def test_vjp_fn_errors_name_vjp():
    _, vjp_fn = gc.vjp(gnp.sin, np.ones(2))
    with pytest.raises(ValueError, match=r"^vjp: .*shape \(3,\)") as info:
        vjp_fn(np.ones(3))
    assert info.value.__cause__ is not None


def test_grad_and_jacobian_errors_name_the_helper():
    with pytest.raises(ValueError, match=r"^grad: GradientTape.gradient: source 0 has dtype"):
        gc.grad(lambda a: gnp.sum(a ** 2))(np.arange(3))
    with pytest.raises(ValueError, match=r"^jacobian: GradientTape.gradient: source 0 has"):
        gc.jacobian(gnp.sin, np.arange(3), mode="rev")
    with pytest.raises(ValueError, match=r"^jacobian: ForwardAccumulator: primal 0 has dtype"):
        gc.jacobian(gnp.sin, np.arange(3), mode="fwd")


@pytest.mark.parametrize("mode", ["rev", "fwd"])
def test_jacobian_of_a_tuple_output_is_a_tuple_of_jacobians(mode):
    """As JAX's jacrev: one Jacobian per output, each shaped output.shape + x.shape."""
    x = np.array([0.3, -0.7, 1.2])
    jac = gc.jacobian(lambda v: (gnp.sin(v), gnp.sum(v ** 2), {"p": v[:2] * v[1]}), x, mode=mode)
    assert isinstance(jac, tuple) and len(jac) == 3
    np.testing.assert_allclose(jac[0], np.diag(np.cos(x)), rtol=1e-14)
    np.testing.assert_allclose(jac[1], 2 * x, rtol=1e-14)
    np.testing.assert_allclose(jac[2]["p"], [[x[1], x[0], 0.0], [0.0, 2 * x[1], 0.0]],
                               rtol=1e-14)


def test_jacobian_of_a_single_output_is_still_an_array():
    x = np.array([0.3, -0.7])
    for mode in ("rev", "fwd"):
        jac = gc.jacobian(gnp.sin, x, mode=mode)
        assert type(jac) is np.ndarray and jac.shape == (2, 2)


@gc.custom_gradient
def forgot_grad_fn(a):
    return a * 2


@gc.custom_gradient
def returns_three(a):
    return a * 2, lambda dy: dy * 2, "extra"


@pytest.mark.parametrize("shape", [(3,), (), (2,)])
@pytest.mark.parametrize("fn", [forgot_grad_fn, returns_three])
def test_custom_gradient_must_return_y_and_grad_fn(fn, shape):
    x = gc.tensor(np.ones(shape))
    with pytest.raises(TypeError, match=rf"^custom_gradient '{fn.__name__}': the function must "
                                        r"return \(y, grad_fn\); it returned a"):
        gc.grad(lambda a: gnp.sum(fn(a)))(x)
    with pytest.raises(TypeError, match=rf"custom_gradient '{fn.__name__}'"):
        fn(x)  # untraced too


def test_custom_gradient_non_callable_grad_fn_still_named():
    @gc.custom_gradient
    def swapped(a):
        return (lambda dy: dy), a * 2

    with pytest.raises(TypeError, match=r"'swapped'.*got a Tensor as grad_fn"):
        swapped(gc.tensor(np.ones(3)))
