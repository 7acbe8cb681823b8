"""Numeric derivatives on plain numpy: the reference every analytic rule is checked against.

Central differences refined by Ridders' extrapolation tableau, with an error estimate that is
the larger of the tableau's own (disagreement of neighbouring entries) and the rounding noise
of f and of the probe points carried through the extrapolation, so it stays honest when the
tableau is lucky.  Work happens in the arguments' dtype: upcast float32 first if need be.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gradcheck.checker import tableau
from gradcheck.checker.probes import Probes
from gradcheck.checker.tolerances import current_overrides
from gradcheck.engine.op import ACCURACIES

__all__ = [
    "NonFiniteError", "NumericDerivative", "NumericJacobian", "CountedFunction",
    "count_evaluations", "default_step", "directional_derivative", "one_sided_derivatives",
    "is_kink", "KINK_SHRINKS", "is_jump", "refined_derivative", "numeric_jacobian",
    "numeric_jacobian_with_error", "convergence", "convergences",
    "fitted_slope", "ACCURACIES",
]

SHRINK = 1.4  # step ratio between tableau rows (Ridders' classic choice)
ULPS = 4.0  # assumed evaluation error of f, in units of eps * |f| (see ACCURACIES)
# Rows after which a tableau stops once every element's best error is its rounding noise
# (the noise grows as the step shrinks, so later rows could at best match it).  Two rows
# settle a linear map's (a reshape's, a sum's: its differences are exact), a smooth
# function's take three.  Measured over the registry (fast mode, 2 seeds), against three
# rows: 8% fewer evaluations; of the 6 998 tableaux it shortens, 95% keep their error
# estimate, 43 widen it by more than 1.43x, 2 by more than 3x (3.3x at most); no verdict
# and no cell's status changed.  (Three rows against six halved most tableaux' probes.)
NOISE_ROWS = 2
KINK_SAFETY = 4.0  # one-sided estimates must differ by this many error estimates to be a kink


class NonFiniteError(ValueError):
    """f (or an argument) was nan/inf at the sample or at a probe point: re-sample elsewhere."""


class OutsideDomain(NonFiniteError):
    """f was nan/inf at a probe point but not at the sample: the step left f's domain (log
    at x = 1e-4 probed at x - 1.2e-4), and smaller steps may stay inside."""


#: How many times a tableau's steps shrink tenfold when a probe leaves f's domain.
DOMAIN_SHRINKS = 4
#: Near zero, the finer tableau's first step as a fraction of the smallest moved input's
#: distance from 0 along the tangent (see :func:`_tableau`).
FINER = 0.1
#: The finer tableau is computed for directions moving at most this many components: in a
#: large random array some entry is always near 0, and a second tableau for every
#: derivative would cost what the check's whole numeric reference costs.
FINER_MOVED = 1000


@dataclass(frozen=True, eq=False)
class NumericDerivative:
    """A numeric directional derivative, shaped like f's output, with its estimated absolute
    error (elementwise), the initial step, the number of calls of f, and whether every element
    reached an error below sqrt(eps) * max(1, |value|); from one tableau, also where the
    error is f's rounding noise (smaller steps only make it larger), else None."""

    value: np.ndarray
    error: np.ndarray
    step: float
    evaluations: int
    converged: bool
    noisy: np.ndarray | None = field(default=None, repr=False)


@dataclass(frozen=True, eq=False)
class NumericJacobian:
    """Jacobians (shape ``out.shape + arg.shape``) per argnum with their elementwise errors."""

    jacobians: list[np.ndarray]
    errors: list[np.ndarray]
    evaluations: int
    converged: bool


class CountedFunction:
    """f wrapped to count its calls in ``.calls`` (for results, like ``is_kink``'s, without one)."""

    def __init__(self, f: Callable[..., Any]) -> None:
        self.f, self.calls, self.__name__ = f, 0, getattr(f, "__name__", "f")

    def __call__(self, *args: Any) -> Any:
        self.calls += 1
        return self.f(*args)


def count_evaluations(f: Callable[..., Any]) -> CountedFunction:
    """Return f wrapped so that ``.calls`` counts how often it is evaluated."""
    return CountedFunction(f)


def default_step(dtype: Any, richardson: bool = True) -> float:
    """Initial step per unit of input scale: eps**(1/4) for a tableau (it shrinks the step
    itself, so it starts where rounding is small), eps**(1/3) for one plain difference."""
    eps = float(np.finfo(np.dtype(dtype)).eps)
    return eps ** 0.25 if richardson else eps ** (1 / 3)


