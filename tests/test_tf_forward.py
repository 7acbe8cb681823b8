"""TensorFlow's forward mode gives gradcheck the same bits whatever the process ran before
(gradcheck/oracles/tf_forward.py): a fresh process traces an op's JVP for exact shapes, one
past TensorFlow's 32 traces per op for relaxed shapes, and the two round differently."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow", reason="needs gradcheck[tensorflow]")

from tensorflow.core.function.polymorphism import function_cache  # noqa: E402
from tensorflow.python.eager import forwardprop  # noqa: E402

from gradcheck.oracles import tf_forward  # noqa: E402
from gradcheck.oracles.tensorflow import TensorFlowProblem  # noqa: E402

pytestmark = pytest.mark.tensorflow

SHAPES = [(2, 3), (3, 4), (2, 2, 3)]


class _Traced(dict):
    """TensorFlow's trace count as a process that has traced every op ``n`` times sees it."""

    def __init__(self, n: int) -> None:
        super().__init__()
        self.n = n

    def get(self, key, default=None):
        return self.n


def _process_as_if(monkeypatch: pytest.MonkeyPatch, traces: int) -> None:
    """TensorFlow's own forward-mode state as in a process that traced each op ``traces``
    times before, with an empty cache (not the real one: other tests keep theirs)."""
    fresh = function_cache.FunctionCache()
    for name in ("_jvp_exact_config", "_jvp_relaxed_config"):
        monkeypatch.setattr(forwardprop, name, dataclasses.replace(
            getattr(forwardprop, name), function_cache=fresh))
    monkeypatch.setattr(forwardprop, "_TRACE_COUNT", _Traced(traces))


def _norm(x, g, b):
    mu, var = tf.nn.moments(x, axes=[-1], keepdims=True)
    return (x - mu) * tf.math.rsqrt(var + 1e-5) * g + b


def _forward_paths() -> list[np.ndarray]:
    """The JVP and reverse-over-forward HVP of a layer norm at a few shapes."""
    rng = np.random.default_rng(0)
    out = []
    for shape in SHAPES:
        x, u, v = (rng.standard_normal(shape) for _ in range(3))
        g, b, ug, ub = (rng.standard_normal(shape[-1:]) for _ in range(4))
        problem = TensorFlowProblem(_norm, [x, g, b], [0, 1, 2], "norm")
        out += problem.jvp(problem.primals, [u, ug, ub])
        out += [a for part in problem.hvp_rev_fwd(problem.primals, [u, ug, ub], [v])
                for a in part]
    return out


def _bits_past_the_limit(monkeypatch: pytest.MonkeyPatch) -> tuple[list, list]:
    _process_as_if(monkeypatch, 0)
    fresh = _forward_paths()
    _process_as_if(monkeypatch, 10**6)
    past = _forward_paths()
    return fresh, past


def test_forward_mode_gives_the_same_bits_in_a_fresh_process_and_past_the_trace_limit(
        monkeypatch):
    fresh, past = _bits_past_the_limit(monkeypatch)
    assert len(fresh) == len(past) == 7 * len(SHAPES)
    differ = [i for i, (a, b) in enumerate(zip(fresh, past, strict=True))
              if not np.array_equal(a, b)]
    assert differ == []


def test_without_its_own_cache_tensorflow_rounds_differently_past_the_limit(monkeypatch):
    """The case the test above guards is real: with TensorFlow's own dispatch, the
    relaxed-shape traces give other bits (so the test above can fail)."""
    monkeypatch.setattr(tf_forward, "_own", lambda: None)
    fresh, past = _bits_past_the_limit(monkeypatch)
    assert any(not np.array_equal(a, b) for a, b in zip(fresh, past, strict=True))


