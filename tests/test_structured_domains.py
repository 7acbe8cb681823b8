"""Structured and non-float domains (segment ids, symmetric, triangular, banded, orthogonal,
real with exact zeros) and tangent spaces: what they draw, how a name or a table builds them,
and that the checker's primal directions lie in a domain's tangent space."""

from __future__ import annotations

import numpy as np
import pytest

from gradcheck.checker.directions import Directions, tangent_domains
from gradcheck.domains import (
    NAMED,
    Banded,
    Orthogonal,
    RealWithZeros,
    SegmentIds,
    Symmetric,
    Triangular,
    as_domain,
    project_tangent,
)


def _rng() -> np.random.Generator:
    return np.random.default_rng(7)


def test_new_domains_are_registered_by_name() -> None:
    for name in ("segment_ids", "unsorted_segment_ids", "symmetric", "lower_triangular",
                 "upper_triangular", "banded", "orthogonal", "real_with_zeros"):
        assert name in NAMED


def test_sorted_segment_ids_cover_every_segment_in_order() -> None:
    ids = SegmentIds(num_segments=4).sample(_rng(), (9,), np.float64)
    assert ids.dtype == np.int64 and np.all(np.diff(ids) >= 0)
    assert set(ids.tolist()) == {0, 1, 2, 3}
    assert not SegmentIds().differentiable


def test_unsorted_segment_ids_take_num_segments_from_a_param() -> None:
    dom = as_domain({"domain": "unsorted_segment_ids", "num_segments": "k"})
    assert isinstance(dom, SegmentIds) and not dom.sorted  # the named domain's own setting
    ids = dom.sample(_rng(), (50,), np.float64, context={"params": {"k": 5}})
    assert ids.min() >= 0 and ids.max() == 4 and np.any(np.diff(ids) < 0)
    with pytest.raises(ValueError, match="names param 'k'"):
        dom.sample(_rng(), (3,), np.float64, context={"params": {}})


def test_matrix_structures() -> None:
    rng = _rng()
    s = Symmetric().sample(rng, (2, 4, 4), np.float64)
    assert np.array_equal(s, np.swapaxes(s, -1, -2))
    low = Triangular().sample(rng, (4, 4), np.float64)
    up = as_domain({"domain": "upper_triangular", "tangent": "upper_triangular"})
    assert isinstance(up, Triangular) and not up.lower
    u = up.sample(rng, (4, 4), np.float64)
    assert np.array_equal(low, np.tril(low)) and np.array_equal(u, np.triu(u))
    assert np.min(np.abs(np.diag(low))) >= 1.0
    b = Banded(lower=1, upper=0).sample(rng, (5, 5), np.float64)
    assert np.array_equal(b, np.tril(np.triu(b, -1)))
    assert np.linalg.cond(b) < 50
    q = Orthogonal().sample(rng, (3, 3), np.float64)
    assert np.allclose(q.T @ q, np.eye(3), atol=1e-12)


def test_real_with_zeros_has_exact_zeros() -> None:
    x = RealWithZeros(p=0.2).sample(_rng(), (3, 4), np.float32)
    assert x.dtype == np.float32 and np.any(x == 0) and np.any(x != 0)
    with pytest.raises(ValueError, match="p must be in"):
        RealWithZeros(p=1.5)


def test_tangent_projections() -> None:
    a = np.arange(9.0).reshape(3, 3)
    assert np.array_equal(project_tangent("symmetric", a), (a + a.T) / 2)
    assert np.array_equal(project_tangent("lower_triangular", a), np.tril(a))
    band = Banded(lower=0, upper=1, tangent="banded").project(a)
    assert np.array_equal(band, np.triu(np.tril(a, 1)))
    with pytest.raises(ValueError, match="unknown tangent 'skew'"):
        as_domain({"domain": "spd", "tangent": "skew"})
    with pytest.raises(ValueError, match="needs \\(..., m, n\\) matrices"):
        project_tangent("symmetric", np.ones(3))


def test_directions_lie_in_the_tangent_space() -> None:
    like = [np.zeros((2, 3, 3)), np.zeros(4)]
    spaces = [as_domain({"domain": "spd", "tangent": "symmetric"}), None]
    u, w = Directions(3, "float64", spaces).draw("u", like, "primals")
    assert np.array_equal(u, np.swapaxes(u, -1, -2)) and w.shape == (4,)
    # outputs are never projected; the same name draws the same (projected) arrays
    (v,) = Directions(3, "float64", spaces[:1]).draw("u", like[:1], "outputs")
    assert not np.array_equal(v, np.swapaxes(v, -1, -2))
    assert np.array_equal(Directions(3, "float64", spaces).draw("u", like, "primals")[0], u)


def test_tangent_domains_of_a_target() -> None:
    import gradcheck.numpy as gnp
    from gradcheck.checker.explore import draw_examples
    from gradcheck.checker.targets import as_target

    target = as_target(lambda a, b: gnp.sum(a * b),
                       inputs=[{"domain": "spd", "tangent": "symmetric"}, "spd"])
    example = draw_examples(target.strategy("float64"), 1, seed=0)[0]
    spaces = tangent_domains(target, example)
    assert spaces is not None and [d.tangent for d in spaces] == ["symmetric", "full"]
    plain = as_target(lambda a: gnp.sum(a * a), inputs=["spd"])
    assert tangent_domains(plain, example) is None  # nothing to project