class _Problem:
    """Validated f, args, argnums and tangents; evaluates f at x + h*u, checking finiteness.
    ``who`` (the public function) prefixes every error message.  With ``probes``, f's values
    at the sample and at probe points are taken from there when it has them, and kept there
    (see :mod:`gradcheck.checker.probes`)."""

    def __init__(self, who: str, f: Callable[..., Any], args: Sequence[Any],
                 argnums: int | Sequence[int], tangents: Any,
                 accuracy: str = "entrywise", probes: Probes | None = None) -> None:
        self.who, self.f, self.args = who, f, list(args)
        if accuracy not in ACCURACIES:
            raise ValueError(f"{who}: accuracy must be one of {', '.join(ACCURACIES)}, "
                             f"got {accuracy!r}")
        self.normwise = accuracy == "normwise"
        try:
            self.argnums = _check_argnums(argnums, len(self.args))
            for i in self.argnums:
                self.args[i] = x = np.asarray(self.args[i])
                if x.dtype.kind != "f":
                    raise ValueError(f"argument {i} is in argnums but has dtype {x.dtype}; "
                                     "differentiable arguments must be real floating arrays")
                if not np.all(np.isfinite(x)):
                    raise NonFiniteError(f"argument {i} contains non-finite values")
            if tangents is None:  # numeric_jacobian: basis directions are set per column
                tangents = [np.zeros_like(self.args[i]) for i in self.argnums]
            elif isinstance(argnums, (int, np.integer)) and not isinstance(tangents, (list, tuple)):
                tangents = [tangents]
            self.tangents = _check_tangents(tangents, self.args, self.argnums)
        except ValueError as e:
            raise type(e)(f"{who}: {e}") from None
        self.dtype = np.result_type(*(self.args[i] for i in self.argnums))
        self.calls = 0
        self.out_shape: tuple[int, ...] = ()
        self.sizes: tuple[int, ...] = ()  # each output array's size (set by every call)
        self._tangents_known()
        self.probes = probes
        if probes is not None and probes.sample is not None:
            self.f0, self.out_shape, self.sizes = probes.sample
            probes.reused += 1
        else:
            self.f0 = self._call(self.args, "the sample point")
            if probes is not None:
                probes.keep_sample(self.f0, self.out_shape, self.sizes)
        self.eps = float(np.finfo(np.result_type(self.dtype, self.f0.real.dtype)).eps)

    def _tangents_known(self) -> None:
        """What every probe needs of the tangents, worked out once (a probe is then a few
        passes over the arrays, not a dozen): float64 copies, the count of moved components,
        the largest |u|."""
        self.u64 = [u.astype(np.float64).ravel() for u in self.tangents]
        self.moved = sum(int(np.count_nonzero(u)) for u in self.tangents)
        #: Largest |u| over all tangents (0 for a zero direction).
        self.umax = max((float(np.max(np.abs(u), initial=0)) for u in self.tangents),
                        default=0.0)

    def reach(self) -> float:
        """The smallest |x_k| / |u_k| over the moved components that are not exactly 0: how
        far a probe may go along u before an input crosses zero (0 when there is none)."""
        reach = [np.abs(self.args[i][(u != 0) & (self.args[i] != 0)]) /
                 np.abs(u[(u != 0) & (self.args[i] != 0)])
                 for i, u in zip(self.argnums, self.tangents, strict=True)]
        return min((float(np.min(r)) for r in reach if r.size), default=0.0)

    def along(self, tangents: list[np.ndarray]) -> _Problem:
        """The same sample probed along other (trusted) tangents, with a fresh call count."""
        new = object.__new__(_Problem)
        new.__dict__.update(self.__dict__, tangents=tangents, calls=0, probes=None)
        new._tangents_known()
        return new

    def scale(self) -> float:
        """Input scale in units of h: the smallest max(1, log1p|x_k|) / |u_k| over the moved
        components (the log: steps grow with |x| against rounding, but slowly, for functions
        like sin with unit-sized features anywhere; the smallest: no component over-steps)."""
        scales = [np.maximum(1.0, np.log1p(np.abs(self.args[i][u != 0]))) / np.abs(u[u != 0])
                  for i, u in zip(self.argnums, self.tangents, strict=True)]
        return min((float(np.min(s)) for s in scales if s.size), default=1.0)

    def at(self, h: float) -> tuple[np.ndarray, float, float]:
        """f at x + h*u (ravelled, concatenated), the step h_eff taken along u, and the l1 norm
        of the probe's rounding off x + h_eff*u (zero when u has a single nonzero component)."""
        if self.probes is not None:
            kept = self.probes.at(h)
            if kept is not None:
                return kept
        found = self._probe(h)
        if self.probes is not None:
            self.probes.keep(h, found)
        return found

    def _probe(self, h: float) -> tuple[np.ndarray, float, float]:
        args, moves, steps = list(self.args), [], []
        for i, u in zip(self.argnums, self.tangents, strict=True):
            steps.append(h * u)
            args[i] = (self.args[i] + steps[-1]).astype(self.args[i].dtype, copy=False)
            if isinstance(args[i], np.ndarray):  # (a 0-d sum is a numpy scalar: immutable)
                args[i].flags.writeable = False  # the probe point is f's to read, not change
            moves.append((args[i] - self.args[i]).astype(np.float64, copy=False).ravel())
        if self.moved == 1:  # exact: the step taken
            h_eff = sum(float(np.vdot(m, u)) for m, u in zip(moves, self.u64, strict=True)) \
                / self.umax ** 2
        else:  # several components: keep h, so each component's rounding stays its own
            h_eff = h
        off = 0.0
        for m, u, step in zip(moves, self.u64, steps, strict=True):
            # |m - h_eff * u| in place, bit for bit (h * u is already there in float64)
            rest = step.ravel() if h_eff == h and step.dtype == np.float64 else h_eff * u
            np.subtract(m, rest, out=m)  # m is this probe's own difference array
            off += float(np.add.reduce(np.abs(m, out=m), axis=None))  # np.sum, unwrapped
        return self._call(args, f"the probe point x + h*u with h={h:.3g}", OutsideDomain), \
            h_eff, off

    def magnitude(self, out: np.ndarray) -> np.ndarray:
        """What f's rounding at ``out`` (ravelled outputs) is relative to, entry by entry:
        ``|out|``, or for a normwise f each output array's largest ``|out|`` (the whole of
        ``out`` when it is not shaped like f's outputs)."""
        size = np.abs(out)
        if not self.normwise or not size.size:
            return size
        sizes = self.sizes if sum(self.sizes) == size.size else (size.size,)
        tops = [np.max(part, initial=0) for part in np.split(size, np.cumsum(sizes)[:-1])]
        return np.repeat(np.array(tops, dtype=size.dtype), sizes)

    def _call(self, args: list[Any], where: str,
              error: type[NonFiniteError] = NonFiniteError) -> np.ndarray:
        self.calls += 1
        with np.errstate(all="ignore"):  # non-finite results are reported below, by name
            out = self.f(*args)
        parts = [np.asarray(p) for p in (out if isinstance(out, (tuple, list)) else (out,))]
        self.out_shape = parts[0].shape if len(parts) == 1 else (sum(p.size for p in parts),)
        self.sizes = tuple(p.size for p in parts)
        flat = np.concatenate([p.ravel() for p in parts]) if parts else np.zeros(0)
        flat = flat if flat.dtype.kind in "fc" else flat.astype(np.float64)
        if not np.isfinite(flat).all():
            bad = ~np.isfinite(flat)
            name = getattr(self.f, "__name__", "f")
            raise error(f"{self.who}: {name} returned {int(bad.sum())} non-finite "
                        f"output element(s) (first at flat index {int(np.argmax(bad))}) at "
                        f"{where}")
        return flat


