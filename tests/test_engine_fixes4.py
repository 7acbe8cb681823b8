"""Engine fixes, round 4: each test failed before its fix."""

import numpy as np
import pytest

import gradcheck as gc
import gradcheck.numpy as gnp

# -- 1. define_op refuses rules the engine could not call as rule(g, out, *inputs) ----------
SIGNATURE = r"vjp\(g, out, \*inputs, \*\*params\)"


def test_a_rule_without_out_is_refused_at_definition():
    with pytest.raises(TypeError, match=rf"op 'no_out'.*'x'.*{SIGNATURE}"):
        gc.define_op("no_out", lambda x: np.tanh(x), vjp=lambda g, x: g * 999.0,
                     register=False)


def test_a_rule_without_out_is_refused_when_the_forward_signature_is_unknown():
    with pytest.raises(TypeError, match=rf"op 'ufunc'.*no input.*{SIGNATURE}"):
        gc.define_op("ufunc", np.tanh, vjp=lambda g, x: g * 999.0, register=False)


def test_a_jvp_rule_without_out_is_refused_with_its_own_signature():
    with pytest.raises(TypeError, match=r"op 'no_out'.*jvp\(tangents, out, \*inputs"):
        gc.define_op("no_out", lambda x: np.tanh(x), vjp=lambda g, out, x: g,
                     jvp=lambda ts, x: ts[0], register=False)


def test_rules_without_out_for_two_inputs_are_refused():
    with pytest.raises(TypeError, match=rf"op 'no_out2'.*'y'.*{SIGNATURE}"):
        gc.define_op("no_out2", lambda x, y: x * y, vjp=lambda g, x, y: (g * y, g * x),
                     register=False)


def test_rules_written_for_fewer_inputs_than_the_forward_are_refused():
    with pytest.raises(TypeError, match=rf"op 'mul_forgot_y'.*'y'.*{SIGNATURE}"):
        gc.define_op("mul_forgot_y", lambda x, y: x * y, vjp=lambda g, out, x: g * 2.0,
                     register=False)


def test_per_input_rules_without_out_are_refused():
    with pytest.raises(TypeError, match=rf"op 'parts'.*{SIGNATURE}"):
        gc.define_op("parts", lambda x, y: x * y, vjp=[lambda g, x, y: g * y,
                                                       lambda g, x, y: g * x],
                     register=False)


def test_a_rule_too_short_for_the_declared_inputs_is_refused():
    with pytest.raises(TypeError, match=rf"op 'declared'.*{SIGNATURE}"):
        gc.define_op("declared", lambda x: np.tanh(x), vjp=lambda g, x: g, nin=1,
                     register=False)


def test_a_forward_taking_fewer_inputs_than_the_rules_is_refused():
    with pytest.raises(TypeError, match=r"op 'short'.*forward takes only 1 positional"):
        gc.define_op("short", lambda x: x * 2.0, vjp=lambda g, out, x, y: (g, g),
                     register=False)


@pytest.mark.parametrize("forward, vjp, jvp, extra", [
    # a required parameter taken by keyword: keyword-only, after the inputs, or **params
    (lambda x, shape: np.reshape(x, shape), lambda g, out, x, *, shape: g.reshape(np.shape(x)),
     None, {}),
    (lambda x, shape: np.reshape(x, shape), lambda g, out, x, **kw: g.reshape(np.shape(x)),
     None, {}),
    (lambda x, scale: x * scale, lambda g, out, x, scale: g * scale,
     lambda ts, out, x, scale: ts[0] * scale, {"inputs": ["real"]}),
    # defaults, *args and explicit counts
    (lambda x, axis=None: np.cumsum(x, axis), lambda g, out, x, axis=None: g, None, {}),
    (lambda *xs: sum(xs), lambda g, out, *xs: (g,) * len(xs), None, {"variadic": True,
                                                                     "inputs": ["real"]}),
    (lambda x, y: x * y, lambda g, out, *xy: (g * xy[1], g * xy[0]), None, {"nin": 2}),
    (lambda x, y: x + y, [lambda g, out, x, y: g, None], None, {"nondiff_argnums": (1,)}),
    (np.sin, lambda g, out, x: g * np.cos(x), None, {}),
])
def test_callable_rules_are_still_accepted(forward, vjp, jvp, extra):
    gc.define_op("accepted", forward, vjp=vjp, jvp=jvp, register=False,
                 transpose_jvp_reason="test", **extra)


# -- 2. a forward returning a tuple for a one-output op ------------------------------------
def test_a_tuple_from_a_one_output_forward_is_refused_naming_nout():
    sincos = gc.define_op("sincos", lambda x: (np.sin(x), np.cos(x)),
                          vjp=lambda g, out, x: g * gnp.cos(x), register=False)
    with pytest.raises(ValueError, match=r"op 'sincos' declares nout=1.*tuple of 2 values"):
        sincos(gc.tensor([0.5, 1.0]))


