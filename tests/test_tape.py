"""GradientTape: hand-derived gradients, nesting, structure, errors, long chains."""

import numpy as np
import pytest

import gradcheck as gc
import gradcheck.numpy as gnp


def grad_of(f, *xs, **kw):
    ts = [gc.tensor(x) for x in xs]
    with gc.GradientTape() as tape:
        tape.watch(ts)
        y = f(*ts)
    return tape.gradient(y, ts, **kw)


def test_hand_derived_starter_ops():
    x, y = np.array([0.3, -1.2, 2.0]), np.array([1.5, 0.7, -0.4])
    cases = {
        "add": (lambda a, b: gnp.sum(a + b), (np.ones(3), np.ones(3))),
        "subtract": (lambda a, b: gnp.sum(a - b), (np.ones(3), -np.ones(3))),
        "multiply": (lambda a, b: gnp.sum(a * b), (y, x)),
        "divide": (lambda a, b: gnp.sum(a / b), (1 / y, -x / y**2)),
        "sin_cos": (lambda a, b: gnp.sum(gnp.sin(a) * gnp.cos(b)),
                    (np.cos(x) * np.cos(y), -np.sin(x) * np.sin(y))),
        "exp_tanh": (lambda a, b: gnp.sum(gnp.exp(a) + gnp.tanh(b)),
                     (np.exp(x), 1 - np.tanh(y) ** 2)),
        "power": (lambda a, b: gnp.sum(gnp.power(gnp.exp(a), b)),
                  (y * np.exp(x * y), x * np.exp(x * y))),
        "mean": (lambda a, b: gnp.mean(a * 2.0) + gnp.sum(gnp.log(gnp.exp(b))),
                 (np.full(3, 2 / 3), np.ones(3))),
    }
    for name, (f, expected) in cases.items():
        got = grad_of(f, x, y)
        for g, e in zip(got, expected, strict=False):
            np.testing.assert_allclose(g.numpy(), e, rtol=1e-12, err_msg=name)


def test_matmul_reshape_transpose_broadcast_where():
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((2, 3)), rng.standard_normal((3, 4))
    ga, gb = grad_of(lambda p, q: gnp.sum(p @ q), a, b)
    np.testing.assert_allclose(ga.numpy(), np.ones((2, 4)) @ b.T)
    np.testing.assert_allclose(gb.numpy(), a.T @ np.ones((2, 4)))
    (g,) = grad_of(lambda p: gnp.sum(gnp.transpose(gnp.reshape(p, (3, 2))) * np.arange(6.0)
                                      .reshape(2, 3)), a)
    np.testing.assert_allclose(g.numpy(), np.arange(6.0).reshape(2, 3).T.reshape(2, 3))
    (g,) = grad_of(lambda p: gnp.sum(gnp.broadcast_to(p, (4, 2, 3))), a)
    np.testing.assert_allclose(g.numpy(), np.full((2, 3), 4.0))
    mask = a > 0
    (g,) = grad_of(lambda p: gnp.sum(gnp.where(mask, p * 3.0, p)), a)
    np.testing.assert_allclose(g.numpy(), np.where(mask, 3.0, 1.0))


def test_broadcasting_reduces_to_input_shape():
    x, y = np.ones((3, 1)), np.ones((4,))
    gx, gy = grad_of(lambda a, b: gnp.sum(a * b), x, y)
    assert gx.shape == (3, 1) and gy.shape == (4,)
    np.testing.assert_allclose(gx.numpy(), np.full((3, 1), 4.0))
    np.testing.assert_allclose(gy.numpy(), np.full((4,), 3.0))


def test_aggregates_multiple_uses_and_nested_structures():
    x = gc.tensor(1.5)
    with gc.GradientTape() as tape:
        tape.watch(x)
        y = x * x + x * 3.0 + gnp.sin(x)
    assert float(tape.gradient(y, x)) == pytest.approx(2 * 1.5 + 3 + np.cos(1.5))
    a, b = gc.tensor([1.0, 2.0]), gc.tensor(3.0)
    with gc.GradientTape() as tape:
        tape.watch({"a": a, "b": [b]})
        out = [gnp.sum(a) * b, {"z": b * b}]
    g = tape.gradient(out, {"a": a, "b": (b,)})
    np.testing.assert_allclose(g["a"].numpy(), [3.0, 3.0])  # d/da sum(a) * b = b
    assert isinstance(g["b"], tuple)
    assert float(g["b"][0]) == pytest.approx(3.0 + 2 * 3.0)  # sum(a) + 2b