def _check_argnums(argnums: int | Sequence[int], nargs: int) -> tuple[int, ...]:
    nums = (argnums,) if isinstance(argnums, (int, np.integer)) else tuple(argnums)
    for i in nums:
        if isinstance(i, bool) or not isinstance(i, (int, np.integer)) or not 0 <= i < nargs:
            raise ValueError(f"argnums entry {i!r} is out of range for {nargs} argument(s)")
    if not nums or len(set(nums)) != len(nums):
        raise ValueError(f"argnums {nums} must name each differentiable argument once")
    return tuple(int(i) for i in nums)


def _check_tangents(tangents: Any, args: list[Any], argnums: tuple[int, ...]) -> list[np.ndarray]:
    tangents = list(tangents)
    if len(tangents) != len(argnums):
        raise ValueError(f"got {len(tangents)} tangent(s) for argnums {argnums}")
    checked = []
    for i, t in zip(argnums, tangents, strict=True):
        u, x = np.asarray(t), args[i]
        if u.shape != x.shape or u.dtype.kind not in "biuf":
            raise ValueError(f"tangent for argument {i} is {u.dtype}{list(u.shape)}; it must be "
                             f"a real array of the argument's shape {list(x.shape)}")
        with np.errstate(all="ignore"):
            cast = u.astype(x.dtype)
        if not np.array_equal(cast, u) or not np.all(np.isfinite(cast)):
            # never downcast silently: the direction itself would change
            raise ValueError(f"tangent for argument {i} ({u.dtype}) is non-finite or not "
                             f"exactly representable in the argument's dtype {x.dtype}")
        checked.append(cast)
    return checked


