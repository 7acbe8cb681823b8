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

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gradcheck.checker import numeric
from gradcheck.checker.probes import Budget, Probes
from gradcheck.checker.tolerances import Tolerances, Verdict, elementwise, flat, scalar, top

__all__ = ["Outcome", "Linearization", "flat", "dot", "absdot", "fast_forward",
           "fast_transpose", "full_forward", "full_transpose", "locate", "where", "top",
           "POOR", "INCONCLUSIVE", "KINK_COLUMNS", "share_forward", "share_transpose", "share_full",
           "same_line"]

Arrays = list[np.ndarray]
LinearMap = Callable[[Arrays], Arrays]

#: A comparison is looked at again (smaller numeric steps, then kinks along more directions)
#: when the numeric reference's share of its tolerance is more than this fraction of the
#: values compared: a derivative wrong by that much would pass.  (A smooth float64
#: function's is orders of magnitude below; relu at 1e-5, whose default steps cross 0,
#: gives 0.2.)  The error estimate counted is the tableau's own beyond the rounding of
#: outputs coarser than float64 (``_coarse``), which is known noise, not a poor estimate.
POOR = 0.01
#: ... and is inconclusive, never a pass, when the share is more than this fraction (an
#: error estimate of the order of the value) even from smaller steps, the numeric estimate
#: being refined only then (astype float32's second-order cells reach 0.011 from
#: quantization alone, where smaller steps estimate their own error too low).
INCONCLUSIVE = 0.1
#: At most this many basis directions are tested for a kink once full mode fails.
KINK_COLUMNS = 8


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


#: float64's eps: rounding the numeric reference's own error estimate already covers.
EPS64 = float(np.finfo(np.float64).eps)


def _digest(dirs: Sequence[np.ndarray]) -> bytes:
    """A digest of a list of directions' shapes and values (a dict key for their line)."""
    h = hashlib.blake2b(digest_size=16)
    for u in dirs:
        h.update(repr((u.shape, u.dtype.str)).encode())
        h.update(np.ascontiguousarray(u).data)
    return h.digest()


def same_line(a: Sequence[Any], b: Sequence[Any]) -> bool:
    """Whether two lists of directions are the same arrays or hold the same values: one
    line through the sample (a cached derivative, error estimate or probes serve both)."""
    return len(a) == len(b) and all(
        x is y or (np.shape(x) == np.shape(y) and np.array_equal(x, y))
        for x, y in zip(a, b, strict=True))


class _Phi:
    """``phi`` as the numeric reference calls it; its outputs at the point itself (the
    reference's first call) are kept in ``f0`` for :meth:`Linearization._coarse`, which
    would otherwise evaluate them again."""

    def __init__(self, name: str, phi: Callable[..., Arrays], point: list[np.ndarray]) -> None:
        self.__name__, self.phi, self.point = name, phi, point
        self.f0: list[np.ndarray] | None = None

    def __call__(self, *args: np.ndarray) -> Arrays:
        out = self.phi(list(args))
        if self.f0 is None and len(args) == len(self.point) and \
                all(a is p for a, p in zip(args, self.point, strict=True)):
            self.f0 = [np.asarray(o) for o in out]
        return out

    def at_point(self) -> list[np.ndarray]:
        """``f0``, evaluating phi at the point (uncounted) if it has not been yet."""
        if self.f0 is None:
            self(*self.point)
        assert self.f0 is not None
        return self.f0


