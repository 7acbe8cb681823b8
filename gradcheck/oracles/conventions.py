"""Facts about each framework's complex numbers: how its VJP treats a complex cotangent.

A framework's JVP of a complex function is the same in every framework (a tangent pushed
forward).  Its VJP is not: JAX (and autograd, and gradcheck's engine) return ``c·f'(z)`` for
a holomorphic ``f`` and cotangent ``c`` (the transpose of the JVP without conjugation);
PyTorch and TensorFlow return ``c·conj(f'(z))``, the conjugate Wirtinger form (the adjoint
under the real inner product ``Re⟨·,·⟩``).  Each framework's Problem declares its convention
as ``cotangent_convention``; the checker (:mod:`gradcheck.checker.complex`) turns every
convention into the transpose of the realified JVP, so a comparison across frameworks says
whether they agree on the derivative, never merely on the convention.

:func:`precise` is how every Problem keeps a complex argument complex while it upcasts real
ones to float64.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from gradcheck.checker.complex import CONJUGATE, TRANSPOSE

__all__ = ["CONVENTIONS", "convention_of", "precise", "upcast", "convert_vjp"]

#: framework -> its cotangent convention (see :mod:`gradcheck.checker.complex`).
CONVENTIONS = {"jax": TRANSPOSE, "autograd": TRANSPOSE, "gradcheck": TRANSPOSE,
               "torch": CONJUGATE, "tensorflow": CONJUGATE}


def convention_of(framework: str) -> str:
    """The cotangent convention of ``framework`` (ValueError naming the known ones)."""
    try:
        return CONVENTIONS[framework]
    except KeyError:
        raise ValueError(f"no complex cotangent convention known for {framework!r}; known: "
                         f"{', '.join(sorted(CONVENTIONS))}") from None


def precise(value: Any) -> Any:
    """A floating array (numpy, JAX or a torch tensor's numpy) as float64, a complex one as
    complex128; anything else (integers, booleans, non-arrays) as it is."""
    if not (hasattr(value, "dtype") and hasattr(value, "shape")):
        return value
    kind = np.dtype(value.dtype).kind
    if kind == "f":
        return np.asarray(value, dtype=np.float64)
    if kind == "c":
        return np.asarray(value, dtype=np.complex128)
    return value


def upcast(value: Any) -> np.ndarray:
    """A numeric array as float64 (integers and booleans too), or complex128 when complex: a
    tangent, cotangent or primal handed to a framework."""
    array = np.asarray(value)
    return np.asarray(array, dtype=np.result_type(array.dtype, np.float64))


def convert_vjp(vjp: Callable[[Any], Any], source: str, target: str) -> Callable[[Any], Any]:
    """A VJP function written in ``source``'s convention, as ``target`` would compute it:
    ``torch_vjp(c) = conj(jax_vjp(conj(c)))`` (and back; the same when the conventions
    agree).  For a real loss (a real cotangent) this is just the conjugate gradient."""
    if convention_of(source) == convention_of(target):
        return vjp
    return lambda c: _conj(vjp(_conj(c)))


def _conj(value: Any) -> Any:
    if isinstance(value, (tuple, list)):
        return type(value)(_conj(v) for v in value)
    return np.conj(value) if np.iscomplexobj(value) else value
