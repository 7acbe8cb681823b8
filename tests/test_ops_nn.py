"""The neural-network ops (gradcheck/ops/nn.py and conv.py).

Each case runs the checks of tests/op_harness.py: forward against a direct formula; every
derivative path by ``gradcheck.check`` at the case's point (float64, float32, and autograd's
declared equivalent where the op has one).  The references for convolution and pooling are
written with one-hot selection tensors and einsum (a different algorithm from the ops' window
views).  Then:
stability at |x| = 1e3, the transposition relations between conv2d and its gradient ops,
TensorFlow's conventions (SAME padding, pooling ties, argument order), and clear errors.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
import scipy.special as sp
from op_harness import (
    HVP_MODES,
    AutogradChecks,
    OpCase,
    PathChecks,
    SampledMetadataChecks,
    assert_close,
    assert_compared,
    check_at,
    check_grad_of,
    check_linear_in_cotangent,
    engine_vjp,
    import_tensorflow,
    like,
    seed_for,
)

import gradcheck as gc
import gradcheck.nn as gnn
from gradcheck import default_registry
from gradcheck.domains import REAL, BoolMask, Domain, Interval, IntLabels
from gradcheck.engine.tensor import value_of


# ---------------------------------------------------------------------------------------
# References, written once for any numpy-like ``xp`` (run in numpy)
# ---------------------------------------------------------------------------------------
def _lse(x: Any, axis: Any, xp: Any) -> Any:
    return sp.logsumexp(x, axis=axis, keepdims=True)


def ref_softmax(x: Any, axis: Any = -1, xp: Any = np) -> Any:
    return xp.exp(x - _lse(x, axis, xp))


def ref_log_softmax(x: Any, axis: Any = -1, xp: Any = np) -> Any:
    return x - _lse(x, axis, xp)


def ref_softmax_grad(dy: Any, y: Any, axis: Any = -1, xp: Any = np) -> Any:
    return (dy - xp.sum(dy * y, axis=axis, keepdims=True)) * y


def ref_log_softmax_grad(dy: Any, y: Any, axis: Any = -1, xp: Any = np) -> Any:
    return dy - xp.sum(dy, axis=axis, keepdims=True) * xp.exp(y)


def ref_norm(x: Any, gamma: Any, beta: Any, axis: Any = -1, eps: float = 1e-5,
             xp: Any = np) -> Any:
    mu = xp.mean(x, axis=axis, keepdims=True)
    var = xp.mean((x - mu) ** 2, axis=axis, keepdims=True)
    return (x - mu) / xp.sqrt(var + eps) * gamma + beta


def _two(v: Any) -> tuple[int, int]:
    t = tuple(np.atleast_1d(v).tolist())
    return (t[0], t[0]) if len(t) == 1 else (t[0], t[1])


def _axis_plan(size: int, kernel: int, stride: int, dilation: int,
               padding: Any) -> tuple[int, int]:
    """(padding before, output size) for one axis, TensorFlow's rules written out."""
    span = (kernel - 1) * dilation + 1
    if padding == "VALID":
        before = after = 0
    elif padding == "SAME":
        total = max((math.ceil(size / stride) - 1) * stride + span - size, 0)
        before, after = total // 2, total - total // 2
    else:
        before, after = padding
    return before, (size + before + after - span) // stride + 1


def selections(size: tuple[int, int], kernel: tuple[int, int], strides: Any = 1,
               padding: Any = "VALID", dilations: Any = 1) -> tuple[np.ndarray, np.ndarray]:
    """One-hot P[h, i, a] = 1 where output row i's kernel row a reads input row h (and Q for
    columns); padding reads nothing."""
    if isinstance(padding, str):
        pads: list[Any] = [padding, padding]
    else:
        p = np.broadcast_to(np.asarray(padding).reshape(-1, 1) if np.ndim(padding) == 1
                            else np.asarray(padding), (2, 2))
        pads = [tuple(p[0]), tuple(p[1])]
    out = []
    for k in range(2):
        s, d = _two(strides)[k], _two(dilations)[k]
        before, n_out = _axis_plan(size[k], kernel[k], s, d, pads[k])
        m = np.zeros((size[k], n_out, kernel[k]))
        for i in range(n_out):
            for a in range(kernel[k]):
                h = i * s + a * d - before
                if 0 <= h < size[k]:
                    m[h, i, a] = 1.0
        out.append(m)
    return out[0], out[1]


