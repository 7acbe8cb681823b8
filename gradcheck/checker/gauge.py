"""Gauge freedom: outputs defined only up to the sign of each vector (eigh, svd, qr).

An op declares ``gauge=((output, axis), ...)``: the k-th vector along ``axis`` of each
listed output may be negated together (one sign per k) without changing the decomposition.
Two implementations may pick different signs.  :class:`SignAligned` multiplies a reference's
outputs by constant ±1 factors that make them match the target's, which is differentiable and
changes no derivative's correctness: cotangents and tangents of the outputs are multiplied by
the same factors.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["align_signs", "SignAligned"]

Arrays = list[np.ndarray]


def align_signs(gauge: Sequence[tuple[int, int]], outputs: Sequence[Any],
                target: Sequence[Any]) -> Arrays | None:
    """One ±1 array per output that makes ``outputs`` match ``target`` vector by vector, or
    None without a gauge (or when the shapes differ)."""
    if not gauge or len(outputs) != len(target):
        return None
    first, axis = gauge[0]
    ours, theirs = np.asarray(outputs[first]), np.asarray(target[first])
    if ours.shape != theirs.shape or ours.ndim < 2:
        return None
    other = -2 if axis == -1 else -1
    dots = np.sum(ours * theirs, axis=other, keepdims=True)
    signs = np.where(dots < 0, -1.0, 1.0)
    factors = [np.ones(np.shape(o)) for o in outputs]
    for index, ax in gauge:
        factors[index] = np.broadcast_to(signs if ax == axis else np.swapaxes(signs, -1, -2),
                                         np.shape(outputs[index])).copy()
    return factors


def _times(values: Sequence[Any], factors: Arrays) -> Arrays:
    return [np.asarray(v) * f.astype(np.asarray(v).dtype) for v, f in
            zip(values, factors, strict=True)]


class SignAligned:
    """``problem`` with its outputs multiplied by constant ``factors`` (one per output)."""

    def __init__(self, problem: Any, factors: Arrays) -> None:
        self.inner, self.factors = problem, factors
        self.primals = problem.primals

    def __getattr__(self, name: str) -> Any:  # counts, describe hooks, accuracy, ...
        return getattr(self.inner, name)

    def forward(self, primals: Sequence[Any]) -> Arrays:
        return _times(self.inner.forward(primals), self.factors)

    def vjp(self, primals: Sequence[Any], cotangents: Sequence[Any]) -> Arrays:
        return list(self.inner.vjp(primals, _times(cotangents, self.factors)))

    def jvp(self, primals: Sequence[Any], tangents: Sequence[Any]) -> Arrays:
        return _times(self.inner.jvp(primals, tangents), self.factors)

    def double_vjp(self, primals: Sequence[Any], tangents: Sequence[Any],
                   dummies: Sequence[Any]) -> tuple[Arrays, Any]:
        out, flag = self.inner.double_vjp(primals, tangents, _times(dummies, self.factors))
        return _times(out, self.factors), flag

    def hvp_fwd_rev(self, primals: Sequence[Any], cotangents: Sequence[Any],
                    tangents: Sequence[Any], cotangent_tangents: Sequence[Any]) -> Arrays:
        return list(self.inner.hvp_fwd_rev(primals, _times(cotangents, self.factors), tangents,
                                           _times(cotangent_tangents, self.factors)))

    def hvp_rev_rev(self, primals: Sequence[Any], cotangents: Sequence[Any],
                    second: Sequence[Any]) -> tuple[Arrays, Arrays]:
        h, j = self.inner.hvp_rev_rev(primals, _times(cotangents, self.factors), second)
        return list(h), _times(j, self.factors)

    def hvp_rev_fwd(self, primals: Sequence[Any], tangents: Sequence[Any],
                    cotangents: Sequence[Any]) -> tuple[Arrays, Arrays]:
        h, g = self.inner.hvp_rev_fwd(primals, tangents, _times(cotangents, self.factors))
        return list(h), list(g)