def test_tensorflows_own_state_is_left_as_it_was():
    before = (forwardprop._jvp_exact_config, forwardprop._jvp_relaxed_config,
              forwardprop._TRACE_COUNT, dict(forwardprop._TRACE_COUNT))
    problem = TensorFlowProblem(_norm, [np.ones((2, 3)), np.ones(3), np.zeros(3)], [0, 1, 2],
                                "norm")
    with tf_forward.exact_shapes():
        inner = forwardprop._jvp_exact_config
        with tf_forward.exact_shapes():  # re-entered: still gradcheck's own
            assert forwardprop._jvp_relaxed_config is inner
        assert forwardprop._jvp_exact_config is inner  # the inner exit restored nothing
        problem.jvp(problem.primals, [np.ones((2, 3)), np.ones(3), np.ones(3)])
        assert inner is not before[0] and inner.function_cache is not before[0].function_cache
    after = (forwardprop._jvp_exact_config, forwardprop._jvp_relaxed_config,
             forwardprop._TRACE_COUNT, dict(forwardprop._TRACE_COUNT))
    assert all(a is b for a, b in zip(after[:3], before[:3], strict=True))
    assert after[3] == before[3]


def test_a_full_cache_is_emptied_and_gives_the_same_bits(monkeypatch):
    own = tf_forward._own()
    own.clear()
    first = _forward_paths()
    kept = len(own)  # every trace of every shape
    monkeypatch.setattr(tf_forward, "CACHE_LIMIT", 0)
    again = _forward_paths()
    assert all(np.array_equal(a, b) for a, b in zip(first, again, strict=True))
    assert 0 < len(own) < kept  # emptied at each call: only the last call's traces


def test_tensorflow_calls_gradchecks_dispatch_only_inside():
    """Inside (nested too), each op's JVP goes through gradcheck's keyed dispatch; outside,
    through TensorFlow's own again."""
    own = tf_forward._own()
    own.clear()
    x, u = tf.constant(np.ones((2, 5))), tf.constant(np.ones((2, 5)))

    def jvp() -> None:
        with tf.autodiff.ForwardAccumulator(x, u) as acc:
            y = tf.sin(x) * x
        acc.jvp(y)

    with tf_forward.exact_shapes():
        with tf_forward.exact_shapes():
            jvp()
        keyed = len(own.traces)
        x = tf.constant(np.ones((3, 5)))  # new shapes: new traces, still keyed here
        u = tf.constant(np.ones((3, 5)))
        jvp()
        assert len(own.traces) > keyed > 0
    before = len(own.traces)
    jvp()
    assert len(own.traces) == before


def test_the_keyed_dispatch_gives_tensorflows_bits(monkeypatch):
    """The keyed dispatch calls the very trace TensorFlow's lookup finds: the same bits as
    with every call looked up TensorFlow's way."""
    tf_forward._own().clear()
    keyed = _forward_paths()
    tf_forward._own().clear()
    monkeypatch.setattr(tf_forward, "_key", lambda args: None)
    looked_up = _forward_paths()
    assert len(keyed) == len(looked_up) == 7 * len(SHAPES)
    assert all(np.array_equal(a, b) for a, b in zip(keyed, looked_up, strict=True))


def test_variables_and_traced_functions_go_through_tensorflows_lookup():
    """A resource handle's trace type holds more than its dtype and shape, and a graph-mode
    call has another context: neither is keyed, and both give TensorFlow's answer."""
    v, u = tf.Variable(np.arange(3.0)), tf.constant(np.ones(3))

    def jvp() -> np.ndarray:
        with tf.autodiff.ForwardAccumulator(v, u) as acc:
            y = tf.exp(v) * 2.0
        return acc.jvp(y).numpy()

    @tf.function(autograph=False)
    def traced(x, t):
        with tf.autodiff.ForwardAccumulator(x, t) as acc:
            y = tf.exp(x) * 2.0
        return acc.jvp(y)

    expected = 2.0 * np.exp(np.arange(3.0))
    with tf_forward.exact_shapes():
        assert np.allclose(jvp(), expected)
        assert np.allclose(traced(tf.constant(np.arange(3.0)), u).numpy(), expected)
    assert np.allclose(jvp(), expected)