def _geometry(p: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in p.items() if k in ("strides", "padding", "dilations")}


def ref_conv2d(x: Any, f: Any, xp: Any = np, **p: Any) -> Any:
    P, Q = selections(np.shape(x)[1:3], np.shape(f)[:2], **_geometry(p))
    return xp.einsum("hia,wjb,nhwc,abco->nijo", P, Q, x, f)


def ref_backprop_input(f: Any, dy: Any, input_sizes: Any, xp: Any = np, **p: Any) -> Any:
    P, Q = selections(input_sizes[1:3], np.shape(f)[:2], **_geometry(p))
    return xp.einsum("hia,wjb,nijo,abco->nhwc", P, Q, dy, f)


def ref_backprop_filter(x: Any, dy: Any, filter_sizes: Any, xp: Any = np, **p: Any) -> Any:
    P, Q = selections(np.shape(x)[1:3], filter_sizes[:2], **_geometry(p))
    return xp.einsum("hia,wjb,nhwc,nijo->abco", P, Q, x, dy)


def ref_conv1d(x: Any, f: Any, stride: Any = 1, padding: Any = "VALID", dilations: Any = 1,
               xp: Any = np) -> Any:
    pad = padding if isinstance(padding, str) else ((0, 0), tuple(_two(padding)))
    P, Q = selections((1, np.shape(x)[1]), (1, np.shape(f)[0]), (1, stride), pad,
                      (1, dilations))
    return xp.einsum("wjb,nwc,bco->njo", Q, x, f)


def _pool_sel(size: tuple[int, int], ksize: Any, strides: Any,
              padding: str) -> tuple[np.ndarray, np.ndarray]:
    return selections(size, _two(ksize), strides, padding)


def ref_avg_pool(x: Any, ksize: Any, strides: Any, padding: str = "VALID",
                 xp: Any = np) -> Any:
    P, Q = _pool_sel(np.shape(x)[1:3], ksize, strides, padding)
    counts = np.einsum("hia,wjb->ij", P, Q)[None, :, :, None]
    return xp.einsum("hia,wjb,nhwc->nijc", P, Q, x) / counts


def ref_avg_pool_grad(g: Any, orig_input_shape: Any, ksize: Any, strides: Any,
                      padding: str = "VALID", xp: Any = np) -> Any:
    P, Q = _pool_sel(orig_input_shape[1:3], ksize, strides, padding)
    counts = np.einsum("hia,wjb->ij", P, Q)[None, :, :, None]
    return xp.einsum("hia,wjb,nijc->nhwc", P, Q, g / counts)


def _masked_windows(x: Any, ksize: Any, strides: Any, padding: str, xp: Any) -> Any:
    """Windows (n, i, j, a, b, c) with the padding at -1e300 (never a maximum)."""
    P, Q = _pool_sel(np.shape(x)[1:3], ksize, strides, padding)
    valid = np.einsum("hia,wjb->ijab", P, Q)[None, ..., None]
    return xp.einsum("hia,wjb,nhwc->nijabc", P, Q, x) + (valid - 1.0) * 1e300, (P, Q)


def ref_max_pool(x: Any, ksize: Any, strides: Any, padding: str = "VALID",
                 xp: Any = np) -> Any:
    return xp.max(_masked_windows(x, ksize, strides, padding, xp)[0], axis=(3, 4))


def _argmax_one_hot(x: Any, ksize: Any, strides: Any, padding: str) -> tuple[Any, Any]:
    """A[n, i, j, a, b, c] = 1 at each window's first maximum in row-major order."""
    win, sel = _masked_windows(np.asarray(x), ksize, strides, padding, np)
    n, i, j, ka, kb, c = win.shape
    flat = np.moveaxis(win, 5, 3).reshape(n, i, j, c, ka * kb)
    hot = np.eye(ka * kb)[np.argmax(flat, axis=-1)].reshape(n, i, j, c, ka, kb)
    return np.moveaxis(hot, 3, 5), sel


def ref_max_pool_grad(x: Any, g: Any, ksize: Any, strides: Any, padding: str = "VALID",
                      xp: Any = np) -> Any:
    hot, (P, Q) = _argmax_one_hot(x, ksize, strides, padding)
    return xp.einsum("hia,wjb,nijabc,nijc->nhwc", P, Q, hot, g)


