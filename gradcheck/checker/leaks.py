"""Leaks of the dummy cotangent in the double-VJP JVP.

The double-VJP JVP transposes the VJP in a dummy cotangent ``v``.  Mathematically the result
does not depend on ``v`` because the VJP is linear in it; two things go wrong in practice
(both in the seed thread, ``shared/seeds/001``):

* **value leak** (a failure): the result changes with the dummy's value, because some
  gradient op's own VJP is not linear in its upstream gradient (TensorFlow's ELU for x < 0).
  Detected by computing the JVP with several dummies: zeros, ones, random, random with exact
  zeros, and large (~1e3) values.
* **dependence leak** (a warning): the value does not change, but the computation reads the
  dummy, so a placeholder dummy would have to be fed (TensorFlow's Cholesky, sin, cos, log).
  Decided from the engine's own record of which values the result was computed from.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from gradcheck.checker.checks import Sides, describe, judge
from gradcheck.checker.compare import Outcome, top, where
from gradcheck.checker.session import Session
from gradcheck.checker.table import FLAG

__all__ = ["DUMMIES", "dummies", "leak_check"]

#: Names of the dummies tried, in order (the primary double-VJP value uses zeros).
DUMMIES = ("ones", "random", "random with exact zeros", "large")


def dummies(sess: Session) -> dict[str, list[np.ndarray]]:
    """The dummy cotangents (besides zeros), fixed by the example's seed."""
    rnd = sess.direction("dummy", "outputs")
    holes = sess.direction("dummy holes", "outputs")
    return {
        "ones": [np.ones_like(o) for o in rnd],
        "random": rnd,
        "random with exact zeros": [np.where(h > 0, r, 0).astype(r.dtype)
                                    for r, h in zip(rnd, holes, strict=True)],
        "large": sess.direction("dummy large", "outputs", scale=1e3),
    }


def _blame(sess: Session) -> str:
    grad_op = sess.target.grad_op
    if grad_op and not sess.side:
        return (f"the VJP of the gradient op {grad_op!r} (which {sess.target.name}'s VJP calls) "
                "is not linear in its upstream-gradient input")
    return "some VJP rule, differentiated again, is not linear in its upstream gradient"


def _with_dummy(s: Session, name: str) -> tuple[list[np.ndarray], bool]:
    """The double-VJP JVP with dummy ``name``, and whether it read the dummy (one
    evaluation, shared by the value-leak and dependence-leak checks)."""
    def compute() -> Any:
        x, u, dummy = s.x, s.direction("u"), dummies(s)[name]
        return s.evaluate("double_vjp", lambda: s.problem.double_vjp(x, u, dummy),
                          (*s.outs, FLAG), tangent=u, dummy=dummy)
    return s.memo(("double_vjp dummy", name), compute)


def _against(name: str) -> Callable[[Session], Sides]:
    """The double-VJP JVP with dummy ``name`` against the one with dummy zeros.  Their terms
    scale with the dummy: a rule that is linear in it still rounds in proportion to it
    (torch's matrix_exp backward exponentiates a block matrix holding the dummy), so the
    comparison's magnitude grows with the dummy's size.  A value leak moves the result by
    the dummy's size itself, far beyond that rounding."""
    def sides(s: Session) -> Sides:
        result, _ = _with_dummy(s, name)
        size = max(1.0, top(dummies(s)[name]))
        return result, s.primary("double_vjp")[0], s.natural() * top(s.direction("u")) * size
    return sides


def _reads_dummy(sess: Session) -> bool:
    """The engine's record: was any double-VJP result computed from the dummy?"""
    read = bool(sess.primary("double_vjp")[1])
    for name in DUMMIES:
        read = read or bool(_with_dummy(sess, name)[1])
    return read


def leak_check(sess: Session, path: str = "double_vjp") -> None:
    """Value leak (failure) or, failing that, dependence leak (warning)."""
    u = sess.direction("u")
    verdicts = {name: judge(sess, _against(name))[0] for name in DUMMIES}
    name, verdict = max(verdicts.items(), key=lambda kv: kv[1].ratio)
    if not verdict.passed:
        index, at = where(verdict.worst or 0, [o.shape for o in sess.outs], "output")
        sess.record(Outcome(
            path, "dummy", "value_leak", verdict,
            f"the double-VJP JVP changes with the dummy cotangent: dummy {name} moves it away "
            f"from dummy zeros ({describe(verdict)} at {at}); {_blame(sess)}",
            {"dummy": name}, {"tangent": u, "dummy": dummies(sess)[name]}, index))
    elif _reads_dummy(sess):
        what = f" (gradient op {sess.target.grad_op!r})" if sess.target.grad_op and \
            not sess.side else ""
        # a problem that can say how it reads the dummy (TensorFlow's graph) says so
        how: dict[str, Any] = getattr(sess.problem, "dependence_details", lambda: {})()
        said = f", {how['meaning']} (path: {' -> '.join(how['dependence_path'])})" \
            if how else ""
        sess.record(Outcome(
            path, "dummy", "dependence_leak", verdict,
            "the double-VJP JVP is computed from the dummy cotangent although its value does "
            f"not depend on it{what}: a placeholder dummy would have to be fed{said}",
            {"dummy": "zeros", **how}, {"tangent": u}))
    else:
        sess.record(Outcome(path, "dummy", None, verdict))
