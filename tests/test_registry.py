"""Every registered op, from its declared metadata: the registry's own tests.

For each op, on inputs drawn from its declared domains and shapes: the forward
matches its declared reference; the VJP matches a central-difference Jacobian;
the native JVP matches the VJP by the dot-product identity; the transpose and
double-VJP JVPs agree with it; the three Hessian-vector nestings agree; float32
stays float32.  (The checker, ``gradcheck.check``, does all this and more; this
file keeps the registry honest on its own.)
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings

import gradcheck as gc
import gradcheck.numpy as gnp
from gradcheck.checker.numeric import NonFiniteError, numeric_jacobian_with_error
from gradcheck.checker.sampling import examples

OPS = list(gc.default_registry)
#: Ops with complex inputs or outputs.  This file's numerics are real; those ops are checked by
#: gradcheck.check, which sees C^n as R^2n (test_complex_valued_ops_pass_the_checker), and
#: against finite differences in tests/test_complex_engine.py and tests/test_ops_fft.py.
COMPLEX_VALUED = [op for op in OPS if op.family in ("fft", "complex") or any(
    type(d).__module__ == "gradcheck.domains_complex" for d in op.meta.get("inputs", ()))]
REAL_VALUED = [op for op in OPS if op not in COMPLEX_VALUED]
SETTINGS = settings(max_examples=4, derandomize=True, deadline=None, database=None,
                    suppress_health_check=list(HealthCheck))


def diff_argnums(op, args):
    domains = op.meta.get("inputs") or ()
    return [i for i, a in enumerate(args)
            if i not in op.nondiff_argnums
            and (i >= len(domains) or domains[i].differentiable)
            and np.asarray(a).dtype.kind == "f"]


def as_tuple(out):
    return tuple(np.asarray(o) for o in out) if isinstance(out, tuple) else (np.asarray(out),)


def call(op, args, params):
    """The op as a function of its differentiable inputs only."""
    def f(*xs):
        full = list(args)
        for i, x in zip(diff_argnums(op, args), xs, strict=False):
            full[i] = x
        return op(*full, **params)
    return f


def finite_outputs(op, args, params):
    with np.errstate(all="ignore"):
        outs = as_tuple(op(*args, **params))
    return all(np.all(np.isfinite(o)) for o in outs)


def flat(values):
    return np.concatenate([np.ravel(np.asarray(v, dtype=np.float64)) for v in values]) \
        if values else np.zeros(0)


@pytest.mark.parametrize("op", [op for op in OPS if "reference" in op.meta],
                         ids=lambda op: op.name)
def test_forward_matches_reference(op):
    """Ops whose forward is not itself the numpy/scipy function declare a reference."""
    reference = op.meta["reference"]

    @SETTINGS
    @given(examples(op))
    def check(ex):
        assume(finite_outputs(op, ex.args, ex.params))
        got, want = as_tuple(op(*ex.args, **ex.params)), as_tuple(reference(*ex.args, **ex.params))
        for g, w in zip(got, want, strict=False):
            np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12, err_msg=op.name)

    check()


@pytest.mark.parametrize("op", REAL_VALUED, ids=lambda op: op.name)
def test_vjp_jvp_against_numeric_and_each_other(op):
    @SETTINGS
    @given(examples(op))
    def check(ex):
        args = [np.asarray(a) for a in ex.args]
        assume(finite_outputs(op, args, ex.params))
        argnums = diff_argnums(op, args)
        assume(argnums)
        f = call(op, args, ex.params)
        xs = [args[i] for i in argnums]
        rng = np.random.default_rng(ex.seed)
        outs = as_tuple(f(*xs))
        for o in outs:  # dtype is preserved (unless the op's job is to change it)
            if "dtype" in ex.params:
                break
            assert o.dtype == np.dtype(ex.dtype), f"{op.name}: output dtype {o.dtype}"
        us = [rng.standard_normal(x.shape).astype(x.dtype) for x in xs]
        vs = [rng.standard_normal(o.shape).astype(o.dtype) for o in outs]
        v = vs[0] if len(vs) == 1 else tuple(vs)
        _, vjp_fn = gc.vjp(f, *xs)
        cts = vjp_fn(v)
        for x, ct in zip(xs, cts, strict=False):
            assert ct.shape == x.shape and ct.dtype == x.dtype, op.name
        # VJP against the central-difference Jacobian (float64 reference).
        x64 = [x.astype(np.float64) for x in xs]
        f64 = call(op, [np.asarray(a, np.float64) if np.asarray(a).dtype.kind == "f" else a
                        for a in args], ex.params)
        try:
            numeric = numeric_jacobian_with_error(lambda *z: flat(as_tuple(f64(*z))), x64,
                                                  list(range(len(x64))))
        except NonFiniteError:
            assume(False)
        # Near an undeclared jump (fmod where x/y is an integer) the extrapolation does not
        # converge; like the checker, re-sample instead of comparing with a broken reference.
        assume(numeric.converged)
        jacs = numeric.jacobians
        single = any(a.dtype == np.float32 for a in (*xs, *outs))
        rtol = 2e-2 if single else 1e-6
        for jac, ct, x in zip(jacs, cts, xs, strict=False):
            expected = flat(vs) @ jac.reshape(flat(vs).size, x.size)
            np.testing.assert_allclose(flat([ct]), expected, rtol=rtol,
                                       atol=rtol * (1 + np.abs(expected).max(initial=0)),
                                       err_msg=f"{op.name}: VJP vs numeric")
        # JVP (native, transpose, double-VJP) against the VJP: <v, J u> = <J^T v, u>.
        lhs = sum(float(np.sum(flat([c]) * flat([u]))) for c, u in zip(cts, us, strict=False))
        for method in ("native", "transpose", "double_vjp"):
            _, t = gc.jvp(f, xs, us, method=method)
            ts = t if isinstance(t, tuple) else (t,)
            rhs = float(np.sum(flat(vs) * flat([np.asarray(x) for x in ts])))
            tol = (1e-3 if single else 1e-9) * (1 + abs(lhs))
            assert abs(lhs - rhs) <= tol, f"{op.name}: {method} JVP {rhs} vs VJP {lhs}"

    check()


@pytest.mark.parametrize("op", [op for op in REAL_VALUED
                                if not op.first_order_only and not op.linear],
                         ids=lambda op: op.name)
def test_second_order_paths_agree(op):
    @SETTINGS
    @given(examples(op, "float64"))
    def check(ex):
        args = [np.asarray(a) for a in ex.args]
        assume(finite_outputs(op, args, ex.params))
        argnums = diff_argnums(op, args)
        assume(argnums)
        base = call(op, args, ex.params)
        n_out = len(as_tuple(base(*[args[i] for i in argnums])))

        def f(*xs):  # a scalar-friendly single output
            out = base(*xs)
            return out if n_out == 1 else sum(gnp.sum(o) for o in out)

        xs = [args[i] for i in argnums]
        rng = np.random.default_rng(ex.seed + 1)
        us = [rng.standard_normal(x.shape) for x in xs]
        w = rng.standard_normal(np.shape(np.asarray(f(*xs))))
        results = {m: gc.hvp(f, xs, us, mode=m, cotangent=w)
                   for m in ("fwd_over_rev", "rev_over_rev", "rev_over_fwd")}
        ref = results["rev_over_rev"]
        for mode, got in results.items():
            for g, r in zip(got, ref, strict=False):
                np.testing.assert_allclose(g.numpy(), r.numpy(), rtol=1e-8, atol=1e-9 * (
                    1 + np.abs(r.numpy()).max(initial=0)), err_msg=f"{op.name}: {mode}")

    check()


@pytest.mark.parametrize("op", COMPLEX_VALUED, ids=lambda op: op.name)
def test_complex_valued_ops_pass_the_checker(op):
    report = gc.check(op.name, examples=3, dtypes=["float64", "float32"],
                      references=["numeric", "self"])
    assert report.passed, [(c.path, c.reference, c.status, c.note) for c in report.cells
                           if c.status not in ("pass", "skip")]