def _difference(p: _Problem, h: float, side: int) -> tuple[np.ndarray, np.ndarray]:
    """Central (side 0) or one-sided (+1 forward, -1 backward) difference at step h with its
    rounding noise: f's own, and the probes' rounding off the line times a |J| guess."""
    hi, h_hi, off_hi = p.at(h if side >= 0 else -h)
    lo, h_lo, off_lo = p.at(-h) if side == 0 else (p.f0, 0.0, 0.0)
    return _quotient(p, h, hi, lo, h_hi - h_lo, off_hi + off_lo)


def _quotient(p: _Problem, h: float, hi: np.ndarray, lo: np.ndarray, width: float,
              off: float) -> tuple[np.ndarray, np.ndarray]:
    """``(hi - lo) / width`` and its rounding noise (see :func:`_difference`); ``off`` is
    the probes' summed rounding off the line."""
    with np.errstate(all="ignore"):  # an overflow is reported just below
        d = np.subtract(hi, lo)
        d /= width
        jac = float(np.maximum.reduce(np.abs(d), axis=None, initial=0)) / p.umax \
            if p.umax else 0.0
        # ULPS * (eps * (|hi| + |lo|) + off * jac) / |width|, in one buffer (|f| is the
        # largest entry's for a normwise f, see ACCURACIES)
        noise = p.magnitude(hi)
        noise += p.magnitude(lo)
        noise *= p.eps
        noise += off * jac
        noise *= ULPS
        noise /= abs(width)
    if not (np.isfinite(d).all() and np.isfinite(noise).all()):
        raise NonFiniteError(f"{p.who}: the difference quotient overflowed at h={h:.3g}")
    return d, noise


def _tableau(p: _Problem, h0: float, side: int, rows: int, extrapolate: bool,
             counted_from: int = 0) -> NumericDerivative:
    """Ridders' tableau from ``h0`` (:func:`_steps`), kept in f's domain and checked against
    a finer one near zero.

    * When a probe leaves f's domain (log near 0), the steps start again ten times smaller
      (up to :data:`DOMAIN_SHRINKS` times).
    * When the steps come within ten times a moved input's own size (x = 2e-5, h = 1e-4), a
      singularity at 0 (1/x, log x) can fool the tableau's error estimate: a second tableau
      from a step of :data:`FINER` of that size is computed too (for directions moving at
      most :data:`FINER_MOVED` components), the entry with the smaller estimate is kept, and
      its error grows by what the two disagree by beyond both estimates.

    Every call made is counted."""
    found = _in_domain(p, h0, side, rows, extrapolate, counted_from)
    if not extrapolate or p.moved > FINER_MOVED:
        return found
    fine = p.reach() * FINER
    if not 0 < fine < found.step:
        return found
    try:
        finer = _in_domain(p, fine, side, rows, extrapolate, counted_from)
    except NonFiniteError:
        return found
    keep = finer.error <= found.error
    value = np.where(keep, finer.value, found.value)
    # what the two disagree by beyond both estimates: one of them was fooled by that much
    excess = np.abs(finer.value - found.value) - (finer.error + found.error)
    excess = np.maximum(excess, 0.0)
    error = np.minimum(finer.error, found.error) + excess
    # converged only where the two agree: a disagreement is an error neither tableau saw
    agree = bool(np.all(_settled(p, excess, value)))
    return NumericDerivative(value, error, found.step, p.calls - counted_from,
                             (found.converged or finer.converged) and agree)


def _in_domain(p: _Problem, h0: float, side: int, rows: int, extrapolate: bool,
               counted_from: int) -> NumericDerivative:
    """:func:`_steps` from ``h0``, or from steps ten times smaller while a probe leaves f's
    domain."""
    for shrink in range(DOMAIN_SHRINKS + 1):
        try:
            return _steps(p, h0 / 10.0 ** shrink, side, rows, extrapolate, counted_from)
        except OutsideDomain:
            if shrink == DOMAIN_SHRINKS:
                raise
    raise AssertionError("unreachable")


