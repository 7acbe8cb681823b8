"""How an op declares its equivalents in other frameworks, beside its rules.

An op's ``equivalents=`` metadata maps a namespace name to how that namespace computes the
op.  Nothing here imports a framework: each reference adapter passes its module in.

Keys:

``"numpy"``       the op under numpy's API, written once for every framework with a numpy
                  namespace (autograd.numpy, jax.numpy): the adapter passes a namespace
                  with numpy's functions, ``.linalg`` and ``.special`` (scipy.special).
``"tensorflow"``  the op with TensorFlow (the adapter passes ``tf``).
``"autograd"``, ``"jax"``, ``"torch"``
                  a framework-specific entry, used instead of ``"numpy"`` where that
                  framework differs.

A value is either a dotted name looked up on the namespace (``"math.sin"``,
``"linalg.inv"``), called with the op's inputs and parameters, or a function
``fn(namespace, *inputs, **params)``.  An entry that covers only some parameters or inputs
raises :class:`NoEquivalent` with the reason for the rest: that is the framework *cannot
compute* the op there.  A framework that computes it wrongly is never excused here: the
checker reports that as a finding attributed to the framework.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gradcheck.engine.metadata import NAMESPACES, validate_equivalents

__all__ = ["NAMESPACES", "NoEquivalent", "Equivalent", "api", "formula", "formula_reason",
           "resolve", "validate_equivalents"]

Equivalent = Callable[..., Any]


class NoEquivalent(Exception):
    """The framework has no function computing this op for these parameters or inputs."""


def _lookup(module: Any, dotted: str) -> Any:
    fn = module
    for part in dotted.split("."):
        fn = getattr(fn, part)
    return fn


def api(dotted: str, **fixed: Any) -> Equivalent:
    """An equivalent that calls ``namespace.<dotted>(*inputs, **params, **fixed)``."""
    def call(ns: Any, *args: Any, **params: Any) -> Any:
        return _lookup(ns, dotted)(*args, **params, **fixed)
    call.__name__ = dotted
    return call


def formula(fn: Equivalent, why: str) -> Equivalent:
    """Mark an equivalent written as a formula of other framework ops, because the framework
    has no API for the op (``why`` says so); reports show it.  Where the framework has the op,
    call its API instead: a formula sidesteps the framework's own rules and bugs."""
    fn.formula = why  # type: ignore[attr-defined]
    return fn


def formula_reason(fn: Any) -> str | None:
    """Why an equivalent is a formula rather than the framework's API (None for an API)."""
    return getattr(fn, "formula", None)


def resolve(entry: str | Equivalent) -> Equivalent:
    """An ``equivalents`` value as a function ``fn(namespace, *inputs, **params)``."""
    return api(entry) if isinstance(entry, str) else entry
