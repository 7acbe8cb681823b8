"""JAX functions checked with ``gradcheck.check``, and JAX as a reference.

The broken ``custom_jvp`` / ``custom_vjp`` functions live here (never in the shipped
registry); each row says which finding the checker must report.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from gradcheck.checker.api import check
from gradcheck.checker.report import Report
from gradcheck.oracles import get_oracle
from gradcheck.oracles.targets import framework_of

pytestmark = pytest.mark.jax
jax: Any = get_oracle("jax").load()  # Unavailable, with the install hint, when missing
jnp = jax.numpy

X = np.array([-1.3, -0.4, 0.2, 0.9, 1.7])
RNG = np.random.default_rng(0)
A, B = RNG.normal(size=(3, 4)), RNG.normal(size=(4,))


def _kinds(report: Report) -> set[tuple[str, str]]:
    return {(f.kind, f.path) for f in report.findings}


def _plain(x: Any, y: Any) -> Any:
    return jnp.tanh(x) * y + jnp.exp(-x * x)


@jax.custom_jvp
def softsq(x: Any) -> Any:
    return jnp.log1p(x * x)


@softsq.defjvp
def _softsq_jvp(primals: Any, tangents: Any) -> Any:
    (x,), (t,) = primals, tangents
    return softsq(x), t * 2 * x / (1 + x * x)


@jax.custom_jvp
def softsq_wrong(x: Any) -> Any:
    return jnp.log1p(x * x)


@softsq_wrong.defjvp
def _softsq_wrong_jvp(primals: Any, tangents: Any) -> Any:
    (x,), (t,) = primals, tangents
    return softsq_wrong(x), t * x / (1 + x * x)  # the factor 2 forgotten


def _vjp_sin(bwd: Any) -> Any:
    @jax.custom_vjp
    def f(x: Any) -> Any:
        return jnp.sin(x)

    f.defvjp(lambda x: (jnp.sin(x), x), bwd)
    return f


sin_vjp = _vjp_sin(lambda x, g: (g * jnp.cos(x),))
sin_vjp_wrong_sign = _vjp_sin(lambda x, g: (jnp.where(x < 0, -g, g) * jnp.cos(x),))
sin_vjp_affine = _vjp_sin(lambda x, g: ((g + 0.5) * jnp.cos(x),))
sin_vjp_squared = _vjp_sin(lambda x, g: (g * g * jnp.cos(x),))


def _vjp_scale(reduce: bool) -> Any:
    @jax.custom_vjp
    def scale(x: Any, b: Any) -> Any:
        return x * b

    def bwd(res: Any, g: Any) -> Any:
        x, b = res
        return g * b, jnp.sum(g * x, axis=0) if reduce else g * x

    scale.defvjp(lambda x, b: (x * b, (x, b)), bwd)
    return scale


#: (target, inputs, why it is right)
CORRECT = [
    (jnp.sin, (X,), "a jax.numpy function"),
    (_plain, (A, B), "a plain function, broadcasting"),
    (jax.jit(_plain), (A, B), "a jitted function"),
    (softsq, (X,), "a custom_jvp function"),
    (sin_vjp, (X,), "a custom_vjp function"),
    (_vjp_scale(True), (A, B), "a custom_vjp reducing over broadcast rows"),
    (jnp.sin, (jnp.asarray(X),), "inputs given as JAX arrays"),
]


@pytest.mark.parametrize(("fn", "inputs", "why"), CORRECT, ids=[c[2] for c in CORRECT])
def test_correct_functions_pass(fn: Any, inputs: Any, why: str) -> None:
    report = check(fn, inputs=inputs, examples=2)
    assert framework_of(fn) == "jax" and report.family == "jax"
    failing = [f for f in report.findings if f.kind != "unsupported"]
    assert report.passed and not failing, [f.message for f in failing]


def test_a_custom_vjp_function_has_no_forward_mode_in_jaxs_words() -> None:
    report = check(sin_vjp, inputs=(X,), examples=1)
    why = {f.message for f in report.findings if f.kind == "unsupported" and f.path == "jvp"}
    assert why and all("can't apply forward-mode autodiff (jvp) to a custom_vjp function"
                       in w for w in why), why


#: (broken function, inputs, the (kind, path) the checker must report, what is broken)
BROKEN = [
    (softsq_wrong, (X,), ("mismatch", "jvp"), "custom_jvp with a wrong rule"),
    (sin_vjp_wrong_sign, (X,), ("mismatch", "vjp"), "custom_vjp bwd: wrong sign for x < 0"),
    (sin_vjp_affine, (X,), ("nonlinear", "vjp"), "custom_vjp bwd affine in the cotangent"),
    (_vjp_scale(False), (A, B), ("shape", "vjp"), "custom_vjp bwd without the reduction"),
    (sin_vjp_squared, (X,), ("value_leak", "double_vjp"), "custom_vjp bwd quadratic in g"),
]


@pytest.mark.parametrize(("fn", "inputs", "finding", "why"), BROKEN, ids=[b[3] for b in BROKEN])
def test_broken_functions_are_caught(fn: Any, inputs: Any, finding: tuple[str, str],
                                     why: str) -> None:
    report = check(fn, inputs=inputs, examples=2)
    assert not report.passed
    assert finding in _kinds(report), sorted(_kinds(report))


@pytest.mark.parametrize("op", ["sin", "exp", "tanh", "sum", "linalg.inv", "linalg.det"])
def test_jax_reference_agrees_on_registry_ops(op: str) -> None:
    report = check(op, references=["numeric", "self", "jax"], examples=2)
    cells = [c for c in report.cells if c.reference == "jax"]
    assert cells and all(c.status == "pass" for c in cells), \
        [(c.path, c.status, c.note) for c in cells]
    assert report.passed


@pytest.mark.parametrize("fn", [softsq, sin_vjp], ids=["custom_jvp", "custom_vjp"])
def test_correct_custom_rules_pass_at_20_examples(fn: Any) -> None:
    # each example draws new directions (and dummies) at the given point
    report = check(fn, inputs=(X,), examples=20)
    assert report.passed and not [f for f in report.findings if f.kind != "unsupported"]