def _steps(p: _Problem, h0: float, side: int, rows: int, extrapolate: bool,
           counted_from: int) -> NumericDerivative:
    """Ridders' tableau over steps h0 / SHRINK**i (its rows: :func:`tableau.extend`); per
    element the entry with the smallest error estimate wins.  Without ``extrapolate``: the
    plain difference at the last step."""
    ratio = SHRINK ** (2 if side == 0 else 1)  # central differences have only even powers
    best = tableau.Best(p.f0)
    prev: list[tableau.Entry] = []  # (value, noise) per column of the last row
    plain = []
    for i in range(rows):
        first = _difference(p, h0 / SHRINK ** i, side)
        plain.append(first[0])
        if not extrapolate:
            if i:
                best.value, best.error = first[0], np.maximum(
                    np.abs(first[0] - prev[0][0]) / (ratio - 1), first[1])
            prev = [first]
            continue
        row = tableau.extend(first, prev, ratio, best)
        if i:
            if not best.live.any():
                break
            if i >= NOISE_ROWS - 1 and not (best.live & ~best.noisy).any():
                break  # every element's error is the rounding noise: smaller steps add noise
        prev = row
    best_value, err, noisy = best.value, best.error, best.noisy
    # converged: the error is small, or it is the rounding noise and no step can do better
    ok = noisy | _settled(p, err, best_value)
    # an element that did not converge (f rough at the step's scale) gets no benefit of the
    # doubt: its error widens to the spread of the plain differences the tableau saw
    if not ok.all():
        # (a running maximum: a stack of six 10^6-element rows was 48 MB)
        err = np.where(ok, err, np.maximum(err, tableau.spread(best_value, plain)))
    return NumericDerivative(best_value.reshape(p.out_shape), err.reshape(p.out_shape),
                             float(h0), p.calls - counted_from, bool(ok.all()),
                             noisy.reshape(p.out_shape))


def _settled(p: _Problem, error: np.ndarray, value: np.ndarray) -> np.ndarray:
    """Where ``error`` is small enough for a converged derivative: sqrt(eps) * max(1, |value|)."""
    return error <= p.eps ** 0.5 * np.maximum(1.0, np.abs(value))


def _initial_step(p: _Problem, step: float | None, richardson: bool, max_iter: int) -> float:
    """The given step (validated) or :func:`default_step` times the input scale."""
    if max_iter < 2:
        raise ValueError(f"{p.who}: max_iter must be at least 2 (got {max_iter}): "
                         "an error estimate needs two steps")
    if step is None:
        step = current_overrides().eps  # check(..., eps=): the caller's step, as given
    if step is None:
        return default_step(p.dtype, richardson) * p.scale()
    if not (np.isfinite(step) and step > 0):
        raise ValueError(f"{p.who}: step must be a positive finite number, got {step!r}")
    return float(step)


def directional_derivative(f: Callable[..., Any], args: Sequence[Any],
                           argnums: int | Sequence[int], tangents: Any, *,
                           step: float | None = None, richardson: bool = True,
                           max_iter: int = 6, accuracy: str = "entrywise",
                           probes: Probes | None = None) -> NumericDerivative:
    """Numeric JVP: d/dh f(x + h*u) at h = 0, where u is ``tangents`` (one per argnum).

    With ``richardson``, central differences at ``step / 1.4**i`` (i < max_iter) feed Ridders'
    tableau; without, one central difference at ``step / 1.4`` whose error is estimated from
    the difference at ``step``.  The default step is :func:`default_step` times the input scale
    (see ``_Problem.scale``).  Tuple outputs are ravelled and concatenated.  ``accuracy``: what
    f's evaluation error is relative to, which the error estimate's rounding noise follows
    (see :data:`ACCURACIES`).  ``probes``: f's values along this line, shared with other
    calls at the same f, sample and tangents (see :mod:`gradcheck.checker.probes`)."""
    p = _Problem("directional_derivative", f, args, argnums, tangents, accuracy, probes)
    h0 = _initial_step(p, step, richardson, max_iter)
    return _tableau(p, h0, 0, max_iter if richardson else 2, richardson)


def one_sided_derivatives(f: Callable[..., Any], args: Sequence[Any],
                          argnums: int | Sequence[int], tangents: Any, *,
                          step: float | None = None, max_iter: int = 6,
                          accuracy: str = "entrywise",
                          ) -> tuple[NumericDerivative, NumericDerivative]:
    """Forward (h > 0) and backward (h < 0) derivatives along u, each Richardson-extrapolated.

    The sample evaluation is shared and counted in the forward result's ``evaluations``."""
    p = _Problem("one_sided_derivatives", f, args, argnums, tangents, accuracy)
    return _one_sided(p, _initial_step(p, step, True, max_iter), max_iter)


def _one_sided(p: _Problem, h0: float, max_iter: int,
               ) -> tuple[NumericDerivative, NumericDerivative]:
    forward = _tableau(p, h0, +1, max_iter, True)
    return forward, _tableau(p, h0, -1, max_iter, True, counted_from=p.calls)


