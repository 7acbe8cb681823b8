"""numpy's own functions on tensors (``__array_ufunc__``, ``__array_function__``): they run
gradcheck.numpy's op of the same name, compute what carries no derivative, and refuse the
rest by name.  Before, ``np.dot(t, t)`` returned a plain float (the derivative silently lost)
and ``np.sin(t)`` raised numpy's "does not support ufuncs"."""

import operator

import numpy as np
import pytest

import gradcheck as gc
import gradcheck.numpy as gnp
from gradcheck.engine.tensor import value_of

X = np.array([0.3, -1.2, 2.0])
Y = np.array([1.1, -0.4, 0.5])
COND = np.array([True, False, True])

# (name, the function written with numpy, the same written with gradcheck.numpy): scalar out
CASES = [
    ("dot", lambda a, b: np.dot(a, b), lambda a, b: gnp.dot(a, b)),
    ("linalg.norm", lambda a, b: np.linalg.norm(a * b), lambda a, b: gnp.linalg.norm(a * b)),
    ("sin", lambda a, b: np.sum(np.sin(a) * b), lambda a, b: gnp.sum(gnp.sin(a) * b)),
    ("exp", lambda a, b: np.sum(np.exp(a) * b), lambda a, b: gnp.sum(gnp.exp(a) * b)),
    ("maximum", lambda a, b: np.sum(np.maximum(a, b)), lambda a, b: gnp.sum(gnp.maximum(a, b))),
    ("where", lambda a, b: np.sum(np.where(COND, a * a, b)),
     lambda a, b: gnp.sum(gnp.where(COND, a * a, b))),
    ("fft.fft", lambda a, b: np.sum(np.real(np.fft.fft(a * b))),
     lambda a, b: gnp.sum(gnp.real(gnp.fft.fft(a * b)))),
]
IDS = [c[0] for c in CASES]


def _gradients(fn):
    """Reverse-mode gradients of ``fn`` at (X, Y), and the value."""
    a, b = gc.tensor(X), gc.tensor(Y)
    with gc.GradientTape() as tape:
        tape.watch([a, b])
        y = fn(a, b)
    assert isinstance(y, gc.Tensor), type(y)
    return [g.numpy() for g in tape.gradient(y, [a, b])]


def _central_differences(fn, h=1e-6):
    """The gradient of ``fn`` (on plain arrays) at (X, Y) by central differences."""
    out = []
    for i in range(2):
        g = np.zeros(3)
        for k in range(3):
            up, down = [X.copy(), Y.copy()], [X.copy(), Y.copy()]
            up[i][k] += h
            down[i][k] -= h
            g[k] = (fn(*up) - fn(*down)) / (2 * h)
        out.append(g)
    return out


@pytest.mark.parametrize(("name", "with_np", "with_gnp"), CASES, ids=IDS)
def test_numpy_functions_give_gnp_gradients_under_a_tape(name, with_np, with_gnp):
    got, want = _gradients(with_np), _gradients(with_gnp)
    for g, w, fd in zip(got, want, _central_differences(with_np), strict=True):
        np.testing.assert_array_equal(g, w)
        np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize(("name", "with_np", "with_gnp"), CASES, ids=IDS)
def test_numpy_functions_give_gnp_tangents_under_a_forward_accumulator(name, with_np,
                                                                       with_gnp):
    u, w = np.array([0.5, 1.0, -2.0]), np.array([1.5, -0.5, 0.25])
    tangents = []
    for fn in (with_np, with_gnp):
        a, b = gc.tensor(X), gc.tensor(Y)
        with gc.ForwardAccumulator([a, b], [u, w]) as acc:
            y = fn(a, b)
        tangents.append(acc.jvp(y).numpy())
    np.testing.assert_array_equal(tangents[0], tangents[1])
    fd = _central_differences(with_np)
    np.testing.assert_allclose(tangents[0], fd[0] @ u + fd[1] @ w, rtol=1e-6)


def test_the_new_users_example_keeps_its_derivative():
    x = gc.Tensor(np.arange(3.0))
    with gc.GradientTape() as tape:
        tape.watch(x)
        y = np.dot(x, x)
    assert type(y) is gc.Tensor
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [0.0, 2.0, 4.0])


def test_numpy_reductions_run_under_a_forward_accumulator():
    # np.sum(t) calls t.sum(axis=None, dtype=None, out=None): the None out used to reach
    # the op's JVP rule, whose own "out" is the op's output
    t = gc.tensor(X)
    with gc.ForwardAccumulator(t, np.ones(3)) as acc:
        y = np.sum(t) + np.mean(t) + np.max(t) + np.prod(t) + np.var(t) + np.std(t)
    want = 3 + 1 + 1 + (X[1] * X[2] + X[0] * X[2] + X[0] * X[1]) + 0 + 0
    np.testing.assert_allclose(acc.jvp(y).numpy(), want, rtol=1e-14)


