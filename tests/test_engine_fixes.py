"""Engine fixes: each test failed before its fix (gradients of intermediates, aliasing,
repeated primals, custom_gradient inputs, seed dtypes, output counts, messages, methods)."""

import numpy as np
import pytest

import gradcheck as gc
import gradcheck.numpy as gnp


# -- 1. the gradient with respect to an intermediate tensor ------------------------------
def _sin_squared(persistent=True):
    v = gc.tensor(2.0)
    with gc.GradientTape(persistent=persistent) as tape:
        tape.watch(v)
        y = gnp.sin(v)
        z = y * y
    return tape, v, y, z


@pytest.mark.parametrize("persistent", [True, False])
def test_gradient_of_an_intermediate_is_the_total_cotangent_reaching_it(persistent):
    tape, v, y, z = _sin_squared(persistent)
    g = tape.gradient(z, y)
    np.testing.assert_allclose(g.numpy(), 2 * np.sin(2.0), rtol=1e-14)


def test_gradient_of_an_intermediate_beside_the_watched_source():
    tape, v, y, z = _sin_squared()
    gv, gy = tape.gradient(z, [v, y], unconnected_gradients="zero")
    np.testing.assert_allclose(gv.numpy(), 2 * np.sin(2.0) * np.cos(2.0), rtol=1e-14)
    np.testing.assert_allclose(gy.numpy(), 2 * np.sin(2.0), rtol=1e-14)
    gy, gv = tape.gradient(z, [y, v])
    np.testing.assert_allclose(gy.numpy(), 2 * np.sin(2.0), rtol=1e-14)


def test_gradient_of_an_intermediate_that_is_also_a_target():
    tape, v, y, z = _sin_squared()
    # d(z + y)/dy = 2 sin(2) + 1
    np.testing.assert_allclose(tape.gradient([z, y], y).numpy(), 2 * np.sin(2.0) + 1,
                               rtol=1e-14)


def test_gradient_of_one_output_of_a_multi_output_op():
    v = gc.tensor(np.array([[2.0, 0.5], [0.5, 1.0]]))
    with gc.GradientTape(persistent=True) as tape:
        tape.watch(v)
        w, _ = gnp.linalg.eigh(v)
        z = gnp.sum(w * w)
    np.testing.assert_allclose(tape.gradient(z, w).numpy(), 2 * np.linalg.eigvalsh(v.numpy()),
                               rtol=1e-12)
