"""The random directions that probe a path at one example: tangents, cotangents, dummies.

Each is drawn per name from the example's seed, so a check run alone (while shrinking) sees
exactly the directions it saw in the full run, and a reference framework's session sees the
target's.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence

import numpy as np

__all__ = ["Directions"]


class Directions:
    """Gaussian arrays shaped like given arrays, fixed by (seed, name), cached per name."""

    def __init__(self, seed: int, dtype: str) -> None:
        self.seed, self.dtype = seed, dtype
        self._drawn: dict[tuple[str, str, float], list[np.ndarray]] = {}

    def draw(self, name: str, like: Sequence[np.ndarray], kind: str,
             scale: float = 1.0) -> list[np.ndarray]:
        """Arrays shaped like ``like`` (``kind`` names that space: primals or outputs), each
        in its array's dtype (an output may be float32 for float64 inputs)."""
        key = (name, kind, scale)
        if key not in self._drawn:
            rng = np.random.default_rng([self.seed, zlib.crc32(name.encode())])
            self._drawn[key] = [(rng.standard_normal(a.shape) * scale).astype(
                a.dtype if a.dtype.kind == "f" else self.dtype) for a in like]
        return [a.copy() for a in self._drawn[key]]
