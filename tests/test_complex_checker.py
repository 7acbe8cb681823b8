"""Complex functions through the checker (gradcheck/checker/complex.py, oracles/conventions.py).

A complex input or output is checked as real pairs (Re, Im); each framework's VJP is read in
its own cotangent convention.  The deliberately broken complex ops live here (never in the
shipped registry), written three ways: gradcheck's ``define_op``, ``jax.custom_vjp`` /
``custom_jvp`` and ``torch.autograd.Function``.  Each row says which finding it must produce.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import gradcheck.numpy as gnp
from gradcheck.checker.api import check
from gradcheck.checker.complex import (
    CONJUGATE,
    TRANSPOSE,
    Realified,
    format_complex,
    pack,
    split,
)
from gradcheck.checker.report import Report
from gradcheck.checker.sampling import PHASE_SECTORS, Stratum
from gradcheck.checker.targets import as_target
from gradcheck.domains import domain_named
from gradcheck.engine import Registry
from gradcheck.extend import define_op
from gradcheck.oracles import get_oracle
from gradcheck.oracles.conventions import convert_vjp
from gradcheck.oracles.inputs import Call
from gradcheck.render.html import pretty

Z = np.array([1.0 + 1.0j, -0.5 + 2.0j, 0.3 - 0.7j])
BROKEN = Registry("complex-broken")
C1 = dict(family="broken", inputs=("complex",), shapes="(...)", registry=BROKEN)


def _failures(report: Report) -> set[tuple[str, str, str]]:
    return {(f.path, f.reference, f.kind) for f in report.failures}


def _load(framework: str) -> Any:
    return get_oracle(framework).load()  # Unavailable, with the install hint, when missing


# -- the realification itself -------------------------------------------------------------------
def test_split_and_pack_are_inverse_and_keep_precision() -> None:
    for dtype, real in ((np.complex128, np.float64), (np.complex64, np.float32)):
        z = Z.astype(dtype)
        pairs = split(z)
        assert pairs.shape == (3, 2) and pairs.dtype == real
        assert pack(pairs).dtype == dtype and np.array_equal(pack(pairs), z)
        assert np.array_equal(pack(pairs, conjugate=True), np.conj(z))
    assert split(np.ones(2)).dtype == np.float64  # real arrays pass through
    with pytest.raises(ValueError, match="last axis of length 2"):
        pack(np.ones(3))


class _Holomorphic:
    """f(z) = z² conj(z) (neither holomorphic nor anti-holomorphic) in plain numpy, with its
    VJP in a given convention: JAX's ``ct·∂f/∂z + conj(ct·∂f/∂z̄)`` or its conjugate (and
    the convention it declares, the same unless a test says otherwise)."""

    name = "z2conj"

    def __init__(self, convention: str, declared: str | None = None) -> None:
        self.convention = convention
        self.cotangent_convention = declared or convention
        self.primals = [Z]
        self.counts: dict[str, int] = {}

    def forward(self, primals: Any) -> list[np.ndarray]:
        (z,) = primals
        return [z * z * np.conj(z)]

    def jvp(self, primals: Any, tangents: Any) -> list[np.ndarray]:
        (z,), (t,) = primals, tangents
        return [2 * np.abs(z) ** 2 * t + z * z * np.conj(t)]

    def vjp(self, primals: Any, cotangents: Any) -> list[np.ndarray]:
        (z,), (c,) = primals, cotangents
        if self.convention == CONJUGATE:
            c = np.conj(c)
        g = c * 2 * np.abs(z) ** 2 + np.conj(c * z * z)
        return [np.conj(g) if self.convention == CONJUGATE else g]


@pytest.mark.parametrize("convention", [TRANSPOSE, CONJUGATE])
def test_the_realified_vjp_is_the_transpose_of_the_realified_jvp(convention: str) -> None:
    problem = Realified(_Holomorphic(convention))
    rng = np.random.default_rng(1)
    x = problem.primals
    (out,) = problem.forward(x)
    u, v = rng.normal(size=x[0].shape), rng.normal(size=out.shape)
    (jvp,) = problem.jvp(x, [u])
    (vjp,) = problem.vjp(x, [v])
    assert np.isclose(np.sum(v * jvp), np.sum(vjp * u), rtol=1e-12)
    # the realified JVP is the real Jacobian: the central difference along u
    h = 1e-6
    fd = (problem.forward([x[0] + h * u])[0] - problem.forward([x[0] - h * u])[0]) / (2 * h)
    assert np.allclose(jvp, fd, atol=1e-8)


def test_a_problem_that_declares_the_wrong_convention_is_caught() -> None:
    """The convention matters: a torch-convention VJP read as JAX's fails the numeric check
    of the VJP (and only the identities that involve it)."""
    wrong = Realified(_Holomorphic(CONJUGATE, declared=TRANSPOSE))
    right = Realified(_Holomorphic(CONJUGATE))
    v = [np.ones((3, 2))]
    assert not np.allclose(wrong.vjp(wrong.primals, v)[0], right.vjp(right.primals, v)[0])


def test_a_real_result_for_a_complex_primal_is_a_dtype_error() -> None:
    class Drops(_Holomorphic):
        def vjp(self, primals: Any, cotangents: Any) -> list[np.ndarray]:
            return [np.real(super().vjp(primals, cotangents)[0])]

    from gradcheck.engine import RuleError

    problem = Realified(Drops(TRANSPOSE))
    with pytest.raises(RuleError, match="imaginary part is lost") as error:
        problem.vjp(problem.primals, [np.ones((3, 2))])
    assert error.value.kind == "dtype"


def test_conversions_between_conventions() -> None:
    """torch_vjp(c) = conj(jax_vjp(conj(c))): for sin at z, with cotangent c."""
    z, c = 1.0 + 2.0j, 0.5 - 0.25j
    jax_vjp = lambda ct: ct * np.cos(z)  # noqa: E731
    torch_vjp = convert_vjp(jax_vjp, "jax", "torch")
    assert np.isclose(torch_vjp(c), c * np.conj(np.cos(z)))
    assert convert_vjp(jax_vjp, "jax", "autograd") is jax_vjp


# -- reports -------------------------------------------------------------------------------------
def test_complex_values_print_readably_and_round_trip() -> None:
    assert format_complex(1.5 - 0.2j) == "1.5-0.2j"
    assert format_complex(complex(0.1, 3.0)) == "0.1+3j"
    assert complex(format_complex(complex(1 / 3, -2 / 7))) == complex(1 / 3, -2 / 7)
    assert format_complex(1.23456 + 1j, digits=3) == "1.23+1j"
    assert pretty({"z": ["1+1j", "-0.5+2j"]}) == '{\n  "z": [1+1j, -0.5+2j]\n}'


def _no_conj_exp() -> Any:
    """exp whose VJP is in the conjugate convention (torch's) inside gradcheck (JAX's)."""
    return define_op("noconj_exp", np.exp, vjp=lambda g, out, x: g * gnp.conj(out),
                     jvp=lambda ts, out, x: ts[0] * out, **C1)


NOCONJ_EXP = _no_conj_exp()


def test_json_of_a_complex_finding_is_deterministic_and_readable() -> None:
    first = check(NOCONJ_EXP, inputs=[Z], paths=["vjp"], seed=3)
    again = check(NOCONJ_EXP, inputs=[Z], paths=["vjp"], seed=3)
    assert first.to_json() == again.to_json()
    found = json.loads(first.to_json())["findings"][0]
    assert found["counterexample"]["inputs"] == [["1+1j", "-0.5+2j", "0.3-0.7j"]]
    assert "real pairs (Re, Im)" in found["details"]["complex"]
    assert Report.from_json(first.to_json()).to_json() == first.to_json()


# -- exploration ---------------------------------------------------------------------------------
def test_strata_cover_every_phase_sector_and_keep_off_the_branch_cut() -> None:
    target = as_target(lambda z: gnp.log(z), ["complex_cut"])
    margin = domain_named("complex_cut").margin  # type: ignore[attr-defined]
    seen: set[int] = set()
    from gradcheck.checker.explore import draw_examples

    for k in range(2 * PHASE_SECTORS):
        (example,) = draw_examples(target.strategy("float64", Stratum.number(k)), 1, seed=k)
        z = np.asarray(example.args[0])
        assert z.dtype == np.complex128
        phase = np.angle(z).ravel()
        assert np.all(np.abs(phase) <= np.pi - margin + 1e-12)  # off the negative real axis
        width = (2 * np.pi - 2 * margin) / PHASE_SECTORS
        seen |= set(((phase + np.pi - margin) // width).astype(int).tolist())
    assert seen == set(range(PHASE_SECTORS))


def test_complex64_is_the_float32_precision() -> None:
    target = as_target(lambda z: gnp.exp(z), ["complex"])
    from gradcheck.checker.explore import draw_examples

    (example,) = draw_examples(target.strategy("float32"), 1, seed=0)
    assert example.args[0].dtype == np.complex64
    report = check(lambda z: gnp.exp(z), inputs=["complex"], dtypes="complex64", examples=2)
    assert report.dtypes == ["float32"] and report.passed


# -- bad input -------------------------------------------------------------------------------------
def test_integer_only_inputs_are_an_error_never_a_pass() -> None:
    report = check(lambda x: gnp.exp(x), inputs=[np.arange(3)])
    assert not report.passed
    (error,) = report.failures
    assert error.kind == "error"
    assert "nothing to differentiate" in error.message and "input 0 is int64 [3]" in error.message


def test_inputs_of_which_nothing_is_differentiable_are_an_error() -> None:
    report = check(lambda i, m: gnp.exp(i * 1.0), inputs=["labels", "mask"], examples=2)
    assert not report.passed
    assert any("nothing to differentiate" in f.message for f in report.failures)


def test_an_integer_wrt_and_an_unknown_dtype_are_clear_errors() -> None:
    with pytest.raises(ValueError, match=r"wrt: input 0 \(the given int64 array .*\) is not "
                       "differentiable"):
        check(lambda x: gnp.exp(x), inputs=[np.arange(3)], wrt=0)
    with pytest.raises(ValueError, match="dtype 'int32' is not supported.*complex64"):
        check(lambda z: gnp.exp(z), inputs=[Z], dtypes="int32")


def test_a_complex_input_is_differentiated() -> None:
    """The issue's example: it used to report a tolerance of 9e-313 and differentiate
    nothing."""
    report = check(lambda z: gnp.exp(z), inputs=[np.ones(3) + 1j], examples=2)
    assert report.passed
    assert report.stats["evaluations"]["vjp"] > 0
    tolerances = [c.tolerance for c in report.cells if c.reference == "numeric"]
    assert min(tolerances) > 1e-14


# -- deliberately broken ops ---------------------------------------------------------------------
def _rfft_vjp(x: np.ndarray, g: np.ndarray, edges: bool) -> np.ndarray:
    """The VJP of rfft in JAX's convention: n·irfft(conj(g)·w), where w halves the bins that
    irfft doubles -- all but DC and (n even) Nyquist; ``edges=False`` halves those too."""
    n = x.shape[-1]
    w = np.full(g.shape[-1], 0.5, dtype=np.real(g).dtype)  # complex64 stays complex64
    if edges:
        w[0] = 1.0
        if n % 2 == 0:
            w[-1] = 1.0
    return n * np.fft.irfft(np.conj(g) * w, n=n)


def _abs2_jvp(ts: Any, out: Any, z: Any) -> Any:
    return 2 * gnp.real(gnp.conj(z) * ts[0])


OPS = {
    "conj_forgets_conj": define_op(
        "conj_forgets_conj", np.conj, vjp=lambda g, out, x: g,
        jvp=lambda ts, out, x: gnp.conj(ts[0]), **C1),
    "conj_ok": define_op(
        "conj_ok", np.conj, vjp=lambda g, out, x: gnp.conj(g),
        jvp=lambda ts, out, x: gnp.conj(ts[0]), **C1),
    # |z|²: gradcheck (JAX) wants 2 g conj(z) = 2 g ∂f/∂z; 2 g z is the ∂/∂z̄ (torch) form
    "abs2_wirtinger_mixup": define_op(
        "abs2_wirtinger_mixup", lambda z: np.abs(z) ** 2, vjp=lambda g, out, z: 2 * g * z,
        jvp=_abs2_jvp, **C1),
    "abs2_ok": define_op(
        "abs2_ok", lambda z: np.abs(z) ** 2, vjp=lambda g, out, z: 2 * g * gnp.conj(z),
        jvp=_abs2_jvp, **C1),
    # z |z|²: ∂f/∂z = 2|z|², ∂f/∂z̄ = z²; (2|z|² + z²) t is right for real t only
    "z_abs2_real_tangents_only": define_op(
        "z_abs2_real_tangents_only", lambda z: z * np.abs(z) ** 2,
        vjp=lambda g, out, z: g * 2 * gnp.conj(z) * z + gnp.conj(g * z * z),
        jvp=lambda ts, out, z: (2 * gnp.conj(z) * z + z * z) * ts[0], **C1),
    "z_abs2_ok": define_op(
        "z_abs2_ok", lambda z: z * np.abs(z) ** 2,
        vjp=lambda g, out, z: g * 2 * gnp.conj(z) * z + gnp.conj(g * z * z),
        jvp=lambda ts, out, z: 2 * gnp.conj(z) * z * ts[0] + z * z * gnp.conj(ts[0]), **C1),
    "rfft_doubles_edges": define_op(
        "rfft_doubles_edges", np.fft.rfft, vjp=lambda g, out, x: _rfft_vjp(x, g, False),
        first_order_only="the VJP is raw numpy (irfft)", family="broken",
        inputs=("real",), shapes="(...,n)", registry=BROKEN),
    "rfft_ok": define_op(
        "rfft_ok", np.fft.rfft, vjp=lambda g, out, x: _rfft_vjp(x, g, True),
        first_order_only="the VJP is raw numpy (irfft)", family="broken",
        inputs=("real",), shapes="(...,n)", registry=BROKEN),
}

#: (broken op, the correct one, the failure it must produce, why).
ENGINE_CASES = [
    ("conj_forgets_conj", "conj_ok", ("vjp", "numeric", "mismatch"),
     "the VJP of conj returns g where conj(g) is due"),
    ("abs2_wirtinger_mixup", "abs2_ok", ("vjp", "numeric", "mismatch"),
     "the VJP uses ∂/∂z̄ where gradcheck's convention wants ∂/∂z"),
    ("z_abs2_real_tangents_only", "z_abs2_ok", ("jvp", "numeric", "mismatch"),
     "the JVP treats z|z|² as holomorphic: right for real tangents only"),
    ("rfft_doubles_edges", "rfft_ok", ("vjp", "numeric", "mismatch"),
     "the rfft VJP halves the DC and Nyquist bins, which irfft does not double"),
]
#: Paths of an op: the rfft twins' raw-numpy VJP cannot be transposed into a JVP.
PATHS = {"rfft_doubles_edges": ["vjp"], "rfft_ok": ["vjp"]}


@pytest.mark.parametrize("broken, correct, failure, why", ENGINE_CASES,
                         ids=[c[0] for c in ENGINE_CASES])
def test_broken_engine_ops_are_caught_with_the_right_kind(broken: str, correct: str,
                                                          failure: tuple[str, str, str],
                                                          why: str) -> None:
    paths = PATHS.get(broken, ["vjp", "jvp"])
    report = check(OPS[broken], paths=paths, examples=3, dtypes=["complex128"])
    assert failure in _failures(report), (why, report.failures)
    # attributed to the broken rule: the other (independent) first-order rule passes
    other = {"vjp": "jvp", "jvp": "vjp"}[failure[0]]
    assert (other, "numeric", "mismatch") not in _failures(report), why
    assert check(OPS[correct], paths=paths, examples=3, dtypes=["complex128"]).passed


def test_the_rfft_error_sits_on_the_dc_and_nyquist_bins() -> None:
    """The VJP is exact on the interior bins: a cotangent there is pulled back right."""
    x = np.random.default_rng(0).normal(size=6)
    g = np.zeros(4, dtype=complex)
    g[1:3] = [1.0 - 2.0j, 0.5 + 1.0j]
    assert np.allclose(_rfft_vjp(x, g, False), _rfft_vjp(x, g, True))
    g[0] = 1.0
    assert not np.allclose(_rfft_vjp(x, g, False), _rfft_vjp(x, g, True))


def test_a_broken_custom_gradient_is_caught() -> None:
    import gradcheck as gc

    @gc.custom_gradient
    def sin_torch_style(z: Any) -> Any:
        return gnp.sin(z), lambda g: g * gnp.conj(gnp.cos(z))  # torch's convention

    @gc.custom_gradient
    def sin_ok(z: Any) -> Any:
        return gnp.sin(z), lambda g: g * gnp.cos(z)

    bad = check(sin_torch_style, inputs=["complex"], paths=["vjp"], examples=3)
    assert ("vjp", "numeric", "mismatch") in _failures(bad)
    assert check(sin_ok, inputs=["complex"], paths=["vjp"], examples=3).passed


# -- the same bugs in JAX and torch ----------------------------------------------------------------
def _jax_cases() -> list[tuple[str, Callable[..., Any], Any, tuple[str, str, str] | None]]:
    jax = _load("jax")
    jnp = jax.numpy

    def custom_vjp(f: Any, bwd: Any) -> Any:
        g = jax.custom_vjp(f)
        g.defvjp(lambda *x: (f(*x), x), lambda res, ct: bwd(*res, ct))
        return g

    def custom_jvp(f: Any, rule: Any) -> Any:
        g = jax.custom_jvp(f)
        g.defjvp(lambda p, t: (f(*p), rule(*p, *t)))
        return g

    def rfft_bwd(edges: bool) -> Any:
        def bwd(x: Any, g: Any) -> Any:
            n = x.shape[-1]
            w = jnp.full(g.shape[-1], 0.5)
            if edges:
                w = w.at[0].set(1.0)
                w = w.at[-1].set(1.0) if n % 2 == 0 else w
            return (n * jnp.fft.irfft(jnp.conj(g) * w, n=n),)
        return bwd

    zabs2 = lambda z: z * jnp.abs(z) ** 2  # noqa: E731
    rfft = lambda x: jnp.fft.rfft(x)  # noqa: E731  (its own signature has defaults)
    return [
        ("conj forgets conj", custom_vjp(jnp.conj, lambda z, g: (g,)), Z,
         ("vjp", "numeric", "mismatch")),
        ("conj", custom_vjp(jnp.conj, lambda z, g: (jnp.conj(g),)), Z, None),
        ("sin in torch's convention", custom_vjp(jnp.sin, lambda z, g: (g * jnp.conj(jnp.cos(z)),)),
         Z, ("vjp", "numeric", "mismatch")),
        ("rfft doubles DC and Nyquist", custom_vjp(rfft, rfft_bwd(False)),
         np.linspace(-1.0, 1.3, 6), ("vjp", "numeric", "mismatch")),
        ("rfft", custom_vjp(rfft, rfft_bwd(True)), np.linspace(-1.0, 1.3, 6), None),
        ("rfft odd", custom_vjp(rfft, rfft_bwd(True)), np.linspace(-1.0, 1.3, 5), None),
        ("z|z|² right for real tangents only",
         custom_jvp(zabs2, lambda z, t: (2 * jnp.abs(z) ** 2 + z * z) * t), Z,
         ("jvp", "numeric", "mismatch")),
        ("z|z|²", custom_jvp(zabs2, lambda z, t: 2 * jnp.abs(z) ** 2 * t + z * z * jnp.conj(t)),
         Z, None),
    ]


@pytest.mark.jax
def test_jax_custom_rules_on_complex_values() -> None:
    for name, fn, x, failure in _jax_cases():
        # a custom_vjp function has no forward mode: its JVP is JAX's "unsupported"
        paths = ["vjp", "jvp"] if "tangents" in name or name == "z|z|²" else ["vjp"]
        report = check(fn, inputs=[x], paths=paths, examples=2, name=name)
        if failure is None:
            assert report.passed, (name, report.failures)
        else:
            assert failure in _failures(report), (name, report.failures)


def _torch_function(forward: Any, backward: Any) -> Any:
    torch = _load("torch")

    class Fn(torch.autograd.Function):
        @staticmethod
        def forward(ctx: Any, z: Any) -> Any:
            ctx.save_for_backward(z)
            return forward(z)

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            (z,) = ctx.saved_tensors
            return backward(z, g)

    return Fn.apply


@pytest.mark.torch
def test_torch_functions_on_complex_values() -> None:
    """torch's convention is the conjugate one: grad·conj(f'(z)), and 2·∂L/∂z̄ for a real
    L; a backward written in JAX's convention, or with ∂/∂z, is caught."""
    torch = _load("torch")
    cases = [
        ("exp forgets conj", _torch_function(torch.exp, lambda z, g: g * torch.exp(z)),
         ("vjp", "numeric", "mismatch")),
        ("exp", _torch_function(torch.exp, lambda z, g: g * torch.exp(z).conj()), None),
        ("|z|² with ∂/∂z", _torch_function(lambda z: (z * z.conj()).real,
                                           lambda z, g: 2 * g * z.conj()),
         ("vjp", "numeric", "mismatch")),
        ("|z|²", _torch_function(lambda z: (z * z.conj()).real, lambda z, g: 2 * g * z), None),
    ]
    for name, fn, failure in cases:
        report = check(fn, inputs=[Z], paths=["vjp"], examples=2, name=name)
        if failure is None:
            assert report.passed, (name, report.failures)
        else:
            assert failure in _failures(report), (name, report.failures)


