"""scipy.special, imported when an op first uses it.

Importing scipy.special took about a third of ``import gradcheck`` (0.25-0.4 s of 0.7-1.1 s),
paid by every script, CLI call and sweep worker, most of which never run a special function.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["LazyModule", "special"]


class LazyModule:
    """A module imported at its first attribute lookup; each attribute it hands out is kept
    on this object, so later lookups cost what a module's do."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("__"):  # copy, pickle and inspect probe dunders: not the module's
            raise AttributeError(attr)
        value = getattr(importlib.import_module(self._name), attr)
        setattr(self, attr, value)
        return value

    def __repr__(self) -> str:
        return f"<lazily imported module {self._name!r}>"


special = LazyModule("scipy.special")
