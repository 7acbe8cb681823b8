"""Every tolerance the checker uses, in one place, per dtype.

A verdict compares an error with a tolerance built from these parts:

* the numeric reference's own error estimate (Ridders' tableau; see
  :mod:`gradcheck.checker.numeric`), times :data:`NUMERIC_SAFETY`;
* the rounding allowance of the analytic path in its dtype (the coarsest of
  the inputs' and outputs'): ``ROUNDING_ULPS`` units of eps, times a
  conditioning proxy (the largest input magnitude, at least 1: derivatives of
  ``sin(1e3)`` or ``exp(80)`` inherit the rounding of their argument), times a
  magnitude: the largest of the two sides (norm-wise, so an element that
  cancels to nearly zero is not held to a relative bound it cannot meet) or
  the problem's natural derivative scale ``max(|f| / |x|, 1 / max(1, |x|))``
  (``Session.natural``: ``1 - tanh(x)**2`` computed from the output loses
  absolute, not relative, accuracy where the derivative is tiny);
* before a comparison is declared failed, the analytic side is evaluated again
  at the sample moved by two ulps: the change measures the rounding noise the
  formula really has (cancellation no magnitude proxy sees), and
  :data:`NOISE_SAFETY` times it is added.  A wrong derivative does not move when
  the input moves by an ulp, so this never hides one.

Exact identities between analytic paths (adjoint, linearity, path against path,
dummy independence) use the rounding parts only: no finite differences are
involved.  An op's declared :class:`~gradcheck.domains.Tolerance` scales the
rounding and numeric parts, and its reason is shown in the report.

A call may override them (``check(..., atol=, rtol=, eps=)``, see :class:`Overrides`):
``rtol`` replaces the relative rounding allowance, ``atol`` is added to every tolerance, and
``eps`` is the numeric reference's initial step.  The numeric reference's own error estimate
is still added: the caller's tolerance cannot know how accurate a finite difference was.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

__all__ = [
    "natural_scale",
    "top", "flat", "largest_finite",
    "NUMERIC_SAFETY", "NOISE_SAFETY", "ROUNDING_ULPS", "eps", "rounding", "conditioning", "Verdict",
    "Tolerances", "elementwise", "scalar", "Overrides", "overridden", "current_overrides",
]

#: The numeric error estimate is an estimate: trust it up to this factor.
NUMERIC_SAFETY = 8.0
#: A measured rounding noise (the same path at a point moved by an ulp or two) is trusted
#: up to this factor.
NOISE_SAFETY = 4.0
#: Rounding allowance of an analytic path, in units of its dtype's eps.
ROUNDING_ULPS = {"float64": 4096.0, "float32": 64.0, "float16": 16.0}
#: Smallest magnitude a norm-wise tolerance is scaled by (avoids a zero tolerance when the
#: derivative is tiny but not exactly zero).
TINY = {"float64": 1e-300, "float32": 1e-37, "float16": 1e-7}


def eps(dtype: Any) -> float:
    """Machine epsilon of a floating dtype."""
    return float(np.finfo(np.dtype(dtype)).eps)


def rounding(dtype: Any) -> float:
    """Relative rounding allowance of an analytic result in ``dtype``."""
    name = np.dtype(dtype).name
    return ROUNDING_ULPS.get(name, 64.0) * eps(dtype)


def conditioning(arrays: Sequence[Any]) -> float:
    """max(1, largest |x|) over the finite floating inputs: a proxy for how much the rounding
    of the inputs moves a derivative."""
    top = 1.0
    for a in arrays:
        a = np.asarray(a)
        if a.size and a.dtype.kind == "f":
            top = max(top, largest_finite(a))
    return top


@dataclass(frozen=True)
class Overrides:
    """A call's own tolerances: ``atol`` (added to every tolerance), ``rtol`` (replaces the
    relative rounding allowance) and ``eps`` (the numeric reference's initial step); None
    keeps gradcheck's.  Each must be a positive finite number."""

    atol: float | None = None
    rtol: float | None = None
    eps: float | None = None

    def __post_init__(self) -> None:
        for name in ("atol", "rtol", "eps"):
            value = getattr(self, name)
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, (int, float, np.floating)):
                raise TypeError(f"gradcheck.check: {name} must be a positive finite number, "
                                f"got {type(value).__name__} {value!r}")
            if not math.isfinite(value) or value <= 0:
                why = "eps is the numeric reference's step" if name == "eps" else \
                    "a zero or negative tolerance fails every comparison"
                raise ValueError(f"gradcheck.check: {name} must be a positive finite number, "
                                 f"got {value!r} ({why}); leave it out to use gradcheck's own")
            object.__setattr__(self, name, float(value))

    @property
    def given(self) -> dict[str, float]:
        """The overridden values by name (empty when nothing is overridden)."""
        return {k: v for k in ("atol", "rtol", "eps") if (v := getattr(self, k)) is not None}

    def describe(self) -> str:
        """``"tolerance overridden: atol=1e-05, rtol=0.001"`` (empty when nothing is)."""
        given = self.given
        if not given:
            return ""
        return "tolerance overridden: " + ", ".join(f"{k}={v:g}" for k, v in given.items())


