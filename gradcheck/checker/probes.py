"""f's values at the probe points of one line through the sample: kept so that numeric
derivatives along the same tangents share them.

A kink test compares one-sided derivatives from the same steps that the central
derivative before it used: ``f(x + h*u)`` at ``h = h0 / 1.4**i`` on both sides, and ``f(x)``.
Those calls are the expensive part (each is a call of a path, and at 10^6 elements several
passes over the arrays).  The caller of :mod:`gradcheck.checker.numeric` vouches that f,
the sample and the tangents are the same for every call it hands one :class:`Probes` to.
"""

from __future__ import annotations

import numpy as np

__all__ = ["Probes", "Budget", "BUDGET"]

#: Most bytes of probe values one :class:`Probes` keeps (f(x) and seven probes of a
#: 10^6-element float64 output), or the probes of several lines sharing one
#: :class:`Budget`; beyond, probes are computed and not kept.
BUDGET = 64 * 2 ** 20


class Budget:
    """Bytes the probes of one or more lines may still keep."""

    def __init__(self, nbytes: int = BUDGET) -> None:
        self.total = self.left = nbytes

    def take(self, value: np.ndarray) -> bool:
        """Whether ``value`` fits; if so it is counted and made read-only."""
        if value.nbytes > self.left:
            return False
        self.left -= value.nbytes
        value.flags.writeable = False
        return True


class Probes:
    """f(x) with its output layout, and ``h -> (f(x + h*u) ravelled, h taken, rounding off
    the line)``, as :class:`gradcheck.checker.numeric._Problem` computes them.  Values kept
    are read-only: a caller that wrote into one would change every later reader's."""

    def __init__(self, budget: int | Budget = BUDGET) -> None:
        #: What may still be kept: this line's own, or shared with other lines' probes.
        self.budget = budget if isinstance(budget, Budget) else Budget(budget)
        self.nbytes = 0
        self.sample: tuple[np.ndarray, tuple[int, ...], tuple[int, ...]] | None = None
        self._at: dict[float, tuple[np.ndarray, float, float]] = {}
        #: Probe values handed out from here instead of computed again.
        self.reused = 0

    def _room(self, value: np.ndarray) -> bool:
        if not self.budget.take(value):
            return False
        self.nbytes += value.nbytes
        return True

    def keep_sample(self, value: np.ndarray, out_shape: tuple[int, ...],
                    sizes: tuple[int, ...]) -> None:
        if self.sample is None and self._room(value):
            self.sample = (value, out_shape, sizes)

    def at(self, h: float) -> tuple[np.ndarray, float, float] | None:
        found = self._at.get(h)
        self.reused += found is not None
        return found

    def keep(self, h: float, found: tuple[np.ndarray, float, float]) -> None:
        if h not in self._at and self._room(found[0]):
            self._at[h] = found

    def __repr__(self) -> str:
        return f"Probes({len(self._at)} probes, {self.nbytes} bytes, {self.reused} reused)"

