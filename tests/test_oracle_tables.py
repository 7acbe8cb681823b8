"""The equivalents every op declares (``equivalents=`` with its rules): each names a registry
op, and computes that op's value in its framework."""

from __future__ import annotations

import numpy as np
import pytest

import gradcheck
from gradcheck.checker.explore import draw_examples, stream_seed
from gradcheck.checker.gauge import align_signs
from gradcheck.checker.references import get_reference
from gradcheck.checker.targets import OpTarget
from gradcheck.ops import refs
from gradcheck.oracles import NoEquivalent, equivalence, get_oracle, ops_with_equivalents

REGISTERED = {op.name for op in gradcheck.default_registry}
#: Both sides compute the same function in float64 (different kernels, same value).
FORWARD_TOL = {"rtol": 1e-9, "atol": 1e-9}


@pytest.mark.parametrize("reference", ["autograd", "tensorflow"])
def test_every_equivalent_names_a_registry_op(reference: str) -> None:
    names = ops_with_equivalents(reference)
    assert names, f"no op declares a {reference} equivalent"
    unknown = sorted(set(names) - REGISTERED)
    assert not unknown, f"{reference} equivalents of ops the registry does not have: {unknown}"
    for name in names:
        equiv = equivalence(reference, name)
        assert equiv is not None and (equiv.reference, equiv.op) == (reference, name)


def test_equivalents_are_looked_up_without_the_frameworks() -> None:
    # op metadata only: the look-up imports no framework (see test_oracle_unavailable)
    entry = equivalence("tensorflow", "nn.elu")
    assert entry is not None and entry.reference == "tensorflow" and entry.op == "nn.elu"
    assert equivalence("autograd", "linalg.expm") is None  # autograd has no expm rule
    assert equivalence("tensorflow", "linalg.eigh") is not None
    assert equivalence("tensorflow", "linalg.eigh").gauges == (  # type: ignore[union-attr]
        OpTarget(gradcheck.default_registry.get("linalg.eigh")).gauge)


def _forward_agrees(reference: str, name: str) -> list[str]:
    """Problems with ``name``'s equivalent on a few examples: its values must match the op's.

    The equivalent runs as the checker runs it (the reference binds the op at the example);
    an example the equivalent does not cover (NoEquivalent) is skipped, not the op."""
    target = OpTarget(gradcheck.default_registry.get(name))
    equiv = equivalence(reference, name)
    assert equiv is not None
    ref = get_reference(reference)
    problems = []
    for example in draw_examples(target.strategy("float64"), 3, stream_seed(0, name, "t")):
        try:
            bound = ref.bind(target, example)
            theirs = [np.asarray(t) for t in bound.forward(bound.primals)]
        except (NoEquivalent, refs.NoEquivalent):
            continue
        ours_problem = target.bind(example)
        with np.errstate(all="ignore"):
            ours = [np.asarray(o) for o in ours_problem.forward(ours_problem.primals)]
        if equiv.gauges:
            factors = align_signs(equiv.gauges, theirs, ours)
            assert factors is not None, f"{name}: outputs cannot be sign-aligned"
            theirs = [t * f for t, f in zip(theirs, factors, strict=True)]
        if len(theirs) != len(ours):
            problems.append(f"{name}: {len(theirs)} outputs, the op {len(ours)}")
        for k, (t, o) in enumerate(zip(theirs, ours, strict=False)):
            if t.shape != o.shape or not np.allclose(t, o, equal_nan=True, **FORWARD_TOL):
                problems.append(f"{name} output {k} at shapes {example.shapes} "
                                f"params {example.params}")
    return problems


@pytest.mark.autograd
def test_autograd_equivalents_compute_the_ops() -> None:
    assert get_oracle("autograd").status() is None
    problems = [p for name in ops_with_equivalents("autograd")
                for p in _forward_agrees("autograd", name)]
    assert not problems, problems


@pytest.mark.tensorflow
def test_tensorflow_equivalents_compute_the_ops() -> None:
    assert get_oracle("tensorflow").status() is None
    problems = [p for name in ops_with_equivalents("tensorflow")
                for p in _forward_agrees("tensorflow", name)]
    assert not problems, problems


def test_align_signs_flips_vectors_together() -> None:
    rng = np.random.default_rng(0)
    q, _ = np.linalg.qr(rng.standard_normal((3, 3)))
    w = np.array([1.0, 2.0, 3.0])
    flipped = q * np.array([1.0, -1.0, -1.0])
    gauge = OpTarget(gradcheck.default_registry.get("linalg.eigh")).gauge
    factors = align_signs(gauge, [w, flipped], [w, q])
    assert factors is not None
    np.testing.assert_array_equal(factors[0], np.ones(3))
    np.testing.assert_array_equal(flipped * factors[1], q)
    assert align_signs(OpTarget(gradcheck.default_registry.get("sin")).gauge, [w], [w]) is None