def ref_max_pool_grad_grad(x: Any, w: Any, ksize: Any, strides: Any, padding: str = "VALID",
                           xp: Any = np) -> Any:
    hot, (P, Q) = _argmax_one_hot(x, ksize, strides, padding)
    return xp.einsum("hia,wjb,nijabc,nhwc->nijc", P, Q, hot, w)


# ---------------------------------------------------------------------------------------
# The cases
# ---------------------------------------------------------------------------------------
def _dropout(x: Any, mask: Any, rate: float) -> Any:
    return x * mask / (1 - rate)


UNIT = Interval(0.0, 1.0)
NO_EQUIVALENT = "the op declares no autograd equivalent"
S3 = (2, 3, 2)
X4, F4 = (2, 4, 3, 2), (2, 2, 2, 3)  # NHWC input, HWIO filter
GEOMETRIES = [
    {"strides": 1, "padding": "VALID", "dilations": 1},
    {"strides": 2, "padding": "SAME", "dilations": 1},
    {"strides": (1, 2), "padding": ((1, 0), (0, 2)), "dilations": (2, 1)},
    {"strides": 1, "padding": 1, "dilations": 2},
]


def _conv_cases() -> list[OpCase]:
    cases = []
    for g in GEOMETRIES:
        out = ref_conv2d(np.zeros(X4), np.zeros(F4), **g).shape
        cases += [
            OpCase("nn.conv2d", lambda x, f, **p: ref_conv2d(x, f, **p), g, (X4, F4),
                   no_autograd=NO_EQUIVALENT),
            OpCase("nn.conv2d_backprop_input", ref_backprop_input,
                   {"input_sizes": X4, **g}, (F4, out), no_autograd=NO_EQUIVALENT),
            OpCase("nn.conv2d_backprop_filter", ref_backprop_filter, {"filter_sizes": F4, **g},
                   (X4, out), no_autograd=NO_EQUIVALENT),
        ]
    return cases


POOLS = [
    {"ksize": 2, "strides": 1, "padding": "VALID"},
    {"ksize": 3, "strides": 2, "padding": "SAME"},
    {"ksize": (2, 1), "strides": (2, 1), "padding": "SAME"},
]
P4 = (2, 4, 5, 2)


def _pool_cases() -> list[OpCase]:
    cases = []
    for g in POOLS:
        out = ref_avg_pool(np.zeros(P4), **g).shape
        cases += [
            OpCase("nn.avg_pool2d", ref_avg_pool, g, (P4,), no_autograd=NO_EQUIVALENT),
            OpCase("nn.avg_pool2d_grad", ref_avg_pool_grad,
                   {"orig_input_shape": P4, **g}, (out,), no_autograd=NO_EQUIVALENT),
            OpCase("nn.max_pool2d", ref_max_pool, g, (P4,), no_autograd=NO_EQUIVALENT),
            OpCase("nn.max_pool2d_grad", ref_max_pool_grad, g, (P4, out),
                   no_autograd=NO_EQUIVALENT),
            OpCase("nn.max_pool2d_grad_grad", ref_max_pool_grad_grad, g, (P4, P4),
                   no_autograd=NO_EQUIVALENT),
        ]
    return cases


