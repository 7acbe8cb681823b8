"""External references for gradcheck: the same derivative paths computed by autograd and
TensorFlow.

Each reference is an :class:`Oracle` taking a function written in its own framework.
Frameworks are imported only when a reference is used; a missing one makes ``status()``
say how to install it and the methods raise :class:`Unavailable`.  Importing this package
imports neither framework.

What the checker uses:

* :func:`reference_cells` is the hook ``gradcheck.check`` calls for the references
  ``autograd`` and ``tensorflow``: a registry op is compared path by path with its
  equivalent in each framework (tables in :mod:`.autograd_ops` and :mod:`.tensorflow_ops`,
  looked up with :func:`equivalence`), and TensorFlow's double-VJP of it is audited for leaks
  of the dummy cotangent (:func:`audit_double_vjp`, cells on path ``tf.double_vjp``).
* Importing this package teaches ``gradcheck.check`` to take TensorFlow and autograd
  functions as targets (:func:`framework_target`), whose paths the framework computes.

>>> sorted(available_references())  # doctest: +SKIP
['autograd', 'tensorflow']
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gradcheck.oracles.base import (
    NoEquivalent,
    Oracle,
    Unavailable,
    Unsupported,
    unavailable_status,
)
from gradcheck.oracles.equivalents import equivalence, has_equivalent, ops_with_equivalents
from gradcheck.oracles.inputs import Output
from gradcheck.oracles.tf_audit import DoubleVjpAudit, audit_double_vjp

__all__ = [
    "REFERENCE_NAMES",
    "DoubleVjpAudit",
    "NoEquivalent",
    "Oracle",
    "Output",
    "Unavailable",
    "Unsupported",
    "audit_double_vjp",
    "available_references",
    "equivalence",
    "framework_target",
    "get_oracle",
    "has_equivalent",
    "ops_with_equivalents",
    "unavailable_status",
]


def _autograd() -> Oracle:
    from gradcheck.oracles.autograd import AutogradOracle

    return AutogradOracle()


def _tensorflow() -> Oracle:
    from gradcheck.oracles.tensorflow import TensorFlowOracle

    return TensorFlowOracle()


# Factories, not instances: each call imports afresh, so nothing caches a failed import.
_FACTORIES: dict[str, Callable[[], Oracle]] = {"autograd": _autograd, "tensorflow": _tensorflow}

#: The names :func:`get_oracle` accepts.
REFERENCE_NAMES = tuple(_FACTORIES)


def get_oracle(name: str) -> Oracle:
    """A new oracle for the reference ``name`` ("autograd" or "tensorflow").

    The framework is not imported until the oracle is used (``status()`` or a method).
    """
    try:
        factory = _FACTORIES[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown reference {name!r}; known references: "
                         f"{', '.join(REFERENCE_NAMES)}") from None
    return factory()


def available_references() -> dict[str, str | None]:
    """Each reference's status: None when usable, else why not and how to install it.

    This imports every framework that is installed (TensorFlow takes a few seconds).
    """
    return {name: get_oracle(name).status() for name in REFERENCE_NAMES}


def framework_target(fn: Any, inputs: Any = None, **options: Any) -> Any:
    """A TensorFlow or autograd function as a checker target (see
    :func:`gradcheck.oracles.targets.framework_target`)."""
    from gradcheck.oracles.targets import framework_target as build

    return build(fn, inputs, **options)