def test_many_uses_are_aggregated_early():
    x = gc.tensor(np.ones(4))
    with gc.GradientTape() as tape:
        tape.watch(x)
        y = gnp.sum(x)
        for _ in range(200):
            y = y + gnp.sum(x * 2.0)
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), np.full(4, 401.0))


def test_chain_of_100000_ops_is_iterative():
    x = gc.tensor(np.full(2, 0.5))
    with gc.GradientTape() as tape:
        tape.watch(x)
        y = x
        for _ in range(100_000):
            y = y * 1.0
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), np.ones(2))


def test_unconnected_and_output_gradients():
    x, z = gc.tensor(2.0), gc.tensor(5.0)
    with gc.GradientTape(persistent=True) as tape:
        tape.watch([x, z])
        y = x * 3.0
    assert tape.gradient(y, z) is None
    assert float(tape.gradient(y, z, unconnected_gradients="zero")) == 0.0
    assert float(tape.gradient(y, x, output_gradients=np.array(2.0))) == 6.0
    with pytest.raises(ValueError, match="unconnected_gradients"):
        tape.gradient(y, x, unconnected_gradients="maybe")


def test_persistent_and_non_persistent():
    x = gc.tensor(2.0)
    with gc.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    tape.gradient(y, x)
    with pytest.raises(RuntimeError, match="only be called once"):
        tape.gradient(y, x)
    with gc.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
    assert float(tape.gradient(y, x)) == float(tape.gradient(y, x)) == 4.0


def test_stop_recording_and_unwatched():
    x = gc.tensor(2.0)
    with gc.GradientTape() as tape:
        tape.watch(x)
        with tape.stop_recording():
            c = x * x
        y = c * x
    assert float(tape.gradient(y, x)) == 4.0  # c is a constant


def test_integer_tensors_are_never_differentiated():
    i = gc.tensor([1, 2, 3])
    with gc.GradientTape() as tape:
        tape.watch(i)
        y = gnp.sum(i * 2)
    with pytest.raises(ValueError, match="only floating-point"):
        tape.gradient(y, i)


def test_clear_errors():
    x = gc.tensor(1.0)
    with gc.GradientTape() as tape:
        with pytest.raises(TypeError, match="wrap arrays"):
            tape.watch(np.ones(2))
        tape.watch(x)
        y = x * 2.0
    with pytest.raises(ValueError, match="output_gradients\\[0\\] has shape"):
        tape.gradient(y, x, output_gradients=np.ones(3))


def test_float32_stays_float32():
    (g,) = grad_of(lambda a: gnp.sum(gnp.tanh(a) * 2.0 + gnp.exp(a)),
                   np.ones(3, dtype=np.float32))
    assert g.dtype == np.float32


def test_higher_order_by_nesting():
    x = gc.tensor(0.7)
    with gc.GradientTape() as t2:
        t2.watch(x)
        with gc.GradientTape() as t1:
            t1.watch(x)
            y = gnp.sin(x) * x
        g = t1.gradient(y, x)
    h = t2.gradient(g, x)
    assert float(h) == pytest.approx(2 * np.cos(0.7) - 0.7 * np.sin(0.7), rel=1e-12)


def test_tensor_declares_its_operators_in_its_class():
    for name in ("__add__", "__radd__", "__mul__", "__neg__", "__matmul__", "__getitem__",
                 "T", "sum", "reshape"):
        assert name in gc.Tensor.__dict__, name


