"""A tracer refuses a complex input to an op whose rules hold for real values only.

numpy computes var, sign, sinc, norm, svdvals, qr, ... of complex arrays, but their rules are
real-only: they used to give a wrong gradient without a word (var's misses a conjugate, sign's
is zero).  Now a tape or accumulator raises TypeError naming the op, the input and its dtype;
the ops whose rules hold for complex values declare it (``Op.complex_rules``) and still work.
"""

from typing import Any

import numpy as np
import pytest
from complex_fd import engine_hvp

import gradcheck as gc
import gradcheck.numpy as gnp
from gradcheck.engine.op import define_op

RNG = np.random.default_rng(7)
Z = (RNG.standard_normal((3, 3)) + 1j * RNG.standard_normal((3, 3))) * 0.6 + 0.2
C = RNG.standard_normal((3, 3)) + 1j * RNG.standard_normal((3, 3))

#: gnp functions numpy computes on complex arrays, whose rules are real-only.
REAL_ONLY = {
    "var": gnp.var, "std": gnp.std, "sign": gnp.sign, "sinc": gnp.sinc,
    "linalg.norm": gnp.linalg.norm, "linalg.svdvals": gnp.linalg.svdvals,
    "linalg.qr": lambda z: gnp.linalg.qr(z)[0], "maximum": lambda z: gnp.maximum(z, 0.1),
}


@pytest.mark.parametrize("name", REAL_ONLY)
def test_a_tape_refuses_a_real_only_op_at_a_complex_input(name: str) -> None:
    z = gc.tensor(Z)
    with gc.GradientTape() as tape:
        tape.watch(z)
        with pytest.raises(TypeError, match=rf"GradientTape: op '{name}' cannot be "
                                            r"differentiated at a complex input: input 0 has "
                                            r"dtype complex128.*complex_rules=True"):
            REAL_ONLY[name](z)


@pytest.mark.parametrize("name", REAL_ONLY)
def test_an_accumulator_refuses_a_real_only_op_at_a_complex_input(name: str) -> None:
    z = gc.tensor(Z)
    with gc.ForwardAccumulator(z, np.ones_like(Z)):
        with pytest.raises(TypeError, match=rf"ForwardAccumulator: op '{name}' .* input 0 has "
                                            r"dtype complex128"):
            REAL_ONLY[name](z)


def test_the_refusal_names_the_complex_input() -> None:
    x, z = gc.tensor(np.ones(3)), gc.tensor(Z[0])
    with gc.GradientTape() as tape:
        tape.watch([x, z])
        with pytest.raises(TypeError, match="op 'maximum' .* input 1 has dtype complex128"):
            gnp.maximum(x, z)


def test_untraced_complex_values_and_real_inputs_are_left_alone() -> None:
    np.testing.assert_array_equal(np.asarray(gnp.sign(gc.tensor(Z))), np.sign(Z))
    x = gc.tensor(np.real(Z))
    with gc.GradientTape() as tape:
        tape.watch(x)
        y = gnp.var(x) + gnp.sum(gnp.real(gnp.sign(gc.tensor(Z))))  # complex, not traced
    n = Z.size
    np.testing.assert_allclose(np.asarray(tape.gradient(y, x)),
                               2 / n * (np.real(Z) - np.mean(np.real(Z))))


def _loss(f: Any) -> Any:
    return lambda z: gnp.sum(gnp.real(f(z) * C))


#: Ops that declare complex rules, with f'(z): the gradient of Re(sum(f(z) * c)) is c f'(z)
#: in JAX's convention (README, Complex numbers).
HOLOMORPHIC = {
    "exp": (gnp.exp, np.exp),
    "square, multiply": (lambda z: gnp.square(z) * z, lambda z: 3 * z ** 2),
    "divide": (lambda z: z / (z + 3.0), lambda z: 3.0 / (z + 3.0) ** 2),
    "sinh": (gnp.sinh, np.cosh),
    "log1p": (gnp.log1p, lambda z: 1 / (1 + z)),
    "sum, reshape, transpose": (
        lambda z: gnp.reshape(gnp.reshape(gnp.transpose(z), (9,)), (3, 3)) * gnp.sum(z), None),
}


