"""What the checker works out once instead of at every call stays right when it must change:
parameters a call may change, an op whose forward is replaced."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import gradcheck.numpy as gnp
from gradcheck.checker.paths import EngineProblem, InputMutated
from gradcheck.domains import REAL
from gradcheck.engine import Registry
from gradcheck.extend import define_op

X = np.array([0.3, -1.1, 2.0])
V = np.array([0.7, -0.2, 1.3])


def test_list_parameters_are_fresh_at_every_call() -> None:
    """A call that changes a list in its parameters changes its own copy, never the next
    call's (the parameters' tree is flattened once per problem, rebuilt per call)."""
    seen = []

    def f(x: Any, weights: list[float], meta: tuple[int, ...]) -> Any:
        seen.append((list(weights), meta))
        weights.append(99.0)
        return gnp.sin(x) * weights[0]

    problem = EngineProblem(f, [X], {"weights": [2.0], "meta": (1, 2)}, [0])
    first = problem.vjp([X], [V])
    second = problem.vjp([X], [V])
    assert seen == [([2.0], (1, 2)), ([2.0], (1, 2))]
    np.testing.assert_array_equal(first[0], second[0])
    np.testing.assert_allclose(first[0], 2.0 * V * np.cos(X))


def test_array_parameters_are_guarded_at_every_call() -> None:
    """An array among the parameters is copied and watched at each call: a write into it is
    caught every time, and the problem's own parameters never change."""
    scale = np.array([1.5, 1.5, 1.5])

    def f(x: Any, scale: np.ndarray) -> Any:
        scale *= 2
        return gnp.sin(x) * scale

    problem = EngineProblem(f, [X], {"scale": scale}, [0])
    for _ in range(2):
        with pytest.raises(InputMutated, match="params"):
            problem.vjp([X], [V])
    np.testing.assert_array_equal(scale, [1.5, 1.5, 1.5])


def test_parameter_names_follow_a_replaced_forward() -> None:
    """Positional parameters are named from the forward's signature, read once and kept; a
    replaced forward is read again, and a forward without a readable signature takes none."""
    op = define_op("scaled", lambda x, factor=1.0: x * factor,
                   vjp=lambda g, out, x, factor=1.0: (g * factor,), family="test",
                   inputs=(REAL,), shapes="(...)", registry=Registry("overhead"))
    assert op.param_names == ("factor",)
    np.testing.assert_array_equal(op(X, 3.0), X * 3.0)
    op.forward = lambda x, power=1.0, shift=0.0: x ** power + shift
    assert op.param_names == ("power", "shift")
    np.testing.assert_array_equal(op(X, 2.0, 1.0), X ** 2.0 + 1.0)
    op.forward = np.sin  # a ufunc: no signature to read
    assert op.param_names == ()
    with pytest.raises(TypeError, match="positional"):
        op(X, 2.0)


def test_entry_points_are_read_once_and_again_for_an_unknown_name(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Every check names its references: the installed packages' entry points are read once
    per process, and read again when a reference is asked for that is not known yet."""
    import importlib.metadata
    from types import SimpleNamespace

    from gradcheck.checker import references

    installed = [SimpleNamespace(name="first", value="somewhere:first")]
    reads = []

    def entry_points(group: str) -> list[Any]:
        reads.append(group)
        return list(installed)

    monkeypatch.setattr(importlib.metadata, "entry_points", entry_points)
    monkeypatch.setattr(references, "_FACTORIES", {})
    monkeypatch.setattr(references, "_SCANNED", [])
    assert "first" in references.known_references()
    assert "first" in references.known_references(("first", "numeric"))
    assert reads == [references.ENTRY_POINT_GROUP]
    installed.append(SimpleNamespace(name="later", value="somewhere:later"))
    assert "later" in references.known_references(("later",))
    assert len(reads) == 2
    with pytest.raises(ValueError, match="unknown reference 'missing'"):
        references.get_reference("missing")
    assert len(reads) == 3