# -- references: four frameworks, one derivative -----------------------------------------------
FRAMEWORK_FUNCTIONS = {
    "autograd": lambda m: (m.numpy.exp, lambda z: m.numpy.conj(z) * z),
    "jax": lambda m: (m.numpy.exp, lambda z: m.numpy.conj(z) * z),
    "torch": lambda m: (m.exp, lambda z: m.conj(z) * z),
    "tensorflow": lambda m: (m.exp, lambda z: m.math.conj(z) * z),
}


def _problem(framework: str, which: int) -> Any:
    fn = FRAMEWORK_FUNCTIONS[framework](_load(framework))[which]
    return get_oracle(framework).problem(Call(fn=fn, name=framework, args=(Z,), argnums=(0,)))


@pytest.mark.jax
@pytest.mark.torch
@pytest.mark.tensorflow
@pytest.mark.autograd
@pytest.mark.parametrize("which", [0, 1], ids=["exp", "conj(z)*z"])
def test_frameworks_agree_once_their_conventions_are_normalised(which: int) -> None:
    rng = np.random.default_rng(7)
    v = [rng.normal(size=(3, 2))]
    raw, normalised = {}, {}
    for framework in FRAMEWORK_FUNCTIONS:
        problem = _problem(framework, which)
        raw[framework] = np.asarray(problem.vjp(problem.primals, [pack(v[0])])[0])
        wrapped = Realified(problem)
        normalised[framework] = wrapped.vjp(wrapped.primals, v)[0]
    for framework in FRAMEWORK_FUNCTIONS:
        assert np.allclose(normalised[framework], normalised["jax"], rtol=1e-12, atol=1e-12)
    # unnormalised, torch and TensorFlow return the conjugate of JAX's and autograd's
    assert np.allclose(raw["torch"], raw["tensorflow"]) and np.allclose(raw["jax"], raw["autograd"])
    assert not np.allclose(raw["torch"], raw["jax"])


