"""Looking up a registry op's equivalent in a reference framework.

Each op declares its equivalents with its rules (``equivalents=``, see
:mod:`gradcheck.ops.refs`) and its gauge freedom (``gauge=``); this module finds them for a
framework.  Nothing here imports a framework, so a look-up is cheap and works without it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Equivalence", "NumpyNamespace", "equivalence", "has_equivalent",
           "ops_with_equivalents"]

#: Frameworks whose numpy namespace runs an op's ``"numpy"`` equivalent.
NUMPY_LIKE = ("autograd", "jax", "torch")


@dataclass(frozen=True)
class Equivalence:
    """An op's equivalent in one framework: ``fn(namespace, *args, **params)`` computes the op
    there; ``gauges`` lists the outputs defined only up to the sign of each vector."""

    reference: str
    op: str
    fn: Callable[..., Any]
    gauges: tuple[tuple[int, int], ...] = field(default_factory=tuple)


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
    if reference == "jax":
        import jax.scipy.special as jax_special

        return NumpyNamespace(module, jax_special)
    if reference == "torch":
        from gradcheck.oracles.torch import TorchNumpy

        return TorchNumpy(module)
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
    if "numpy" in declared and reference in NUMPY_LIKE:
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
    fn = _declared(reference, op)
    if fn is None:
        return None
    return Equivalence(reference, op, fn, _gauge(op))


def has_equivalent(reference: str, op: str) -> bool:
    """Whether ``op`` declares an equivalent for ``reference``."""
    return _declared(reference, op) is not None


def ops_with_equivalents(reference: str) -> list[str]:
    """Every registry op with an equivalent in ``reference``, sorted."""
    from gradcheck.engine import default_registry

    return sorted(name for name in default_registry.names() if _declared(reference, name))
