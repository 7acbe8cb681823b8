"""Comparisons: an analytic path against the numeric reference, or against another path.

A path is a linear map at a point, of one of two kinds: a *forward* map takes a direction in
the inputs' space (``jvp``: ``u -> J u``), a *transpose* map takes a cotangent in the
outputs' space (``vjp``: ``v -> J^T v``).  The numeric reference differentiates a plain numpy
function ``phi`` (:class:`Linearization`) at the same point.

Fast mode projects: a forward map is compared element by element with the numeric
directional derivative along the same direction; a transpose map through the scalar
``<J^T v, u> = <v, J u>``.  Either way the cost is a handful of evaluations whatever the input
size.  Full mode builds the whole Jacobian (one numeric column per input element) and the
whole analytic matrix (one basis vector per column or row).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gradcheck.checker import numeric
from gradcheck.checker.tolerances import Tolerances, Verdict, elementwise, scalar, top

__all__ = ["Outcome", "Linearization", "flat", "dot", "absdot", "fast_forward",
           "fast_transpose", "full_forward", "full_transpose", "locate", "where", "top"]

Arrays = list[np.ndarray]
LinearMap = Callable[[Arrays], Arrays]


@dataclass
class Outcome:
    """One comparison or check on one example.  ``kind`` is None when it passed, else the
    finding kind; ``directions`` holds the tangents/cotangents that reproduce it; ``side``
    is "" when the checked target computed the path, else the reference framework that did."""

    path: str
    reference: str
    kind: str | None
    verdict: Verdict | None = None
    message: str = ""
    details: dict[str, Any] = field(default_factory=dict)
    directions: dict[str, Any] = field(default_factory=dict)
    worst_index: list[int] | None = None
    traceback: str | None = None
    side: str = ""

    @property
    def key(self) -> tuple[str, str, str, str]:
        return (self.kind or "pass", self.path, self.reference, self.side)

    @property
    def check(self) -> tuple[str, str, str]:
        """Which check produced it: (path, reference, side)."""
        return (self.path, self.reference, self.side)


def flat(arrays: Sequence[Any]) -> np.ndarray:
    """The arrays raveled and concatenated, as float64."""
    parts = [np.asarray(a, dtype=np.float64).ravel() for a in arrays]
    return np.concatenate(parts) if parts else np.zeros(0)


def dot(a: Sequence[Any], b: Sequence[Any]) -> float:
    """``<a, b>`` summed over lists of arrays, in float64 (numpy's pairwise sum, not BLAS:
    the same bits whatever the machine's thread count)."""
    with np.errstate(all="ignore"):
        return float(np.add.reduce(flat(a) * flat(b), axis=None))  # np.sum, unwrapped


def absdot(a: Sequence[Any], b: Sequence[Any]) -> float:
    """``<|a|, |b|>``: bounds the rounding of :func:`dot`."""
    with np.errstate(all="ignore"):
        return float(np.add.reduce(np.abs(flat(a) * flat(b)), axis=None))


def locate(index: int, shapes: Sequence[tuple[int, ...]]) -> tuple[int, tuple[int, ...]]:
    """Flat index into concatenated arrays -> (which array, multi-index within it)."""
    for k, shape in enumerate(shapes):
        size = int(np.prod(shape, dtype=np.int64))
        if index < size:
            return k, tuple(int(i) for i in np.unravel_index(index, shape)) if shape else ()
        index -= size
    raise IndexError("index beyond the concatenated arrays")


def where(index: int, shapes: Sequence[tuple[int, ...]], what: str) -> tuple[list[int], str]:
    """The worst element as a list and a phrase (``output 1 at (0, 2)``)."""
    k, idx = locate(index, shapes)
    noun = what if what == "element" else f"{what} element"  # never "element element"
    label = f"{what} {k} at {list(idx)}" if len(shapes) > 1 else f"{noun} {list(idx)}"
    if len(shapes) == 1 and not idx:  # a 0-d value: no index to give
        label = "the value" if what == "element" else f"the {what}"
    return ([k, *idx] if len(shapes) > 1 else list(idx)), label


class Linearization:
    """``phi`` (a numpy function of a list of float64 arrays, returning a list of arrays) at
    ``point``: what the numeric reference differentiates.  Results are cached."""

    def __init__(self, name: str, phi: Callable[..., Arrays], point: Sequence[np.ndarray],
                 out_shapes: Sequence[tuple[int, ...]]) -> None:
        self.name = name
        self.point = [np.asarray(p, dtype=np.float64) for p in point]
        self.out_shapes = [tuple(s) for s in out_shapes]
        self.in_shapes = [p.shape for p in self.point]
        self._phi = phi
        self.calls = numeric.count_evaluations(self._at)
        self._jacobian: tuple[np.ndarray, np.ndarray] | None = None
        self._f0: list[np.ndarray] | None = None
        self._derivatives: list[tuple[list[np.ndarray], tuple[np.ndarray, np.ndarray]]] = []
        #: Projects input-space arrays on the inputs' tangent spaces (see .directions); full
        #: mode then compares the Jacobians on those spaces only.
        self.project: Callable[[Arrays], Arrays] | None = None

    def _at(self, *args: np.ndarray) -> Arrays:
        """``phi``; its outputs at the point itself (the numeric reference's first call) are
        kept for :meth:`_coarse`, which would otherwise evaluate them again."""
        out = self._phi(list(args))
        if self._f0 is None and len(args) == len(self.point) and \
                all(a is p for a, p in zip(args, self.point, strict=True)):
            self._f0 = [np.asarray(o) for o in out]
        return out

    @property
    def argnums(self) -> tuple[int, ...]:
        return tuple(range(len(self.point)))

    @property
    def empty(self) -> bool:
        return not sum(p.size for p in self.point) or not sum(
            int(np.prod(s, dtype=np.int64)) for s in self.out_shapes)

    def derivative(self, dirs: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        """Numeric ``D phi[dirs]`` and its error estimate, both flat (cached: the paths that
        share a linearization and a direction share one numeric derivative)."""
        dirs = [np.asarray(u, np.float64) for u in dirs]
        for seen, result in self._derivatives:
            if all(np.array_equal(a, b) for a, b in zip(seen, dirs, strict=True)):
                return result
        result = self._derivative(dirs)
        self._derivatives.append((dirs, result))
        return result

    def _derivative(self, dirs: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        if self.empty:
            n = sum(int(np.prod(s, dtype=np.int64)) for s in self.out_shapes)
            return np.zeros(n), np.zeros(n)
        d = numeric.directional_derivative(self.calls, self.point, self.argnums, dirs)
        value, error = np.ravel(d.value).astype(np.float64), np.ravel(d.error)
        if not (np.all(np.isfinite(value)) and np.all(np.isfinite(error))):
            # the function is not finite near the point: no numeric reference here
            raise numeric.NonFiniteError(f"{self.name}: the numeric derivative or its error "
                                         "estimate is not finite at this sample")
        return value, error + self._coarse(d.step)

    def jacobian(self) -> tuple[np.ndarray, np.ndarray]:
        """The full numeric Jacobian, shape (outputs, inputs) flat, and its errors."""
        if self._jacobian is None:
            n_out = sum(int(np.prod(s, dtype=np.int64)) for s in self.out_shapes)
            n_in = sum(p.size for p in self.point)
            if self.empty:
                self._jacobian = np.zeros((n_out, n_in)), np.zeros((n_out, n_in))
            else:
                jac = numeric.numeric_jacobian_with_error(self.calls, self.point, self.argnums)
                extra = self._coarse(numeric.default_step(np.float64))[:, None]
                self._jacobian = (
                    np.hstack([j.reshape(n_out, -1) for j in jac.jacobians]).astype(np.float64),
                    np.hstack([e.reshape(n_out, -1) for e in jac.errors]) + extra)
        return self._jacobian

    def _coarse(self, step: float) -> np.ndarray:
        """Rounding noise of outputs coarser than float64 (``astype(x, float32)``), which the
        numeric error estimate, working in the inputs' float64, does not see: 4 ulps of each
        output over the smallest step of the tableau."""
        if self._f0 is None:
            self._f0 = [np.asarray(o) for o in self.calls.f(*self.point)]
        if all(o.dtype.kind != "f" or o.dtype.itemsize >= 8 for o in self._f0):
            return np.zeros(sum(o.size for o in self._f0))
        noise = [4 * np.finfo(o.dtype).eps * np.abs(o.astype(np.float64)).ravel()
                 if o.dtype.kind == "f" else np.zeros(o.size) for o in self._f0]
        return np.concatenate(noise) * numeric.SHRINK ** 5 / step

    def is_kink(self, dirs: Sequence[np.ndarray]) -> bool:
        """Left and right derivatives along ``dirs`` disagree (a point of non-differentiability)."""
        if self.empty:
            return False
        return numeric.is_kink(self.calls, self.point, self.argnums,
                               [np.asarray(u, np.float64) for u in dirs])

    def basis(self, shapes: Sequence[tuple[int, ...]], dtype: Any) -> list[Arrays]:
        """Every basis vector of a space made of arrays of ``shapes``."""
        out = []
        for k, shape in enumerate(shapes):
            for i in range(int(np.prod(shape, dtype=np.int64))):
                vec = [np.zeros(s, dtype=dtype) for s in shapes]
                vec[k].flat[i] = 1
                out.append(vec)
        return out


def fast_forward(lin: Linearization, analytic: Arrays, dirs: Arrays, tol: Tolerances,
                 natural: float = 0.0, rounding: float = 0.0) -> tuple[Verdict, str]:
    """A forward map's value along ``dirs`` against the numeric directional derivative.
    ``natural`` is the derivative scale of the problem (see ``Session.natural``),
    ``rounding`` the measured rounding noise of the analytic value."""
    n, e = lin.derivative(dirs)
    v = elementwise([flat(analytic)], [n], tol, [e], scale=natural * top(dirs),
                    noise=rounding)
    return v, (where(v.worst, lin.out_shapes, "output")[1] if v.worst is not None else "")


def fast_transpose(lin: Linearization, analytic: Arrays, cot: Arrays, dirs: Arrays,
                   tol: Tolerances, natural: float = 0.0,
                   rounding: float = 0.0) -> tuple[Verdict, str]:
    """A transpose map's value at ``cot``, projected on ``dirs``: ``<B(cot), dirs>`` against
    ``<cot, D phi[dirs]>``."""
    n, e = lin.derivative(dirs)
    lhs, rhs = dot(analytic, dirs), dot(cot, [n])
    magnitude = absdot(analytic, dirs) + absdot(cot, [n]) + \
        natural * float(np.sum(np.abs(flat(cot)))) * top(dirs)
    err = absdot(cot, [e])
    return scalar(lhs, rhs, magnitude, tol, err, rounding), "the projection <J^T v, u>"


def _split(flat_array: np.ndarray, shapes: Sequence[tuple[int, ...]]) -> Arrays:
    sizes = np.cumsum([int(np.prod(s, dtype=np.int64)) for s in shapes])[:-1]
    return [a.reshape(s) for a, s in zip(np.split(flat_array, sizes), shapes, strict=True)]


def _full(lin: Linearization, matrix: np.ndarray, tol: Tolerances, natural: float,
          rounding: float) -> tuple[Verdict, list[int], str]:
    jac, err = lin.jacobian()
    if lin.project is not None and jac.size:  # the Jacobians on the tangent spaces: J P
        basis = np.eye(jac.shape[1])
        proj = np.stack([np.concatenate([np.ravel(a) for a in lin.project(
            _split(basis[i], lin.in_shapes))]) for i in range(jac.shape[1])], axis=1)
        matrix, jac, err = matrix @ proj, jac @ proj, np.abs(err) @ np.abs(proj)
    v = elementwise([matrix], [jac], tol, [err], scale=natural, noise=rounding)
    if v.worst is None or not jac.size:
        return v, [], ""
    row, col = divmod(v.worst, jac.shape[1])
    out_idx, out_label = where(row, lin.out_shapes, "output")
    in_idx, in_label = where(col, lin.in_shapes, "input")
    return v, out_idx + in_idx, f"J[{out_label}; {in_label}]"


def full_forward(lin: Linearization, apply: LinearMap, dtype: Any, tol: Tolerances,
                 natural: float = 0.0, rounding: float = 0.0) -> tuple[Verdict, list[int], str]:
    """A forward map applied to every basis direction, against the full numeric Jacobian."""
    cols = [flat(apply(e)) for e in lin.basis(lin.in_shapes, dtype)]
    n_out = sum(int(np.prod(s, dtype=np.int64)) for s in lin.out_shapes)
    matrix = np.stack(cols, axis=1) if cols else np.zeros((n_out, 0))
    return _full(lin, matrix, tol, natural, rounding)


def full_transpose(lin: Linearization, apply: LinearMap, dtype: Any, tol: Tolerances,
                   natural: float = 0.0, rounding: float = 0.0,
                   ) -> tuple[Verdict, list[int], str]:
    """A transpose map applied to every basis cotangent, against the full numeric Jacobian."""
    rows = [flat(apply(e)) for e in lin.basis(lin.out_shapes, dtype)]
    n_in = sum(p.size for p in lin.point)
    matrix = np.stack(rows, axis=0) if rows else np.zeros((0, n_in))
    return _full(lin, matrix, tol, natural, rounding)