CASES = [
    OpCase("nn.softmax", ref_softmax, shapes=((2, 3),)),
    OpCase("nn.softmax", ref_softmax, {"axis": 1}, (S3,)),
    OpCase("nn.softmax", ref_softmax, {"axis": (0, 2)}, (S3,)),
    OpCase("nn.softmax_grad", ref_softmax_grad, {},
           ((2, 3), (2, 3)), (REAL, UNIT)),
    OpCase("nn.softmax_grad", ref_softmax_grad, {"axis": 0},
           (S3, S3), (REAL, UNIT)),
    OpCase("nn.log_softmax", ref_log_softmax, shapes=((2, 3),)),
    OpCase("nn.log_softmax", ref_log_softmax, {"axis": 0}, (S3,)),
    OpCase("nn.log_softmax_grad", ref_log_softmax_grad, {},
           ((2, 3), (2, 3)), (REAL, Interval(-4.0, 0.0))),
    OpCase("nn.log_softmax_grad", ref_log_softmax_grad,
           {"axis": (0, 1)}, (S3, S3), (REAL, Interval(-4.0, 0.0))),
    OpCase("nn.layer_norm", ref_norm, {}, ((2, 4), (4,), (4,))),
    OpCase("nn.layer_norm", ref_norm, {"axis": (1, 2), "eps": 1e-3},
           (S3, (3, 2), (2,))),
    OpCase("nn.batch_norm", lambda x, g, b, **p: ref_norm(x, g, b, **{"axis": 0, **p}), {},
           ((4, 3), (3,), (3,))),
    OpCase("nn.batch_norm", ref_norm, {"axis": (0, 1, 2)},
           ((2, 3, 2, 2), (2,), (2,))),
    OpCase("nn.embedding", lambda t, i: t[i], {}, ((4, 3), (2, 3)),
           (REAL, IntLabels(4))),
    OpCase("nn.embedding", lambda t, i: t[i], {}, ((5,), (6,)),
           (REAL, IntLabels(5))),
    OpCase("nn.dropout", _dropout, {"rate": 0.5}, ((2, 3), (2, 3)), (REAL, BoolMask())),
    OpCase("nn.dropout", _dropout, {"rate": 0.2}, ((2, 3), (3,)), (REAL, BoolMask())),
    *_conv_cases(),
    OpCase("nn.conv1d", ref_conv1d, {}, ((2, 5, 2), (2, 2, 3)), no_autograd=NO_EQUIVALENT),
    OpCase("nn.conv1d", ref_conv1d, {"stride": 2, "padding": "SAME"},
           ((2, 5, 2), (3, 2, 3)), no_autograd=NO_EQUIVALENT),
    OpCase("nn.conv1d", ref_conv1d, {"padding": (1, 2), "dilations": 2},
           ((1, 4, 3), (2, 3, 2)), no_autograd=NO_EQUIVALENT),
    *_pool_cases(),
]


MODULE_OPS = ["nn.softmax", "nn.softmax_grad", "nn.log_softmax", "nn.log_softmax_grad",
              "nn.layer_norm", "nn.batch_norm", "nn.embedding", "nn.dropout", "nn.conv1d",
              "nn.conv2d", "nn.conv2d_backprop_input", "nn.conv2d_backprop_filter",
              "nn.avg_pool2d", "nn.avg_pool2d_grad", "nn.max_pool2d", "nn.max_pool2d_grad",
              "nn.max_pool2d_grad_grad"]


def test_every_op_of_the_modules_has_cases() -> None:
    from gradcheck.ops import conv, nn

    declared = {v.name for m in (nn, conv) for v in vars(m).values()
                if isinstance(v, gc.Op) and v.family == "nn"}
    assert declared == set(MODULE_OPS) == {c.name for c in CASES}


class TestNNOps(PathChecks, AutogradChecks, SampledMetadataChecks):
    cases = CASES
    sampled_ops = MODULE_OPS
    sampled_dtypes = ("float64", "float32")
    sampled_examples = 2
    sampled_without_autograd = {name: NO_EQUIVALENT for name in MODULE_OPS
                                if name.startswith(("nn.conv", "nn.avg_pool", "nn.max_pool"))}


def test_gradient_op_metadata_points_both_ways() -> None:
    pairs = {"nn.softmax": "nn.softmax_grad", "nn.log_softmax": "nn.log_softmax_grad",
             "nn.conv2d": "nn.conv2d_backprop_input", "nn.avg_pool2d": "nn.avg_pool2d_grad",
             "nn.max_pool2d": "nn.max_pool2d_grad",
             "nn.max_pool2d_grad": "nn.max_pool2d_grad_grad"}
    for name, grad in pairs.items():
        assert default_registry.get(name).meta["grad_op"] == grad
        assert default_registry.get(grad).meta["grad_of"] == name
    assert default_registry.get("nn.conv2d_backprop_filter").meta["grad_of"] == "nn.conv2d"


