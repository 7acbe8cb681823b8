"""Complex values through the engine (issue 12): the tape, the forward accumulator and
custom_gradient in JAX's cotangent convention (README "Complex numbers"), the conversions to
PyTorch's and TensorFlow's convention, and every complex-capable op against finite
differences over R²ⁿ (tests/complex_fd.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from complex_fd import assert_derivatives, engine_hvp, engine_jvp, engine_vjp

import gradcheck as gc
import gradcheck.numpy as gnp
from gradcheck.domains import NAMED
from gradcheck.engine.op import RuleError, define_op
from gradcheck.ops.linalg_decomp import _eig_forward, _eigh_forward

Z0 = np.array([1.0 + 2.0j, -0.5 + 0.3j, 0.7 - 1.1j])
CT = np.array([0.5 - 0.25j, 1j, -0.3 + 0.8j])


def _composite(ns: Any) -> Callable[[Any], Any]:
    """One function written against a numpy namespace, holomorphic and not."""
    def f(z: Any) -> Any:
        return ns.exp(z) * ns.conj(z) + ns.sin(z) / (z * z + 2.0) + ns.abs(z) * ns.sqrt(z)
    return f


def test_tape_vjp_matches_jax_and_autograd() -> None:
    jax = pytest.importorskip("jax", reason="needs gradcheck[jax]")
    jax.config.update("jax_enable_x64", True)
    import autograd
    import autograd.numpy as anp
    import jax.numpy as jnp

    (ours,) = engine_vjp(_composite(gnp), [Z0], CT)
    _, jax_vjp = jax.vjp(_composite(jnp), jnp.asarray(Z0))
    np.testing.assert_allclose(ours, np.asarray(jax_vjp(jnp.asarray(CT))[0]), rtol=1e-12)
    ag_vjp, _ = autograd.make_vjp(_composite(anp))(Z0)
    np.testing.assert_allclose(ours, ag_vjp(CT), rtol=1e-12)


def test_forward_accumulator_matches_jax_jvp() -> None:
    jax = pytest.importorskip("jax", reason="needs gradcheck[jax]")
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp

    t = np.array([0.3 + 1j, -1.0 + 0.2j, 0.5j])
    _, want = jax.jvp(_composite(jnp), (jnp.asarray(Z0),), (jnp.asarray(t),))
    for transpose in (False, True):
        got = engine_jvp(_composite(gnp), [Z0], [t], force_transpose=transpose)
        np.testing.assert_allclose(got, np.asarray(want), rtol=1e-12)


def test_torch_convention_is_the_conjugate() -> None:
    """vjp_torch(ct) = conj(vjp_gradcheck(conj(ct))); for a real loss, grad_torch =
    conj(grad_gradcheck)."""
    torch = pytest.importorskip("torch", reason="needs gradcheck[torch]")
    z = torch.tensor(Z0, requires_grad=True)
    y = _composite(torch)(z)
    (theirs,) = torch.autograd.grad(y, z, grad_outputs=torch.tensor(CT))
    (ours,) = engine_vjp(_composite(gnp), [Z0], np.conj(CT))
    np.testing.assert_allclose(theirs.numpy(), np.conj(ours), rtol=1e-12)

    def loss(ns: Any) -> Callable[[Any], Any]:
        return lambda z: ns.sum(ns.abs(_composite(ns)(z)) ** 2)
    z = torch.tensor(Z0, requires_grad=True)
    (theirs,) = torch.autograd.grad(loss(torch)(z), z)
    (ours,) = engine_vjp(loss(gnp), [Z0], np.array(1.0))
    np.testing.assert_allclose(theirs.numpy(), np.conj(ours), rtol=1e-12)


def test_tensorflow_convention_is_the_conjugate() -> None:
    tf = pytest.importorskip("tensorflow", reason="needs gradcheck[tensorflow]")
    z = tf.constant(Z0)
    with tf.GradientTape() as tape:
        tape.watch(z)
        y = z * z * tf.math.conj(z)
    theirs = tape.gradient(y, z, output_gradients=tf.constant(CT)).numpy()
    (ours,) = engine_vjp(lambda v: v * v * gnp.conj(v), [Z0], np.conj(CT))
    np.testing.assert_allclose(theirs, np.conj(ours), rtol=1e-12)


def test_holomorphic_rule_needs_no_conjugate() -> None:
    """vjp(ct) = ct f'(z), jvp(t) = f'(z) t: z**2 at 1+2j."""
    (g,) = engine_vjp(lambda z: z * z, [np.array(1 + 2j)], np.array(0.5 - 0.25j))
    assert complex(g) == pytest.approx(2 + 1.5j)
    (g,) = engine_vjp(gnp.conj, [np.array(1 + 2j)], np.array(0.5 - 0.25j))
    assert complex(g) == pytest.approx(0.5 + 0.25j)


def test_real_input_of_a_complex_intermediate_gets_the_real_part() -> None:
    jax = pytest.importorskip("jax", reason="needs gradcheck[jax]")
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp

    x = np.array([0.4, -1.2, 2.0])

    def f(ns: Any) -> Callable[[Any], Any]:
        return lambda v: ns.exp(v * (1.0 + 2.0j)) + v * ns.sin(v + 0.5j)
    (ours,) = engine_vjp(f(gnp), [x], CT)
    assert ours.dtype == np.float64
    _, jax_vjp = jax.vjp(f(jnp), jnp.asarray(x))
    np.testing.assert_allclose(ours, np.asarray(jax_vjp(jnp.asarray(CT))[0]), rtol=1e-12)
    assert_derivatives(f(gnp), [x], numpy_f=f(np))


def test_complex_target_is_seeded_with_ones() -> None:
    z = gc.tensor(Z0)
    with gc.GradientTape() as tape:
        tape.watch(z)
        y = gnp.exp(z)
    g = tape.gradient(y, z)
    np.testing.assert_allclose(np.asarray(g), np.exp(Z0))  # ones * f'(z)


def test_custom_gradient_with_complex_values() -> None:
    @gc.custom_gradient
    def square_modulus(z: Any) -> Any:
        y = gnp.real(z * gnp.conj(z))
        return y, lambda g: gnp.complex(2 * g, 0 * g) * gnp.conj(z)
    assert_derivatives(square_modulus, [Z0], numpy_f=lambda z: np.abs(z) ** 2)


def test_second_order_through_complex_values() -> None:
    """A Hessian-vector product of a real loss of z, tape over tape, against JAX's."""
    jax = pytest.importorskip("jax", reason="needs gradcheck[jax]")
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp

    def loss(ns: Any) -> Callable[[Any], Any]:
        return lambda v: ns.sum(ns.abs(ns.exp(v) * v) ** 2)
    u = np.array([0.2 - 0.4j, 1.0 + 0.1j, -0.3j])
    ours = engine_hvp(loss(gnp), Z0, u)
    theirs = jax.grad(lambda v: jnp.sum(jnp.real(jax.grad(loss(jnp))(v) * u)))(jnp.asarray(Z0))
    np.testing.assert_allclose(ours, np.asarray(theirs), rtol=1e-10)


