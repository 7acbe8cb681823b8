"""Finite differences over R²ⁿ for the complex tests, in gradcheck's (JAX's) convention.

For inputs ``xs`` (real or complex arrays) and a function ``f(*xs) -> array``:

``numeric_jvp``   (f(x + h t) - f(x - h t)) / 2h for a (complex) tangent t;
``numeric_vjp``   the transpose of the JVP under Re(sum(a * b)): for a complex input,
                  Re(vjp) = Re(sum(ct * dF/dRe x)) and Im(vjp) = -Re(sum(ct * dF/dIm x)).
``engine_vjp`` / ``engine_jvp`` run the same function on the engine (tape, accumulator);
``engine_hvp`` a real loss's Hessian-vector product, tape over tape.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import gradcheck as gc
import gradcheck.numpy as gnp

H = 1e-6


def _plus(xs: Sequence[np.ndarray], k: int, delta: Any) -> list[np.ndarray]:
    out = [np.array(x) for x in xs]
    out[k] = out[k] + delta
    return out


def numeric_jvp(f: Callable[..., Any], xs: Sequence[np.ndarray],
                ts: Sequence[np.ndarray]) -> np.ndarray:
    up = f(*[x + H * t for x, t in zip(xs, ts, strict=True)])
    down = f(*[x - H * t for x, t in zip(xs, ts, strict=True)])
    return (np.asarray(up) - np.asarray(down)) / (2 * H)


def numeric_vjp(f: Callable[..., Any], xs: Sequence[np.ndarray],
                ct: np.ndarray) -> list[np.ndarray]:
    grads = []
    for k, x in enumerate(xs):
        g = np.zeros(np.shape(x), dtype=np.asarray(x).dtype)
        for idx in np.ndindex(*np.shape(x)):
            e = np.zeros(np.shape(x))
            e[idx] = 1.0
            d_re = numeric_jvp(f, xs, [e if i == k else np.zeros(np.shape(v))
                                       for i, v in enumerate(xs)])
            value = np.sum(np.real(ct * d_re))
            if np.iscomplexobj(x):
                d_im = numeric_jvp(f, xs, [1j * e if i == k else np.zeros(np.shape(v))
                                           for i, v in enumerate(xs)])
                value = value - 1j * np.sum(np.real(ct * d_im))
            g[idx] = value
        grads.append(g)
    return grads


def engine_vjp(f: Callable[..., Any], xs: Sequence[np.ndarray], ct: np.ndarray) -> list[Any]:
    ts = [gc.tensor(x) for x in xs]
    with gc.GradientTape() as tape:
        tape.watch(ts)
        y = f(*ts)
    grads = tape.gradient(y, ts, output_gradients=ct, unconnected_gradients="zero")
    return [np.asarray(g) for g in grads]


def engine_jvp(f: Callable[..., Any], xs: Sequence[np.ndarray], tangents: Sequence[Any],
               force_transpose: bool = False) -> np.ndarray:
    ts = [gc.tensor(x) for x in xs]
    with gc.ForwardAccumulator(ts, [np.asarray(t) for t in tangents],
                               force_transpose=force_transpose) as acc:
        y = f(*ts)
    return np.asarray(acc.jvp(y, unconnected_gradients="zero"))


def engine_hvp(loss: Callable[[Any], Any], z: np.ndarray, u: np.ndarray) -> np.ndarray:
    """The gradient of Re(sum(grad(loss)(z) * u)), tape over tape: a Hessian-vector product
    of a real loss of complex ``z`` along ``u`` in the engine's convention."""
    t = gc.tensor(z)
    with gc.GradientTape() as outer:
        outer.watch(t)
        with gc.GradientTape() as inner:
            inner.watch(t)
            value = loss(t)
        gu = gnp.sum(gnp.real(inner.gradient(value, t) * u))
    return np.asarray(outer.gradient(gu, t))


def random_like(rng: np.random.Generator, x: Any) -> np.ndarray:
    shape = np.shape(x)
    if np.iscomplexobj(x):
        return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
    return rng.standard_normal(shape)


def assert_derivatives(f: Callable[..., Any], xs: Sequence[np.ndarray], seed: int = 0,
                       rtol: float = 1e-6, numpy_f: Callable[..., Any] | None = None) -> None:
    """The engine's VJP, native JVP and transposed JVP of ``f`` against finite differences
    of ``numpy_f`` (default ``f`` on arrays), plus the exact dot-product identity."""
    rng = np.random.default_rng(seed)
    nf = numpy_f or f
    out = np.asarray(nf(*xs))
    ct = random_like(rng, out)
    tangents = [random_like(rng, x) for x in xs]
    scale = max(1.0, float(np.max(np.abs(out))))
    vjp = engine_vjp(f, xs, ct)
    for got, want, x in zip(vjp, numeric_vjp(nf, xs, ct), xs, strict=True):
        assert got.dtype == np.asarray(x).dtype, (got.dtype, np.asarray(x).dtype)
        np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * scale * 10)
    want_t = numeric_jvp(nf, xs, tangents)
    for transpose in (False, True):
        jvp = engine_jvp(f, xs, tangents, force_transpose=transpose)
        assert jvp.dtype == out.dtype
        np.testing.assert_allclose(jvp, want_t, rtol=rtol, atol=rtol * scale * 10)
    # Re<ct, J t> == Re<vjp(ct), t> under the bilinear pairing, to rounding
    left = np.sum(np.real(ct * engine_jvp(f, xs, tangents)))
    right = sum(np.sum(np.real(g * t)) for g, t in zip(vjp, tangents, strict=True))
    np.testing.assert_allclose(left, right, rtol=1e-9, atol=1e-9 * scale)
