"""Engine fixes: each test failed before its fix (gradients of intermediates, aliasing,
repeated primals, custom_gradient inputs, seed dtypes, output counts, messages, methods)."""

import re

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


# -- 2. arrays the engine hands out cannot corrupt gradients ------------------------------
def test_a_tensors_numpy_and_array_are_read_only():
    x = gc.tensor([0.5, 1.0])
    with gc.GradientTape() as tape:
        tape.watch(x)
        y = gnp.exp(x)  # exp's VJP reads its output
        part = x[0:1]  # a view of x's array
    for a in (y.numpy(), np.asarray(y), part.numpy(), np.asarray(part)):
        with pytest.raises(ValueError, match="read-only"):
            a[...] = 0
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), np.exp([0.5, 1.0]), rtol=1e-15)
    mine = x.numpy().copy()
    mine[0] = 7.0  # a copy is the caller's to change
    assert np.array(x)[0] == 0.5 and np.array(x, copy=True).flags.writeable


@pytest.mark.parametrize("f", [lambda x: x + 0.0, lambda x: gnp.reshape(x, (2,)),
                               lambda x: x], ids=["add", "reshape", "target_is_source"])
def test_gradients_never_share_memory_with_output_gradients(f):
    x, og = gc.tensor([1.0, 2.0]), np.array([1.0, 3.0])
    with gc.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
    g = tape.gradient(y, x, output_gradients=og)
    assert not np.shares_memory(g.numpy(), og)
    og[0] = 100.0
    assert g.numpy().tolist() == [1.0, 3.0]


@pytest.mark.parametrize("f", [lambda x: x, lambda x: gnp.reshape(x, (2, 1)),
                               lambda x: x[0:1]], ids=["primal", "reshape", "getitem"])
def test_jvps_never_share_memory_with_the_tangent(f):
    x, u = gc.tensor([1.0, 2.0]), np.array([1.0, 3.0])
    with gc.ForwardAccumulator(x, u) as acc:
        y = f(x)
    t = acc.jvp(y)
    assert not np.shares_memory(t.numpy(), u)
    u[0] = 100.0
    assert t.numpy().ravel()[0] == 1.0


# -- 3. a primal given twice to an accumulator ----------------------------------------------
def test_a_primal_given_twice_is_an_error_naming_both_positions():
    v = gc.tensor(2.0)
    with pytest.raises(ValueError, match="primal 1 is the same tensor as primal 0.*sum of its "
                                         "tangents"):
        gc.ForwardAccumulator([v, v], [1.0, 10.0])


# -- 5. output gradients and tangents in the target's or primal's dtype ------------------------
@pytest.mark.parametrize("f, og", [(lambda x: gnp.sum(x), np.float32(2)),
                                   (lambda x: gnp.reshape(x, (2,)), np.full(2, 2, np.float32))],
                         ids=["sum", "reshape"])
def test_a_float32_output_gradient_is_cast_to_the_targets_dtype(f, og):
    x = gc.tensor([1.0, 2.0])
    with gc.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
    g = tape.gradient(y, x, output_gradients=og)
    assert g.dtype == np.float64 and g.numpy().tolist() == [2.0, 2.0]


def test_an_integer_output_gradient_for_a_target_that_is_the_source():
    x = gc.tensor([1.0, 2.0])
    with gc.GradientTape() as tape:
        tape.watch(x)
    g = tape.gradient(x, x, output_gradients=np.array([2, 3]))
    assert g.dtype == np.float64 and g.numpy().tolist() == [2.0, 3.0]


def test_a_real_output_gradient_for_a_complex_target_is_made_complex():
    z = gc.tensor(np.array([1.0 + 2.0j]))
    with gc.GradientTape() as tape:
        tape.watch(z)
        y = z * z
    g = tape.gradient(y, z, output_gradients=np.ones(1, np.float32))
    assert g.dtype == np.complex128
    np.testing.assert_allclose(g.numpy(), [2.0 + 4.0j], rtol=1e-15)


