"""Scalar parameters of the nn, loss and conv ops: a bad value is an error naming the op and
the argument (TypeError for the wrong kind of value, ValueError for one out of range); the
values accepted before still are."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import gradcheck.nn as gnn
from gradcheck.engine import default_registry

X = np.array([-2.0, 1.0])
X2 = np.ones((2, 3))
IMAGE, FILTER = np.ones((1, 3, 3, 1)), np.ones((2, 2, 1, 1))
MASK = np.ones(2, bool)

# (op, argument, call, error type); a bool is not a number, a stride or an axis
BAD = [
    ("nn.leaky_relu", "alpha", lambda: gnn.leaky_relu(X, alpha=np.array([0.1, 0.2])), TypeError),
    ("nn.leaky_relu", "alpha", lambda: gnn.leaky_relu(X, alpha="0.1"), TypeError),
    ("nn.leaky_relu_grad", "alpha", lambda: default_registry.get("nn.leaky_relu_grad")(
        X, X, alpha=np.array([0.1, 0.2])), TypeError),
    ("nn.elu", "alpha", lambda: gnn.elu(X, alpha=np.array([1.0, 2.0])), TypeError),
    ("nn.celu", "alpha", lambda: gnn.celu(X, alpha=True), TypeError),
    ("nn.huber", "delta", lambda: gnn.huber(X, np.zeros(2), delta=np.array([1.0, 2.0])),
     TypeError),
    ("nn.huber", "delta", lambda: gnn.huber(X, np.zeros(2), delta="1"), TypeError),
    ("nn.layer_norm", "eps", lambda: gnn.layer_norm(X2, np.ones(3), np.ones(3),
                                                    eps=np.array([1e-5, 1e-5])), TypeError),
    ("nn.dropout", "rate", lambda: gnn.dropout(X, MASK, np.array([0.5, 0.5])), TypeError),
    ("nn.softmax", "axis", lambda: gnn.softmax(X, axis=(0, 0)), ValueError),
    ("nn.log_softmax", "axis", lambda: gnn.log_softmax(X2, axis=(1, -1)), ValueError),
    ("nn.log_softmax", "axis", lambda: gnn.log_softmax(X2, axis=True), TypeError),
    ("nn.mean_squared_error", "axis", lambda: gnn.mean_squared_error(X2, X2, axis=(0, 0)),
     ValueError),
    ("nn.softmax_cross_entropy_with_logits", "axis",
     lambda: gnn.softmax_cross_entropy_with_logits(X2, X2, axis=True), TypeError),
    ("nn.conv2d", "strides", lambda: gnn.conv2d(IMAGE, FILTER, strides=True), TypeError),
    ("nn.conv2d", "strides", lambda: gnn.conv2d(IMAGE, FILTER, strides=(1, True)), TypeError),
    ("nn.conv2d", "dilations", lambda: gnn.conv2d(IMAGE, FILTER, dilations=1.0), TypeError),
    ("nn.conv1d", "stride", lambda: gnn.conv1d(np.ones((1, 4, 1)), np.ones((2, 1, 1)),
                                               stride=True), TypeError),
    ("nn.max_pool2d", "ksize", lambda: gnn.max_pool2d(IMAGE, True, 1), TypeError),
    ("nn.avg_pool2d", "strides", lambda: gnn.avg_pool2d(IMAGE, 2, np.bool_(True)), TypeError),
    ("nn.conv2d_backprop_input", "input_sizes", lambda: gnn.conv2d_backprop_input(
        FILTER, np.ones((1, 2, 2, 1)), (1, 3.7, 3, 1)), TypeError),
]


@pytest.mark.parametrize("op,argument,call,error", BAD,
                         ids=[f"{b[0]}-{b[1]}-{i}" for i, b in enumerate(BAD)])
def test_a_bad_parameter_names_the_op_and_the_argument(op: str, argument: str, call: Any,
                                                       error: type[Exception]) -> None:
    with pytest.raises(error) as info:
        call()
    assert op in str(info.value) and argument in str(info.value), str(info.value)


GOOD = [
    (lambda: gnn.leaky_relu(X, alpha=np.float32(0.5)), [-1.0, 1.0]),
    (lambda: gnn.leaky_relu(X, alpha=np.array(0.5)), [-1.0, 1.0]),
    (lambda: gnn.leaky_relu(X, alpha=1), [-2.0, 1.0]),
    (lambda: gnn.huber(X, np.zeros(2), delta=np.float64(1)), 1.0),
    (lambda: gnn.softmax(X2, axis=[0, 1]), np.full((2, 3), 1 / 6)),
    (lambda: gnn.softmax(X2, axis=np.int64(-1)), np.full((2, 3), 1 / 3)),
    (lambda: gnn.conv2d(IMAGE, FILTER, strides=np.int64(2)), np.full((1, 1, 1, 1), 4.0)),
    (lambda: gnn.conv2d(IMAGE, FILTER, strides=np.array([1, 2])), np.full((1, 2, 1, 1), 4.0)),
    (lambda: gnn.conv2d(IMAGE, FILTER, strides=[1, 2, 2, 1]), np.full((1, 1, 1, 1), 4.0)),
    (lambda: gnn.conv2d_backprop_input(FILTER, np.ones((1, 2, 2, 1)), np.array([1, 3, 3, 1])),
     [[[[1.0], [2.0], [1.0]], [[2.0], [4.0], [2.0]], [[1.0], [2.0], [1.0]]]]),
]


@pytest.mark.parametrize("call,want", GOOD, ids=range(len(GOOD)))
def test_the_values_accepted_before_still_are(call: Any, want: Any) -> None:
    np.testing.assert_allclose(np.asarray(call()), want, rtol=1e-12)
