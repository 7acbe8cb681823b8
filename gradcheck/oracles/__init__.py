"""External references for gradcheck: autograd, TensorFlow, PyTorch and JAX computing the
same paths.

Each framework has one adapter module (:mod:`.autograd`, :mod:`.tensorflow`, :mod:`.torch`,
:mod:`.jax`): a Problem that computes the checker's paths with the framework, an
:class:`Oracle` (its lazy import and status, a missing framework saying how to install it,
and a functional ``vjp``/``jvp``/``double_vjp``/``hvp`` that runs the same Problem), and an
:class:`EquivalentReference` through which the checker runs a registry op's declared
equivalent (``equivalents=`` with the op) as one more problem at the same example,
checked by the same code (see :mod:`gradcheck.checker.references`).  The composition root
(``gradcheck/__init__.py``) plugs the references in by name; importing this package imports
no framework.

``gradcheck.check(fn, inputs=...)`` also takes TensorFlow, autograd, PyTorch and JAX
functions as targets (:func:`framework_target`), whose paths the framework computes.

>>> sorted(available_references())  # doctest: +SKIP
['autograd', 'jax', 'tensorflow', 'torch']
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gradcheck.oracles.base import (
    EquivalentReference,
    NoEquivalent,
    Oracle,
    Unavailable,
    Unsupported,
    unavailable_status,
)
from gradcheck.oracles.equivalents import equivalence, has_equivalent, ops_with_equivalents
from gradcheck.oracles.inputs import Output

__all__ = [
    "EquivalentReference",
    "REFERENCE_NAMES",
    "NoEquivalent",
    "Oracle",
    "Output",
    "Unavailable",
    "Unsupported",
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


def _torch() -> Oracle:
    from gradcheck.oracles.torch import TorchOracle

    return TorchOracle()


def _jax() -> Oracle:
    from gradcheck.oracles.jax import JaxOracle

    return JaxOracle()


# Factories, not instances: each call imports afresh, so nothing caches a failed import.
_FACTORIES: dict[str, Callable[[], Oracle]] = {"autograd": _autograd, "tensorflow": _tensorflow,
                                               "torch": _torch, "jax": _jax}

#: The names :func:`get_oracle` accepts.
REFERENCE_NAMES = tuple(_FACTORIES)


def get_oracle(name: str) -> Oracle:
    """A new oracle for the reference ``name`` ("autograd", "tensorflow", "torch", "jax").

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