def test_a_complex_output_gradient_or_tangent_for_a_real_value_is_an_error():
    x = gc.tensor(1.0)
    with gc.GradientTape() as tape:
        tape.watch(x)
        y = gnp.sin(x)
    with pytest.raises(ValueError, match=r"output_gradients\[0\] is complex but target 0 is "
                                         r"real \(float64\)"):
        tape.gradient(y, x, output_gradients=np.complex64(1))
    with pytest.raises(ValueError, match="tangent 0 is complex but primal 0 is real"):
        gc.ForwardAccumulator(x, 1j)


@pytest.mark.parametrize("f", [gnp.sum, lambda x: x], ids=["sum", "primal"])
def test_a_float32_tangent_tensor_is_cast_to_the_primals_dtype(f):
    _, t = gc.jvp(f, (np.array([1.0, 2.0]),), (gc.tensor(np.ones(2, np.float32)),))
    assert t.dtype == np.float64 and t.numpy().sum() == 2.0


def test_vjp_fn_takes_a_float32_cotangent():
    _, vjp_fn = gc.vjp(lambda x: gnp.reshape(x, (2,)), np.array([1.0, 2.0]))
    (g,) = vjp_fn(np.ones(2, np.float32))
    assert g.dtype == np.float64 and g.numpy().tolist() == [1.0, 1.0]


def test_a_float32_output_gradient_tensor_stays_differentiable():
    x, w = gc.tensor([1.0, 2.0]), gc.tensor(np.float32(3))
    with gc.GradientTape() as outer:
        outer.watch(w)
        with gc.GradientTape() as inner:
            inner.watch(x)
            y = gnp.sum(x * x)
        g = inner.gradient(y, x, output_gradients=w)  # 2 x w
        assert g.dtype == np.float64
        s = gnp.sum(g)
    gw = outer.gradient(s, w)
    assert gw.dtype == np.float32 and float(gw) == 6.0


# -- 4. custom_gradient: tracked tensors its op would not have as inputs ---------------------------
def _times(x, *, w):
    return x * w, lambda dy: dy * w


def test_custom_gradient_refuses_a_tracked_tensor_passed_by_keyword():
    f = gc.custom_gradient(_times)
    x, w = gc.tensor(2.0), gc.tensor(3.0)
    with gc.GradientTape() as tape:
        tape.watch([x, w])
        with pytest.raises(TypeError, match="keyword argument 'w' is a tensor a tape or "
                                            "accumulator tracks.*pass it positionally"):
            f(x, w=w)
    with gc.ForwardAccumulator(w, 1.0):
        with pytest.raises(TypeError, match="keyword argument 'w'"):
            f(x, w=w)


def test_custom_gradient_takes_an_untracked_tensor_by_keyword():
    f = gc.custom_gradient(_times)
    x = gc.tensor(2.0)
    with gc.GradientTape() as tape:
        tape.watch(x)
        y = f(x, w=gc.tensor(3.0))
    assert float(tape.gradient(y, x)) == 3.0


def test_custom_gradient_refuses_a_tracked_tensor_it_captures():
    w = gc.tensor(3.0)

    @gc.custom_gradient
    def scale(x):
        return x * w, lambda dy: dy * w

    x = gc.tensor(2.0)
    with gc.GradientTape() as tape:
        tape.watch([x, w])
        with pytest.raises(TypeError, match="reads the tracked tensor 'w' from an enclosing "
                                            "scope.*pass it as an argument"):
            scale(x)
    with gc.GradientTape() as tape:  # captured but not tracked: a constant, as before
        tape.watch(x)
        y = scale(x)
    assert float(tape.gradient(y, x)) == 3.0


def test_custom_gradient_takes_a_captured_tensor_that_is_also_an_argument():
    x = gc.tensor(2.0)

    @gc.custom_gradient
    def square(v):
        return x * v, lambda dy: 2 * dy * x

    with gc.GradientTape() as tape:
        tape.watch(x)
        y = square(x)
    assert float(tape.gradient(y, x)) == 4.0


