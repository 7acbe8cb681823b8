"""External references: other frameworks computing the same paths, inside the one checker.

``numeric`` and ``self`` are computed by the checker itself.  Any other reference is a
:class:`Reference` plugged in by name: at the composition root (``gradcheck/__init__.py``
registers autograd and TensorFlow) or through the entry-point group ``gradcheck.references``
(``name = "package.module:factory"``).  Nothing here knows a framework by name.

A reference binds a target at an example into one more
:class:`~gradcheck.checker.targets.Problem`: the framework's own function for the op, at the
same inputs.  The checker then runs the same checks on it (the same directions, the same
numeric reference and tolerances, the same tally and shrinking) and compares its paths with
the target's.  Its findings are attributed to the framework.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any, Protocol

__all__ = ["INTERNAL", "ENTRY_POINT_GROUP", "TARGET_KINDS", "Reference", "Unsupported",
           "register_reference", "register_target_kind", "get_reference", "known_references",
           "load"]

#: References the checker computes itself.
INTERNAL = ("numeric", "self")
#: Entry-point group through which other packages add references.
ENTRY_POINT_GROUP = "gradcheck.references"


class Unsupported(Exception):
    """A framework cannot compute this (a path, an op, these parameters); the message is the
    framework's own reason.  Never used for a *wrong* derivative: that is a finding."""


class Reference(Protocol):
    """What a reference adapter provides."""

    name: str

    def status(self) -> str | None:
        """None when usable, else ``"unavailable: <why>; install with: ..."``."""

    def supports(self, target: Any) -> str | None:
        """None when the reference can compute ``target``, else why not (no equivalent,
        the target is itself written in this framework, ...)."""

    def bind(self, target: Any, example: Any) -> Any:
        """The framework's :class:`~gradcheck.checker.targets.Problem` for ``target`` at
        ``example`` (float64); raises :class:`Unsupported` for these parameters."""


_FACTORIES: dict[str, str | Callable[[], Reference]] = {}
#: (accepts, factory) pairs of extra target kinds, newest first (see ``as_target``).
TARGET_KINDS: list[tuple[Any, Any]] = []


def load(spec: str | Callable[..., Any]) -> Any:
    """``"package.module:attribute"`` imported and looked up (a callable is returned as is)."""
    if callable(spec):
        return spec
    module, _, attr = spec.partition(":")
    obj: Any = importlib.import_module(module)
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj


def register_reference(name: str, factory: str | Callable[[], Reference]) -> None:
    """Make ``name`` a reference: ``factory()`` (or the ``"module:attr"`` it names, loaded
    on first use) builds the adapter."""
    if name in INTERNAL:
        raise ValueError(f"reference name {name!r} is reserved for the checker")
    _FACTORIES[name] = factory


_SCANNED: list[bool] = []  # whether the installed packages' entry points were read


def _entry_points(again: bool = False) -> None:
    """Read the entry points of every installed package (once: it costs milliseconds, and
    every check names its references; ``again`` when a name is not known yet)."""
    if _SCANNED and not again:
        return
    from importlib.metadata import entry_points

    for ep in entry_points(group=ENTRY_POINT_GROUP):
        _FACTORIES.setdefault(ep.name, ep.value)
    _SCANNED.append(True)


def known_references(wanted: tuple[str, ...] = ()) -> tuple[str, ...]:
    """Every reference name ``check`` accepts (the installed packages are read again when
    one of ``wanted`` is not among them: a package installed since then adds it)."""
    _entry_points()
    if any(n not in INTERNAL and n not in _FACTORIES for n in wanted):
        _entry_points(again=True)
    return INTERNAL + tuple(sorted(_FACTORIES))


def get_reference(name: str) -> Reference:
    """A new adapter for the reference ``name`` (its framework is imported only when used)."""
    if name not in _FACTORIES:
        _entry_points(again=True)
    if name not in _FACTORIES:
        raise ValueError(f"unknown reference {name!r}; known: {', '.join(known_references())}")
    ref: Reference = load(_FACTORIES[name])()
    return ref


def register_target_kind(accepts: Callable[[Any], bool] | str,
                         factory: Callable[..., Any] | str) -> None:
    """Teach ``gradcheck.check`` a new kind of target: ``factory(obj, inputs=...)`` builds the
    :class:`~gradcheck.checker.targets.Target` for any ``obj`` that ``accepts(obj)``.  Either
    may be given as ``"module:attribute"``, imported on first use.  Later registrations win."""
    TARGET_KINDS.insert(0, (accepts, factory))