#: How many times :func:`refined_derivative` shrinks the steps tenfold: to 1e-6 of the
#: default, under a max's switch 5e-10 away (drawn arrays hold entries of every decade down
#: to 1e-9; four shrinks left such a sample inconclusive).
REFINE_SHRINKS = 6


def refined_derivative(f: Callable[..., Any], args: Sequence[Any],
                       argnums: int | Sequence[int], tangents: Any, *,
                       step: float | None = None, max_iter: int = 6,
                       accuracy: str = "entrywise",
                       probes: Probes | None = None) -> NumericDerivative | None:
    """The directional derivative from steps 10, 100, ... times smaller than the default,
    for a sample a step away from a kink (relu at x = 1e-5, clamp near its bound): the
    default steps cross it, and the tableau's error estimate is then of the order of the
    derivative itself.  Smaller steps stay on one side; the first two successive step sizes
    whose converged tableaux agree within their error estimates give the result (its error
    widened to their disagreement).  None when none do (the sample is on the kink, or f is
    rough at every scale tried): the caller then tests for a kink.  ``probes``: as for
    :func:`directional_derivative`."""
    try:
        p = _Problem("refined_derivative", f, args, argnums, tangents, accuracy, probes)
        h0 = _initial_step(p, step, True, max_iter)
        previous = None
        for shrink in range(1, REFINE_SHRINKS + 1):
            found = _tableau(p, h0 / 10.0 ** shrink, 0, max_iter, True)
            if previous is not None and found.converged and previous.converged:
                gap = np.abs(found.value - previous.value)
                if np.all(gap <= found.error + previous.error):
                    return NumericDerivative(found.value, np.maximum(found.error, gap),
                                             found.step, p.calls, True)
            previous = found
    except NonFiniteError:
        return None
    return None


#: How many times :func:`is_kink` shrinks its steps tenfold while the sides' error
#: estimates are too large to tell.  A max of entries 3.5e-8 apart (a drawn array's 1e-8
#: decade has them) switches within every default step on one side, whose tableau then
#: estimates an error the size of the derivative: smaller steps stay on their branches.
KINK_SHRINKS = 6


def is_kink(f: Callable[..., Any], args: Sequence[Any], argnums: int | Sequence[int],
            tangents: Any, *, rtol: float | None = None, atol: float | None = None,
            step: float | None = None, accuracy: str = "entrywise",
            shrinks: int = KINK_SHRINKS, probes: Probes | None = None) -> bool:
    """True when the forward and backward derivatives along u clearly disagree: the sample sits
    on (or within a step of) a point of non-differentiability such as relu or abs at 0.

    Disagreement means more than KINK_SAFETY times their summed error estimates plus
    ``atol + rtol * max(|forward|, |backward|)``; both default to eps**(1/3) of the dtype.
    While their agreement rests on the error estimates (one side's steps cross a switch of f
    close to the sample, a near tie of a max, and its tableau estimates an error the size of
    the derivative), the two are compared again from steps ten times smaller, up to
    ``shrinks`` (default :data:`KINK_SHRINKS`) times, but not once every estimate in the way
    is f's rounding noise (a direction moving many components: smaller steps would only make
    it larger).  ``shrinks=0`` compares the sides at the default steps only.  ``probes``: as
    for :func:`directional_derivative` (the first steps are a central tableau's)."""
    if isinstance(shrinks, bool) or not isinstance(shrinks, (int, np.integer)) or shrinks < 0:
        raise ValueError(f"is_kink: shrinks must be a non-negative integer, got {shrinks!r}")
    p = _Problem("is_kink", f, args, argnums, tangents, accuracy, probes)
    h0 = _initial_step(p, step, True, 6)
    for shrink in range(int(shrinks) + 1):
        try:
            forward, backward = _one_sided(p, h0 / 10.0 ** shrink, 6)
        except NonFiniteError:
            if shrink:  # smaller steps left f's domain or overflowed: what was seen stands
                return False
            raise
        differ, told = _sides_differ(forward, backward, rtol, atol)
        if differ:
            return True
        if told:
            return False
    return False