# ---------------------------------------------------------------------------------------
# softmax and log_softmax: stability, and their gradient ops
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", ["nn.softmax", "nn.log_softmax"])
def test_softmax_family_at_1e3(name: str, dtype: Any) -> None:
    """Shift invariance: values, VJPs, JVPs and HVPs at |x| = 1e3 equal those at x - max."""
    op = default_registry.get(name)
    x = np.array([[1000.0, 999.0, -1000.0], [-1000.0, -998.5, -999.0]], dtype)
    shifted = x - x.max(axis=-1, keepdims=True)
    rng = np.random.default_rng(3)
    u, v = like(rng, x), like(rng, x)
    y, y0 = op(x), op(shifted)
    assert y.dtype == dtype and np.all(np.isfinite(y))
    assert_close(y, y0, 1e-6, f"{name} value")
    assert_close(engine_vjp(op, [x], v)[0], engine_vjp(op, [shifted], v)[0], 1e-5, "VJP")
    _, t = gc.jvp(op, [x], [u])
    _, t0 = gc.jvp(op, [shifted], [u])
    assert_close(t, t0, 1e-5, "JVP")
    for mode in HVP_MODES:
        h, h0 = gc.hvp(op, [x], [u], mode=mode, cotangent=v), gc.hvp(op, [shifted], [u],
                                                                     mode=mode, cotangent=v)
        assert_close(h[0], h0[0], 1e-5, f"HVP {mode}")
        assert np.asarray(value_of(h[0])).dtype == dtype


def test_log_softmax_is_exact_far_in_the_tail() -> None:
    x = np.array([0.0, -1500.0])
    np.testing.assert_allclose(gnn.log_softmax(x), [0.0, -1500.0], rtol=1e-15)
    assert gnn.softmax(x)[1] == 0.0


@pytest.mark.parametrize("name,domain", [("nn.softmax_grad", UNIT),
                                         ("nn.log_softmax_grad", Interval(-4.0, 0.0))])
def test_gradient_ops_are_linear_in_dy(name: str, domain: Domain) -> None:
    """Linear in the upstream gradient, and the partial there does not read it."""
    case = OpCase(name, shapes=((2, 3), (2, 3)), inputs=(REAL, domain), cotangent_arg=0)
    check_linear_in_cotangent(case)
    check_grad_of(case)


def test_softmax_vjp_goes_through_softmax_grad() -> None:
    """TensorFlow's structure: the VJP is the gradient op, visible to an outer tape."""
    from gradcheck.engine import state

    seen = []

    class Spy:
        """A tracer below every tape: it sees each op the VJP rule runs."""

        level = 1

        def record(self, op: gc.Op, *rest: Any) -> None:
            seen.append(op.name)

    x = gc.tensor(np.random.default_rng(1).standard_normal((2, 3)))
    with gc.GradientTape() as outer:
        outer.watch(x)
        _, vjp_fn = gc.vjp(gnn.softmax, x)  # rules get tensors: the outer tape watches
        spy = Spy()
        state.push(spy)
        try:
            vjp_fn(np.ones((2, 3)))
        finally:
            state.pop(spy)
    assert "nn.softmax_grad" in seen


# ---------------------------------------------------------------------------------------
# normalization, embedding, dropout
# ---------------------------------------------------------------------------------------
def test_layer_norm_output_is_normalized_and_gradient_sums_vanish() -> None:
    rng = np.random.default_rng(2)
    x = rng.standard_normal((3, 5)) * 1e3 + 7.0
    y = gnn.layer_norm(x, np.ones(5), np.zeros(5), eps=1e-12)
    np.testing.assert_allclose(y.mean(-1), 0, atol=1e-12)
    np.testing.assert_allclose(y.var(-1), 1, rtol=1e-9)
    ct = engine_vjp(lambda x: gnn.layer_norm(x, np.ones(5), np.zeros(5)), [x],
                    rng.standard_normal((3, 5)))[0]
    np.testing.assert_allclose(ct.sum(-1), 0, atol=1e-15)  # invariant to shifting a row


def test_batch_norm_is_layer_norm_over_the_batch() -> None:
    rng = np.random.default_rng(4)
    x, g, b = rng.standard_normal((4, 3)), rng.standard_normal(3), rng.standard_normal(3)
    assert_close(gnn.batch_norm(x, g, b), gnn.layer_norm(x, g, b, axis=0), 1e-15, "batch_norm")


def test_embedding_vjp_adds_repeated_rows() -> None:
    table = np.arange(6.0).reshape(3, 2)
    ids = np.array([[2, 0], [2, 2]])
    ct = engine_vjp(lambda t: gnn.embedding(t, ids), [table], np.ones((2, 2, 2)))[0]
    np.testing.assert_array_equal(ct, [[1, 1], [0, 0], [3, 3]])


