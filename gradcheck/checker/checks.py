"""The checks run on one example: each path against the numeric reference, against the other
paths (``self``), and the linearity of the first-order maps.

Every check takes a :class:`~gradcheck.checker.session.Session` and a path, and records
:class:`~gradcheck.checker.compare.Outcome` s on it.  Which linear map each path is, at
which point the numeric reference differentiates what, and its identities, are rows of the
path table (:mod:`gradcheck.checker.table`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, NoReturn

import numpy as np

from gradcheck.checker import numeric
from gradcheck.checker.compare import (
    INCONCLUSIVE,
    POOR,
    Outcome,
    absdot,
    dot,
    fast_forward,
    fast_transpose,
    flat,
    full_forward,
    full_transpose,
    share_forward,
    share_full,
    share_transpose,
    top,
    where,
)
from gradcheck.checker.session import Session, Skip, Stop
from gradcheck.checker.table import TABLE, Sides, Spec, row
from gradcheck.checker.tolerances import Verdict, elementwise, largest_finite, scalar

__all__ = ["Spec", "spec", "numeric_check", "self_check", "linearity_check", "describe",
           "judge", "noise", "blamed_identities"]

Arrays = list[np.ndarray]


def spec(sess: Session, path: str) -> Spec:
    """How ``path`` is compared with its numeric reference at this example (the table's)."""
    return row(path).spec(sess)


def describe(verdict: Verdict) -> str:
    return (f"max abs err {verdict.max_abs_err:.3g} vs tolerance {verdict.tolerance:.3g} "
            f"(ratio {verdict.ratio:.3g})")


def noise(a: Any, b: Any) -> float:
    """Largest finite difference between two evaluations of the same quantity."""
    with np.errstate(all="ignore"):
        d = np.abs(flat(a if isinstance(a, list) else [a]) - flat(b if isinstance(b, list)
                                                                 else [b]))
    return largest_finite(d)


def _moved(sess: Session, value: Callable[[Session], Any]) -> Any:
    """``value`` at the perturbed sample, or None when it cannot be computed there."""
    other = sess.perturbed()
    if other is None:
        return None
    try:
        return value(other)
    except Stop:
        return None


# -- against the numeric reference ------------------------------------------------------------
def numeric_check(sess: Session, path: str) -> None:
    """``path`` against the numeric derivative (fast projection, re-checked in full mode);
    once per session (an identity may have asked for it early).  A comparison whose numeric
    error estimate is of the order of the values compared is never a pass: see
    :func:`_judged`."""
    if not sess.first_time(("numeric_check", path)):
        return
    sp = spec(sess, path)
    try:
        verdict, index, at, share = _judged(sess, path, sp)
    except numeric.NonFiniteError as e:
        raise Skip("nonfinite") from e
    inconclusive = verdict.passed and share > INCONCLUSIVE
    kind = None if verdict.passed and not inconclusive else "mismatch"
    message = "" if kind is None else \
        f"{path} disagrees with the numeric derivative: {describe(verdict)} at {at}"
    details: dict[str, Any] = {"mode": sess.options.mode}
    if inconclusive:
        message = (f"{path} cannot be judged against the numeric derivative here: its error "
                   f"estimate is {share:.3g} of the values compared even with smaller steps, "
                   f"and no kink was found along the directions tried ({describe(verdict)} "
                   f"at {at})")
        details["inconclusive"] = True
    if _all_zero(sp.value):
        # all zero here: when it is so at every example, nothing flowed (a missing rule,
        # None turned into zeros); the collector then names it silently_zero
        details["all_zero"] = True
    if not verdict.passed and not math.isfinite(verdict.got) and \
            math.isfinite(verdict.expected):
        message += (f"; {path} is {verdict.got} where the forward and the numeric derivative "
                    "are finite (unstable formula?)")
    sess.record(Outcome(path, "numeric", kind, verdict, message, details, sp.directions,
                        index))


Judged = tuple[Verdict, list[int] | None, str, float]


def _judged(sess: Session, path: str, sp: Spec) -> Judged:
    """The comparison of ``path`` with the numeric derivative, and the numeric reference's
    share of its tolerance (see :data:`~gradcheck.checker.compare.POOR`).

    A failing or poorly known comparison is looked at again, in this order: with smaller
    numeric steps when the estimate is inconclusive (a kink a step away), a kink along the fast
    direction (Skip("kink")), widened by the measured rounding noise, then (outside a
    search) in full mode, with a kink looked for along the failing column's and its output
    element's basis directions (a median-like function such as clamp at x = lo = hi can be
    linear along the random direction)."""
    lin, nat, tol = sess.linearization(sp.lin), sess.natural(sp.lin), sess.tol
    full = full_forward if sp.forward else full_transpose
    apply = _safe(sess, path, sp.apply)
    whole = sess.options.mode == "full"

    def compare(rounding: float) -> Judged:
        if whole:
            verdict, index, at = full(lin, apply, sess.dtype, tol, nat, rounding)
            return verdict, index, at, share_full(lin, tol, nat)
        verdict, at = _fast(sp, lin, tol, nat, rounding)
        share = share_forward(lin, sp.value, sp.dirs, tol, nat) if sp.forward else \
            share_transpose(lin, sp.value, sp.cot, sp.dirs, tol, nat)
        return verdict, None, at, share

    found = compare(0.0)
    if _settled(found):
        # a given point is all there is: one on a symmetric kink (abs at 0, where central
        # differences agree with the rule's 0) must be told, not passed; the function's own
        # kinks are looked for once per example (a gradient jumps where they are)
        if sess.target.given_point and sp.lin == "f" and _given_kink(sess, lin, sp.dirs):
            _kink(sess, path, sp, lin.name)
        return found
    if found[3] > INCONCLUSIVE:  # first try to make it good: steps that stay on one side
        if lin.refine_jacobian(tol, nat) if whole else lin.refine(sp.dirs):
            found = compare(0.0)
            if _settled(found):
                return found
    if lin.is_kink(sp.dirs):
        _kink(sess, path, sp, lin.name)
    rounding = _rounding(sess, path, sp)
    found = compare(rounding)
    if not whole and not _settled(found) and sess.options.mode != SEARCH:
        whole = True
        lin.refine_jacobian(tol, nat)  # its poor columns (the fast direction's was refined)
        found = compare(rounding)
        sess.cleared += found[0].passed and found[3] <= INCONCLUSIVE
    if whole and not _settled(found) and \
            lin.kink_near(None if found[0].passed else found[0].worst):
        _kink(sess, path, sp, lin.name)
    return found


def _given_kink(sess: Session, lin: Any, dirs: Arrays) -> bool:
    """Whether the function has a kink at the given point along ``dirs``: looked for once per
    check and dtype (every example is the same point; one found skips them all), on the
    target, so the other examples cost nothing.

    The sides are compared at the default steps only (no retries from smaller steps): this
    runs after a settled pass, so the central tableau at those same steps saw no switch of
    f within them (one would have made its error estimate poor), and what keeps the sides
    from being told apart is truncation or rounding, which smaller steps do not resolve (a
    symmetric kink, abs at 0, differs by far more).  At a given 10^4-element point the
    retries were 21 of the check's 118 evaluations, and they never told."""
    seen = sess.target.__dict__.setdefault("_given_kinks", {})
    key = (sess.dtype, sess.side)
    if key not in seen:
        seen[key] = lin.is_kink(dirs, shrinks=0)
    return bool(seen[key])


def _settled(found: Judged) -> bool:
    """A pass whose numeric estimate was good enough to tell without a second look (see
    ``POOR``; a pass is inconclusive, and fails, only beyond ``INCONCLUSIVE``)."""
    return found[0].passed and found[3] <= POOR


def _kink(sess: Session, path: str, sp: Spec, name: str) -> NoReturn:
    """Record that the sample sits on a kink and skip the example's numeric check."""
    sess.record(Outcome(path, "numeric", "nondifferentiable",
                        message=f"{path}: the sample sits on a kink of {name} "
                                "(left and right derivatives differ)",
                        directions=sp.directions))
    raise Skip("kink")


def _rounding(sess: Session, path: str, sp: Spec) -> float:
    """The rounding noise of ``path``'s value, measured at the perturbed sample (0 when it
    cannot be)."""
    moved = _moved(sess, lambda s: spec(s, path).value)
    rounding = 0.0 if moved is None else (
        noise(sp.value, moved) if sp.forward else
        abs(dot(sp.value, sp.dirs) - dot(moved, sp.dirs)))
    if not math.isfinite(rounding):  # a non-finite value has no measurable noise
        rounding = 0.0
    if sess.side:
        # a framework runs in float64: a change of more than this between two
        # samples 2 ulps apart is a jump in its rule (at a tie), not rounding
        size = top(sp.value) if sp.forward else absdot(sp.value, sp.dirs)
        rounding = min(rounding, FRAMEWORK_ROUNDING * size)
    return rounding


#: The mode a shrinking search judges candidates in: fast mode without the whole-Jacobian
#: confirmation of a failure (the search's smallest example is confirmed in the check's own
#: mode before it is reported).
SEARCH = "search"

#: The most rounding noise a reference framework's float64 path may show, relative to its
#: size (see numeric_check).
FRAMEWORK_ROUNDING = 1e-6


def _all_zero(value: Any) -> bool:
    a = flat(value if isinstance(value, list) else [value])
    return bool(np.all(a == 0))  # an empty value too: it says nothing either way


def _fast(sp: Spec, lin: Any, tol: Any, nat: float, rounding: float) -> tuple[Verdict, str]:
    if sp.forward:
        return fast_forward(lin, sp.value, sp.dirs, tol, nat, rounding)
    return fast_transpose(lin, sp.value, sp.cot, sp.dirs, tol, nat, rounding)


def _safe(sess: Session, path: str, apply: Callable[[Arrays], Arrays]) -> Callable[..., Arrays]:
    return lambda arg: sess.evaluate(path, lambda: apply(arg))


# -- identities between analytic values -------------------------------------------------------
def _verdict(sides: Sides, sess: Session, rounding: float = 0.0) -> Verdict:
    lhs, rhs, magnitude = sides
    if isinstance(lhs, float):
        return scalar(lhs, rhs, magnitude, sess.tol, noise=rounding)
    return elementwise(lhs, rhs, sess.tol, scale=magnitude, noise=rounding)


def judge(sess: Session, sides: Callable[[Session], Sides]) -> tuple[Verdict, Sides]:
    """Compare the two sides; before failing, widen by their rounding noise measured at the
    perturbed sample."""
    here = sides(sess)
    verdict = _verdict(here, sess)
    if verdict.passed:
        return verdict, here
    there = _moved(sess, sides)
    if there is None:
        return verdict, here
    return _verdict(here, sess, max(noise(here[0], there[0]), noise(here[1], there[1]))), here


def _record(sess: Session, path: str, against: str, verdict: Verdict, what: str,
            directions: dict[str, Arrays], shapes: list[tuple[int, ...]] | None = None,
            blame: dict[str, Any] | None = None) -> None:
    index, at = None, ""
    if verdict.worst is not None and shapes is not None:
        index, at = where(verdict.worst, shapes, "element")
        at = f" at {at}"
    message = "" if verdict.passed else f"{what}: {describe(verdict)}{at}"
    sess.record(Outcome(path, "self", None if verdict.passed else "mismatch", verdict, message,
                        {"against": against, **(blame or {})}, directions, index))


def self_check(sess: Session, path: str) -> None:
    """``path`` against the other paths: the table's exact identities, at rounding-level
    tolerance (on a reference side, with the paths it computes).  A failing identity is filed
    under the path the evidence blames, and says what that evidence is (see
    :func:`_attribute`)."""
    for identity in row(path).identities:
        if sess.side and identity.against not in sess.options.paths:
            # a reference side that computes only some paths its own way (tf_function's
            # jvp): the other path would be the target's again, judged there already
            continue
        verdict, _ = judge(sess, identity.sides)
        shapes = identity.shapes(sess) if identity.shapes is not None else None
        filed, against, said = path, identity.against, ""
        blame: dict[str, Any] = {}
        if not verdict.passed:
            filed, against, said, blame = _attribute(sess, path, identity.against)
        _record(sess, filed, against, verdict, identity.message + said,
                identity.directions(sess), shapes, blame)


#: When both paths of a failing identity pass the numeric check, the one whose error is this
#: many times the other's share of its tolerance (and at least NOTICEABLE of it) is the
#: likelier culprit (the same rule as a disagreement with a reference framework's path).
LIKELIER, NOTICEABLE = 10.0, 0.05

Attribution = tuple[str, str, str, dict[str, Any]]


def far_larger(share: float, other: float) -> bool:
    """Whether an error that is ``share`` of its tolerance makes its side the likelier
    culprit against one that is ``other`` of its own (see :data:`LIKELIER`)."""
    return share >= max(LIKELIER * other, NOTICEABLE)


def _attribute(sess: Session, path: str, against: str) -> Attribution:
    """``(filed, other, said, details)`` for a failing identity between ``path`` and
    ``against``: the path it is filed under (the right one's cell must not read "fail"), the
    other, what the message adds and the details that record it.

    The numeric reference decides when it rejects one path and supports the other.  When it
    passes both (their disagreement is below its tolerance but above rounding), the path
    whose numeric error is the far larger share of its tolerance is the likelier culprit;
    else both are suspects, filed under ``path``.  Other identities at the same example are
    no evidence: double_vjp transposes the VJP's rule, so it agrees with the VJP whether
    the VJP or the JVP is the wrong one."""
    verdicts = _numeric_verdicts(sess, path, against)
    both = f"{path} and {against} are both suspects"
    if verdicts is None:
        return path, against, (f"; the numeric reference did not judge both paths here, so "
                               f"it cannot tell which is wrong: {both}"), \
            {"suspects": [path, against]}
    ok = {p: o.kind is None for p, o in verdicts.items()}
    if ok[path] != ok[against]:
        right, wrong = (path, against) if ok[path] else (against, path)
        return wrong, right, (f"; the numeric reference supports {right} and rejects {wrong} "
                              f"here: {wrong} is wrong"), \
            {"numeric_supports": right, "numeric_rejects": wrong}
    if not ok[path]:
        return path, against, (f"; the numeric reference rejects both {path} and {against} "
                               "here: both are wrong"), {"suspects": [path, against]}
    ratio = {p: _ratio(o) for p, o in verdicts.items()}
    ratios = {p: float(f"{r:.3g}") for p, r in ratio.items()}
    shares = f"error ratios {ratio[path]:.2g} for {path}, {ratio[against]:.2g} for {against}"
    passes = "; the numeric reference passes both paths here, so it cannot tell which is wrong"
    for likely, other in ((path, against), (against, path)):
        if far_larger(ratio[likely], ratio[other]):
            return likely, other, (f"{passes}; filed under {likely}, whose error against it is "
                                   f"the larger share of its tolerance ({shares}): {likely} "
                                   f"is the likelier culprit, {other} still a suspect"), \
                {"suspects": [likely, other], "likelier": likely, "numeric_ratios": ratios}
    return path, against, f"{passes} ({shares}): {both}", \
        {"suspects": [path, against], "numeric_ratios": ratios}


def _ratio(outcome: Outcome) -> float:
    """A passing numeric check's error over its tolerance (0 when it has none to tell)."""
    r = outcome.verdict.ratio if outcome.verdict is not None else 0.0
    return r if math.isfinite(r) else 0.0


def _numeric_verdicts(sess: Session, path: str, against: str) -> dict[str, Outcome] | None:
    """The numeric checks of the two paths at this example, judged now when they were not
    yet (a later path, or a search that runs this identity only; the plan does not judge
    them again); None when either is missing or inconclusive (it could not judge)."""
    def judged() -> dict[str, Outcome]:
        return {o.path: o for o in sess.outcomes
                if o.reference == "numeric" and o.path in (path, against)}

    verdicts = judged()
    if len(verdicts) < 2 and "numeric" in sess.options.references:
        for p in (path, against):
            try:
                numeric_check(sess, p)
            except Stop:
                return None
        verdicts = judged()
    if len(verdicts) < 2 or any(o.details.get("inconclusive") for o in verdicts.values()):
        return None
    return verdicts


def blamed_identities(path: str) -> list[str]:
    """The paths whose identities can file a finding under ``path`` (itself, when it has
    identities, and every path with an identity against it): what a search for a ``self``
    finding of ``path`` must run."""
    return [p for p in TABLE if p == path and row(p).identities or
            any(i.against == path for i in row(p).identities)]


# -- linearity --------------------------------------------------------------------------------
def _linear(path: str, prop: str) -> Callable[[Session], Sides]:
    """One linearity property of the VJP (in the cotangent) or JVP (in the tangent)."""
    def sides(s: Session) -> Sides:
        x, p = s.x, s.problem
        if path == "vjp":
            like, first, call, expect = "outputs", "v", lambda c: p.vjp(x, c), x
        else:
            like, first, call, expect = "primals", "u", lambda d: p.jvp(x, d), s.outs
        a, b = s.direction(first, like), s.direction(first + "2", like)
        base = s.primary(path)

        def at(arg: Arrays) -> Arrays:
            return s.evaluate(path, lambda: call(arg), expect)

        gb = s.memo((path, first + "2"), lambda: at(b))  # every property needs it
        scale = max(top(base), top(gb), s.natural() * max(top(a), top(b)))
        if prop == "zero":
            g0 = at([np.zeros_like(i) for i in a])
            return g0, [np.zeros_like(i) for i in g0], scale
        if prop == "scaling":
            return at([2 * i for i in a]), [2 * i for i in base], 2 * scale
        if prop == "separately":  # each part alone (None elsewhere), summed
            alone: list[Any] = [[d if k == j else None for k, d in enumerate(a)]
                                for j in _parts(s, path)]
            parts = [at(one) for one in alone]
            return [sum(part) for part in zip(*parts, strict=True)], base, scale
        gsum = at([i + j for i, j in zip(a, b, strict=True)])
        return gsum, [i + j for i, j in zip(base, gb, strict=True)], scale
    return sides


_WHY = {"zero": "a zero {0} gives a nonzero result (an affine rule?)",
        "scaling": "doubling the {0} does not double the result",
        "superposition": "the result for a sum of {0}s is not the sum of the results",
        "separately": "the {0} of one {1} at a time (None for the others, as the engine "
                      "passes for a constant or an unused result) does not add up to the "
                      "result for all of them: a rule's branch for a None {0} is wrong"}


def _parts(sess: Session, path: str) -> list[int]:
    """Where the ``separately`` property gives a direction alone: the differentiated inputs
    (JVP) or the floating outputs (VJP), when there are two or more and the problem takes
    None for the others (the engine's own rules meet None there; a framework's problem
    gets arrays)."""
    if not getattr(sess.problem, "partial", False):
        return []
    if path == "jvp":
        return list(range(len(sess.x))) if len(sess.x) > 1 else []
    floating = [k for k, o in enumerate(sess.outs) if o.dtype.kind in "fc"]
    return floating if len(floating) > 1 else []


def linearity_check(sess: Session, path: str) -> None:
    """The VJP is linear in the cotangent, the JVP in the tangent: zero, scaling (by 2, exact
    in binary) and superposition, at rounding-level tolerance."""
    what = "cotangent" if path == "vjp" else "tangent"
    like = "outputs" if path == "vjp" else "primals"
    first = "v" if path == "vjp" else "u"
    if "numeric" in sess.options.references and \
            not np.isfinite(flat(sess.primary(path))).all():
        # a nan or inf value is no evidence of an affine rule (0 * nan is nan): the numeric
        # check says what is wrong ("... is nan where the forward is finite")
        sess.record(Outcome(path, "linearity", None, None, "",
                            {"property": "not judged: the value is not finite"}))
        return
    props = [p for p in _WHY if p != "separately" or _parts(sess, path)]
    verdicts = {prop: judge(sess, _linear(path, prop))[0] for prop in props}
    name, verdict = max(verdicts.items(), key=lambda kv: kv[1].ratio)
    part = "input" if path == "jvp" else "output"
    message = "" if verdict.passed else \
        f"{path} is not linear in the {what}: {_WHY[name].format(what, part)}; " \
        f"{describe(verdict)}"
    sess.record(Outcome(path, "linearity", None if verdict.passed else "nonlinear", verdict,
                        message, {"property": name},
                        {what: sess.direction(first, like),
                         f"second {what}": sess.direction(first + "2", like)}))
