"""JAX functions the adapter once could not check: float32 and complex64 outputs, JAX's own
refusals to differentiate, JAX methods on fixed inputs, pytree outputs, and the user's x64
setting (scoped to the adapter's own calls, never switched on for the whole process)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from gradcheck.checker.api import check
from gradcheck.checker.report import Report
from gradcheck.oracles import get_oracle

pytestmark = pytest.mark.jax
jax: Any = get_oracle("jax").load()  # Unavailable, with the install hint, when missing
jnp = jax.numpy

X = np.array([-1.3, -0.4, 0.2, 0.9, 1.7])


def _not_unsupported(report: Report) -> list[str]:
    return [f"{f.kind} {f.path}: {f.message}" for f in report.findings if f.kind != "unsupported"]


def _messages(report: Report, kind: str) -> dict[str, str]:
    return {f.path: f.message for f in report.findings if f.kind == kind}


# -- 1. float32 and complex64 outputs ---------------------------------------------------------
def _sin32(x: Any) -> Any:
    return jnp.sin(x.astype(jnp.float32))


@jax.custom_vjp
def _sin32_wrong(x: Any) -> Any:
    return jnp.sin(x.astype(jnp.float32))


# the factor 1.1 is wrong; the cotangent is float32 and the result in x's dtype, as it must be
_sin32_wrong.defvjp(lambda x: (_sin32(x), x),
                    lambda x, g: ((1.1 * g * jnp.cos(x.astype(jnp.float32))).astype(x.dtype),))


@pytest.mark.parametrize(("fn", "inputs"), [
    (_sin32, ["real"]),
    (lambda z: jnp.exp(z).astype(jnp.complex64), ["complex"]),
], ids=["float32", "complex64"])
def test_a_float32_or_complex64_output_is_checked(fn: Any, inputs: list[str]) -> None:
    report = check(fn, inputs=inputs, examples=2)
    assert report.passed and not _not_unsupported(report), _not_unsupported(report)


def test_a_wrong_rule_with_a_float32_output_is_still_caught() -> None:
    report = check(_sin32_wrong, inputs=["real"], examples=2)
    assert ("mismatch", "vjp") in {(f.kind, f.path) for f in report.findings}, \
        _not_unsupported(report)


def test_the_oracle_takes_cotangents_in_the_float32_outputs_dtype() -> None:
    oracle = get_oracle("jax")
    (grad,) = oracle.vjp(lambda x: jnp.square(x.astype(jnp.float32)), [X], 0, np.ones_like(X))
    np.testing.assert_allclose(grad, 2 * X, rtol=1e-6)
    (hvp,) = oracle.hvp(lambda x: jnp.square(x.astype(jnp.float32)), [X], 0, [np.ones_like(X)],
                        np.ones_like(X))
    np.testing.assert_allclose(hvp, 2.0, rtol=1e-6)


# -- 2. JAX's own refusals are unsupported, in its words --------------------------------------
def _while_sin(x: Any) -> Any:
    def body(carry: Any) -> Any:
        i, v = carry
        return i + 1, jnp.sin(v)
    return jax.lax.while_loop(lambda c: c[0] < 3, body, (0, x))[1]


def _callback_sin(x: Any) -> Any:
    return jax.pure_callback(np.sin, jax.ShapeDtypeStruct(x.shape, x.dtype), x)


def test_a_while_loop_has_no_reverse_mode_and_its_forward_mode_is_checked() -> None:
    report = check(_while_sin, inputs=["real"], examples=2)
    assert not _not_unsupported(report), _not_unsupported(report)
    why = _messages(report, "unsupported")
    assert "vjp" in why and "Reverse-mode differentiation does not work for lax.while_loop" \
        in why["vjp"], why
    jvp = [c.status for c in report.cells if c.path == "jvp" and c.reference == "numeric"]
    assert jvp == ["pass"], [(c.path, c.reference, c.status) for c in report.cells]


def test_a_pure_callback_without_a_jvp_is_unsupported_in_jaxs_words() -> None:
    report = check(_callback_sin, inputs=["real"], examples=2)
    # every path is unsupported, so the checker says that nothing was compared (path "all")
    assert {f.path for f in report.findings if f.kind != "unsupported"} == {"all"}, \
        _not_unsupported(report)
    why = _messages(report, "unsupported")
    assert {"vjp", "jvp"} <= set(why), why
    assert all("Pure callbacks do not support JVP" in w for w in why.values()), why


# -- 3. fixed inputs are JAX arrays -----------------------------------------------------------
def test_a_fixed_input_is_a_jax_array() -> None:
    report = check(lambda x, y: x.at[0].set(0.0) * jnp.sin(y),
                   inputs=[np.linspace(0, 1, 3), "real"], wrt=[1], examples=2)
    assert report.passed and not _not_unsupported(report), _not_unsupported(report)


def test_fixed_inputs_keep_integer_and_bool_dtypes_and_floats_are_float64() -> None:
    seen: list[tuple[str, str]] = []

    def fn(x: Any, n: Any, mask: Any, w: Any) -> Any:
        seen.extend((type(a).__name__, str(a.dtype)) for a in (n, mask, w))
        return jnp.where(mask, x ** n, x) * w

    get_oracle("jax").vjp(fn, [X, np.array(3), X > 0, np.ones(5, np.float32)], 0,
                          np.ones_like(X))
    assert set(seen) == {("ArrayImpl", "int64"), ("ArrayImpl", "bool"),
                         ("ArrayImpl", "float64")}, seen


# -- 4. pytree outputs ------------------------------------------------------------------------
@pytest.mark.parametrize("fn", [
    lambda x: {"b": jnp.sin(x), "a": jnp.cos(x)},
    lambda x: ((jnp.sin(x), jnp.cos(x)), jnp.exp(x)),
    lambda x: [jnp.sin(x), {"k": (jnp.tanh(x),)}],
], ids=["dict", "nested tuple", "list of dict"])
def test_pytree_outputs_are_checked_leaf_by_leaf(fn: Any) -> None:
    report = check(fn, inputs=["real"], examples=2)
    assert report.passed and not _not_unsupported(report), _not_unsupported(report)


def test_a_dicts_leaves_come_in_jaxs_fixed_order() -> None:
    out = get_oracle("jax").forward(lambda x: {"b": jnp.sin(x), "a": jnp.cos(x)}, [X], 0)
    assert isinstance(out, tuple) and len(out) == 2
    np.testing.assert_allclose(out[0], np.cos(X))  # "a" before "b", as tree_flatten orders
    np.testing.assert_allclose(out[1], np.sin(X))


def test_a_wrong_rule_in_a_pytree_output_is_caught() -> None:
    @jax.custom_jvp
    def wrong(x: Any) -> Any:
        return jnp.sin(x)

    @wrong.defjvp
    def _(primals: Any, tangents: Any) -> Any:
        return wrong(primals[0]), 1.1 * jnp.cos(primals[0]) * tangents[0]

    report = check(lambda x: {"a": jnp.cos(x), "b": wrong(x)}, inputs=["real"], examples=2)
    assert ("mismatch", "jvp") in {(f.kind, f.path) for f in report.findings}


@pytest.mark.parametrize(("fn", "leaf", "dtype", "hint"), [
    (lambda x: (jnp.sin(x), jnp.argmax(x)), "[1]", "int64", "outputs=[0]"),
    (lambda x: (jnp.sin(x), x > 0), "[1]", "bool", "outputs=[0]"),
    (lambda x: {"i": jnp.argmax(x), "s": jnp.sin(x)}, "['i']", "int64", "return only"),
], ids=["argmax in a tuple", "bool in a tuple", "argmax in a dict"])
def test_an_integer_output_leaf_is_a_clear_error(fn: Any, leaf: str, dtype: str,
                                                 hint: str) -> None:
    report = check(fn, inputs=["real"], shapes="(4)", examples=1)
    assert not report.passed
    errors = [f.message for f in report.findings if f.kind == "error" and f.path == "forward"]
    assert errors and all(f"output {leaf} has dtype {dtype}" in m and hint in m
                          for m in errors), [f.message for f in report.findings]


def test_an_integer_output_left_out_with_outputs_is_checked() -> None:
    report = check(lambda x: (jnp.sin(x), jnp.argmax(x)), inputs=["real"], shapes="(4)",
                   outputs=[0], examples=2)
    assert report.passed and not _not_unsupported(report), _not_unsupported(report)


# -- 5. x64 is scoped to the adapter's calls --------------------------------------------------
@pytest.fixture
def x64_off() -> Iterator[None]:
    """The user's process without x64 (JAX's default); their setting is restored after."""
    before = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", False)
    try:
        yield
    finally:
        jax.config.update("jax_enable_x64", before)


def test_a_check_leaves_the_users_x64_setting_off(x64_off: None) -> None:
    get_oracle("jax").load()
    assert jnp.ones(3).dtype == np.float32
    report = check(jnp.sin, inputs=["real"], examples=2)
    assert report.passed
    assert not jax.config.jax_enable_x64 and jnp.ones(3).dtype == np.float32


def test_a_check_leaves_the_users_x64_setting_on(x64_off: None) -> None:
    jax.config.update("jax_enable_x64", True)
    check(jnp.sin, inputs=["real"], examples=1)
    assert jax.config.jax_enable_x64 and jnp.ones(3).dtype == np.float64


def test_the_adapter_computes_in_float64_with_x64_off(x64_off: None) -> None:
    tiny = 1e-12  # lost in float32
    out = get_oracle("jax").forward(lambda x: x + tiny, [X], 0)
    assert out.dtype == np.float64
    np.testing.assert_array_equal(out, X + tiny)


def test_a_jitted_function_already_compiled_in_float32_still_works(x64_off: None) -> None:
    f = jax.jit(lambda x: jnp.sin(x) * x)
    assert f(jnp.ones(2)).dtype == np.float32
    report = check(f, inputs=["real"], examples=2)
    assert report.passed and not _not_unsupported(report), _not_unsupported(report)
    assert f(jnp.ones(2)).dtype == np.float32


def test_the_report_is_the_same_whatever_the_users_x64_setting(x64_off: None) -> None:
    off = check(jnp.tanh, inputs=["real"], examples=2, seed=3).to_json()
    jax.config.update("jax_enable_x64", True)
    on = check(jnp.tanh, inputs=["real"], examples=2, seed=3).to_json()
    assert off == on


def test_a_path_jax_cannot_compute_is_said_once() -> None:
    import jax
    import jax.numpy as jnp

    @jax.custom_vjp
    def f(x: Any) -> Any:
        return jnp.sin(x)

    f.defvjp(lambda x: (jnp.sin(x), x), lambda x, g: (g * jnp.cos(x),))
    report = check(f, inputs=["real"], examples=2)
    said = [f.path for f in report.findings if f.kind == "unsupported"]
    assert sorted(said) == ["hvp_fwd_rev", "hvp_rev_fwd", "jvp"], report.findings