def test_a_rule_returning_complex_for_a_real_input_is_an_error() -> None:
    leaky = define_op("leaky_real_part", lambda x: np.asarray(x) * (1 + 1j),
                      vjp=lambda g, out, x: g * (1 + 1j), jvp=None, register=False,
                      transpose_jvp_reason="test op")
    x = gc.tensor(np.array([1.0, 2.0]))
    with gc.GradientTape() as tape:
        tape.watch(x)
        y = leaky(x)
    with pytest.raises(RuleError, match="dtype complex128 but the input has dtype float64"):
        tape.gradient(y, x)


def test_complex_seeds_for_real_values_are_errors() -> None:
    x = gc.tensor(np.array([1.0, 2.0]))
    with gc.GradientTape() as tape:
        tape.watch(x)
        y = gnp.sin(x)
    with pytest.raises(ValueError, match=r"output_gradients\[0\] is complex but target 0 is real"):
        tape.gradient(y, x, output_gradients=np.array([1j, 1.0]))
    with pytest.raises(ValueError, match="tangent 0 is complex but primal 0 is real"):
        gc.ForwardAccumulator(x, np.array([1j, 0.0]))
    # a real tangent or seed for a complex value is fine: it is promoted
    z = gc.tensor(Z0)
    with gc.ForwardAccumulator(z, np.ones(3)) as acc:
        w = gnp.exp(z)
    np.testing.assert_allclose(np.asarray(acc.jvp(w)), np.exp(Z0))