def _sides_differ(forward: NumericDerivative, backward: NumericDerivative,
                  rtol: float | None, atol: float | None) -> tuple[bool, bool]:
    """Whether the one-sided derivatives differ beyond their allowance, and whether the
    answer stands.  An agreement stands unless their error estimates, rather than the
    tolerance, are what lets some element agree; it stands too when every such element has
    both sides' estimates at f's rounding noise: smaller steps only make those larger (a side
    whose steps cross a switch of f estimates a truncation error instead)."""
    dtype = np.result_type(forward.value, backward.value)
    tol = float(np.finfo(dtype).eps) ** (1 / 3)
    rtol, atol = (tol if rtol is None else rtol), (tol if atol is None else atol)
    gap = np.abs(forward.value - backward.value)
    fixed = atol + rtol * np.maximum(np.abs(forward.value), np.abs(backward.value))
    estimated = KINK_SAFETY * (forward.error + backward.error)
    untold = estimated > fixed
    if forward.noisy is not None and backward.noisy is not None:
        untold &= ~(forward.noisy & backward.noisy)
    return bool(np.any(gap > estimated + fixed)), not bool(np.any(untold))


#: :func:`is_jump` compares differences at steps this many times apart.
JUMP_RATIO = 100.0


def is_jump(f: Callable[..., Any], args: Sequence[Any], argnums: int | Sequence[int],
            tangents: Any, *, step: float | None = None, accuracy: str = "entrywise",
            probes: Probes | None = None) -> bool:
    """True when f jumps along u at (or within a small step of) the sample: the central
    difference ``f(x + h u) - f(x - h u)`` does not shrink with h.  A differentiable f's
    shrinks in proportion (JUMP_RATIO times between the two steps compared); a step
    function's stays the size of the jump.  The numeric reference of a second-order path
    differentiates a gradient, which jumps where f has a kink (relu's gradient at 0).
    ``probes``: as for :func:`directional_derivative`."""
    try:
        p = _Problem("is_jump", f, args, argnums, tangents, accuracy, probes)
        h = _initial_step(p, step, True, 6) / 10.0
        wide = np.abs(p.at(h)[0] - p.at(-h)[0])
        narrow = np.abs(p.at(h / JUMP_RATIO)[0] - p.at(-h / JUMP_RATIO)[0])
    except NonFiniteError:
        return False
    rounding = 2 * ULPS * p.eps * p.magnitude(p.f0)
    # shrank by less than a tenth of the ratio, and is far above rounding
    return bool(np.any((narrow > 10 * wide / JUMP_RATIO) & (narrow > 1e3 * rounding + p.eps *
                                                          np.max(np.abs(p.f0), initial=0.0))))


def numeric_jacobian_with_error(f: Callable[..., Any], args: Sequence[Any],
                                argnums: int | Sequence[int], *, step: float | None = None,
                                max_iter: int = 6, accuracy: str = "entrywise",
                                lines: Callable[[list[np.ndarray]], Probes] | None = None,
                                ) -> NumericJacobian:
    """Full Jacobian per argnum, one Ridders column per input element (basis tangent), with
    the elementwise error estimates; f is evaluated once at the sample for all columns.
    ``lines(basis)``, when given, is where a column's probes are kept (and found): a kink
    test along that basis direction later reuses them."""
    p = _Problem("numeric_jacobian", f, args, argnums, None, accuracy)
    jacobians, errors, calls, ok = [], [], p.calls, True
    for k, i in enumerate(p.argnums):
        x = p.args[i]
        jac, err = np.zeros((p.f0.size, x.size), dtype=p.f0.dtype), np.zeros((p.f0.size, x.size))
        for col in range(x.size):
            basis = [np.zeros_like(u) for u in p.tangents]
            basis[k].flat[col] = 1
            q = p.along(basis)
            if lines is not None:
                q.probes = lines(basis)
                q.probes.keep_sample(p.f0, p.out_shape, p.sizes)
            d = _tableau(q, _initial_step(q, step, True, max_iter), 0, max_iter, True)
            jac[:, col], err[:, col] = d.value.ravel(), d.error.ravel()
            calls, ok = calls + d.evaluations, ok and d.converged
        jacobians.append(jac.reshape(p.out_shape + x.shape))
        errors.append(err.reshape(p.out_shape + x.shape))
    return NumericJacobian(jacobians, errors, calls, ok)


def numeric_jacobian(f: Callable[..., Any], args: Sequence[Any], argnums: int | Sequence[int],
                     *, step: float | None = None, accuracy: str = "entrywise",
                     ) -> list[np.ndarray]:
    """Full Jacobian per argnum, shape ``out.shape + arg.shape`` (see the ``_with_error`` form)."""
    return numeric_jacobian_with_error(f, args, argnums, step=step, accuracy=accuracy).jacobians