# -- 7. custom_gradient's docstring example is right to second order ---------------------------
def test_custom_gradient_docstring_example_has_the_right_second_derivative():
    import doctest

    from gradcheck.engine import custom

    (example,) = [t for t in doctest.DocTestFinder().find(custom)
                  if t.name.endswith(".custom_gradient")]
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    runner.run(example, out=lambda text: None, clear_globs=False)
    assert runner.failures == 0
    log1pexp = example.globs["log1pexp"]
    x = gc.tensor(0.3)
    with gc.GradientTape() as outer:
        outer.watch(x)
        with gc.GradientTape() as inner:
            inner.watch(x)
            y = log1pexp(x)
        g = inner.gradient(y, x)
    s = 1 / (1 + np.exp(-0.3))
    np.testing.assert_allclose([float(g), float(outer.gradient(g, x))], [s, s * (1 - s)],
                               rtol=1e-14)


# -- 6. an op's forward returns the nout outputs it declares --------------------------------------
@pytest.mark.parametrize("forward, got", [
    (lambda x: x * 2, "ndarray of shape (3,)"),
    (lambda x: (x, x, x), "tuple of 3 values"),
], ids=["array", "three"])
def test_a_forward_returning_the_wrong_output_count_is_an_error_naming_the_op(forward, got):
    op = gc.define_op("two_outputs", forward, lambda g, out, x: g[0] * 2, nout=2,
                      register=False)
    with pytest.raises(ValueError, match=rf"op 'two_outputs' declares nout=2 outputs, but its "
                                         rf"forward returned a {re.escape(got)}"):
        op(gc.tensor(np.ones(3)))


# -- 8. clear errors, and a Python-number cotangent in the input's dtype ---------------------------
@pytest.mark.parametrize("argnum", [2, -2])
def test_grad_with_argnum_out_of_range_names_argnum_and_the_count(argnum):
    def f(x):
        return gnp.sum(x)

    with pytest.raises(IndexError, match=rf"grad: argnum={argnum}, but f was called with 1 "
                                         r"argument$"):
        gc.grad(f, argnum=argnum)(np.ones(2))


def test_a_wrong_output_tangent_is_compared_with_the_output():
    op = gc.define_op("tangent_too_big", lambda x: x * 2, lambda g, out, x: g * 2,
                      lambda ts, out, x: gnp.stack([ts[0], ts[0]]), register=False)
    x = gc.tensor(np.ones(2))
    with gc.ForwardAccumulator(x, np.ones(2)):
        with pytest.raises(gc.RuleError, match=r"output 0: the output tangent has shape "
                                               r"\(2, 2\) but the output has shape \(2,\)"):
            op(x)


def test_define_op_refuses_a_jvp_rule_taking_fewer_inputs_than_the_vjp_rule():
    with pytest.raises(TypeError, match="op 'disagree': the vjp rule handles 2 inputs but the "
                                        "jvp rule 1, which cannot take 'y'"):
        gc.define_op("disagree", lambda x, y: x, lambda g, out, x, y: (g, None),
                     lambda ts, out, x: ts[0], register=False)
    # a parameter the JVP rule takes by keyword is no disagreement
    op = gc.define_op("agree", lambda x, scale=1.0: x * scale,
                      lambda g, out, x, scale: g * scale,
                      lambda ts, out, x, scale=1.0: ts[0] * scale, register=False)
    assert op.nin == 1


@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
def test_a_python_number_cotangent_takes_the_inputs_dtype(dtype):
    op = gc.define_op("number_rule", lambda x: x * 2, lambda g, out, x: 2.0,
                      lambda ts, out, x: 2.0, register=False, complex_rules=True)
    x = gc.tensor(np.ones((), dtype))
    with gc.GradientTape() as tape:
        tape.watch(x)
        y = op(x)
    g = tape.gradient(y, x)
    assert g.dtype == dtype and float(np.real(g.numpy())) == 2.0
    with gc.ForwardAccumulator(x, np.ones((), dtype)) as acc:
        y = op(x)
    assert acc.jvp(y).dtype == dtype