_NONE = Overrides()
_OVERRIDES: ContextVar[Overrides | None] = ContextVar("gradcheck_overrides", default=None)


def current_overrides() -> Overrides:
    """The overrides of the check running now (none outside a check)."""
    return _OVERRIDES.get() or _NONE


@contextmanager
def overridden(overrides: Overrides) -> Iterator[None]:
    """Every tolerance and numeric step inside the block uses ``overrides``."""
    token = _OVERRIDES.set(overrides)
    try:
        yield
    finally:
        _OVERRIDES.reset(token)


@dataclass(frozen=True)
class Verdict:
    """Error against tolerance for one comparison; ``worst`` is the flat index of the worst
    element (None for a scalar comparison)."""

    max_abs_err: float
    max_rel_err: float
    tolerance: float
    worst: int | None = None
    #: The compared values where the error is worst: what the path gave, what it should be.
    got: float = math.nan
    expected: float = math.nan

    @property
    def ratio(self) -> float:
        if self.tolerance > 0:
            return self.max_abs_err / self.tolerance
        return 0.0 if self.max_abs_err == 0 else math.inf

    @property
    def passed(self) -> bool:
        return self.max_abs_err <= self.tolerance


@dataclass(frozen=True)
class Tolerances:
    """The tolerance recipe for one op, dtype and sample.

    ``factor`` is the op's declared widening (1 when none); ``cond`` the conditioning proxy
    of the sample (see :func:`conditioning`).
    """

    dtype: str
    cond: float = 1.0
    factor: float = 1.0
    #: The call's overrides (see :class:`Overrides`), taken when the recipe is made.
    overrides: Overrides = field(default_factory=current_overrides)

    @cached_property
    def relative(self) -> float:
        """Relative rounding allowance of an analytic result (already times cond and factor),
        or the call's ``rtol``."""
        if self.overrides.rtol is not None:
            return self.overrides.rtol
        return self.own_relative

    @cached_property
    def own_relative(self) -> float:
        """gradcheck's own relative rounding allowance, whatever the call's ``rtol``."""
        return rounding(self.dtype) * self.cond * self.factor

    @property
    def absolute(self) -> float:
        """The call's ``atol`` (0 when not overridden), added to every tolerance."""
        return self.overrides.atol or 0.0

    @cached_property
    def tiny(self) -> float:
        return TINY.get(np.dtype(self.dtype).name, 1e-30)

    def numeric_part(self, error: Any) -> Any:
        """The share of a tolerance due to the numeric reference's error estimate."""
        return NUMERIC_SAFETY * self.factor * np.asarray(error, dtype=np.float64)


def flat(parts: Sequence[Any]) -> np.ndarray:
    """The parts ravelled and concatenated, as float64.  Read only: a single float64 part
    comes back as a view of itself, not a copy (at 10^6 elements a copy is a pass over 8 MB,
    and most callers only read it or multiply it into a new array)."""
    arrays = [np.asarray(p, dtype=np.float64).ravel() for p in parts]
    if len(arrays) == 1:
        view = arrays[0].view()
        view.flags.writeable = False
        return view
    return np.concatenate(arrays) if arrays else np.zeros(0)


