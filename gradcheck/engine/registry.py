"""Named collections of ops, with lookup by name, pattern or family."""

from __future__ import annotations

import difflib
import fnmatch
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gradcheck.engine.op import Op

__all__ = ["Registry", "UnknownOpError", "default_registry"]


class UnknownOpError(KeyError):
    """No op of that name (the message suggests close names)."""

    def __str__(self) -> str:
        return str(self.args[0])


class Registry:
    """Ops by name.  ``default_registry`` holds every op gradcheck ships."""

    def __init__(self, name: str = "registry") -> None:
        self.name = name
        self._ops: dict[str, Op] = {}

    def add(self, op: Op) -> None:
        if op.name in self._ops and self._ops[op.name] is not op:
            raise ValueError(f"{self.name}: an op named {op.name!r} is already registered")
        self._ops[op.name] = op

    def remove(self, name: str) -> None:
        self._ops.pop(name, None)

    def __contains__(self, name: object) -> bool:
        return name in self._ops

    def __iter__(self) -> Iterator[Op]:
        return iter(sorted(self._ops.values(), key=lambda op: op.name))

    def __len__(self) -> int:
        return len(self._ops)

    def names(self) -> list[str]:
        return sorted(self._ops)

    def get(self, name: str) -> Op:
        """The op called ``name`` (or whose last dotted part is ``name``)."""
        if name in self._ops:
            return self._ops[name]
        short = [op for op in self._ops.values() if op.name.rsplit(".", 1)[-1] == name]
        if len(short) == 1:
            return short[0]
        close = difflib.get_close_matches(name, self.names(), n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        if len(short) > 1:
            hint = f"; it is ambiguous: {', '.join(op.name for op in short)}"
        raise UnknownOpError(f"unknown op {name!r}{hint}")

    def select(self, patterns: Iterable[str]) -> list[Op]:
        """Ops matching any pattern: a name, a glob of names (``'linalg.*'``: only ops whose
        name matches, never ``dot`` of the linalg family) or a family (``'linalg'``)."""
        chosen: dict[str, Op] = {}
        for pattern in patterns:
            matched = [
                op for op in self._ops.values()
                if fnmatch.fnmatchcase(op.name, pattern) or op.family == pattern
            ]
            if not matched:
                matched = [self.get(pattern)]  # raises with suggestions
            for op in matched:
                chosen[op.name] = op
        return [chosen[k] for k in sorted(chosen)]


default_registry = Registry("default registry")
