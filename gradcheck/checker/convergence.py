"""Convergence data for the report: numeric error against finite-difference step, per path.

For one example, each path's analytic value is compared with plain central differences at
a range of steps: a right derivative's error falls with slope 2 until rounding takes over,
a wrong one levels off at its error.  Forward maps are compared along their direction;
transpose maps through the scalar ``<cotangent, phi>`` along the direction.

:func:`slope` is the one fitter every renderer uses (terminal, HTML): the numeric module's
fit over the truncation-dominated steps only, so a curve that turns up into rounding error
still reads 2, and a path whose error is at rounding level at every step (a linear op) has
no slope at all (nan, shown as "n/a").
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from gradcheck.checker import numeric
from gradcheck.checker.checks import Spec, spec
from gradcheck.checker.compare import dot, flat
from gradcheck.checker.examine import quiet
from gradcheck.checker.sampling import Example
from gradcheck.checker.session import Options, Session, Skip, Stop
from gradcheck.checker.targets import Target, with_dtype

__all__ = ["convergence_data", "measured_convergence", "slope", "slopes", "STEPS"]

#: Steps per unit of input scale, largest first: one per decade.  Each costs two calls of
#: each linearization (f, and the VJP and JVP for the second-order paths), at the check's
#: size; a decade apart, the float64 curve still has four or five truncation-dominated
#: points before rounding takes over, which the slope fit needs, and shows where it does.
STEPS = tuple(float(h) for h in np.logspace(-1, -10, 10))


def convergence_data(target: Target, example: Example, options: Options) -> dict[str, Any]:
    """``{"steps": [...], "series": {path: [abs error per step]}, "rounding": {path: [rounding
    estimate per step]}, "expected_slope": 2.0}``, in float64 at ``example``; ``{}`` when
    nothing can be plotted."""
    return measured_convergence(target, example, options)[0]


def measured_convergence(target: Target, example: Example,
                         options: Options) -> tuple[dict[str, Any], int]:
    """:func:`convergence_data` and the evaluations it took (forward and path calls: a
    check's cost counts them like its own)."""
    with quiet():
        sess = Session(target, with_dtype(example, "float64"), options)
        try:
            data = _convergence(sess, options)
        finally:
            sess.close()
    return data, sum(sess.counts().values())


def _convergence(sess: Session, options: Options) -> dict[str, Any]:
    try:
        sess.forward()
    except (Skip, Stop):
        return {}
    scale = max(1.0, math.log1p(max((float(np.max(np.abs(x), initial=0)) for x in sess.x),
                                    default=0.0)))
    steps = [h * scale for h in STEPS]
    series: dict[str, list[float]] = {}
    rounding: dict[str, list[float]] = {}
    for group in _groups(sess, options.paths):
        try:
            found = _series(sess, group, steps)
        except (Skip, Stop, numeric.NonFiniteError, ValueError):
            continue
        for path, (errors, noise) in found.items():
            series[path], rounding[path] = errors, noise
    if not series:
        return {}
    ordered = [p for p in options.paths if p in series]
    return {"steps": steps, "series": {p: series[p] for p in ordered},
            "rounding": {p: rounding[p] for p in ordered}, "expected_slope": 2.0}


def _groups(sess: Session, paths: tuple[str, ...]) -> list[list[tuple[str, Spec]]]:
    """The paths whose series come from the same probes: the same linearization along the
    same direction (vjp, jvp and double_vjp all differentiate f along u)."""
    groups: list[list[tuple[str, Spec]]] = []
    for path in paths:
        try:
            sp = spec(sess, path)
        except (Skip, Stop):
            continue
        if sess.linearization(sp.lin).empty:
            continue
        for group in groups:
            other = group[0][1]
            if other.lin == sp.lin and len(other.dirs) == len(sp.dirs) and all(
                    np.array_equal(a, b) for a, b in zip(other.dirs, sp.dirs, strict=True)):
                group.append((path, sp))
                break
        else:
            groups.append([(path, sp)])
    return groups


def _series(sess: Session, group: list[tuple[str, Spec]],
            steps: list[float]) -> dict[str, tuple[list[float], list[float]]]:
    """Each path's error and rounding estimate per step (nan where a step was dropped), from
    one set of probes along the group's direction.  A forward path is compared along the
    direction; a transpose path through the scalar ``<cotangent, phi>``."""
    lin = sess.linearization(group[0][1].lin)
    dirs = [np.asarray(d, np.float64) for d in group[0][1].dirs]
    analytics: list[Any] = []
    projections: list[Any] = []
    for _, sp in group:
        if sp.forward:
            analytics.append(flat(sp.value))
            projections.append(None)
        else:
            analytics.append(np.array([dot(sp.value, sp.dirs)]))
            projections.append(_projection(flat(sp.cot)))

    def f(*args: Any) -> np.ndarray:
        return flat(lin.calls(*args))
    convs = numeric.convergences(f, lin.point, lin.argnums, dirs, analytics,
                                 projections=projections, steps=steps)
    out = {}
    for (path, _), conv in zip(group, convs, strict=True):
        if conv is None:
            continue
        errors = dict(zip(conv["steps"], conv["errors"], strict=True))
        noise = dict(zip(conv["steps"], conv["rounding"], strict=True))
        out[path] = ([float(errors.get(h, math.nan)) for h in steps],
                     [float(noise.get(h, math.nan)) for h in steps])
    return out


def _projection(cot: np.ndarray) -> Any:
    """``out -> <cot, out>``, summed as the scalar ``<cotangent, phi>`` always was."""
    return lambda out: float(np.sum(cot * out))


# Without a recorded rounding estimate (results written before it was), an error this far
# below 1 is taken as rounding at any step: float64 derivatives of unit-scale functions.
_ROUNDING_FLOOR = 64 * float(np.finfo(np.float64).eps)


def slope(convergence: Mapping[str, Any], path: str) -> float:
    """The fitted log-log slope of ``path``'s error against step over the steps where
    truncation dominates (error above ten times the rounding estimate); nan ("n/a") when no
    two steps do, as for a linear op whose error is rounding at every step.

    A pure function of the report's JSON: the fit is :func:`numeric.fitted_slope`, on the
    rounding estimate the check recorded; for older results without one, the estimate is
    the rising ``c / h`` branch through the smallest steps' errors (never below
    ``_ROUNDING_FLOOR``), which only ever over-estimates rounding."""
    steps = [_float(h) for h in convergence.get("steps", [])]
    errors = [_float(e) for e in dict(convergence.get("series", {})).get(path, [])]
    recorded = dict(convergence.get("rounding", {})).get(path)
    noise = ([_float(r) for r in recorded] if recorded is not None and len(recorded) == len(steps)
             else _estimated_rounding(steps, errors))
    keep = [i for i, (h, e, r) in enumerate(zip(steps, errors, noise, strict=False))
            if h > 0 and math.isfinite(h) and e > 0 and math.isfinite(e) and math.isfinite(r)]
    if len(keep) < 2:
        return math.nan
    return numeric.fitted_slope({"steps": [steps[i] for i in keep],
                                 "errors": [errors[i] for i in keep],
                                 "rounding": [noise[i] for i in keep]})


def slopes(convergence: Mapping[str, Any]) -> dict[str, float]:
    """:func:`slope` of every series, by path."""
    return {path: slope(convergence, path) for path in dict(convergence.get("series", {}))}


def _estimated_rounding(steps: list[float], errors: list[float]) -> list[float]:
    points = sorted((h, e) for h, e in zip(steps, errors, strict=False)
                    if h > 0 and math.isfinite(h) and math.isfinite(e))
    c = max((h * e for h, e in points[:3]), default=0.0)
    return [max(c / h, _ROUNDING_FLOOR) if h > 0 else math.inf for h in steps]


def _float(value: Any) -> float:
    """A float from JSON (``"nan"``/``"inf"`` strings included); nan when not a number."""
    try:
        return float(value)
    except (TypeError, ValueError):
        return math.nan
