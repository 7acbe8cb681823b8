"""The shape forms the checker's strata ask of a shapes drawer of an op's own (see
``gradcheck.checker.sampling.FORMS``), here so that the ops' drawers can draw them (the ops
sit below the checker)."""

from __future__ import annotations

from typing import Any

__all__ = ["LONG", "formed_shape"]

#: Entries of a long axis: more than 4, where a rule right only on short axes (a kernel
#: unrolled 4 wide, a band of 4 neighbours; of 6 at lengths 7 and 8) goes wrong, and few
#: enough that full mode's Jacobian of the whole array stays small.
LONG = (5, 8)


def formed_shape(draw: Any, form: str, min_ndim: int = 0, max_ndim: int = 4) -> tuple[int, ...]:
    """A shape of ``form`` for a shapes callable of an op's own, of ``min_ndim`` to
    ``max_ndim`` dimensions: ``"long"``, two (or the nearest allowed) of 2 or 3 entries with
    the last of :data:`LONG`; ``"vector"``, one of 2 to ``LONG[1]`` (two of 2 or 3 where 1-d
    is not allowed); ``"deep"``, four (or the most allowed) of 2 or 3."""
    from hypothesis import strategies as st

    if form == "vector" and min_ndim <= 1 <= max_ndim:
        return (draw(st.integers(2, LONG[1])),)
    want = {"long": 2, "vector": 2, "deep": 4}[form]
    ndim = min(max(want, min_ndim, 1), max_ndim)
    dims = [draw(st.integers(2, 3)) for _ in range(ndim)]
    if form == "long" and dims:
        dims[-1] = draw(st.integers(*LONG))
    return tuple(dims)
