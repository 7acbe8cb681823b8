"""The one op the engine itself needs: the sum of a tensor's cotangents.

A tensor used several times receives one cotangent per use, and the backward
pass adds them.  That sum must be an op, so an outer tape can differentiate it
again (higher order), but the engine cannot import the op library, which is
built on it.  ``add_cotangents`` adds two values of the same shape and dtype, so
its rules need no broadcasting and are written with itself.  It is not
registered: the checker checks the library's broadcasting ``add``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from gradcheck.engine.op import Op, define_op

__all__ = ["add_cotangents"]


def _vjp(g: Any, out: Any, a: Any, b: Any) -> tuple[Any, Any]:
    return g, g


def _jvp(tangents: Sequence[Any], out: Any, a: Any, b: Any) -> Any:
    ta, tb = tangents
    if ta is None:
        return tb
    return ta if tb is None else add_cotangents(ta, tb)


add_cotangents: Op = define_op(
    "add_cotangents", np.add, _vjp, _jvp, nin=2, family="engine", linear=True, register=False,
    doc="a + b for two cotangents of the same shape and dtype (the backward pass's sum).",
)
