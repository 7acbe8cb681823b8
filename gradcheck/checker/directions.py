"""The random directions that probe a path at one example: tangents, cotangents, dummies.

Each is drawn per name from the example's seed, so a check run alone (while shrinking) sees
exactly the directions it saw in the full run, and a reference framework's session sees the
target's.

Tangents live in each differentiated input's tangent space (its domain's ``tangent``: every
entry, or symmetric, triangular or banded matrices; see :data:`gradcheck.domains.TANGENTS`).
A function of symmetric matrices that reads one triangle (``tf.linalg.cholesky``) is then
checked as a function of symmetric matrices: its JVP along symmetric directions, and its
gradient through ``<J^T v, u>`` on them, i.e. only the gradient's projection on that space.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from typing import Any

import numpy as np

from gradcheck.domains import Domain

__all__ = ["Directions", "tangent_domains"]


def tangent_domains(target: Any, example: Any) -> list[Domain | None] | None:
    """The domain of each differentiated input of ``target`` at ``example`` (None when the
    target does not say, or when every tangent space is "full": nothing to project)."""
    spec = getattr(target, "spec", None)
    domains = getattr(spec, "domains", None) or getattr(target, "domains", None)
    positions = getattr(target, "positions", None)
    if not isinstance(domains, (list, tuple)) or positions is None:
        return None
    if all(getattr(d, "tangent", "full") == "full" for d in domains):
        return None
    return [domains[i] if i < len(domains) else None for i in positions(example)]


class Directions:
    """Gaussian arrays shaped like given arrays, fixed by (seed, name), cached per name."""

    def __init__(self, seed: int, dtype: str,
                 spaces: Sequence[Domain | None] | None = None) -> None:
        self.seed, self.dtype = seed, dtype
        #: Per primal, the domain whose tangent space primal-shaped directions lie in.
        self.spaces = spaces
        self._drawn: dict[tuple[str, str, float], list[np.ndarray]] = {}

    def draw(self, name: str, like: Sequence[np.ndarray], kind: str,
             scale: float = 1.0) -> list[np.ndarray]:
        """Arrays shaped like ``like`` (``kind`` names that space: primals or outputs), each
        in its array's dtype (an output may be float32 for float64 inputs)."""
        key = (name, kind, scale)
        if key not in self._drawn:
            rng = np.random.default_rng([self.seed, zlib.crc32(name.encode())])
            drawn = [_scaled(rng.standard_normal(a.shape), scale).astype(
                a.dtype if a.dtype.kind == "f" else self.dtype, copy=False) for a in like]
            if kind == "primals":
                drawn = self.project(drawn)
            for a in drawn:  # handed out as they are: no caller may write into them
                if isinstance(a, np.ndarray):  # (a 0-d draw is a numpy scalar, immutable)
                    a.flags.writeable = False
            self._drawn[key] = drawn
        return list(self._drawn[key])

    def project(self, arrays: Sequence[np.ndarray]) -> list[np.ndarray]:
        """Primal-shaped ``arrays`` projected on the tangent spaces; arrays after the primals
        (a cotangent, in a second-order linearization's inputs) are left as they are."""
        out = list(arrays)
        if self.spaces is None or len(self.spaces) > len(out):
            return out
        for k, d in enumerate(self.spaces):
            if d is not None and d.tangent != "full" and np.ndim(out[k]) >= 2:
                out[k] = d.project(out[k])
        return out

    @property
    def projects(self) -> bool:
        """Whether some primal's tangent space is not "full"."""
        return self.spaces is not None and any(
            d is not None and d.tangent != "full" for d in self.spaces)


def _scaled(a: np.ndarray, scale: float) -> np.ndarray:
    """``a * scale``, in place (``a`` is a fresh draw): one pass over it fewer, none at 1."""
    if scale != 1.0:
        a *= scale
    return a
