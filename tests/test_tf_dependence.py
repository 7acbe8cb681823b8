"""The dependence walk (gradcheck/oracles/tf_dependence.py) on hand-made graphs: the kind of
the strongest path, and a path text that is the same on every run (no TensorFlow needed)."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

import pytest

from gradcheck.oracles.tf_dependence import trace_dependence


@dataclass(eq=False)
class FakeOp:
    """The part of a ``tf.Operation`` the walk reads."""

    name: str
    type: str
    inputs: list[Any] = field(default_factory=list)
    control_inputs: list[Any] = field(default_factory=list)


@dataclass(eq=False)
class FakeTensor:
    op: FakeOp


def _graph(order: tuple[int, ...]) -> tuple[FakeOp, FakeTensor]:
    """``v`` reaches ``out`` by data along two paths of two edges (through ``grad/Square``
    and ``grad/Const``) and one of three (through ``a/One``, ``a/Two``), and by control;
    ``order`` permutes how the inputs are listed (TensorFlow's order is arbitrary)."""
    v = FakeOp("v", "Placeholder")
    square = FakeOp("grad/Square", "Square", [FakeTensor(v)])
    const = FakeOp("grad/Const", "Mul", [FakeTensor(v)])
    one = FakeOp("a/One", "Identity", [FakeTensor(v)])
    two = FakeOp("a/Two", "Identity", [FakeTensor(one)])
    inputs = [FakeTensor(square), FakeTensor(const), FakeTensor(two)]
    out = FakeOp("out", "AddN", [inputs[i] for i in order], control_inputs=[v])
    return v, FakeTensor(out)


@pytest.mark.parametrize("order", list(itertools.permutations(range(3))))
def test_the_path_is_the_shortest_then_first_by_name(order: tuple[int, ...]) -> None:
    v, out = _graph(order)
    dependence = trace_dependence([v], [out])
    assert dependence.kind == "data"
    assert dependence.path == ("v (Placeholder)", "data: grad/Const (Mul)", "data: out (AddN)")


def test_two_traces_give_the_same_text() -> None:
    texts = {trace_dependence([v], [out]).path
             for v, out in (_graph(order) for order in itertools.permutations(range(3))
                            for _ in range(5))}
    assert len(texts) == 1


def test_kinds_weakest_edge_and_strongest_path() -> None:
    v = FakeOp("v", "Placeholder")
    x = FakeOp("x", "Const")
    shape = FakeOp("ones", "OnesLike", [FakeTensor(v)])
    by_shape = FakeOp("by_shape", "Mul", [FakeTensor(shape), FakeTensor(x)])
    by_control = FakeOp("by_control", "Identity", [FakeTensor(x)], control_inputs=[v])
    assert trace_dependence([v], [FakeTensor(by_shape)]).kind == "shape"
    assert trace_dependence([v], [FakeTensor(by_control)]).path == (
        "v (Placeholder)", "control: by_control (Identity)")
    assert trace_dependence([v], [FakeTensor(by_control), FakeTensor(by_shape)]).kind == "shape"
    assert trace_dependence([v], [FakeTensor(x)]).kind == "none"


@pytest.mark.tensorflow
def test_acos_double_vjp_path_is_the_same_in_every_graph() -> None:
    import tensorflow as tf

    def trace() -> tuple[str, ...]:
        graph = tf.Graph()
        with graph.as_default():
            x = tf.constant([0.3, -0.2], dtype=tf.float64)
            v = tf.compat.v1.placeholder(tf.float64, [2], name="v")
            w = tf.constant([1.0, 2.0], dtype=tf.float64)
            (g,) = tf.gradients(tf.math.acos(x), [x], grad_ys=[v])
            (gg,) = tf.gradients(g, [v], grad_ys=[w])  # the double-VJP, in the dummy
        return trace_dependence([v.op], [gg]).path

    first = trace()
    assert first[0] == "v (Placeholder)"
    assert all(trace() == first for _ in range(3))