def test_dropout_scales_the_kept_entries() -> None:
    x = np.array([1.0, 2.0, 3.0], np.float32)
    y = gnn.dropout(x, np.array([True, False, True]), 0.75)
    assert y.dtype == np.float32
    np.testing.assert_array_equal(y, [4.0, 0.0, 12.0])


# ---------------------------------------------------------------------------------------
# convolutions: transposition relations, TensorFlow's conventions
# ---------------------------------------------------------------------------------------
def _sweep() -> list[dict[str, Any]]:
    from gradcheck.ops.conv import conv_geometries

    return conv_geometries((5, 4), (3, 2))


def test_transposition_relations_over_the_sweep() -> None:
    """<conv2d(x, f), dy> = <x, backprop_input(f, dy)> = <f, backprop_filter(x, dy)>."""
    rng = np.random.default_rng(6)
    x, f = rng.standard_normal((2, 5, 4, 2)), rng.standard_normal((3, 2, 2, 3))
    geometries = _sweep()
    assert len(geometries) >= 20
    for g in geometries:
        y = gnn.conv2d(x, f, **g)
        assert_close(y, ref_conv2d(x, f, **g), 1e-12, f"conv2d {g}")
        dy = rng.standard_normal(y.shape)
        lhs = float(np.sum(y * dy))
        dx = gnn.conv2d_backprop_input(f, dy, x.shape, **g)
        df = gnn.conv2d_backprop_filter(x, dy, f.shape, **g)
        assert math.isclose(lhs, float(np.sum(x * dx)), rel_tol=1e-12, abs_tol=1e-12), g
        assert math.isclose(lhs, float(np.sum(f * df)), rel_tol=1e-12, abs_tol=1e-12), g


def test_conv1d_is_conv2d_of_height_one() -> None:
    rng = np.random.default_rng(7)
    x, f = rng.standard_normal((2, 6, 2)), rng.standard_normal((3, 2, 2))
    y = gnn.conv1d(x, f, stride=2, padding="SAME", dilations=1)
    y2 = gnn.conv2d(x[:, None], f[None], strides=(1, 2), padding="SAME")
    assert_close(y, y2[:, 0], 1e-15, "conv1d")


def test_avg_pool_same_counts_real_entries_only() -> None:
    x = np.ones((1, 3, 3, 1))
    np.testing.assert_array_equal(gnn.avg_pool2d(x, 2, 2, "SAME"), np.ones((1, 2, 2, 1)))


def test_max_pool_ties_go_to_the_first_maximum() -> None:
    """Row-major first maximum of each window (TensorFlow's CPU kernel and PyTorch)."""
    x = np.zeros((1, 2, 3, 1))
    x[0, :, :, 0] = [[1.0, 1.0, 0.0], [1.0, 0.0, 1.0]]
    g = np.ones((1, 1, 2, 1))
    dx = default_registry.get("nn.max_pool2d_grad")(x, g, 2, 1, "VALID")
    np.testing.assert_array_equal(dx[0, :, :, 0], [[1.0, 1.0, 0.0], [0.0, 0.0, 0.0]])
    w = np.arange(6.0).reshape(1, 2, 3, 1)
    gg = default_registry.get("nn.max_pool2d_grad_grad")(x, w, 2, 1, "VALID")
    np.testing.assert_array_equal(gg[0, :, :, 0], [[0.0, 1.0]])


def test_max_pool_has_zero_second_derivative() -> None:
    rng = np.random.default_rng(8)
    x = rng.standard_normal((1, 4, 4, 2))
    u, w = rng.standard_normal(x.shape), rng.standard_normal((1, 2, 2, 2))
    for mode in HVP_MODES:
        (h,) = gc.hvp(lambda x: gnn.max_pool2d(x, 2, 2), [x], [u], mode=mode, cotangent=w)
        np.testing.assert_array_equal(np.asarray(value_of(h)), 0.0)


# ---------------------------------------------------------------------------------------
# TensorFlow as the reference for conventions
# ---------------------------------------------------------------------------------------
def _tf_geometry(g: dict[str, Any]) -> dict[str, Any]:
    pad = g["padding"]
    kw: dict[str, Any] = {"strides": [1, *_two(g["strides"]), 1],
                          "dilations": [1, *_two(g["dilations"]), 1]}
    if isinstance(pad, str):
        kw["padding"] = pad
    else:
        p = np.broadcast_to(np.asarray(pad).reshape(-1, 1) if np.ndim(pad) == 1
                            else np.asarray(pad), (2, 2))
        kw["padding"] = [[0, 0], list(p[0]), list(p[1]), [0, 0]]
    return kw


