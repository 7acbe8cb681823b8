"""A tableau worked out a block at a time gives the bits it gives worked out whole."""

from __future__ import annotations

import numpy as np
import pytest

from gradcheck.checker import numeric, tableau


def _rows(rng: np.random.Generator, n: int, dtype: str) -> list[tableau.Entry]:
    """Six rows' first entries that converge on some elements and wander on others, with a
    nan and an inf noise among them."""
    target = rng.standard_normal(n)
    firsts = []
    for i in range(6):
        h = 1.4 ** -i
        value = target + h ** 2 * rng.standard_normal(n) * (rng.random(n) < 0.7) + \
            (rng.random(n) < 0.1) * rng.standard_normal(n)
        noise = np.abs(rng.standard_normal(n)) * 10.0 ** rng.integers(-16, -2, n)
        value = value.astype(dtype)
        value[3] = np.nan
        noise[5] = np.inf
        firsts.append((value, noise))
    return firsts


def _run(firsts: list[tableau.Entry], ratio: float) -> tuple[tableau.Best, list[list]]:
    best = tableau.Best(firsts[0][0])
    prev: list[tableau.Entry] = []
    rows = []
    for first in firsts:
        prev = tableau.extend(first, prev, ratio, best)
        rows.append(prev)
    return best, rows


def _bits(a: np.ndarray) -> bytes:
    return np.ascontiguousarray(a).tobytes()


# real values only: a complex f is differentiated as its real and imaginary parts
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("ratio", [numeric.SHRINK, numeric.SHRINK ** 2])
def test_blocks_give_the_same_bits_as_one_pass(monkeypatch: pytest.MonkeyPatch, dtype: str,
                                               ratio: float) -> None:
    firsts = _rows(np.random.default_rng(7), 1000, dtype)
    monkeypatch.setattr(tableau, "BLOCK", 10 ** 9)
    whole, whole_rows = _run(firsts, ratio)
    monkeypatch.setattr(tableau, "BLOCK", 37)  # blocks that do not divide the size
    blocked, blocked_rows = _run(firsts, ratio)
    for name in ("value", "error", "live", "noisy"):
        assert _bits(getattr(whole, name)) == _bits(getattr(blocked, name)), name
    for a_row, b_row in zip(whole_rows, blocked_rows, strict=True):
        for (a, n), (b, m) in zip(a_row, b_row, strict=True):
            assert _bits(a) == _bits(b) and _bits(n) == _bits(m)
    # the tableau did something: some elements were won by extrapolations, some ended
    assert np.isfinite(whole.error).mean() > 0.9
    assert 0 < whole.live.mean() < 1


def test_a_derivative_is_the_same_whatever_the_block(monkeypatch: pytest.MonkeyPatch) -> None:
    """The whole numeric derivative (probes, tableau, convergence) along a direction."""
    rng = np.random.default_rng(3)
    x, u = rng.standard_normal(5000), rng.standard_normal(5000)

    def f(a: np.ndarray) -> np.ndarray:
        return np.sin(a) * np.abs(a) ** 1.5

    found = []
    for block in (10 ** 9, 999):
        monkeypatch.setattr(tableau, "BLOCK", block)
        found.append(numeric.directional_derivative(f, [x], 0, u))
    assert _bits(found[0].value) == _bits(found[1].value)
    assert _bits(found[0].error) == _bits(found[1].error)
    assert found[0].converged == found[1].converged
    exact = (np.cos(x) * np.abs(x) ** 1.5 + np.sin(x) * 1.5 * np.abs(x) ** 0.5 * np.sign(x)) * u
    assert np.all(np.abs(found[0].value - exact) <= found[0].error + 1e-9)


def test_the_bench_times_both_ways_and_leaves_the_block_as_it_was() -> None:
    import bench_scripts

    before = tableau.BLOCK
    rows = bench_scripts.load("check_cost").tableau_rows([1000, 70_000], repeat=1)
    assert tableau.BLOCK == before
    assert [r[0] for r in rows] == ["1e+03", "7e+04"]
    assert all(float(c) > 0 for r in rows for c in r[1:])
