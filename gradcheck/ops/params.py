"""Reading an op's scalar parameters (``alpha``, ``delta``, ``eps``, ``rate``, a stride).

Each reader returns the value as a Python number, or raises an error that names the op, the
argument and what was wrong: a TypeError for a value of the wrong kind (an array, a string, a
bool, which is not a number here), a ValueError for a number out of range, as numpy does.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gradcheck.engine.tensor import value_of

__all__ = ["is_int", "positive_int", "positive_number", "real_number"]


def _shown(value: Any) -> str:
    return f"{type(value).__name__} {value!r}"


def is_int(value: Any) -> bool:
    """Whether ``value`` is a Python or numpy integer (a bool is not)."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def real_number(op: str, name: str, value: Any) -> float:
    """``value`` as a float: a Python or numpy real number, or a 0-d array of one."""
    raw = value_of(value)
    kind = np.asarray(raw).dtype.kind if isinstance(raw, (np.ndarray, np.generic)) else None
    scalar = np.ndim(raw) == 0 and (kind in ("i", "u", "f") if kind else
                                    isinstance(raw, (int, float)) and not isinstance(raw, bool))
    if not scalar:
        raise TypeError(f"op {op!r}: {name} must be a real scalar, got {_shown(value)}")
    return float(raw)


def positive_number(op: str, name: str, value: Any) -> float:
    """``value`` as a float greater than zero (a real scalar, as :func:`real_number`)."""
    number = real_number(op, name, value)
    if not number > 0:
        raise ValueError(f"op {op!r}: {name} must be a positive scalar, got {value!r}")
    return number


def positive_int(op: str, name: str, value: Any) -> int:
    """``value`` as an int of at least 1 (a Python or numpy integer; not a bool)."""
    if not is_int(value):
        raise TypeError(f"op {op!r}: {name} must be a positive int, got {_shown(value)}")
    if value < 1:
        raise ValueError(f"op {op!r}: {name} must be a positive int, got {value!r}")
    return int(value)