def test_single_precision_stays_single() -> None:
    z = Z0.astype(np.complex64)
    (g,) = engine_vjp(lambda v: gnp.exp(v) * gnp.conj(v) + gnp.abs(v), [z],
                      np.ones(3, np.complex64))
    assert g.dtype == np.complex64
    t = engine_jvp(lambda v: gnp.fft.fft(v) * 2.0, [z], [np.ones(3, np.complex64)])
    assert t.dtype == np.complex64


def _c(rng: np.random.Generator, *shape: int) -> np.ndarray:
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


def _domain(name: str, shape: tuple[int, ...], seed: int = 0) -> np.ndarray:
    return NAMED[name].sample(np.random.default_rng(seed), shape, np.complex128)


#: (name, engine function, numpy function, inputs)
OPS: list[tuple[str, Any, Any, list[np.ndarray]]] = [
    ("exp", gnp.exp, np.exp, [_domain("complex", (4,))]),
    ("log", gnp.log, np.log, [_domain("complex_cut", (4,))]),
    ("sin", gnp.sin, np.sin, [_domain("complex", (4,))]),
    ("cos", gnp.cos, np.cos, [_domain("complex", (4,))]),
    ("tanh", gnp.tanh, np.tanh, [_domain("complex", (4,))]),
    ("sqrt", gnp.sqrt, np.sqrt, [_domain("complex_cut", (4,))]),
    ("reciprocal", gnp.reciprocal, np.reciprocal, [_domain("complex_nonzero", (4,))]),
    ("power", gnp.power, np.power, [_domain("complex_cut", (4,)), _domain("complex", (4,), 1)]),
    ("power_scalar", lambda z: z ** 2.5, lambda z: z ** 2.5, [_domain("complex_cut", (4,))]),
    ("abs", gnp.abs, np.abs, [_domain("complex_nonzero", (4,))]),
    ("angle", gnp.angle, np.angle, [_domain("complex_cut", (4,))]),
    ("real", gnp.real, np.real, [_domain("complex", (4,))]),
    ("imag", gnp.imag, np.imag, [_domain("complex", (4,))]),
    ("conj", gnp.conj, np.conj, [_domain("complex", (4,))]),
    ("complex", gnp.complex, lambda a, b: a + 1j * b,
     [np.array([0.3, -1.0, 2.0]), np.array([[0.5], [-0.2]])]),
    ("divide", gnp.divide, np.divide, [_domain("complex", (4,)), _domain("complex_nonzero", (4,))]),
    ("matmul", gnp.matmul, np.matmul, [_domain("complex", (2, 3)), _domain("complex", (3, 2))]),
    ("matmul_real_complex", gnp.matmul, np.matmul,
     [np.random.default_rng(3).standard_normal((2, 3)), _domain("complex", (3, 2))]),
    ("solve", gnp.linalg.solve, np.linalg.solve,
     [_domain("complex_well_conditioned", (3, 3)), _domain("complex", (3, 2))]),
    ("inv", gnp.linalg.inv, np.linalg.inv, [_domain("complex_well_conditioned", (2, 3, 3))]),
    ("det", gnp.linalg.det, np.linalg.det, [_domain("complex_well_conditioned", (3, 3))]),
    ("slogdet", lambda a: gnp.linalg.slogdet(a)[0] * gnp.linalg.slogdet(a)[1],
     lambda a: np.linalg.slogdet(a)[0] * np.linalg.slogdet(a)[1],
     [_domain("complex_well_conditioned", (3, 3))]),
    ("eigvals", gnp.linalg.eigvals, np.linalg.eigvals, [_domain("complex_distinct_eig", (3, 3))]),
    ("eig_values", lambda a: gnp.linalg.eig(a)[0], lambda a: _eig_forward(a)[0],
     [_domain("complex_distinct_eig", (2, 3, 3))]),
    ("eig_vectors", lambda a: gnp.linalg.eig(a)[1], lambda a: _eig_forward(a)[1],
     [_domain("complex_distinct_eig", (3, 3), 4)]),
    ("eig_vectors_of_real", lambda a: gnp.linalg.eig(a)[1], lambda a: _eig_forward(a)[1],
     [np.random.default_rng(5).standard_normal((3, 3))]),
    ("eigh_values", lambda a: gnp.linalg.eigh(a)[0], lambda a: _eigh_forward(a)[0],
     [_domain("hermitian", (3, 3))]),
    ("eigh_vectors", lambda a: gnp.linalg.eigh(a)[1], lambda a: _eigh_forward(a)[1],
     [_domain("hermitian", (2, 3, 3), 6)]),
]


