"""The paths as one table: what each path computes, on which directions, what it is compared
with, and its identities.  Every consumer (the session's primary values, the numeric
comparison, the identities, the plan of checks, the agreement with references, the report's
order) reads this table instead of branching on path names.

With ``G(x, v) = J(x)^T v`` and ``K(x, u) = J(x) u`` (see :mod:`gradcheck.checker.paths`):

=============  ====  =======  ==============================  ===============================
path           lin   kind     value                           identities (``self``)
=============  ====  =======  ==============================  ===============================
vjp            f     transp.  ``J^T v``                       (linear in ``v``)
jvp            f     forward  ``J u``                         adjoint with vjp (linear in u)
double_vjp     f     forward  ``J u`` via a dummy cotangent   adjoint with vjp; equals jvp
hvp_fwd_rev    G     forward  ``H_v u + J^T w``               ``H_v s`` equals hvp_rev_rev's
hvp_rev_rev    G     transp.  ``(H_v s, J s)``                adjoint with hvp_fwd_rev
hvp_rev_fwd    K     transp.  ``(H_v s, J^T v)``              ``H_v s`` equals hvp_rev_rev's
=============  ====  =======  ==============================  ===============================
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from gradcheck.checker.compare import absdot, dot, flat, top

if TYPE_CHECKING:
    from gradcheck.checker.session import Session

__all__ = ["Spec", "Identity", "PathRow", "TABLE", "row", "FLAG"]

Arrays = list[np.ndarray]
#: What an identity compares, computed on a session: (lhs, rhs, magnitude of their terms).
Sides = tuple[Any, Any, float]
#: Stands for double_vjp's "read the dummy" flag among the arrays its result is checked against.
FLAG = np.asarray(False)


@dataclass
class Spec:
    """A path as a linear map at one example: ``forward`` (takes a direction) or transpose
    (takes a cotangent); the linearization ``lin`` it differentiates; its primary value; the
    direction ``dirs`` and cotangent ``cot`` of the fast projection; ``apply`` for full mode."""

    lin: str
    forward: bool
    value: Arrays
    dirs: Arrays
    cot: Arrays
    apply: Callable[[Arrays], Arrays]
    directions: dict[str, Arrays]


@dataclass(frozen=True)
class Identity:
    """An exact identity between this path and ``against``: ``sides(session)``, the message
    when it fails, the directions that reproduce it, and the shapes of an elementwise
    comparison (None for a scalar identity)."""

    against: str
    sides: Callable[[Session], Sides]
    message: str
    directions: Callable[[Session], dict[str, Arrays]]
    shapes: Callable[[Session], list[tuple[int, ...]]] | None = None


@dataclass(frozen=True)
class PathRow:
    """One path: its linearization, its primary value (call, expected arrays, directions),
    its numeric comparison, its identities, and the extra checks that apply to it."""

    name: str
    lin: str
    primary: Callable[[Session], tuple[Callable[[], Any], Any, dict[str, Any]]]
    spec: Callable[[Session], Spec]
    identities: tuple[Identity, ...] = ()
    #: "cotangent" or "tangent": the argument the path must be linear in (checked).
    linear_in: str | None = None
    #: The path transposes the VJP in a dummy cotangent: check that the dummy does not leak.
    leaks: bool = False
    #: The first-order map whose errors this path's errors follow from.
    base: str = field(default="")


def _dirs(s: Session, names: str) -> list[Arrays]:
    """The directions named by letters of ``names``: ``u`` and ``s`` (shaped like the
    primals), ``v`` and ``w`` (like the outputs); only those, since each is a fresh copy."""
    return [s.direction(n, "outputs" if n in "vw" else "primals") for n in names]


def _zeros(arrays: Arrays) -> Arrays:
    return [np.zeros_like(a) for a in arrays]


def _join(parts: tuple[Arrays, Arrays]) -> Arrays:
    return list(parts[0]) + list(parts[1])


# -- primary values -----------------------------------------------------------------------------
def _vjp(s: Session) -> Any:
    (v,) = _dirs(s, "v")
    return (lambda: s.problem.vjp(s.x, v)), s.x, {"cotangent": v}


def _jvp(s: Session) -> Any:
    (u,) = _dirs(s, "u")
    return (lambda: s.problem.jvp(s.x, u)), s.outs, {"tangent": u}


def _double_vjp(s: Session) -> Any:
    u, v = _dirs(s, "uv")
    return ((lambda: s.problem.double_vjp(s.x, u, _zeros(v))), (*s.outs, FLAG),
            {"tangent": u})


def _hvp_fwd_rev(s: Session) -> Any:
    u, v, w = _dirs(s, "uvw")
    return ((lambda: s.problem.hvp_fwd_rev(s.x, v, u, w)), s.x,
            {"cotangent": v, "tangent": u, "cotangent_tangent": w})


def _hvp_rev_rev(s: Session) -> Any:
    v, sc = _dirs(s, "vs")
    return ((lambda: s.problem.hvp_rev_rev(s.x, v, sc)), (*s.x, *s.outs),
            {"cotangent": v, "second_cotangent": sc})


def _hvp_rev_fwd(s: Session) -> Any:
    v, sc = _dirs(s, "vs")
    return ((lambda: s.problem.hvp_rev_fwd(s.x, sc, v)), (*s.x, *s.x),
            {"tangent": sc, "cotangent": v})


# -- numeric comparisons --------------------------------------------------------------------------
def _spec_vjp(s: Session) -> Spec:
    u, v = _dirs(s, "uv")
    return Spec("f", False, s.primary("vjp"), u, v, lambda c: s.problem.vjp(s.x, c),
                {"tangent": u, "cotangent": v})


def _spec_jvp(s: Session) -> Spec:
    u = s.direction("u")
    return Spec("f", True, s.primary("jvp"), u, [], lambda d: s.problem.jvp(s.x, d),
                {"tangent": u})


def _spec_double_vjp(s: Session) -> Spec:
    u, v = _dirs(s, "uv")
    zeros = _zeros(v)
    return Spec("f", True, s.primary("double_vjp")[0], u, [],
                lambda d: s.problem.double_vjp(s.x, d, zeros)[0],
                {"tangent": u, "dummy": zeros})


def _spec_hvp_fwd_rev(s: Session) -> Spec:
    u, v, w = _dirs(s, "uvw")
    nx = len(s.x)
    return Spec("G", True, s.primary("hvp_fwd_rev"), u + w, [],
                lambda d: s.problem.hvp_fwd_rev(s.x, v, d[:nx], d[nx:]),
                {"cotangent": v, "tangent": u, "cotangent_tangent": w})


def _spec_hvp_rev_rev(s: Session) -> Spec:
    u, v, sc, w = _dirs(s, "uvsw")
    pa, qa = s.primary("hvp_rev_rev")
    return Spec("G", False, pa + qa, u + w, sc,
                lambda c: _join(s.problem.hvp_rev_rev(s.x, v, c)),
                {"cotangent": v, "second_cotangent": sc, "tangent": u, "cotangent_tangent": w})


def _spec_hvp_rev_fwd(s: Session) -> Spec:
    v, sc = _dirs(s, "vs")
    pa, qa = s.primary("hvp_rev_fwd")
    a, b = s.direction("a"), s.direction("b")
    return Spec("K", False, pa + qa, a + b, v,
                lambda c: _join(s.problem.hvp_rev_fwd(s.x, sc, c)),
                {"tangent": sc, "cotangent": v, "direction": a + b})


# -- identities -----------------------------------------------------------------------------------
def _adjoint(path: str) -> Callable[[Session], Sides]:
    def sides(s: Session) -> Sides:
        u, v = s.direction("u"), s.direction("v", "outputs")
        t = s.primary("jvp") if path == "jvp" else s.primary("double_vjp")[0]
        g = s.primary("vjp")
        floor = s.natural() * float(np.sum(np.abs(flat(v)))) * top(u)
        return dot(v, t), dot(g, u), absdot(v, t) + absdot(g, u) + floor
    return sides


def _double_vs_jvp(s: Session) -> Sides:
    return s.primary("double_vjp")[0], s.primary("jvp"), s.natural() * top(s.direction("u"))


def _rev_rev_adjoint(s: Session) -> Sides:
    u, w, sc = s.direction("u"), s.direction("w", "outputs"), s.direction("s")
    pa, qa = s.primary("hvp_rev_rev")
    h = s.primary("hvp_fwd_rev")
    floor = s.natural("G") * float(np.sum(np.abs(flat(sc)))) * max(top(u), top(w))
    return (dot(pa, u) + dot(qa, w), dot(sc, h),
            absdot(pa, u) + absdot(qa, w) + absdot(sc, h) + floor)


def _hessian_of(path: str) -> Callable[[Session], Sides]:
    """``H_v s`` by ``path`` against the x-part of ``hvp_rev_rev(s)``."""
    def sides(s: Session) -> Sides:
        sc, v, x = s.direction("s"), s.direction("v", "outputs"), s.x
        if path == "hvp_fwd_rev":
            h = s.evaluate(path, lambda: s.problem.hvp_fwd_rev(x, v, sc, _zeros(v)), x)
        else:
            h = s.primary("hvp_rev_fwd")[0]
        return h, s.primary("hvp_rev_rev")[0], s.natural("G") * top(sc)
    return sides


def _uv(s: Session) -> dict[str, Arrays]:
    return {"tangent": s.direction("u"), "cotangent": s.direction("v", "outputs")}


def _vs(s: Session) -> dict[str, Arrays]:
    return {"cotangent": s.direction("v", "outputs"), "second_cotangent": s.direction("s")}


def _out_shapes(s: Session) -> list[tuple[int, ...]]:
    return [o.shape for o in s.outs]


def _in_shapes(s: Session) -> list[tuple[int, ...]]:
    return [a.shape for a in s.x]


def _adjoint_identity(path: str) -> Identity:
    return Identity("vjp", _adjoint(path),
                    f"adjoint identity <v, {path}(u)> = <vjp(v), u> fails", _uv)


TABLE: dict[str, PathRow] = {r.name: r for r in (
    PathRow("vjp", "f", _vjp, _spec_vjp, linear_in="cotangent", base="vjp"),
    PathRow("jvp", "f", _jvp, _spec_jvp, (_adjoint_identity("jvp"),), linear_in="tangent",
            base="jvp"),
    PathRow("double_vjp", "f", _double_vjp, _spec_double_vjp,
            (_adjoint_identity("double_vjp"),
             Identity("jvp", _double_vs_jvp, "double_vjp and jvp disagree",
                      lambda s: {"tangent": s.direction("u")}, _out_shapes)),
            leaks=True, base="double_vjp"),
    PathRow("hvp_fwd_rev", "G", _hvp_fwd_rev, _spec_hvp_fwd_rev,
            (Identity("hvp_rev_rev", _hessian_of("hvp_fwd_rev"),
                      "hvp_fwd_rev and hvp_rev_rev disagree on H s", _vs, _in_shapes),),
            base="vjp"),
    PathRow("hvp_rev_rev", "G", _hvp_rev_rev, _spec_hvp_rev_rev,
            (Identity("hvp_fwd_rev", _rev_rev_adjoint,
                      "<hvp_rev_rev(s), (u, w)> = <s, hvp_fwd_rev(u, w)> fails",
                      lambda s: {**_vs(s), "tangent": s.direction("u"),
                                 "cotangent_tangent": s.direction("w", "outputs")}),),
            base="vjp"),
    PathRow("hvp_rev_fwd", "K", _hvp_rev_fwd, _spec_hvp_rev_fwd,
            (Identity("hvp_rev_rev", _hessian_of("hvp_rev_fwd"),
                      "hvp_rev_fwd and hvp_rev_rev disagree on H s", _vs, _in_shapes),),
            base="jvp"),
)}


def row(path: str) -> PathRow:
    """The table's row for ``path`` (ValueError naming the known paths otherwise)."""
    try:
        return TABLE[path]
    except KeyError:
        raise ValueError(f"unknown path {path!r}; known: {', '.join(TABLE)}") from None