@pytest.mark.jax
@pytest.mark.torch
@pytest.mark.tensorflow
@pytest.mark.autograd
@pytest.mark.parametrize("framework", sorted(FRAMEWORK_FUNCTIONS))
def test_framework_functions_on_complex_inputs_pass(framework: str) -> None:
    for fn in FRAMEWORK_FUNCTIONS[framework](_load(framework)):
        report = check(fn, inputs=[Z], examples=2)
        assert report.passed, (framework, report.failures)


# -- correct complex ops at 20 seeds ---------------------------------------------------------------
# C -> C (neither holomorphic nor anti-holomorphic), C -> R, R -> C; three examples per seed
# (the strata of magnitudes 1, 1e3 and 1e-3, entries in distinct phase sectors), every path;
# ~7 s for the slowest
@pytest.mark.parametrize("name", ["z_abs2_ok", "abs2_ok", "rfft_ok"])
def test_correct_complex_ops_pass_at_20_seeds(name: str) -> None:
    for seed in range(20):
        report = check(OPS[name], seed=seed, dtypes=["complex128", "complex64"], examples=3,
                       paths=PATHS.get(name))
        assert report.passed, (name, seed, report.failures)


@pytest.mark.torch
@pytest.mark.autograd
def test_registry_op_and_its_references_agree_across_conventions() -> None:
    """gradcheck's conj against autograd's (the same convention) and torch's (the conjugate
    one) inside the one checker: every cell passes, agreement included."""
    report = check("conj", references=["numeric", "self", "autograd", "torch"],
                   dtypes=["complex128"], examples=2)
    assert report.passed, report.failures
    statuses = {(c.reference, c.status) for c in report.cells}
    assert {("autograd", "pass"), ("torch", "pass")} <= statuses


def test_mixed_real_and_complex_inputs_and_outputs() -> None:
    report = check(lambda x, z: (gnp.exp(x) * z, gnp.real(z) * x), inputs=["real", "complex"],
                   examples=3)
    assert report.passed, report.failures