class Linearization:
    """``phi`` (a numpy function of a list of float64 arrays, returning a list of arrays) at
    ``point``: what the numeric reference differentiates.  ``accuracy`` says what phi's
    evaluation error is relative to (see :data:`numeric.ACCURACIES`).  Results are cached."""

    def __init__(self, name: str, phi: Callable[..., Arrays], point: Sequence[np.ndarray],
                 out_shapes: Sequence[tuple[int, ...]], accuracy: str = "entrywise") -> None:
        if accuracy not in numeric.ACCURACIES:
            raise ValueError(f"Linearization {name}: accuracy must be one of "
                             f"{', '.join(numeric.ACCURACIES)}, got {accuracy!r}")
        self.name, self.accuracy = name, accuracy
        self.point = [np.asarray(p, dtype=np.float64) for p in point]
        self.out_shapes = [tuple(s) for s in out_shapes]
        self.in_shapes = [p.shape for p in self.point]
        # (a callable of its own, not a bound method: a linearization that held itself
        # would stay in memory, with every probe it kept, until the cycle collector ran)
        self._phi = _Phi(name, phi, self.point)
        self.calls = numeric.count_evaluations(self._phi)
        self._jacobian: tuple[np.ndarray, np.ndarray] | None = None
        self._derivatives: list[tuple[list[np.ndarray], tuple[np.ndarray, np.ndarray]]] = []
        #: phi's values along each line it was differentiated along, under one budget: a
        #: kink test or a refinement shares a derivative's probes, and a kink test along a
        #: line already tested (several paths' comparisons failing on one linearization
        #: test the same basis directions) makes no call again (see :mod:`probes`).
        self._lines: dict[bytes, tuple[list[np.ndarray], Probes]] = {}  # oldest first
        self._budget = Budget()
        #: The tableau's own error estimates beyond what :meth:`_coarse`'s rounding of
        #: outputs coarser than float64 explains (astype float32 makes the tableau's spread
        #: 1e-3 of the derivative), by derivative and for the Jacobian: what says whether the
        #: numeric reference is poor (see :data:`POOR`).
        self._own: list[tuple[list[np.ndarray], np.ndarray]] = []
        self._jacobian_own: np.ndarray | None = None
        #: Projects input-space arrays on the inputs' tangent spaces (see .directions); full
        #: mode then compares the Jacobians on those spaces only.
        self.project: Callable[[Arrays], Arrays] | None = None
        #: The dtypes ``phi`` rounds part of its input to before using it, when it does
        #: (None: it does not, or they are not known yet).  A VJP casts its cotangent to the
        #: forward's output dtype: ``G`` of ``astype(x, float32)`` differentiates a function
        #: of a float32-rounded cotangent, with float64 outputs.
        self.rounds_inputs_to: Callable[[], list[np.dtype[Any]] | None] | None = None

    @property
    def outputs_at_point(self) -> list[np.ndarray] | None:
        """``phi`` at the point, once evaluated (None before)."""
        return self._phi.f0

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
            if same_line(seen, dirs):
                return result
        result = self._derivative(dirs)
        self._derivatives.append((dirs, result))
        return result

    def probes(self, dirs: list[np.ndarray]) -> Probes:
        """The probes kept along ``dirs`` (float64 arrays), found by a digest of their
        values (a full Jacobian's columns are thousands of lines) and confirmed by
        :func:`same_line`."""
        key = _digest(dirs)
        found = self._lines.get(key)
        if found is not None and same_line(found[0], dirs):
            return found[1]
        # the oldest lines make room for a new one (at 10^6 elements one line's probes fill
        # the budget: the new line then has all of it, as the last line alone used to)
        while self._lines and self._budget.left < self._budget.total // 2:
            self._budget.left += self._lines.pop(next(iter(self._lines)))[1].nbytes
        kept = Probes(self._budget)
        # every line goes through the same point: phi there is any earlier line's sample
        sample = next((p.sample for _, p in reversed(self._lines.values())
                       if p.sample is not None), None)
        if sample is not None:
            kept.keep_sample(*sample)
        self._lines[key] = (dirs, kept)
        return kept

    def _derivative(self, dirs: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        if self.empty:
            n = sum(int(np.prod(s, dtype=np.int64)) for s in self.out_shapes)
            return np.zeros(n), np.zeros(n)
        d = numeric.directional_derivative(self.calls, self.point, self.argnums, dirs,
                                           accuracy=self.accuracy, probes=self.probes(dirs))
        value, error = np.ravel(d.value).astype(np.float64), np.ravel(d.error)
        if not (np.all(np.isfinite(value)) and np.all(np.isfinite(error))):
            # the function is not finite near the point: no numeric reference here
            raise numeric.NonFiniteError(f"{self.name}: the numeric derivative or its error "
                                         "estimate is not finite at this sample")
        coarse = self._coarse(d.step)
        self._own.append((dirs, _beyond(error, coarse)))
        return value, error + coarse

    def own_error(self, dirs: Sequence[np.ndarray]) -> np.ndarray:
        """The tableau's own error estimate of :meth:`derivative` along ``dirs`` (computed
        by it first), without the outputs' coarse rounding."""
        value, error = self.derivative(dirs)
        dirs = [np.asarray(u, np.float64) for u in dirs]
        for seen, own in reversed(self._own):
            if same_line(seen, dirs):
                return own
        return error  # an empty problem: zeros

    def jacobian(self) -> tuple[np.ndarray, np.ndarray]:
        """The full numeric Jacobian, shape (outputs, inputs) flat, and its errors."""
        if self._jacobian is None:
            n_out = sum(int(np.prod(s, dtype=np.int64)) for s in self.out_shapes)
            n_in = sum(p.size for p in self.point)
            if self.empty:
                self._jacobian = np.zeros((n_out, n_in)), np.zeros((n_out, n_in))
            else:
                jac = numeric.numeric_jacobian_with_error(self.calls, self.point, self.argnums,
                                                          accuracy=self.accuracy,
                                                          lines=self.probes)
                extra = self._coarse(numeric.default_step(np.float64))[:, None]
                own = np.hstack([e.reshape(n_out, -1) for e in jac.errors])
                self._jacobian_own = _beyond(own, extra)
                self._jacobian = (
                    np.hstack([j.reshape(n_out, -1) for j in jac.jacobians]).astype(np.float64),
                    own + extra)
        return self._jacobian

    def jacobian_own_error(self) -> np.ndarray:
        """The tableaux' own errors of :meth:`jacobian` (see :meth:`own_error`)."""
        jac, err = self.jacobian()
        return err if self._jacobian_own is None else self._jacobian_own

    def _coarse(self, step: float) -> np.ndarray:
        """Rounding noise of outputs coarser than float64 (``astype(x, float32)``), which the
        numeric error estimate, working in the inputs' float64, does not see: 4 ulps of each
        output (of its array's largest entry for a normwise phi) over the smallest step of
        the tableau."""
        f0 = self._phi.at_point()
        inner = self.rounds_inputs_to() if self.rounds_inputs_to is not None else None
        within = max((float(np.finfo(d).eps) for d in inner or () if d.kind == "f"),
                     default=0.0)  # an input rounded this coarsely moves every output
        if within <= EPS64 and \
                all(o.dtype.kind != "f" or o.dtype.itemsize >= 8 for o in f0):
            return np.zeros(sum(o.size for o in f0))
        noise = [4 * max(float(np.finfo(o.dtype).eps), within) * self._size(o)
                 if o.dtype.kind == "f" else np.zeros(o.size) for o in f0]
        return np.concatenate(noise) * numeric.SHRINK ** 5 / step

    def _size(self, output: np.ndarray) -> np.ndarray:
        """``|output|`` ravelled, or its largest entry everywhere for a normwise phi."""
        size = np.abs(output.astype(np.float64)).ravel()
        return size if self.accuracy == "entrywise" else \
            np.full(size.size, np.max(size, initial=0.0))

    def is_kink(self, dirs: Sequence[np.ndarray], shrinks: int = numeric.KINK_SHRINKS) -> bool:
        """Left and right derivatives along ``dirs`` disagree, or ``phi`` jumps along them
        (a point of non-differentiability: a second-order path's ``phi`` is a gradient,
        which jumps where the function has a kink).  ``shrinks``: how many times the sides
        may be compared again from ten times smaller steps (see :func:`numeric.is_kink`)."""
        if self.empty:
            return False
        dirs = [np.asarray(u, np.float64) for u in dirs]
        probes = self.probes(dirs)
        return numeric.is_kink(self.calls, self.point, self.argnums, dirs,
                               accuracy=self.accuracy, shrinks=shrinks, probes=probes) or \
            numeric.is_jump(self.calls, self.point, self.argnums, dirs, accuracy=self.accuracy,
                            probes=probes)

    def refine(self, dirs: Sequence[np.ndarray], current: np.ndarray | None = None) -> bool:
        """Replace the cached derivative along ``dirs`` by one from smaller steps (see
        :func:`numeric.refined_derivative`) when those converge to a smaller error estimate
        (an output coarser than float64 has a larger one at smaller steps) than ``current``
        (by default the cached derivative's); True when they did."""
        dirs = [np.asarray(u, np.float64) for u in dirs]
        if self.empty:
            return False
        found = numeric.refined_derivative(self.calls, self.point, self.argnums, dirs,
                                           accuracy=self.accuracy, probes=self.probes(dirs))
        if current is None:
            current = self.own_error(dirs)
        if found is None or np.max(found.error, initial=0.0) >= np.max(current, initial=0.0):
            return False
        value, coarse = np.ravel(found.value).astype(np.float64), self._coarse(found.step)
        result = value, np.ravel(found.error) + coarse
        self._own.append((dirs, _beyond(np.ravel(found.error), coarse)))
        self._derivatives = [(d, r) for d, r in self._derivatives if not same_line(d, dirs)]
        self._derivatives.append((dirs, result))
        return True

    def refine_jacobian(self, tol: Tolerances, natural: float) -> bool:
        """:meth:`refine` the columns of the numeric Jacobian whose error estimate makes
        them inconclusive (see :data:`INCONCLUSIVE`), every one: near a singularity (log at
        2e-5) each column can be; the cost is at most :data:`numeric.REFINE_SHRINKS`
        tableaux per column.  True when one was."""
        jac, err = self.jacobian()
        own = self.jacobian_own_error()
        refined = False
        if not jac.size:
            return refined
        size = max(float(np.max(np.abs(jac))), natural, tol.tiny)
        share = np.max(tol.numeric_part(own), axis=0) / size
        for col in np.flatnonzero(share > INCONCLUSIVE):
            direction = self._column(int(col))
            if self.refine(direction, own[:, col]):
                value, error = self.derivative(direction)
                jac[:, col], err[:, col], refined = value, error, True
                if own is not err:
                    own[:, col] = self.own_error(direction)
        return refined

    def _column(self, col: int) -> Arrays:
        """The basis direction of the Jacobian's column ``col`` (flat input index)."""
        vec = [np.zeros(s) for s in self.in_shapes]
        k, idx = locate(col, self.in_shapes)
        vec[k][idx] = 1.0
        return vec

    def kink_near(self, worst: int | None) -> bool:
        """:meth:`is_kink` along basis directions, for a full-mode comparison that failed or
        was inconclusive at flat Jacobian index ``worst`` (the element whose numeric error
        is poorest when None): the failing column's direction first, then those of the other
        inputs its output element depends on, numerically (at most :data:`KINK_COLUMNS`).
        At a kink of a median-like function (clamp with x = lo = hi) the failing column can
        be linear on both sides while another input's is not."""
        jac, err = self.jacobian()
        if not jac.size:
            return False
        if worst is None:
            worst = int(np.argmax(self.jacobian_own_error()))
        row, col = divmod(worst, jac.shape[1])
        depends = np.flatnonzero(jac[row] != 0)  # the poorest estimates first
        others = [int(c) for c in depends[np.argsort(-err[row, depends], kind="stable")]
                  if c != col]
        for c in ([col] + others)[:KINK_COLUMNS]:
            direction = self._column(c)
            if self.project is not None:
                direction = self.project(direction)
            if self.is_kink(direction):
                return True
        return False

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


def _beyond(error: np.ndarray, coarse: np.ndarray) -> np.ndarray:
    """The part of a tableau's error estimate that the outputs' coarse rounding does not
    explain (all of it for float64 outputs)."""
    return np.maximum(error - coarse, 0.0)


def share_forward(lin: Linearization, analytic: Arrays, dirs: Arrays, tol: Tolerances,
                  natural: float = 0.0) -> float:
    """The numeric reference's share of :func:`fast_forward`'s tolerance, relative to the
    values compared (see :data:`POOR`)."""
    n, e = lin.derivative(dirs)[0], lin.own_error(dirs)
    size = max(top([flat(analytic)]), top([n]), natural * top(dirs), tol.tiny)
    return float(np.max(tol.numeric_part(e), initial=0.0)) / size


def share_transpose(lin: Linearization, analytic: Arrays, cot: Arrays, dirs: Arrays,
                    tol: Tolerances, natural: float = 0.0) -> float:
    """The numeric reference's share of :func:`fast_transpose`'s tolerance, relative to the
    size of the terms of the projection."""
    n, e = lin.derivative(dirs)[0], lin.own_error(dirs)
    magnitude = max(absdot(analytic, dirs), absdot(cot, [n]),
                    natural * float(np.sum(np.abs(flat(cot)))) * top(dirs), tol.tiny)
    return float(tol.numeric_part(absdot(cot, [e]))) / magnitude


def share_full(lin: Linearization, tol: Tolerances, natural: float = 0.0) -> float:
    """The numeric reference's share of a full-mode tolerance: its largest error estimate
    relative to the largest Jacobian entry."""
    jac, err = lin.jacobian()[0], lin.jacobian_own_error()
    if not jac.size:
        return 0.0
    size = max(float(np.max(np.abs(jac))), natural, tol.tiny)
    return float(np.max(tol.numeric_part(err))) / size


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