def elementwise(actual: Sequence[Any], expected: Sequence[Any], tol: Tolerances,
                numeric_error: Sequence[Any] | None = None, scale: float = 0.0,
                noise: float = 0.0) -> Verdict:
    """Compare two lists of arrays element by element.

    Tolerance per element: the numeric part (when ``numeric_error`` is given) plus the
    rounding allowance times the largest magnitude of either side (or ``scale``, if larger:
    the size of the terms that were added up to make them), plus :data:`NOISE_SAFETY` times
    the measured rounding ``noise`` of the two sides (see ``Session.noise``).  Non-finite
    values in ``actual`` where ``expected`` is finite give an infinite error; the same
    non-finite value on both sides (two analytic paths agreeing on a nan) gives none.
    """
    a, b = flat(actual), flat(expected)
    if a.size == 0:
        return Verdict(0.0, 0.0, 0.0)
    with np.errstate(invalid="ignore", over="ignore"):
        err = np.abs(a - b)
    if np.isfinite(a).all() and np.isfinite(b).all():  # the usual case, in fewer passes
        size = max(float(np.abs(a).max()), float(np.abs(b).max()), tol.tiny)
    else:
        same = (np.isnan(a) & np.isnan(b)) | (~np.isfinite(a) & (a == b))  # identical non-finite
        err = np.where(same, 0.0, np.where(np.isnan(err) | ~np.isfinite(a), np.inf, err))
        both_finite = np.isfinite(a) & np.isfinite(b)
        size = max(float(np.max(np.abs(np.where(both_finite, a, 0.0)))),
                   float(np.max(np.abs(np.where(np.isfinite(b), b, 0.0)))), tol.tiny)
    scale = max(size, scale)
    allowed = np.full(a.shape, tol.relative * scale + NOISE_SAFETY * noise + tol.absolute)
    if numeric_error is not None:
        allowed += tol.numeric_part(flat(numeric_error))
    with np.errstate(invalid="ignore", over="ignore"):
        if float(allowed.min()) > 0:
            ratios = err / allowed
        else:
            ratios = np.where(allowed > 0, err / np.where(allowed > 0, allowed, 1.0),
                              np.where(err > 0, np.inf, 0.0))
    worst = int(ratios.argmax())
    return Verdict(float(err[worst]), float(err[worst] / size), float(allowed[worst]), worst,
                   float(a[worst]), float(b[worst]))


def scalar(actual: float, expected: float, magnitude: float, tol: Tolerances,
           numeric_error: float = 0.0, noise: float = 0.0) -> Verdict:
    """Compare two scalars (projections ``<v, J u>``): ``magnitude`` is the sum of the absolute
    terms that were added up, which bounds the rounding of either side."""
    with np.errstate(invalid="ignore", over="ignore"):
        err = abs(float(actual) - float(expected))
    if not math.isfinite(err):
        err = math.inf
    scale = max(float(magnitude), tol.tiny) if math.isfinite(magnitude) else tol.tiny
    size = max(abs(float(actual)), abs(float(expected)), tol.tiny)
    if tol.overrides.rtol is None:
        relative = tol.relative * scale
    else:
        # the caller's rtol is relative to the values compared, as element by element (and
        # in torch's and JAX's checkers); on the sum of the terms it would grow with their
        # count, and a wrong rule would pass a large projection.  The sum's own rounding
        # is still allowed for.
        relative = tol.overrides.rtol * size + tol.own_relative * scale
    allowed = relative + float(tol.numeric_part(numeric_error)) + NOISE_SAFETY * noise + \
        tol.absolute
    return Verdict(err, err / size if math.isfinite(size) else math.inf, allowed, None,
                   float(actual), float(expected))


def natural_scale(outs: Sequence[np.ndarray], x: Sequence[np.ndarray],
                  linear_in: Sequence[np.ndarray] | None = None) -> float:
    """A problem's natural derivative scale, ``max(|f| / |x|, 1 / max(1, |x|))`` (over
    ``|x|`` once more, when that is small, for the second-order maps G and K, times the size
    of the cotangent or tangent ``linear_in`` they are linear in).

    A rule computes its derivative from intermediate values on this scale: where the
    derivative itself is tiny (``1 - tanh(x)**2`` at saturation, ``softmax - onehot`` for a
    confident prediction) the rounding of those intermediates is what it loses, so
    tolerances are never smaller than that rounding."""
    out = max((largest_finite(o) for o in outs if o.dtype.kind == "f"), default=0.0)
    xi = max(top(x), float(np.finfo(np.float64).eps) ** 0.5)
    scale = max(out / xi, 1.0 / max(1.0, xi))
    if linear_in is not None:
        scale *= max(1.0, 1.0 / xi) * max(1.0, top(linear_in))
    return scale


def top(arrays: Sequence[Any]) -> float:
    """Largest finite |value| over a list of arrays (0 when empty)."""
    return largest_finite(flat(arrays))


def largest_finite(a: np.ndarray) -> float:
    """Largest finite ``|a|`` of a real array (0 when it has none).  When every value is
    finite, which is the usual case, it is ``max(a.max(), -a.min())``: two passes that only
    read the array, where ``|a|`` under a finiteness mask wrote two temporaries too (at 10^6
    elements a third of what the comparisons of a check did with their arrays)."""
    if not a.size:
        return 0.0
    hi, lo = float(np.maximum.reduce(a, axis=None)), float(np.minimum.reduce(a, axis=None))
    if math.isfinite(hi) and math.isfinite(lo):
        return max(hi, -lo, 0.0) + 0.0  # (+ 0.0: an all-zero array gives 0.0, never -0.0)
    return float(np.maximum.reduce(np.abs(a), axis=None, where=np.isfinite(a), initial=0.0))