@pytest.mark.tensorflow
def test_conv2d_and_its_gradient_ops_match_tensorflow() -> None:
    tf = import_tensorflow()
    rng = np.random.default_rng(9)
    x, f = rng.standard_normal((2, 5, 4, 2)), rng.standard_normal((3, 2, 2, 3))
    for g in _sweep():
        kw = _tf_geometry(g)
        y = tf.nn.conv2d(x, f, **kw).numpy()
        assert_close(gnn.conv2d(x, f, **g), y, 1e-12, f"conv2d {g}")
        if kw["dilations"] != [1, 1, 1, 1]:
            continue  # TensorFlow's CPU backprop kernels reject dilations
        dy = rng.standard_normal(y.shape)
        raw = {"strides": kw["strides"], "dilations": kw["dilations"]}
        if isinstance(kw["padding"], str):
            raw["padding"] = kw["padding"]
        else:
            raw.update(padding="EXPLICIT", explicit_paddings=sum(kw["padding"], []))
        dx = tf.raw_ops.Conv2DBackpropInput(input_sizes=x.shape, filter=f, out_backprop=dy,
                                            **raw).numpy()
        df = tf.raw_ops.Conv2DBackpropFilter(input=x, filter_sizes=f.shape, out_backprop=dy,
                                             **raw).numpy()
        assert_close(gnn.conv2d_backprop_input(f, dy, x.shape, **g), dx, 1e-12, f"BI {g}")
        assert_close(gnn.conv2d_backprop_filter(x, dy, f.shape, **g), df, 1e-12, f"BF {g}")


@pytest.mark.tensorflow
def test_conv1d_matches_tensorflow() -> None:
    tf = import_tensorflow()
    rng = np.random.default_rng(10)
    x, f = rng.standard_normal((2, 7, 3)), rng.standard_normal((3, 3, 2))
    for s, pad, d in [(1, "VALID", 1), (2, "SAME", 1), (1, "SAME", 2)]:
        assert_close(gnn.conv1d(x, f, s, pad, d),
                     tf.nn.conv1d(x, f, s, pad, dilations=d).numpy(), 1e-12, f"{s} {pad} {d}")


@pytest.mark.tensorflow
def test_pooling_and_its_gradient_ops_match_tensorflow() -> None:
    """float32: TensorFlow's max_pool2d computes float64 in float32."""
    tf = import_tensorflow()
    rng = np.random.default_rng(11)
    x = rng.standard_normal((2, 5, 4, 3)).astype(np.float32)
    x[0, 0, :2, 0] = x[0, 1, 0, 0] = 2.5  # a tie inside windows
    ops = {n: default_registry.get(f"nn.{n}") for n in
           ("avg_pool2d_grad", "max_pool2d_grad", "max_pool2d_grad_grad")}
    for pad in ("VALID", "SAME"):
        for k, s in [(2, 1), (3, 2), ((2, 1), (2, 1))]:
            kw = {"ksize": [1, *_two(k), 1], "strides": [1, *_two(s), 1], "padding": pad}
            y = gnn.max_pool2d(x, k, s, pad)
            np.testing.assert_array_equal(y, tf.nn.max_pool2d(x, **kw).numpy())
            a = gnn.avg_pool2d(x, k, s, pad)
            assert_close(a, tf.nn.avg_pool2d(x, **kw).numpy(), 1e-6, "avg_pool2d")
            g = rng.standard_normal(y.shape).astype(np.float32)
            w = rng.standard_normal(x.shape).astype(np.float32)
            assert_close(ops["avg_pool2d_grad"](g, x.shape, k, s, pad),
                         tf.raw_ops.AvgPoolGrad(orig_input_shape=x.shape, grad=g, **kw).numpy(),
                         1e-6, "AvgPoolGrad")
            np.testing.assert_allclose(
                ops["max_pool2d_grad"](x, g, k, s, pad),
                tf.raw_ops.MaxPoolGrad(orig_input=x, orig_output=y, grad=g, **kw).numpy(),
                rtol=1e-6, atol=1e-6)
            np.testing.assert_array_equal(
                ops["max_pool2d_grad_grad"](x, w, k, s, pad),
                tf.raw_ops.MaxPoolGradGrad(orig_input=x, orig_output=y, grad=w, **kw).numpy())


