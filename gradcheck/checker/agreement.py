"""A reference framework inside the one checker: its problem checked like the target's, and
its paths compared with the target's.

At one example the reference binds its own :class:`~gradcheck.checker.targets.Problem` for
the target (in float64).  Its outputs are sign-aligned where the op declares a gauge, its
forward must agree with the target's (else the equivalent, or the framework's forward, is
wrong and nothing else is compared), then every planned check runs on it in a
:class:`~gradcheck.checker.session.Session` of its own: the same directions (drawn from the
same seed and names), the same numeric reference (the first-order linearization is shared
with the target's session, so no extra evaluations), the same tolerances.  Its outcomes carry
``side=<reference>``, so its wrong derivatives are findings attributed to the framework.

Last, each path of the reference is compared with the target's at rounding-level tolerance;
a disagreement says which side the numeric reference supports.
"""

from __future__ import annotations

import traceback
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np

from gradcheck.checker.checks import describe, far_larger
from gradcheck.checker.compare import Outcome, flat, top, where
from gradcheck.checker.gauge import SignAligned, align_signs
from gradcheck.checker.references import Reference, Unsupported
from gradcheck.checker.session import STRUCTURE, Options, Session, Stop
from gradcheck.checker.table import row
from gradcheck.checker.targets import with_dtype
from gradcheck.checker.tolerances import elementwise

__all__ = ["examine_reference"]

RunChecks = Callable[[Session, Any, Any], "str | None"]


def _arrays(path: str, value: Any) -> list[np.ndarray]:
    if path == "double_vjp":
        value = value[0]
    if isinstance(value, tuple):
        return [np.asarray(a) for part in value for a in part]
    return [np.asarray(a) for a in value]


def _bind(sess: Session, ref: Reference) -> tuple[Any, Outcome | None]:
    """How the reference binds an example (sign-aligned to the target), or why it cannot."""
    side, name = ref.name, sess.target.name
    example = with_dtype(sess.example, "float64")
    try:
        problem = ref.bind(sess.target, example)
        theirs = [np.asarray(o) for o in problem.forward(problem.primals)]
    except Unsupported as e:
        return None, Outcome("forward", STRUCTURE, "unsupported", side=side,
                             message=f"{side} cannot compute {name} here: {e}")
    except Exception as e:  # noqa: BLE001 - a framework's crash is reported, never raised
        return None, Outcome("forward", STRUCTURE, "error", side=side,
                             message=f"{side}'s equivalent of {name} raised "
                                     f"{type(e).__name__}: {e}", traceback=traceback.format_exc())
    factors = align_signs(getattr(sess.target, "gauge", ()), theirs, sess.outs)

    def bind(ex: Any) -> Any:
        bound = ref.bind(sess.target, ex)
        return bound if factors is None else SignAligned(bound, factors)
    return bind, None


#: Relative difference of the forwards (on the inputs' scale) above which a reference computes
#: another function (a wrong equivalent); below it, an inaccurate forward.
SAME_FUNCTION = 1e-5


def _forward_differs(sess: Session, rs: Session) -> tuple[Outcome | None, bool]:
    """Whether the reference's forward differs from the target's, and whether it computes
    the same function at all: an inaccurate forward (TensorFlow's float64 gelu rounds its
    constants to float32) is a finding, and the reference's derivatives are then judged
    against the numeric derivative of its own forward; a different function stops here."""
    side, ours, theirs = rs.side, sess.outs, rs.outs
    if [o.shape for o in ours] != [t.shape for t in theirs]:
        return Outcome("forward", STRUCTURE, "mismatch", side=side, message=(
            f"{side}'s equivalent of {sess.target.name} returns shapes "
            f"{[t.shape for t in theirs]}, the target {[o.shape for o in ours]}")), False
    # the floor (the inputs' scale) keeps values computed with cancellation from tripping it
    scale = max(top(sess.x), top(ours))
    verdict = elementwise(ours, theirs, sess.tol, scale=scale)
    if verdict.passed:
        return None, True
    index, at = where(verdict.worst or 0, [o.shape for o in ours], "output")
    same = verdict.max_abs_err <= SAME_FUNCTION * max(scale, 1e-300)
    what = (f"{side}'s forward of {sess.target.name} is inaccurate here" if same else
            f"{side}'s equivalent of {sess.target.name} computes a different value (a wrong "
            f"equivalent, or {side}'s forward is wrong here)")
    return Outcome("forward", "numeric" if same else STRUCTURE, "mismatch", verdict,
                   side=side, worst_index=index,
                   message=f"{what}: {describe(verdict)} at {at}"), same


def examine_reference(sess: Session, ref: Reference, wanted: set[tuple[str, str]] | None,
                      run_checks: RunChecks) -> list[Outcome]:
    """The outcomes of reference ``ref`` at ``sess``'s example (see the module doc)."""
    bind, why = _bind(sess, ref)
    if why is not None:
        return [why]
    example = with_dtype(sess.example, "float64")
    # no whole Jacobians for a framework (fast projections, or a shrinking search's mode):
    # its bugs show in projections, and whole Jacobians of a framework's second-order maps
    # would cost thousands of framework calls per example
    options = replace(sess.options, mode="fast" if sess.options.mode == "full" else
                      sess.options.mode)
    own = getattr(ref, "paths", None)  # a side that computes only some paths its own way
    if own is not None:
        options = replace(options, paths=tuple(p for p in options.paths if p in own))
    rs = Session(sess.target, example, options, problem=bind(example), side=ref.name,
                 rebind=bind)
    try:
        return _examined(sess, rs, ref, options, wanted, run_checks)
    finally:
        rs.close()


