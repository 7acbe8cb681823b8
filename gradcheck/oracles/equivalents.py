"""Looking up a registry op's equivalent in a reference framework.

The tables live in one module per framework (:mod:`.autograd_ops`, :mod:`.tensorflow_ops`);
this module only finds them.  Neither table module imports its framework, so looking an op
up is cheap and works without the framework installed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

__all__ = ["Equivalence", "equivalence", "has_equivalent", "ops_with_equivalents"]


@dataclass(frozen=True)
class Equivalence:
    """What a framework's table says about one op.

    ``fn(module, *args, **params)`` computes the op in the framework; ``limit(*args,
    **params)`` (numpy inputs) returns why the framework's rule is undefined or wrong at
    these inputs (a reason for every path, or a dict path -> reason), or None; ``gauges``
    lists the outputs defined only up to the sign of each vector (see
    :data:`.tensorflow_ops.SIGN_GAUGES`); ``accuracy`` is ``(factor, reason)`` when the
    framework is known to be less accurate than the checker's rounding allowance.
    """

    reference: str
    op: str
    fn: Callable[..., Any]
    limit: Callable[..., Any] | None = None
    gauges: tuple[tuple[int, int], ...] = field(default_factory=tuple)
    accuracy: tuple[float, str] | None = None

    def limits(self, args: Any, params: dict[str, Any], paths: Any) -> dict[str, str]:
        """Path -> why the framework cannot be trusted at these inputs (numpy ``args``)."""
        if self.limit is None:
            return {}
        why = self.limit(*args, **params)
        if not why:
            return {}
        if isinstance(why, str):
            return {p: why for p in paths}
        return {p: r for p, r in why.items() if p in paths}


def _table(reference: str) -> ModuleType:
    if reference == "autograd":
        from gradcheck.oracles import autograd_ops

        return autograd_ops
    if reference == "tensorflow":
        from gradcheck.oracles import tensorflow_ops

        return tensorflow_ops
    raise ValueError(f"unknown reference {reference!r}; known references: autograd, tensorflow")


def _ops(table: ModuleType) -> dict[str, Callable[..., Any]]:
    return table.AUTOGRAD_OPS if hasattr(table, "AUTOGRAD_OPS") else table.TENSORFLOW_OPS


class NumpyNamespace:
    """A framework's numpy namespace as ``"numpy"`` equivalents see it: numpy's functions,
    ``.linalg`` and ``.special`` (the framework's scipy.special)."""

    def __init__(self, module: Any, special: Any) -> None:
        self._module, self.special = module, special

    def __getattr__(self, name: str) -> Any:
        return getattr(self._module, name)


def _numpy_namespace(reference: str, module: Any) -> Any:
    if reference == "autograd":
        import autograd.scipy.special as special

        return NumpyNamespace(module, special)
    return module


def _declared(reference: str, op: str) -> Callable[..., Any] | None:
    """The equivalent the op declares with its rules (``equivalents=``), if any."""
    from gradcheck.engine import default_registry
    from gradcheck.ops.refs import resolve

    try:
        declared = default_registry.get(op).meta.get("equivalents") or {}
    except Exception:  # noqa: BLE001 - not a registry op
        return None
    if reference in declared:
        return _translating(resolve(declared[reference]))
    if "numpy" in declared and reference in ("autograd", "jax"):
        entry = _translating(resolve(declared["numpy"]))
        return lambda module, *a, **p: entry(_numpy_namespace(reference, module), *a, **p)
    return None


def _translating(entry: Callable[..., Any]) -> Callable[..., Any]:
    """``entry`` raising the oracles' NoEquivalent (an Unsupported) for ops.refs' one: the
    ops layer cannot import the oracles' exception."""
    from gradcheck.ops.refs import NoEquivalent as Declared
    from gradcheck.oracles.base import NoEquivalent

    def call(*args: Any, **params: Any) -> Any:
        try:
            return entry(*args, **params)
        except Declared as error:
            raise NoEquivalent(str(error)) from error
    call.__name__ = getattr(entry, "__name__", "equivalent")
    if hasattr(entry, "formula"):
        call.formula = entry.formula  # type: ignore[attr-defined]
    return call


def _gauge(op: str) -> tuple[tuple[int, int], ...]:
    from gradcheck.engine import default_registry

    try:
        return tuple(default_registry.get(op).meta.get("gauge") or ())
    except Exception:  # noqa: BLE001 - not a registry op
        return ()


def equivalence(reference: str, op: str) -> Equivalence | None:
    """The equivalent of registry op ``op`` in ``reference``, or None when it has none."""
    table = _table(reference)
    fn = _declared(reference, op) or _ops(table).get(op)
    if fn is None:
        return None
    limits = getattr(table, "AUTOGRAD_LIMITS", None) or getattr(table, "TENSORFLOW_LIMITS", {})
    gauges = {op: _gauge(op)} if _gauge(op) else getattr(table, "SIGN_GAUGES", {})
    accuracy = getattr(table, "ACCURACY", {}).get(op)
    return Equivalence(reference, op, fn, limits.get(op), tuple(gauges.get(op, ())), accuracy)


def has_equivalent(reference: str, op: str) -> bool:
    """Whether ``op`` has an equivalent in ``reference`` (declared with it, or in a table)."""
    return _declared(reference, op) is not None or op in _ops(_table(reference))


def ops_with_equivalents(reference: str) -> list[str]:
    """Every op name that has an equivalent in ``reference``, sorted."""
    from gradcheck.engine import default_registry

    declared = {name for name in default_registry.names() if _declared(reference, name)}
    return sorted(declared | set(_ops(_table(reference))))
