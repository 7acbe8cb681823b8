"""The losses (gradcheck/ops/losses.py).

Each case runs the checks of tests/op_harness.py (forward against a direct formula; every
derivative path by ``gradcheck.check`` in float64 and float32 and against autograd), then:
the cross-entropies at logits of magnitude 1e3, soft labels off the simplex, TensorFlow's
values and derivatives, the huber kinks, and clear errors.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import scipy.special as sp
from op_harness import (
    EXAMPLES,
    HVP_MODES,
    AutogradChecks,
    OpCase,
    PathChecks,
    SampledMetadataChecks,
    assert_close,
    assert_compared,
    assert_passed,
    engine_vjp,
    import_tensorflow,
    seed_for,
)

import gradcheck as gc
import gradcheck.nn as gnn
from gradcheck import default_registry
from gradcheck.checker import format_failure
from gradcheck.domains import REAL, Interval, IntLabels, Probabilities
from gradcheck.engine.tensor import value_of


def _lse(x: Any, axis: int) -> Any:
    return sp.logsumexp(x, axis=axis, keepdims=True)


def ref_xent(labels: Any, logits: Any, axis: int = -1) -> Any:
    return -np.sum(labels * (logits - _lse(logits, axis)), axis=axis)


def ref_sparse(labels: Any, logits: Any) -> Any:
    hot = np.eye(np.shape(logits)[-1])[labels]
    return -np.sum(hot * (logits - _lse(logits, -1)), axis=-1)


def ref_sigmoid_xent(z: Any, x: Any) -> Any:
    return np.logaddexp(0.0, x) - x * z


def ref_l2(t: Any) -> Any:
    return np.sum(t * t) / 2


def ref_mse(p: Any, t: Any, axis: Any = None) -> Any:
    return np.mean((p - t) ** 2, axis=axis)


def ref_huber(p: Any, t: Any, delta: float = 1.0, axis: Any = None) -> Any:
    e = p - t
    return np.mean(np.where(np.abs(e) <= delta, 0.5 * e * e, delta * (np.abs(e) - 0.5 * delta)),
                   axis=axis)


UNIT = Interval(0.0, 1.0)
CASES = [
    OpCase("nn.softmax_cross_entropy_with_logits", ref_xent, {},
           ((3, 4), (3, 4)), (Probabilities(-1), REAL)),
    OpCase("nn.softmax_cross_entropy_with_logits", ref_xent, {"axis": 0},
           ((3, 2), (3, 2)), (Probabilities(0), REAL)),
    # soft labels off the simplex: the logits' derivative is sum(labels) softmax - labels
    OpCase("nn.softmax_cross_entropy_with_logits", ref_xent, {},
           ((2, 3), (2, 3)), (Interval(0.0, 2.0), REAL), label="xent-unnormalized-labels"),
    OpCase("nn.sparse_softmax_cross_entropy_with_logits", ref_sparse, {},
           ((3,), (3, 4)), (IntLabels(4), REAL)),
    OpCase("nn.sparse_softmax_cross_entropy_with_logits", ref_sparse, {},
           ((2, 2), (2, 2, 3)), (IntLabels(3), REAL)),
    OpCase("nn.sigmoid_cross_entropy_with_logits", ref_sigmoid_xent, {},
           ((2, 3), (2, 3)), (UNIT, REAL)),
    OpCase("nn.sigmoid_cross_entropy_with_logits", ref_sigmoid_xent, {},
           ((3,), (2, 3)), (UNIT, REAL)),
    OpCase("nn.l2_loss", ref_l2, {}, ((2, 3),)),
    OpCase("nn.l2_loss", ref_l2, {}, ((),)),
    OpCase("nn.mean_squared_error", ref_mse, {}, ((2, 3), (2, 3))),
    OpCase("nn.mean_squared_error", ref_mse, {"axis": -1}, ((2, 3), (3,))),
    OpCase("nn.mean_squared_error", ref_mse, {"axis": 0}, ((1, 3), (2, 3))),
    OpCase("nn.huber", ref_huber, {}, ((2, 3), (2, 3))),
    OpCase("nn.huber", ref_huber, {"delta": 0.5, "axis": -1}, ((2, 4), (4,))),
]
LOSS_OPS = ["nn.softmax_cross_entropy_with_logits", "nn.sparse_softmax_cross_entropy_with_logits",
            "nn.sigmoid_cross_entropy_with_logits", "nn.l2_loss", "nn.mean_squared_error",
            "nn.huber"]


def test_every_loss_has_cases() -> None:
    from gradcheck.ops import losses

    declared = {v.name for v in vars(losses).values()
                if isinstance(v, gc.Op) and v.family == "loss"}
    assert declared == set(LOSS_OPS) == {c.name for c in CASES}
    assert {name.removeprefix("nn.") for name in LOSS_OPS} <= set(gnn.__all__)


class TestLosses(PathChecks, AutogradChecks, SampledMetadataChecks):
    cases = CASES
    sampled_ops = LOSS_OPS
    sampled_dtypes = ("float64", "float32")
    sampled_examples = 2


# ---------------------------------------------------------------------------------------
# magnitude 1e3
# ---------------------------------------------------------------------------------------
def _paths(f: Any, xs: list[Any], rng: np.random.Generator) -> dict[str, list[np.ndarray]]:
    """Value, VJP, native JVP and the three HVPs of f at xs (fixed directions)."""
    out = np.asarray(f(*xs))
    v = rng.standard_normal(out.shape).astype(out.dtype)
    us = [rng.standard_normal(np.shape(x)).astype(np.asarray(x).dtype) for x in xs]
    result = {"value": [out], "vjp": engine_vjp(f, xs, v),
              "jvp": [np.asarray(value_of(gc.jvp(f, xs, us)[1]))]}
    for mode in HVP_MODES:
        result[mode] = [np.asarray(value_of(h)) for h in gc.hvp(f, xs, us, mode=mode,
                                                                  cotangent=v)]
    return result


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", ["nn.softmax_cross_entropy_with_logits",
                                  "nn.sparse_softmax_cross_entropy_with_logits"])
def test_softmax_cross_entropies_at_1e3(name: str, dtype: Any) -> None:
    """Shifting the logits changes nothing: every path at |x| = 1e3 equals the shifted one."""
    op = default_registry.get(name)
    logits = np.array([[1000.0, 999.0, -1000.0], [-1000.0, -998.0, -999.5]], dtype)
    shifted = logits - logits.max(-1, keepdims=True)
    if "sparse" in name:
        labels: Any = np.array([1, 2])
        diff = [1]
    else:
        labels = np.array([[0.2, 0.5, 0.3], [0.6, 0.1, 0.3]], dtype)
        diff = [0, 1]

    def at(x: Any) -> dict[str, list[np.ndarray]]:
        def f(*xs: Any) -> Any:
            return op(*xs) if len(diff) == 2 else op(labels, *xs)
        xs = [labels, x] if len(diff) == 2 else [x]
        return _paths(f, xs, np.random.default_rng(0))

    big, small = at(logits), at(shifted)
    for key in big:
        for b, s in zip(big[key], small[key], strict=True):
            assert b.dtype == dtype and np.all(np.isfinite(b)), (name, key)
            assert_close(b, s, 1e-4 if dtype == np.float32 else 1e-9, f"{name} {key}")


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_sigmoid_cross_entropy_at_1e3(dtype: Any) -> None:
    """Exact limits: loss 1000 (1 - z) at x = 1000 and 1000 z at x = -1000, slopes 1 - z and
    -z, no curvature (sigmoid(x) sigmoid(-x) underflows to exactly 0)."""
    z = np.array([0.25, 0.5, 1.0], dtype)
    for sign in (1.0, -1.0):
        x = np.full(3, sign * 1000.0, dtype)
        f = gnn.sigmoid_cross_entropy_with_logits
        assert_close(f(z, x), 1000.0 * (1 - z) if sign > 0 else 1000.0 * z, 1e-6, "loss")
        cz, cx = engine_vjp(f, [z, x], np.ones(3, dtype))
        assert cz.dtype == cx.dtype == dtype
        assert_close(cx, (1 - z) if sign > 0 else -z, 1e-6, "d/dlogits")
        assert_close(cz, -x, 1e-6, "d/dlabels")
        (hz, hx) = gc.hvp(f, [z, x], [np.zeros(3, dtype), np.ones(3, dtype)],
                          cotangent=np.ones(3, dtype))
        np.testing.assert_array_equal(np.asarray(value_of(hx)), 0.0)
        np.testing.assert_array_equal(np.asarray(value_of(hz)), -1.0)  # d2/dz dx = -1


def test_huber_slopes_on_both_sides_of_delta() -> None:
    p = np.array([0.2, 1.5, -3.0])
    ct = engine_vjp(lambda p: gnn.huber(p, np.zeros(3), delta=1.0), [p], np.ones(()))[0]
    assert_close(ct, np.array([0.2, 1.0, -1.0]) / 3, 1e-15, "huber slope")
    (h,) = gc.hvp(lambda p: gnn.huber(p, np.zeros(3), delta=1.0), [p], [np.ones(3)])
    assert_close(h, np.array([1.0, 0.0, 0.0]) / 3, 1e-15, "huber curvature")


# ---------------------------------------------------------------------------------------
# TensorFlow as the reference
# ---------------------------------------------------------------------------------------
@pytest.mark.tensorflow
@pytest.mark.parametrize("name", ["softmax_cross_entropy_with_logits",
                                  "sparse_softmax_cross_entropy_with_logits",
                                  "sigmoid_cross_entropy_with_logits", "l2_loss"])
def test_matches_tensorflow_to_second_order(name: str) -> None:
    """Values, and every path against TensorFlow's (the op's declared equivalent) at the same
    point, judged by the numeric reference.  For softmax cross-entropy TensorFlow's Hessian
    is not symmetric: d/dlogits of the labels' gradient (-log_softmax) is right, but the op's
    backprop output softmax - labels gets no gradient to its labels input, so d/dlabels of
    the logits' gradient is zero.  That is a finding attributed to TensorFlow, on the
    second-order paths only; everything else agrees."""
    tf = import_tensorflow()
    rng = np.random.default_rng(13)
    logits = rng.standard_normal((3, 4)) * 3
    if name == "l2_loss":
        args = [logits]
    elif name.startswith("sparse"):
        args = [np.array([0, 3, 1]), logits]
    elif name.startswith("softmax"):
        labels = rng.uniform(0.1, 1.0, (3, 4))
        args = [labels / labels.sum(-1, keepdims=True), logits]
    else:
        args = [rng.uniform(0.0, 1.0, (3, 4)), logits]
    tf_fn = getattr(tf.nn, name)
    consts = [tf.constant(a) for a in args]
    y = tf_fn(*consts) if name == "l2_loss" else tf_fn(labels=consts[0], logits=consts[1])
    assert_close(getattr(gnn, name)(*args), y.numpy(), 1e-12, f"{name} value")
    finding = name.startswith("softmax")
    # each finding is shrunk with TensorFlow in the loop: one example, and of the three HVP
    # nestings only reverse-over-reverse (TensorFlow's own second order), keep it affordable
    report = gc.check(f"nn.{name}", inputs=args, references=["numeric", "self", "tensorflow"],
                      dtypes=["float64"], examples=EXAMPLES,
                      paths=["vjp", "jvp", "double_vjp", "hvp_rev_rev"] if finding else None,
                      seed=seed_for(name, "tensorflow"))
    assert_compared(report, "tensorflow")
    if not finding:
        assert_passed(report)
        return
    wrong = {(f.path, f.attributed_to) for f in report.failures}
    assert wrong, "TensorFlow's wrong mixed Hessian is no longer found"
    assert all(side == "tensorflow" and path.startswith("hvp_") for path, side in wrong), \
        format_failure(report)


# ---------------------------------------------------------------------------------------
# errors
# ---------------------------------------------------------------------------------------
BAD_CALLS = [
    ("nn.sparse_softmax_cross_entropy_with_logits",
     lambda: gnn.sparse_softmax_cross_entropy_with_logits(np.array([0, 4]), np.ones((2, 4))),
     r"\[0, 4\)"),
    ("nn.sparse_softmax_cross_entropy_with_logits",
     lambda: gnn.sparse_softmax_cross_entropy_with_logits(np.array([0.0, 1.0]), np.ones((2, 4))),
     "integers"),
    ("nn.sparse_softmax_cross_entropy_with_logits",
     lambda: gnn.sparse_softmax_cross_entropy_with_logits(np.array([0, 1, 2]), np.ones((2, 4))),
     "shape"),
    ("nn.softmax_cross_entropy_with_logits",
     lambda: gnn.softmax_cross_entropy_with_logits(np.ones((2, 3)), np.ones((2, 4))), "shape"),
    ("nn.softmax_cross_entropy_with_logits",
     lambda: gnn.softmax_cross_entropy_with_logits(np.ones((2, 3)), np.ones((2, 3)), axis=2),
     "axis"),
    ("nn.huber", lambda: gnn.huber(np.ones(3), np.ones(3), delta=0.0), "delta"),
    ("nn.huber", lambda: gnn.huber(np.ones(3), np.ones(2)), "broadcast"),
    ("nn.mean_squared_error", lambda: gnn.mean_squared_error(np.ones((0, 3)), np.ones(3)),
     "no entries"),
]


@pytest.mark.parametrize("name,call,match", BAD_CALLS, ids=[f"{b[0]}-{b[2]}" for b in BAD_CALLS])
def test_bad_input_is_a_clear_error(name: str, call: Any, match: str) -> None:
    with pytest.raises((ValueError, TypeError), match=match) as info:
        call()
    assert name in str(info.value)