@pytest.mark.parametrize(("name", "f", "numpy_f", "xs"), OPS, ids=[row[0] for row in OPS])
def test_op_derivatives_match_finite_differences(name: str, f: Any, numpy_f: Any,
                                                 xs: list[np.ndarray]) -> None:
    assert_derivatives(f, xs, numpy_f=numpy_f, seed=len(name))


def test_eig_gauge_is_unit_norm_and_real_pivot() -> None:
    a = _domain("complex_distinct_eig", (3, 3))
    _, v = gnp.linalg.eig(a)
    np.testing.assert_allclose(np.linalg.norm(v, axis=0), 1.0)
    pivots = v[np.argmax(np.abs(v), axis=0), np.arange(3)]
    np.testing.assert_allclose(pivots.imag, 0.0, atol=1e-15)
    assert np.all(pivots.real > 0)


def test_complex_domains_sample_the_precision_asked() -> None:
    for name in ("complex", "complex_nonzero", "complex_cut", "hermitian",
                 "complex_well_conditioned", "complex_distinct_eig"):
        domain = NAMED[name]
        shape = (3,) if domain.signature == "(...)" else (3, 3)
        assert domain.sample(np.random.default_rng(0), shape, np.float32).dtype == np.complex64
        x = domain.sample(np.random.default_rng(0), shape, np.float64)
        assert x.dtype == np.complex128
        assert np.array_equal(x, domain.sample(np.random.default_rng(0), shape, np.float64))
    cut = NAMED["complex_cut"].sample(np.random.default_rng(1), (1000,), np.float64)
    assert np.min(np.abs(np.angle(cut))) >= 0.0 and np.max(np.abs(np.angle(cut))) < np.pi - 0.29
    h = NAMED["hermitian"].sample(np.random.default_rng(1), (2, 4, 4), np.float64)
    np.testing.assert_allclose(h, np.conj(np.swapaxes(h, -1, -2)))


COMPLEX_CAPABLE = [op for op in gc.default_registry if op.meta.get("complex_inputs")]


def test_the_complex_capable_ops_are_the_issues_list() -> None:
    assert {op.name for op in COMPLEX_CAPABLE} >= {
        "exp", "log", "sin", "cos", "tanh", "sqrt", "reciprocal", "power", "abs", "matmul",
        "linalg.solve", "linalg.inv", "linalg.det", "linalg.eigh"}


@pytest.mark.parametrize("op", COMPLEX_CAPABLE, ids=lambda op: op.name)
def test_declared_complex_inputs_pass_the_checker(op: Any) -> None:
    """An op's complex_inputs= declaration, checked by gc.check (C^n as R^2n) in complex128
    and complex64."""
    report = gc.check(op.name, inputs=list(op.meta["complex_inputs"]), examples=3, seed=0,
                      references=["numeric", "self"])
    assert report.passed, [(c.path, c.status, c.note) for c in report.cells
                           if c.status not in ("pass", "skip")]
    assert report.stats["examples"] == {"float64": 3, "float32": 3}