def test_a_python_complex_cotangent_for_a_real_input_is_an_error():
    op = gc.define_op("complex_rule", lambda x: x * 2, lambda g, out, x: 2j, register=False)
    x = gc.tensor(1.0)
    with gc.GradientTape() as tape:
        tape.watch(x)
        y = op(x)
    with pytest.raises(gc.RuleError, match="input 0: the cotangent is a Python complex but the "
                                           "input has dtype float64"):
        tape.gradient(y, x)


# -- 9. numpy's array methods and operators on tensors ------------------------------------------
X = np.array([[1.5, -2.0, 0.5]])

METHODS = {  # name: (f, its gradient at X with a cotangent of ones)
    "abs": (lambda x: abs(x), np.sign(X)),
    "flatten": (lambda x: x.flatten(), np.ones_like(X)),
    "ravel": (lambda x: x.ravel(), np.ones_like(X)),
    "copy": (lambda x: x.copy() * 2.0, np.full_like(X, 2.0)),
    "dot": (lambda x: x.dot(np.array([1.0, 2.0, 3.0])), np.array([[1.0, 2.0, 3.0]])),
    "clip": (lambda x: x.clip(-1.0, 1.0), np.array([[0.0, 0.0, 1.0]])),
    "cumsum": (lambda x: x.cumsum(), np.array([[3.0, 2.0, 1.0]])),
    "squeeze": (lambda x: x.squeeze(), np.ones_like(X)),
    "real": (lambda x: x.real, np.ones_like(X)),
    "conj": (lambda x: x.conj(), np.ones_like(X)),
    "np.sum": (lambda x: np.sum(x), np.ones_like(X)),
    "np.mean": (lambda x: np.mean(x), np.full_like(X, 1 / 3)),
    "np.max": (lambda x: np.max(x, axis=1), np.array([[1.0, 0.0, 0.0]])),
    "np.clip": (lambda x: np.clip(x, -1.0, 1.0), np.array([[0.0, 0.0, 1.0]])),
    "np.cumsum": (lambda x: np.cumsum(x), np.array([[3.0, 2.0, 1.0]])),
    "np.squeeze": (lambda x: np.squeeze(x), np.ones_like(X)),
    "np.reshape": (lambda x: np.reshape(x, (3,)), np.ones_like(X)),
}


@pytest.mark.parametrize("name", METHODS)
def test_numpy_methods_and_functions_on_a_tensor_are_differentiable(name):
    f, expected = METHODS[name]
    x = gc.tensor(X)
    with gc.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
    assert type(y) is gc.Tensor
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), expected, rtol=1e-15)


@pytest.mark.parametrize("f", [lambda x: x % 1.0, lambda x: 1.0 % x, lambda x: x // 2.0,
                               lambda x: np.ones(3) // x], ids=["%", "r%", "//", "r//"])
def test_mod_and_floor_divide_say_what_to_write_instead(f):
    with pytest.raises(TypeError, match=r"does not support (%|//): it is not a differentiable op; "
                                        r"write gnp\.f"):
        f(gc.tensor([1.5, -2.0, 0.5]))


@pytest.mark.parametrize("call", [lambda x: x.sum(out=np.empty(())),
                                  lambda x: x.cumsum(out=np.empty(3)),
                                  lambda x: x.clip(0.0, 1.0, out=np.empty(3)),
                                  lambda x: x.dot(x, out=np.empty(()))],
                         ids=["sum", "cumsum", "clip", "dot"])
def test_methods_refuse_out(call):
    with pytest.raises(TypeError, match="out= is not supported"):
        call(gc.tensor([1.5, -2.0, 0.5]))


def test_cumsum_takes_numpys_dtype_and_argmax_is_a_plain_array():
    x = gc.tensor(np.array([1.5, -2.0, 0.5]))
    assert x.cumsum(dtype=np.float32).dtype == np.float32
    assert np.argmax(x) == 0 and x.argmin() == 1
