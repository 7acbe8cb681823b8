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
