"""Which tracer sees which work: TensorFlow's nesting rules (gradcheck.engine.state).

A tape records every op run while it is active, another tape's backward pass included,
whatever the order the tracers were created in; a persistent tape in its context records
its own backward pass; accumulators apply in the order their contexts were entered.
"""

import numpy as np
import pytest

import gradcheck as gc
import gradcheck.numpy as gnp

XV = np.array([0.3, -0.7, 1.2])
VV = np.array([1.0, 2.0, 3.0])
D_SIN_X_X = np.cos(XV) * XV + np.sin(XV)  # d/dx sin(x) x
D2_SIN_X_X = 2 * np.cos(XV) - XV * np.sin(XV)


def _f(a):
    return gnp.sin(a) * a


def test_vjp_fn_is_differentiable_under_a_tape_created_after_it():
    x, v = gc.tensor(XV), gc.tensor(VV)
    _, vjp_fn = gc.vjp(_f, x)
    with gc.GradientTape() as outer:
        outer.watch(v)
        (g,) = vjp_fn(v)
        s = gnp.sum(g) + gnp.sum(v)  # a second path from v: a wrong value, not None, before
    np.testing.assert_allclose(outer.gradient(s, v).numpy(), D_SIN_X_X + 1)


def test_a_later_tape_differentiates_an_earlier_tapes_gradient_in_x_too():
    x, v = gc.tensor(XV), gc.tensor(VV)
    with gc.GradientTape(persistent=True) as inner:
        inner.watch(x)
        y = _f(x)
    with gc.GradientTape(persistent=True) as outer:
        outer.watch([x, v])
        g = inner.gradient(y, x, output_gradients=v)
        s = gnp.sum(g)
    np.testing.assert_allclose(outer.gradient(s, v).numpy(), D_SIN_X_X)
    # y was computed before outer watched x: only the backward pass's own use of x is seen,
    # d/dx of v x cos(x) (sin(x) is a recorded constant to outer); TensorFlow gives the same
    np.testing.assert_allclose(outer.gradient(s, x).numpy(),
                               VV * (np.cos(XV) - XV * np.sin(XV)))


def test_an_accumulator_created_after_a_tape_sees_its_backward_pass():
    x, v = gc.tensor(XV), gc.tensor(VV)
    with gc.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = _f(x)
    with gc.ForwardAccumulator(v, np.ones(3)) as acc:
        g = tape.gradient(y, x, output_gradients=v)
    np.testing.assert_allclose(acc.jvp(g).numpy(), D_SIN_X_X)


def test_an_accumulator_entered_inside_a_tape_is_seen_by_it_whenever_it_was_created():
    x, u = gc.tensor(XV), gc.tensor(np.ones(3))
    acc = gc.ForwardAccumulator(x, u)  # created before the tape, entered inside it
    with gc.GradientTape() as tape:
        tape.watch(u)
        with acc:
            y = gnp.sum(gnp.sin(x))
        j = acc.jvp(y)
    np.testing.assert_allclose(tape.gradient(j, u).numpy(), np.cos(XV))


def test_a_tape_entered_inside_an_accumulator_ignores_its_products():
    # TensorFlow: more deeply nested tapes ignore the products of outer accumulators
    x, u = gc.tensor(XV), gc.tensor(np.ones(3))
    tape = gc.GradientTape()  # created before the accumulator, entered inside it
    with gc.ForwardAccumulator(x, u) as acc:
        with tape:
            tape.watch(u)
            y = gnp.sum(gnp.sin(x))
    assert tape.gradient(acc.jvp(y), u) is None


def test_accumulators_apply_in_the_order_they_were_entered():
    x = gc.tensor(np.array(1.1))
    inner = gc.ForwardAccumulator(x, np.array(1.0))  # created first, entered second
    with gc.ForwardAccumulator(x, np.array(1.0)) as outer:
        with inner:
            y = x ** 3.5
    np.testing.assert_allclose(outer.jvp(inner.jvp(y)).numpy(), 3.5 * 2.5 * 1.1 ** 1.5)
    assert inner.jvp(outer.jvp(y)) is None


@pytest.mark.parametrize("unconnected", ["none", "zero"])
def test_a_persistent_tape_records_its_own_gradient_inside_its_context(unconnected):
    x = gc.tensor(XV)
    with gc.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = gnp.sum(x ** 3)
        g = tape.gradient(y, x)
        gs = gnp.sum(g)
    np.testing.assert_allclose(g.numpy(), 3 * XV ** 2)
    np.testing.assert_allclose(
        tape.gradient(gs, x, unconnected_gradients=unconnected).numpy(), 6 * XV)


def test_a_persistent_tape_outside_its_context_does_not_record_its_gradient():
    x = gc.tensor(XV)
    with gc.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = gnp.sum(x ** 3)
    g = tape.gradient(y, x)
    assert not tape.watched(g)
    with gc.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = gnp.sum(x ** 3)
        with tape.stop_recording():
            g = tape.gradient(y, x)
    assert not tape.watched(g)


def test_a_non_persistent_tape_does_not_record_its_own_gradient_but_an_outer_one_does():
    x = gc.tensor(XV)
    with gc.GradientTape() as outer:
        outer.watch(x)
        with gc.GradientTape() as inner:
            inner.watch(x)
            y = gnp.sum(x ** 3)
            g = inner.gradient(y, x)  # inside both contexts
        assert not inner.watched(g)
        gs = gnp.sum(g)
    np.testing.assert_allclose(outer.gradient(gs, x).numpy(), 6 * XV)


def test_an_earlier_tape_computing_a_gradient_inside_a_later_one_is_recorded_by_it():
    x = gc.tensor(XV)
    first = gc.GradientTape()
    with first:
        first.watch(x)
        with gc.GradientTape() as second:
            second.watch(x)
            y = gnp.sum(x ** 3)
            g = first.gradient(y, x)  # first's backward pass, seen by second only
            gs = gnp.sum(g)
    np.testing.assert_allclose(second.gradient(gs, x).numpy(), 6 * XV)