@pytest.mark.tensorflow
@pytest.mark.parametrize("name,tf_name", [("nn.softmax", "softmax"),
                                          ("nn.log_softmax", "log_softmax")])
def test_softmax_family_vjp_and_second_order_match_tensorflow(name: str, tf_name: str) -> None:
    tf = import_tensorflow()
    x = np.random.default_rng(12).standard_normal((2, 4))
    op = default_registry.get(name)
    assert_close(op(x), getattr(tf.nn, tf_name)(tf.constant(x)).numpy(), 1e-12, "forward")
    report = check_at(name, [x], seed=seed_for(name, "tensorflow"),
                      references=["self", "tensorflow"])
    assert_compared(report, "tensorflow")


# ---------------------------------------------------------------------------------------
# errors
# ---------------------------------------------------------------------------------------
BAD_CALLS = [
    ("nn.softmax", lambda: gnn.softmax(np.float64(1.0)), "axis"),
    ("nn.softmax_grad", lambda: default_registry.get("nn.softmax_grad")(
        np.ones(3), np.ones(2)), "shape"),
    ("nn.layer_norm", lambda: gnn.layer_norm(np.ones((2, 3)), np.ones(2), np.ones(3)), "gamma"),
    ("nn.layer_norm", lambda: gnn.layer_norm(np.ones(3), np.ones(3), np.ones(3), eps=0.0),
     "eps"),
    ("nn.embedding", lambda: gnn.embedding(np.ones((3, 2)), np.array([3])), r"\[0, 3\)"),
    ("nn.embedding", lambda: gnn.embedding(np.ones((3, 2)), np.array([0.0])), "integers"),
    ("nn.dropout", lambda: gnn.dropout(np.ones(3), np.ones(3, bool), 1.0), "rate"),
    ("nn.dropout", lambda: gnn.dropout(np.ones(3), np.ones(3), 0.5), "boolean"),
    ("nn.dropout", lambda: gnn.dropout(np.ones(3), np.ones((2, 3), bool), 0.5), "broadcast"),
    ("nn.conv2d", lambda: gnn.conv2d(np.ones((1, 3, 3, 2)), np.ones((2, 2, 3, 1))), "channels"),
    ("nn.conv2d", lambda: gnn.conv2d(np.ones((1, 3, 3)), np.ones((2, 2, 3, 1))), "NHWC"),
    ("nn.conv2d", lambda: gnn.conv2d(np.ones((1, 3, 3, 1)), np.ones((2, 2, 1, 1)),
                                     padding="same"), "padding"),
    ("nn.conv2d", lambda: gnn.conv2d(np.ones((1, 3, 3, 1)), np.ones((2, 2, 1, 1)),
                                     strides=0), "strides"),
    ("nn.conv2d", lambda: gnn.conv2d(np.ones((1, 2, 2, 1)), np.ones((3, 3, 1, 1))), "larger"),
    ("nn.conv2d", lambda: gnn.conv2d(np.ones((1, 3, 3, 1)), np.ones((2, 2, 1, 1)),
                                     padding=-1), "padding"),
    ("nn.conv2d_backprop_input", lambda: gnn.conv2d_backprop_input(
        np.ones((2, 2, 1, 1)), np.ones((1, 3, 3, 1)), (1, 3, 3, 1)), "out_backprop"),
    ("nn.conv1d", lambda: gnn.conv1d(np.ones((1, 4, 1)), np.ones((2, 1, 1)),
                                     padding=((1, 1), (1, 1))), "padding"),
    ("nn.conv1d", lambda: gnn.conv1d(np.ones((1, 4, 1)), np.ones((2, 1, 1)), stride=(1, 2)),
     "stride"),
    ("nn.max_pool2d", lambda: gnn.max_pool2d(np.ones((1, 3, 3, 1)), 2, 1, 1), "padding"),
    ("nn.avg_pool2d", lambda: gnn.avg_pool2d(np.ones((1, 3, 3, 1)), 0, 1), "ksize"),
]


@pytest.mark.parametrize("name,call,match", BAD_CALLS, ids=[f"{b[0]}-{b[2]}" for b in BAD_CALLS])
def test_bad_input_is_a_clear_error(name: str, call: Any, match: str) -> None:
    with pytest.raises((ValueError, TypeError), match=match) as info:
        call()
    assert name in str(info.value)