def test_summed_cotangents_differentiate_again():
    # x is used three times: the backward pass sums its cotangents with an engine op,
    # which the outer tape differentiates (d2/dx2 of x*x*x is 6x)
    x = gc.tensor(np.array([0.5, 2.0]))
    with gc.GradientTape() as outer:
        outer.watch(x)
        with gc.GradientTape() as inner:
            inner.watch(x)
            y = gnp.sum(x * x * x)
        g = inner.gradient(y, x)
    np.testing.assert_allclose(g.numpy(), 3 * np.array([0.5, 2.0]) ** 2)
    np.testing.assert_allclose(outer.gradient(g, x).numpy(), [3.0, 12.0])


def test_only_live_inputs_get_cotangents():
    # w is watched but not a source: the pass computes no cotangent through w's branch
    calls = []
    spy = gc.define_op("t_spy", np.sin, vjp=lambda g, out, x: calls.append(1) or g * gnp.cos(x),
                       register=False)
    x, w = gc.tensor(1.0), gc.tensor(2.0)
    with gc.GradientTape() as tape:
        tape.watch([x, w])
        y = x * spy(w)
    assert float(tape.gradient(y, x)) == pytest.approx(np.sin(2.0))
    assert calls == []


# -- what the tape keeps ----------------------------------------------------------------------
def _freed_after_del(make):
    """Record ``make(x)`` -> (intermediate, result); drop the intermediate and report whether
    its value was freed before the gradient, and the gradient."""
    import gc as pygc
    import weakref

    x = gc.tensor(np.array([0.3, -0.7, 1.1]))
    with gc.GradientTape() as tape:
        tape.watch(x)
        mid, y = make(x)
        y = gnp.sum(y)
        ref = weakref.ref(mid._value)
        del mid
        pygc.collect()
    freed = ref() is None
    return freed, tape.gradient(y, x).numpy(), x.numpy()


def test_a_value_no_rule_reads_is_freed_before_the_gradient():
    # multiply's rule reads its inputs, not its output; tanh's reads its output only
    freed, g, x = _freed_after_del(lambda x: (lambda h: (h, gnp.tanh(h)))(x * 2.0))
    assert freed
    assert np.allclose(g, 2 * (1 - np.tanh(2 * x) ** 2), rtol=1e-14)


def test_a_value_a_rule_reads_is_kept_until_the_gradient():
    # sin's rule reads its input
    freed, g, x = _freed_after_del(lambda x: (lambda h: (h, gnp.sin(h)))(x * 2.0))
    assert not freed
    assert np.allclose(g, 2 * np.cos(2 * x), rtol=1e-14)


def test_rule_reads_reads_the_bytecode_and_says_everything_when_unsure():
    from gradcheck.engine.reads import parameters_read, rule_reads

    assert rule_reads(lambda g, out, x: g * out, 1) == (True, frozenset())
    assert rule_reads(lambda g, out, x, y: g * y, 2) == (False, frozenset({1}))
    # a closure that captures an input reads it
    assert rule_reads(lambda g, out, x: (lambda: g * x)(), 1) == (False, frozenset({0}))
    assert rule_reads(lambda g, out, *xs: g, 1) is None  # inputs as a tuple
    assert rule_reads(lambda g, out, x: locals()["x"] * g, 1) is None  # reached by name
    assert rule_reads(np.multiply, 1) is None  # no bytecode
    assert rule_reads(lambda g, out: g, 1) is None  # too few parameters to tell
    assert rule_reads(None, 1) == (False, frozenset())
    assert parameters_read(lambda x, out: -x, 2) == frozenset({0})


def test_a_copied_tensor_is_a_new_tensor_to_the_tape():
    import copy
    import pickle

    x = gc.tensor([1.0, 2.0])
    with gc.GradientTape() as tape:
        tape.watch(x)
        for other in (copy.copy(x), copy.deepcopy(x), pickle.loads(pickle.dumps(x))):
            assert not tape.watched(other) and np.array_equal(other.numpy(), x.numpy())
    with gc.GradientTape() as tape:
        tape.watch(x)
        twin = copy.copy(x)
        y = gnp.sum(x * twin)
    assert tape.watched(y) and not tape.watched(twin)
    assert np.array_equal(tape.gradient(y, x).numpy(), x.numpy())
