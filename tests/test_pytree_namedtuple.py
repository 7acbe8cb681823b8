"""A namedtuple of tensors is a container, not a leaf: its fields keep their derivatives."""

from __future__ import annotations

from collections import namedtuple

import numpy as np

import gradcheck as gc
import gradcheck.numpy as gnp
from gradcheck.engine.pytree import flatten, unflatten

Pair = namedtuple("Pair", ["first", "second"])


def test_namedtuple_round_trips_through_flatten() -> None:
    leaves, tree = flatten({"a": Pair(1, [2, 3])})
    assert leaves == [1, 2, 3]
    rebuilt = unflatten(tree, leaves)
    assert rebuilt == {"a": Pair(1, [2, 3])} and type(rebuilt["a"]) is Pair


def test_namedtuple_output_keeps_its_derivatives() -> None:
    x = np.array([0.3, -0.7])
    _, jt = gc.jvp(lambda v: Pair(gnp.sin(v), v * v), [x], [np.ones(2)])
    np.testing.assert_allclose(np.asarray(jt.first), np.cos(x))
    np.testing.assert_allclose(np.asarray(jt.second), 2 * x)


def test_namedtuple_output_is_checked_not_silently_zero() -> None:
    report = gc.check(lambda v: Pair(gnp.sin(v), v * v), inputs=["real"], examples=2)
    assert report.passed, report.findings