@pytest.mark.parametrize("name", ["sum", "mean", "max", "min", "prod", "var", "std"])
def test_gnp_reductions_take_numpys_out_none_under_every_tracer(name):
    # gnp.sum(t, out=None), numpy's own signature called directly, reached the JVP rule
    # with an "out" of its own: "got multiple values for argument 'out'"
    fn = getattr(gnp, name)
    t = gc.tensor(X)
    with gc.ForwardAccumulator(t, np.ones(3)) as acc:
        y = fn(t, axis=0, out=None)
    want = value_of(gc.jvp(lambda a: fn(a, axis=0), [X], [np.ones(3)])[1])
    np.testing.assert_allclose(acc.jvp(y).numpy(), want, rtol=1e-14)
    with gc.GradientTape() as tape:
        tape.watch(t)
        y = fn(t, out=None)
    np.testing.assert_allclose(tape.gradient(y, t).numpy(),
                               value_of(gc.grad(lambda a: fn(a))(X)), rtol=1e-14)
    with pytest.raises(TypeError, match=f"op '{name}': out= is not supported"):
        fn(t, out=np.zeros(()))


def test_array_methods_numpy_forwards_to_keep_numpys_signature():
    # numpy's clip calls the tensor's method, which takes numpy 2's min=/max= names
    t = gc.tensor(X)
    np.testing.assert_array_equal(np.clip(t, min=-1, max=1).numpy(), np.clip(X, -1, 1))
    np.testing.assert_array_equal(np.sum(t, axis=0, keepdims=True).numpy(), [X.sum()])
    np.testing.assert_array_equal(np.transpose(gc.tensor(X[None]), axes=(1, 0)).numpy(),
                                  X[:, None])


# -- an ndarray on the left of an operator: what it returned before ------------------------
OPERATORS = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv,
             "**": operator.pow, "@": operator.matmul, "<": operator.lt, "<=": operator.le,
             ">": operator.gt, ">=": operator.ge, "==": operator.eq, "!=": operator.ne}


@pytest.mark.parametrize("symbol", ["+", "-", "*", "/", "**", "@"])
def test_an_ndarray_on_the_left_gives_a_differentiable_tensor(symbol):
    op, arr, x = OPERATORS[symbol], np.array([1.5, 2.0, 0.5]), np.abs(X)
    t = gc.tensor(x)
    with gc.GradientTape() as tape:
        tape.watch(t)
        y = op(arr, t)
        total = gnp.sum(y)
    assert type(y) is gc.Tensor
    np.testing.assert_allclose(y.numpy(), op(arr, x), rtol=1e-15)
    h = 1e-6
    fd = [(np.sum(op(arr, x + h * e)) - np.sum(op(arr, x - h * e))) / (2 * h)
          for e in np.eye(3)]
    np.testing.assert_allclose(tape.gradient(total, t).numpy(), fd, rtol=1e-7)


@pytest.mark.parametrize("symbol", ["<", "<=", ">", ">=", "==", "!="])
def test_an_ndarray_compared_with_a_tensor_is_a_plain_boolean_array(symbol):
    op, arr = OPERATORS[symbol], np.array([0.3, 0.0, 2.5])
    got = op(arr, gc.tensor(X))
    assert type(got) is np.ndarray and got.dtype == bool
    np.testing.assert_array_equal(got, op(arr, X))


def test_a_numpy_scalar_on_the_left_gives_a_tensor():
    assert type(np.float64(2.0) * gc.tensor(X)) is gc.Tensor


@pytest.mark.parametrize(("symbol", "op"), [("%", operator.mod), ("//", operator.floordiv)])
def test_an_ndarray_mod_a_tensor_says_what_to_write(symbol, op):
    with pytest.raises(TypeError, match=f"does not support {symbol}: .* write gnp"):
        op(np.ones(3), gc.tensor(X))


def test_an_in_place_operator_on_an_ndarray_says_to_assign():
    arr = np.ones(3)
    with pytest.raises(TypeError, match=r"numpy\.add\(\.\.\.\).*takes no out=.*a = a \+ t"):
        arr += gc.tensor(X)
    np.testing.assert_array_equal(arr, np.ones(3))


