"""Engine fixes, round 5: each test failed before its fix."""

import numpy as np
import pytest

import gradcheck as gc
import gradcheck.numpy as gnp

# -- A. a tape keeps the constants its rules read as they were when the op ran ---------------


def test_a_reused_constant_buffer_does_not_change_the_gradient():
    x = gc.tensor(np.array([1.0, 2.0, 3.0]))
    buf = np.zeros(3)
    with gc.GradientTape() as tape:
        tape.watch(x)
        total = 0.0
        for k in range(3):
            buf[:] = k + 1.0  # a batch buffer, refilled each step
            total = total + gnp.sum(buf * x)
    np.testing.assert_array_equal(tape.gradient(total, x).numpy(), [6.0, 6.0, 6.0])


def test_a_constant_of_a_three_input_op_is_kept_as_it_was():
    x = gc.tensor(np.array([1.0, 2.0, 3.0]))
    mask = np.array([True, False, True])
    with gc.GradientTape() as tape:
        tape.watch(x)
        y = gnp.sum(gnp.where(mask, x, 0.0 * x))
    mask[:] = False
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [1.0, 0.0, 1.0])


def test_a_constant_index_parameter_is_kept_as_it_was():
    x = gc.tensor(np.array([1.0, 2.0, 3.0]))
    index = np.array([0, 0])
    with gc.GradientTape() as tape:
        tape.watch(x)
        y = gnp.sum(x[index])
    index[:] = 2
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [2.0, 0.0, 0.0])


def test_a_constant_on_the_left_is_kept_as_it_was():
    x = gc.tensor(np.array([1.0, 2.0]))
    a = np.array([3.0, 4.0])
    with gc.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = gnp.sum(a * x)
    a[:] = 100.0
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [3.0, 4.0])


# -- B. a gradient() call refused for a bad argument does not use up the tape ----------------
@pytest.mark.parametrize("bad", [
    {"output_gradients": np.ones(2)},  # the seed's shape
    {"sources": np.ones(3)},  # not a Tensor
    {"sources": gc.tensor(np.arange(3))},  # an integer source
    {"output_gradients": [np.ones(3), np.ones(3)]},  # one seed too many
])
def test_a_refused_call_leaves_a_non_persistent_tape_usable(bad):
    x = gc.tensor(np.array([0.3, -0.7, 1.2]))
    with gc.GradientTape() as tape:
        tape.watch(x)
        y = gnp.sin(x)
    with pytest.raises((ValueError, TypeError)):
        tape.gradient(y, bad.get("sources", x), output_gradients=bad.get("output_gradients"))
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), np.cos(x.numpy()))
    with pytest.raises(RuntimeError, match="only be called once"):
        tape.gradient(y, x)


# -- C. forward mode by transposition: an integer output beside a float one -----------------
X = np.array([0.3, -0.7, 1.2])


@gc.custom_gradient
def _scaled_and_argmax(a):
    return (a * 2, np.argmax(a.numpy())), lambda dy, dk: dy * 2


def _scaled_argmax_op(**kw):
    return gc.define_op("scaled_argmax", lambda a: (a * 2, np.argmax(a)), nout=2,
                        register=False, **kw)


def _forward(f, tangent=None, **kw):
    x = gc.tensor(X)
    with gc.ForwardAccumulator(x, np.ones(3) if tangent is None else tangent, **kw) as acc:
        y, k = f(x)
    return acc.jvp(y), acc.jvp(k)


def test_a_custom_gradient_with_an_integer_output_works_in_forward_mode():
    jy, jk = _forward(_scaled_and_argmax, np.array([1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(jy.numpy(), [2.0, 4.0, 6.0])
    assert jk is None


def test_an_op_without_a_jvp_rule_and_an_integer_output_works_in_forward_mode():
    op = _scaled_argmax_op(vjp=lambda g, out, a: g[0] * 2)
    jy, jk = _forward(op)
    np.testing.assert_array_equal(jy.numpy(), [2.0, 2.0, 2.0])
    assert jk is None


def test_forced_transposition_beside_an_integer_output_gives_the_native_jvp():
    op = _scaled_argmax_op(vjp=lambda g, out, a: g[0] * 2,
                           jvp=lambda ts, out, a: (ts[0] * 2, np.zeros_like(out[1])))
    native, _ = _forward(op)
    transposed, _ = _forward(op, force_transpose=True)
    np.testing.assert_array_equal(transposed.numpy(), native.numpy())


def test_the_integer_output_gets_the_cotangent_a_tape_gives_it():
    seen = []

    def vjp(g, out, a):
        seen.append(g[1])
        return g[0] * 2

    jy, _ = _forward(_scaled_argmax_op(vjp=vjp, fill_zeros=False))
    np.testing.assert_array_equal(jy.numpy(), [2.0, 2.0, 2.0])
    assert seen == [None]