def test_a_list_from_a_one_output_forward_is_refused():
    listed = gc.define_op("listed", lambda x: [np.sin(x)],
                          vjp=lambda g, out, x: g * gnp.cos(x), register=False)
    with pytest.raises(ValueError, match=r"op 'listed' declares nout=1.*list of 1 values"):
        listed(gc.tensor(0.5))


# -- 3. an integer output has no tangent (forward mode, as on a tape) --------------------
X0 = np.array([0.3, 0.4, 1.7])
T0 = np.array([1.0, -2.0, 0.5])


@pytest.mark.parametrize("name", ["sum", "mean", "prod", "var", "std", "cumsum", "cumprod"])
@pytest.mark.parametrize("method", ["native", "transpose"])
def test_an_integer_dtype_reduction_has_a_zero_tangent(name, method):
    fn = getattr(gnp, name)

    def f(a):
        return gnp.sum(fn(a, dtype=np.int64) * 1.0)

    out, t = gc.jvp(f, (X0,), (T0,), method=method)
    assert float(out.numpy()) == float(np.sum(getattr(np, name)(X0, dtype=np.int64)))
    assert float(t.numpy()) == 0.0
    np.testing.assert_array_equal(gc.grad(f)(X0).numpy(), np.zeros(3))


@pytest.mark.parametrize("name", ["cumsum", "cumprod"])
@pytest.mark.parametrize("x_dtype, dtype", [(np.float64, np.float32), (np.float32, np.float64)])
@pytest.mark.parametrize("axis", [None, 0, 1])
def test_cumulative_dtype_is_the_scan_of_the_cast_input(name, x_dtype, dtype, axis):
    fn = getattr(gnp, name)
    x = np.array([[0.3, -0.4, 1.7], [2.0, 0.5, -1.1]], dtype=x_dtype)
    t = np.array([[1.0, 0.5, -2.0], [0.3, 0.2, 0.1]], dtype=x_dtype)
    w = np.arange(1.0, 7.0).reshape((6,) if axis is None else (2, 3))

    def given(a):
        return gnp.sum(fn(a, axis=axis, dtype=dtype) * w)

    def cast(a):
        return gnp.sum(fn(a.astype(dtype), axis=axis) * w)

    assert fn(gc.tensor(x), axis, dtype).dtype == getattr(np, name)(x, axis, dtype).dtype
    g_given, g_cast = gc.grad(given)(x).numpy(), gc.grad(cast)(x).numpy()
    assert g_given.dtype == x_dtype
    np.testing.assert_allclose(g_given, g_cast, rtol=1e-6)
    for method in ("native", "transpose"):
        np.testing.assert_allclose(gc.jvp(given, (x,), (t,), method=method)[1].numpy(),
                                   gc.jvp(cast, (x,), (t,), method=method)[1].numpy(),
                                   rtol=1e-6)


def test_cumsum_refuses_an_out_array_naming_the_op():
    with pytest.raises(TypeError, match=r"op 'cumsum': out= is not supported"):
        gnp.cumsum(gc.tensor(X0), out=np.zeros(3))


# -- 4. sort of a 0-d tensor --------------------------------------------------------------
@pytest.mark.parametrize("axis", [-1, 0])
def test_sort_of_a_0d_tensor_gives_numpys_axis_error(axis):
    with pytest.raises(np.exceptions.AxisError) as expected:
        np.sort(np.array(2.0), axis=axis)
    with pytest.raises(np.exceptions.AxisError) as got:
        gnp.sort(gc.tensor(2.0), axis=axis)
    assert str(got.value) == str(expected.value)


def test_sort_of_a_0d_tensor_by_numpy_dispatch():
    with pytest.raises(np.exceptions.AxisError, match="axis -1 is out of bounds"):
        np.sort(gc.tensor(2.0))


@pytest.mark.parametrize("make", [lambda x: gnp.sum(x, dtype=np.int64),
                                  lambda x: gnp.cumsum(x, dtype=np.int32),
                                  lambda x: x > 2.0])
def test_an_integer_or_bool_target_has_no_gradient_on_the_tape(make):
    # the tape seeded it with ones, which flowed back: sum(x, dtype=int64) had gradient ones
    x = gc.tensor(np.array([1.5, 2.5, 3.5]))
    with gc.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = make(x)
    assert tape.gradient(y, x) is None
    np.testing.assert_array_equal(tape.gradient(y, x, unconnected_gradients="zero").numpy(),
                                  np.zeros(3))
