"""ForwardAccumulator: native rules, the transpose fallback, nesting."""

import sys
import weakref

import numpy as np
import pytest

import gradcheck as gc
import gradcheck.numpy as gnp


def f(x, y):
    return gnp.sum(gnp.tanh(x @ y) * gnp.sin(x @ y)) + gnp.mean(gnp.exp(x) / (1.0 + y[0]))


@pytest.mark.parametrize("force", [False, True], ids=["native", "transpose"])
def test_jvp_matches_vjp_by_dot_product(force):
    rng = np.random.default_rng(1)
    x, y = rng.standard_normal((3, 2)), rng.uniform(0.5, 1, (2, 2))
    u, w = rng.standard_normal(x.shape), rng.standard_normal(y.shape)
    xs = [gc.tensor(x), gc.tensor(y)]
    with gc.ForwardAccumulator(xs, [u, w], force_transpose=force) as acc:
        out = f(*xs)
    jvp = float(acc.jvp(out))
    _, vjp_fn = gc.vjp(f, x, y)
    gx, gy = vjp_fn(np.array(1.0))
    assert jvp == pytest.approx(np.sum(gx.numpy() * u) + np.sum(gy.numpy() * w), rel=1e-12)


def test_transpose_fallback_for_op_without_jvp():
    cube = gc.define_op("test_cube", lambda x: x**3, vjp=lambda g, out, x: g * 3.0 * x * x,
                        register=False, transpose_jvp_reason="test")
    x = gc.tensor(np.array([1.0, 2.0]))
    with gc.ForwardAccumulator(x, np.array([1.0, 0.5])) as acc:
        y = cube(x)
    np.testing.assert_allclose(acc.jvp(y).numpy(), [3.0, 6.0])


def test_nested_accumulators_give_second_derivative():
    x = gc.tensor(0.3)
    with gc.ForwardAccumulator(x, 1.0) as outer:
        with gc.ForwardAccumulator(x, 1.0) as inner:
            y = gnp.exp(gnp.sin(x))
        d1 = inner.jvp(y)
    d2 = outer.jvp(d1)
    s, c = np.sin(0.3), np.cos(0.3)
    assert float(d1) == pytest.approx(c * np.exp(s))
    assert float(d2) == pytest.approx((c * c - s) * np.exp(s), rel=1e-12)


def test_forward_over_backward_hvp():
    x = gc.tensor(np.array([0.2, -0.4]))
    with gc.ForwardAccumulator(x, np.array([1.0, 0.0])) as acc:
        with gc.GradientTape() as tape:
            tape.watch(x)
            y = gnp.sum(gnp.sin(x) * x[0])
        g = tape.gradient(y, x)
    h = acc.jvp(g).numpy()
    # d/dx0 of [cos(x0) x0 + sum(sin x), cos(x1) x0]
    np.testing.assert_allclose(h, [2 * np.cos(0.2) - 0.2 * np.sin(0.2), np.cos(-0.4)])


def test_unconnected_and_errors():
    x, z = gc.tensor(1.0), gc.tensor(2.0)
    with gc.ForwardAccumulator(x, 1.0) as acc:
        y = z * 2.0
    assert acc.jvp(y) is None
    assert float(acc.jvp(y, unconnected_gradients="zero")) == 0.0
    with pytest.raises(ValueError, match="tangent 0 has shape"):
        gc.ForwardAccumulator(gc.tensor([1.0, 2.0]), np.ones(3))
    with pytest.raises(ValueError, match="1 primals but 2 tangents"):
        gc.ForwardAccumulator([x], [1.0, 2.0])


def test_rule_returning_wrong_shape_is_a_clear_error():
    bad = gc.define_op("test_bad_jvp", np.sin, vjp=lambda g, out, x: g * gnp.cos(x),
                       jvp=lambda ts, out, x: gnp.sum(ts[0]), register=False)
    x = gc.tensor(np.ones(3))
    with pytest.raises(gc.RuleError, match="test_bad_jvp.*shape"):
        with gc.ForwardAccumulator(x, np.ones(3)):
            bad(x)


def test_a_tangent_lives_as_long_as_its_primal():
    # the accumulator keeps no tensor alive: a long chain's memory stays flat
    x = gc.tensor(np.ones(3))
    with gc.ForwardAccumulator(x, np.ones(3)) as acc:
        y = gnp.sin(x)
        ref = weakref.ref(y)
        z = gnp.cos(y)
        del y
        assert ref() is None
    assert np.allclose(acc.jvp(z).numpy(), -np.sin(np.sin(1.0)) * np.cos(1.0))
    assert acc.jvp(x).numpy().tolist() == [1.0, 1.0, 1.0]


def test_a_finished_accumulator_leaves_nothing_on_its_primals():
    x, t = gc.tensor(np.ones(2)), np.ones(2)
    before = sys.getrefcount(t)
    acc = gc.ForwardAccumulator(x, t)
    assert sys.getrefcount(t) > before  # the primal's tangent is held while acc lives
    del acc
    assert sys.getrefcount(t) == before