@pytest.mark.parametrize("name", HOLOMORPHIC)
def test_ops_with_complex_rules_still_give_the_right_gradient(name: str) -> None:
    f, deriv = HOLOMORPHIC[name]
    grad = np.asarray(gc.grad(_loss(f))(Z))
    if deriv is not None:
        np.testing.assert_allclose(grad, C * deriv(Z), rtol=1e-12)
    t = RNG.standard_normal(Z.shape) + 1j * RNG.standard_normal(Z.shape)
    h = 1e-6
    value = _loss(f)
    numeric = (float(value(gc.tensor(Z + h * t))) - float(value(gc.tensor(Z - h * t)))) / (2 * h)
    np.testing.assert_allclose(np.real(np.sum(grad * t)), numeric, rtol=1e-6)
    _, tangent = gc.jvp(value, (Z,), (t,))
    np.testing.assert_allclose(float(np.asarray(tangent)), numeric, rtol=1e-6)


#: The complex ops whose rules use gradient ops (sqrt_grad, ...): their second derivative
#: runs those ops on complex values under the outer tape.  f''(z) of each.
SECOND = {
    "sqrt": (gnp.sqrt, lambda z: -0.25 * z ** -1.5),
    "tanh": (gnp.tanh, lambda z: -2 * np.tanh(z) * (1 - np.tanh(z) ** 2)),
    "reciprocal": (gnp.reciprocal, lambda z: 2 / z ** 3),
}


@pytest.mark.parametrize("name", SECOND)
def test_second_derivatives_of_complex_ops_run_their_gradient_ops(name: str) -> None:
    f, second = SECOND[name]
    u = RNG.standard_normal(Z.shape) + 1j * RNG.standard_normal(Z.shape)
    np.testing.assert_allclose(engine_hvp(_loss(f), Z + 2.0, u), C * u * second(Z + 2.0),
                               rtol=1e-10)


def _real_rule_op(**declared: Any) -> Any:
    return define_op("cube_real_rules", lambda x: x ** 3, vjp=lambda g, out, x: g * 3 * x * x,
                     jvp=lambda ts, out, x: ts[0] * 3 * x * x, register=False, **declared)


def test_an_op_of_your_own_declares_complex_rules() -> None:
    z = gc.tensor(Z)
    with gc.GradientTape() as tape:
        tape.watch(z)
        with pytest.raises(TypeError, match="op 'cube_real_rules'"):
            _real_rule_op()(z)
    grad = gc.grad(_loss(_real_rule_op(complex_rules=True)))(Z)
    np.testing.assert_allclose(np.asarray(grad), C * 3 * Z ** 2, rtol=1e-12)


def test_what_declares_complex_rules() -> None:
    assert not _real_rule_op().complex_rules
    assert _real_rule_op(complex_inputs=("complex",)).complex_rules
    assert _real_rule_op(inputs=("complex",)).complex_rules
    linear = define_op("twice", lambda x: 2 * x, vjp=lambda g, out, x: 2 * g, linear=True,
                       register=False)
    assert linear.complex_rules
    assert not define_op("twice_real", lambda x: 2 * x, vjp=lambda g, out, x: 2 * g,
                         linear=True, complex_rules=False, register=False).complex_rules


README_COMPLEX_OPS = [  # README, Complex numbers ("complex(re, im)" takes real inputs)
    "exp", "log", "sin", "cos", "tanh", "sqrt", "reciprocal", "power", "abs", "real", "imag",
    "conj", "angle", "matmul", "linalg.solve", "linalg.inv", "linalg.det", "linalg.slogdet",
    "linalg.eig", "linalg.eigvals", "linalg.eigh", "fft", "ifft", "fft2", "ifft2", "fftn",
    "ifftn", "irfft", "irfft2", "irfftn",
]


def test_the_readmes_complex_ops_declare_complex_rules() -> None:
    missing = [n for n in README_COMPLEX_OPS if not gc.default_registry.get(n).complex_rules]
    assert not missing


@pytest.mark.parametrize("tracer", ["tape", "accumulator"])
def test_a_complex_constant_beside_a_real_input_is_refused_too(tracer):
    # huber(x, y) with y complex and held fixed: the rule for x is real-only, and the
    # gradient was silently wrong (-0.333 where the numeric derivative gives -0.309)
    x = gc.tensor(np.array([0.3, -2.0, 1.5]))
    y = np.array([0.1 + 0.2j, 0.5 - 1.0j, -1.0 + 0.7j])
    with pytest.raises(TypeError, match="op 'nn.huber' cannot be differentiated at a "
                                        "complex input: input 1 has dtype complex128"):
        if tracer == "tape":
            with gc.GradientTape() as tape:
                tape.watch(x)
                gc.nn.huber(x, y)
        else:
            with gc.ForwardAccumulator(x, np.ones(3)):
                gc.nn.huber(x, y)
    # an op that declares complex rules takes the constant: multiply
    with gc.GradientTape() as tape:
        tape.watch(x)
        z = gnp.real(gnp.sum(x * y))
    np.testing.assert_allclose(tape.gradient(z, x).numpy(), y.real)