# -- what carries no derivative is numpy's plain value --------------------------------------
@pytest.mark.parametrize(("fn", "want"), [
    (np.shape, (3,)),
    (np.ndim, 1),
    (np.size, 3),
    (np.argmax, 2),
    (lambda t: np.argsort(t).tolist(), [1, 0, 2]),
    (lambda t: np.isfinite(t).tolist(), [True] * 3),
    (lambda t: np.signbit(t).tolist(), [False, True, False]),
    (lambda t: np.array_equal(t, X), True),
    (lambda t: np.allclose(t, X), True),
    (lambda t: np.nonzero(t > 0)[0].tolist(), [0, 2]),
    (lambda t: np.where(gc.tensor(X > 0))[0].tolist(), [0, 2]),
    (lambda t: np.zeros_like(t).tolist(), [0.0] * 3),
    (np.result_type, np.dtype("float64")),
], ids=["shape", "ndim", "size", "argmax", "argsort", "isfinite", "signbit", "array_equal",
        "allclose", "nonzero", "where(condition)", "zeros_like", "result_type"])
def test_functions_without_a_derivative_return_plain_values(fn, want):
    got = fn(gc.tensor(X))
    assert type(got) is not gc.Tensor
    assert got == want


def test_integer_tensors_take_any_numpy_function():
    # no derivative flows from integers: numpy's value is the whole answer
    t = gc.tensor(np.array([3, 1, 2]))
    np.testing.assert_array_equal(np.cross(t, t), [0, 0, 0])


# -- the rest is refused by name, never a derivative silently lost ---------------------------
@pytest.mark.parametrize(("call", "match"), [
    (lambda t: np.cross(t, t), r"numpy\.cross\(\.\.\.\) on a gradcheck Tensor: .*lose the "
                               r"derivative"),
    (lambda t: np.linalg.cond(np.outer(t, t) + np.eye(3)),
     r"numpy\.linalg\.cond\(\.\.\.\) on a gradcheck Tensor"),
    (np.ravel, r"numpy\.ravel\(\.\.\.\).*the method t\.ravel\(\)"),
    (np.rint, r"numpy\.rint\(\.\.\.\) on a gradcheck Tensor: gradcheck\.numpy has no "
              r"differentiable rint"),
    (np.add.reduce, r"numpy\.add\.reduce\(\.\.\.\).*use gnp\.sum"),
    (np.multiply.accumulate, r"numpy\.multiply\.accumulate\(\.\.\.\).*use gnp\.cumprod"),
    (lambda t: np.subtract.outer(t, t), r"numpy\.subtract\.outer\(\.\.\.\)"),
    (lambda t: np.sin(t, where=COND), r"numpy\.sin\(\.\.\.\).*takes no where="),
    (lambda t: np.sin(t, out=(t,)), r"numpy\.sin\(\.\.\.\).*takes no out="),
], ids=["cross", "linalg.cond", "ravel", "rint", "reduce", "accumulate", "outer", "where",
        "out"])
def test_functions_that_would_lose_the_derivative_are_refused_by_name(call, match):
    with pytest.raises(TypeError, match=match):
        call(gc.tensor(X))


@pytest.mark.parametrize(("call", "match"), [
    (lambda t, out: np.sin(t, out=out), r"numpy\.sin\(\.\.\.\).*takes no out="),
    (lambda t, out: np.nancumsum(t, out=out), r"numpy\.nancumsum\(\.\.\.\).*writes the values"),
    (lambda t, out: np.copyto(out, t), r"numpy\.copyto\(\.\.\.\).*writes the values"),
    (lambda t, out: np.put(out, [0, 1], t), r"numpy\.put\(\.\.\.\).*writes the values"),
], ids=["sin", "nancumsum", "copyto", "put"])
def test_writing_a_tensor_into_an_array_is_refused_before_it_writes(call, match):
    out = np.full(3, 7.0)
    with pytest.raises(TypeError, match=match):
        call(gc.tensor(X), out)
    np.testing.assert_array_equal(out, np.full(3, 7.0))


# -- the checker sees the derivative ----------------------------------------------------------
def test_check_of_np_dot_passes():
    report = gc.check(lambda a: np.dot(a, a), inputs=["real"], shapes="(n)", seed=0)
    assert report.passed, report.findings


def test_check_of_np_dot_finds_what_gnp_dot_finds():
    # drawn 2-d, dot(a, a) is not defined: an error of the function, as with gnp.dot, and no
    # longer a derivative reported silently zero
    kinds = [sorted({f.kind for f in gc.check(fn, inputs=["real"], seed=0).findings})
             for fn in (lambda a: np.dot(a, a), lambda a: gnp.dot(a, a))]
    assert kinds[0] == kinds[1] == ["error"]


def test_check_of_np_sin_passes():
    report = gc.check(lambda a: np.sin(a), inputs=["real"], seed=0)
    assert report.passed, report.findings