def convergence(f: Callable[..., Any], args: Sequence[Any], argnums: int | Sequence[int],
                tangents: Any, analytic: Any, *,
                steps: Sequence[float] | None = None) -> dict[str, Any]:
    """Max abs error of the plain central difference against ``analytic`` (a JVP shaped like
    f's output) for each step, for a log-log plot: a right derivative falls with slope 2 until
    rounding (the ``rounding`` estimate) takes over; a wrong one levels off at its error.

    Default steps: 16 from 1e-1 to 1e-10 times the input scale.  Steps whose probes leave f's
    domain (non-finite output) are left out and listed under ``dropped``."""
    found = convergences(f, args, argnums, tangents, [analytic], steps=steps)[0]
    if found is None:
        raise NonFiniteError("convergence: f is non-finite at the probes of every step")
    return found


def convergences(f: Callable[..., Any], args: Sequence[Any], argnums: int | Sequence[int],
                 tangents: Any, analytics: Sequence[Any], *,
                 projections: Sequence[Callable[[np.ndarray], float] | None] | None = None,
                 steps: Sequence[float] | None = None) -> list[dict[str, Any] | None]:
    """:func:`convergence` of several analytic values along the same tangents, from one set
    of probes (two calls of f per step, shared): what costs is f, not the comparisons.

    ``projections[k]``, when given and not None, maps f's ravelled output to a scalar (such
    as ``<v, f>``) and ``analytics[k]`` is that scalar's derivative; each is then exactly the
    convergence of ``x -> [projection(f(x))]``.  None for an analytic value whose probes are
    non-finite at every step.  ``evaluations`` counts the shared calls of f."""
    p = _Problem("convergence", f, args, argnums, tangents)
    projections = list(projections or [None] * len(analytics))
    wants = []
    for want, project in zip(analytics, projections, strict=True):
        want = np.asarray(want).ravel()
        size = p.f0.size if project is None else 1
        if want.size != size:
            raise ValueError(f"convergence: analytic has {want.size} element(s), "
                             f"f's output has {size}")
        wants.append(want)
    if steps is None:
        steps = list(p.scale() * np.logspace(-1, -10, 16))
    elif not all(np.isfinite(h) and h > 0 for h in steps):
        raise ValueError(f"convergence: steps must be positive and finite, got {list(steps)}")
    convs: list[dict[str, Any]] = [{"steps": [], "errors": [], "rounding": [], "dropped": [],
                                    "expected_slope": 2.0} for _ in wants]
    for h in steps:
        h = float(h)
        try:
            hi, h_hi, off_hi = p.at(h)
            lo, h_lo, off_lo = p.at(-h)
        except NonFiniteError:  # outside f's domain: this step is dropped for every value
            for conv in convs:
                conv["dropped"].append(h)
            continue
        whole: Any = None  # the quotient of the outputs themselves, shared by every value
        for conv, want, project in zip(convs, wants, projections, strict=True):
            try:
                if project is None:
                    whole = whole or _quotient(p, h, hi, lo, h_hi - h_lo, off_hi + off_lo)
                    d, noise = whole
                else:
                    d, noise = _quotient(p, h, _scalar(project, hi), _scalar(project, lo),
                                         h_hi - h_lo, off_hi + off_lo)
            except NonFiniteError:
                conv["dropped"].append(h)
                continue
            conv["steps"].append(h)
            conv["errors"].append(float(np.max(np.abs(d - want), initial=0.0)))
            conv["rounding"].append(float(np.max(noise, initial=0.0)))
    for conv in convs:
        conv["evaluations"] = p.calls
    return [conv if conv["steps"] else None for conv in convs]


def _scalar(project: Callable[[np.ndarray], float], out: np.ndarray) -> np.ndarray:
    """``[project(out)]``, non-finite refused as :meth:`_Problem._call` refuses it."""
    value = np.array([float(project(out))])
    if not np.isfinite(value).all():
        raise NonFiniteError("convergence: the projection of f is non-finite at a probe")
    return value


def fitted_slope(conv: dict[str, Any]) -> float:
    """Slope of log(error) against log(step) where truncation dominates (error above ten times
    the rounding estimate): the median of pairwise slopes, robust to a dip where a wrong
    derivative's offset cancels the truncation error.  About 2 for a right derivative, about 0
    for a wrong one; nan when no step is truncation-dominated (f quadratic along u)."""
    h, e = np.asarray(conv["steps"], float), np.asarray(conv["errors"], float)
    r = np.asarray(conv.get("rounding", np.zeros_like(e)), float)
    keep = e > 10 * r
    h, e = np.log(h[keep]), np.log(e[keep])
    slopes = [(e[a] - e[b]) / (h[a] - h[b]) for a, b in itertools.combinations(range(h.size), 2)
              if h[a] != h[b]]
    return float(np.median(slopes)) + 0.0 if slopes else float("nan")  # + 0.0: no -0.0
