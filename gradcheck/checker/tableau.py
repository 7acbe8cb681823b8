"""One row of Ridders' tableau, element by element: the arithmetic of
:func:`gradcheck.checker.numeric._steps`, which decides the steps and when to stop.

Row ``i`` holds the central (or one-sided) difference at step ``h0 / 1.4**i`` and its ``i``
extrapolations; each entry carries its rounding noise.  Every element keeps the entry with
the smallest error estimate seen so far.  All of it is elementwise, so a row is worked out
a block of elements at a time (:data:`BLOCK`): the dozen arrays a cell reads and writes then
stay in a core's cache.  At 10^6 float64 elements each array is 8 MB, and each of a row's
cells made about twenty passes over them.  The bits are the same as one pass over
everything.  Values are real: a complex f is differentiated as its real and imaginary
parts.
"""

from __future__ import annotations

import numpy as np

__all__ = ["SAFE", "SPREAD_SAFETY", "BLOCK", "Entry", "Best", "extend", "spread"]

SAFE = 2.0  # a diagonal entry that moved by more than SAFE * best error ends the tableau
# The winning entry is the one whose neighbours happened to agree best, and neighbours share
# f values, so their spread is biased low (most visibly when f cancels internally).
SPREAD_SAFETY = 2.0
#: Elements per block: 2^15 float64 are 256 KB per array, so the arrays a cell works on
#: stay near a core's 1 MB L2 cache.  A 6-row tableau's arithmetic on this machine
#: (``bench/check_cost.py``), blocked against whole: 0.72-0.82x at 10^5 elements and
#: 0.56-0.72x at 10^6; blocks of 2^14 gave the same, of 2^16 0.94x at 10^5.  Arrays this
#: small or smaller are worked on whole.
BLOCK = 2 ** 15

#: An entry of the tableau: the derivative estimate and its rounding noise, both flat.
Entry = tuple[np.ndarray, np.ndarray]


class Best:
    """Per element: the winning entry's value and error estimate, whether that error is the
    rounding noise, and whether the element is still live (its diagonal has not moved by
    more than :data:`SAFE` errors)."""

    def __init__(self, like: np.ndarray) -> None:
        self.value = like * 0
        self.error = np.full(like.shape, np.inf)
        self.live = np.ones(like.shape, dtype=bool)
        self.noisy = np.zeros(like.shape, dtype=bool)


def extend(first: Entry, prev: list[Entry], ratio: float, best: Best) -> list[Entry]:
    """Row ``len(prev)`` of the tableau from its first entry (the difference at this row's
    step) and the previous row: its extrapolations, with ``best`` updated in place (winners,
    then the elements whose diagonal moved too far are no longer live)."""
    i = len(prev)
    row = [first] + [(np.empty_like(first[0]), np.empty_like(first[1])) for _ in range(i)]
    if not i:
        return row
    if first[0].size <= BLOCK:
        _block(row, prev, ratio, best.value, best.error, best.live, best.noisy)
        return row
    for start in range(0, first[0].size, BLOCK):
        cut = slice(start, start + BLOCK)
        _block([(a[cut], n[cut]) for a, n in row], [(a[cut], n[cut]) for a, n in prev],
               ratio, best.value[cut], best.error[cut], best.live[cut], best.noisy[cut])
    return row


def _block(row: list[Entry], prev: list[Entry], ratio: float, value: np.ndarray,
           error: np.ndarray, live: np.ndarray, noisy: np.ndarray) -> None:
    """:func:`extend` on one block: views into the whole arrays, written in place."""
    i = len(prev)
    wide, better, flag = np.empty_like(row[0][0]), np.empty(live.shape, bool), \
        np.empty(live.shape, bool)
    for j in range(1, i + 1):
        (a1, n1), (a0, n0), (a, n), fac = row[j - 1], prev[j - 1], row[j], ratio ** j
        np.multiply(a1, fac, out=a)  # (fac * a1 - a0) / (fac - 1)
        a -= a0
        a /= fac - 1
        np.multiply(n1, fac, out=n)  # noise adds: (fac * n1 + n0) / (fac - 1)
        n += n0
        n /= fac - 1
        spread(a, [a1, a0] + ([prev[j][0]] if j < i else []), wide)
        wide *= SPREAD_SAFETY
        e = np.maximum(wide, n)
        np.less(e, error, out=better)
        better &= live
        # the winners, in place (the same values np.where would give)
        np.copyto(value, a, where=better)
        np.copyto(error, e, where=better)
        np.copyto(noisy, np.greater_equal(n, wide, out=flag), where=better)
    moved = np.subtract(row[-1][0], prev[-1][0])
    np.abs(moved, out=moved)
    live &= ~np.greater_equal(moved, error * SAFE, out=flag)  # (not <: a nan stays live)


def spread(a: np.ndarray, neighbours: list[np.ndarray],
           out: np.ndarray | None = None) -> np.ndarray:
    """Largest ``|a - b|`` over the entries ``b`` of ``neighbours``, as a running maximum
    (into ``out``, shaped and typed like ``a``, when given)."""
    out = np.subtract(a, neighbours[0], out=out)
    np.abs(out, out=out)
    diff = np.empty_like(a)
    for b in neighbours[1:]:
        np.subtract(a, b, out=diff)
        np.maximum(out, np.abs(diff, out=diff), out=out)
    return out