def _examined(sess: Session, rs: Session, ref: Reference, options: Options,
              wanted: set[tuple[str, str]] | None, run_checks: RunChecks) -> list[Outcome]:
    """:func:`examine_reference` once the reference's session ``rs`` is bound."""
    try:
        rs.forward()
    except Exception:  # noqa: BLE001 - Skip or Stop: recorded on rs, or not finite
        return rs.outcomes
    differs, same = _forward_differs(sess, rs)
    if differs is not None and not same:
        return [differs]
    if differs is None and sess.dtype == "float64":
        rs._lins["f"] = sess.linearization("f")  # same point, same function: share
    skipped = run_checks(rs, options, wanted)
    if differs is not None:  # judged on its own forward; comparing values means nothing
        return [differs, *rs.outcomes]
    if skipped is None:
        for path in options.paths:
            if wanted is None or (path, ref.name) in wanted:
                _agree(sess, rs, path)
    return rs.outcomes


def _agree(sess: Session, rs: Session, path: str) -> None:
    """The target's and the reference's value of ``path`` (same directions), compared."""
    try:
        ours, theirs = _arrays(path, sess.primary(path)), _arrays(path, rs.primary(path))
    except Stop:
        return  # recorded by whichever side failed
    side = rs.side
    dirs = [sess.direction(n, like) for n, like in
            (("u", "primals"), ("s", "primals"), ("v", "outputs"), ("w", "outputs"))]
    scale = sess.natural(row(path).lin) * max(top(d) for d in dirs)
    if [o.shape for o in ours] != [t.shape for t in theirs]:
        verdict = None
        passed = False
    else:
        verdict = elementwise(ours, theirs, sess.tol, scale=scale)
        passed = verdict.passed
    out = Outcome(path, side, None, verdict, details={"against": "target"},
                  directions=row(path).primary(sess)[2])
    if not passed:
        supports, blame = _numeric_says(sess, rs, path)
        # Where the numeric derivative decides, the side it contradicts has its own finding;
        # the disagreement itself is a finding only when the numeric cannot settle it.
        out.kind = "mismatch" if blame in ("neither", "undecided") else None
        out.details.update({"numeric_supports": supports, "attributed_to": blame})
        what = describe(verdict) if verdict is not None else "different shapes"
        out.message = (f"{path}: gradcheck's {sess.target.name} and {side}'s disagree "
                       f"({what}); the numeric derivative supports {supports}")
        if verdict is not None and verdict.worst is not None:
            out.worst_index = where(verdict.worst, [o.shape for o in ours], "element")[0]
            out.details["target_value"] = float(flat(ours)[verdict.worst])
            out.details["reference_value"] = float(flat(theirs)[verdict.worst])
    rs.outcomes.append(out)


def _numeric_says(sess: Session, rs: Session, path: str) -> tuple[str, str]:
    """Which side the numeric reference supports, and whom a disagreement is attributed to
    ("" the target, the reference's name, "neither" when both contradict it, or "undecided"
    when it cannot tell)."""
    def verdicts(s: Session) -> list[Outcome]:
        return [o for o in s.outcomes if o.path == path and o.reference == "numeric"]

    def wrong(s: Session) -> bool | None:
        found = verdicts(s)
        return any(o.kind == "mismatch" for o in found) if found else None

    def ratio(s: Session) -> float:
        return max((o.verdict.ratio for o in verdicts(s) if o.verdict is not None),
                   default=0.0)
    target_wrong, ref_wrong = wrong(sess), wrong(rs)
    base = row(path).base
    if base != path and target_wrong is False and ref_wrong is False:
        # each side's second order agrees with its own first order: the disagreement comes
        # from a first-order map that only one side gets wrong
        path = base
        target_wrong, ref_wrong = wrong(sess), wrong(rs)
    if target_wrong is None or ref_wrong is None:
        return "neither (not compared with the numeric derivative)", "undecided"
    if ref_wrong and not target_wrong:
        return "gradcheck's value", rs.side
    if target_wrong and not ref_wrong:
        return f"{rs.side}'s value", ""
    if not target_wrong:
        # both within the numeric tolerance: the side much farther from it is the suspect
        ours, theirs = ratio(sess), ratio(rs)
        if far_larger(theirs, ours):
            return (f"gradcheck's value more closely (error ratios {ours:.2g} vs "
                    f"{theirs:.2g})"), rs.side
        if far_larger(ours, theirs):
            return (f"{rs.side}'s value more closely (error ratios {ours:.2g} vs "
                    f"{theirs:.2g})"), ""
    if target_wrong:
        return "neither (both disagree with it)", "neither"
    return "both (they differ within the numeric tolerance)", "undecided"
