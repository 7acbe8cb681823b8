"""What an op may declare for the checker, and how ``define_op`` validates it.

``SCHEMA`` maps each metadata key to a validator ``check(op_name, value) ->
value`` that accepts only that key's types (listed beside it) and returns the
value to store, normalised, or raises ``ValueError`` naming the op and the
key.  An unknown key fails the same way, suggesting the close match, so a typo
(``kink=``, ``tolerence=``) is caught at definition and not silently ignored
by every check.  ``gradcheck.domains`` documents what the
keys mean; ``declare_key`` adds a key for a project's own checks.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping, Sequence
from numbers import Real
from typing import Any

from gradcheck.domains import Domain, Tolerance, as_domain

__all__ = ["SCHEMA", "NAMESPACES", "KINK_NAMES", "Equivalent", "declare_key", "validate",
           "validate_equivalents"]

#: Namespace names an ``equivalents=`` mapping may use (see ``gradcheck.ops.refs``).
NAMESPACES = ("numpy", "autograd", "jax", "tensorflow", "torch")

#: An equivalent in another framework: ``fn(namespace, *inputs, **params)``.
Equivalent = Callable[..., Any]

Validator = Callable[[str, Any], Any]


def _bad(op: str, key: str, want: str, value: Any) -> ValueError:
    return ValueError(f"op {op!r}: {key}= must be {want}, got {value!r}")


def _inputs(op: str, value: Any) -> tuple[Domain, ...]:
    """One domain per input: a Domain, a domain's name or a table naming one (as ``check``'s
    ``inputs=`` takes them)."""
    if not isinstance(value, (tuple, list)):
        raise _bad(op, "inputs", "a tuple with one domain per input (a Domain, a name such "
                   "as 'positive', or a table such as {'domain': 'interval', 'low': 0, "
                   "'high': 1})", value)
    return tuple(as_domain(d, f"op {op!r}: inputs[{i}]") for i, d in enumerate(value))


def _complex_inputs(op: str, value: Any) -> tuple[Domain, ...]:
    """One domain per input for sweeping the op on complex values (a real input keeps a real
    domain), as ``inputs=`` takes them."""
    if not isinstance(value, (tuple, list)):
        raise _bad(op, "complex_inputs", "a tuple with one domain per input (such as "
                   "'complex' or 'complex_cut')", value)
    return tuple(as_domain(d, f"op {op!r}: complex_inputs[{i}]") for i, d in enumerate(value))


def _shapes(op: str, value: Any) -> Any:
    if not (isinstance(value, str) or callable(value)):
        raise _bad(op, "shapes", "a signature string such as '(...),(...)' or a callable "
                   "shapes(draw)", value)
    return value


def _params(op: str, value: Any) -> Any:
    if callable(value):
        return value
    if not isinstance(value, Mapping):
        raise _bad(op, "params", "{name: choices} or a callable params(draw, shapes)", value)
    for name, choices in value.items():
        if not (isinstance(choices, (list, tuple)) or callable(choices)):
            raise _bad(op, f"params[{name!r}]", "a list of choices or a callable (shapes) -> "
                       "choices", choices)
    return value


#: Named kink sets: equal values across inputs, every integer, every k + 1/2.
KINK_NAMES = ("ties", "integers", "half_integers")


def _kinks(op: str, value: Any) -> Any:
    if (isinstance(value, str) and value in KINK_NAMES) or callable(value):
        return value
    if isinstance(value, (tuple, list)) and all(isinstance(v, Real) for v in value):
        return tuple(value)
    raise _bad(op, "kinks", f"a tuple of points, one of {', '.join(KINK_NAMES)} or a callable "
               "(params) -> points", value)


def _instance(kind: type, want: str) -> Validator:
    def check(op: str, value: Any) -> Any:
        if not isinstance(value, kind):
            raise ValueError(f"op {op!r}: expected {want}, got {value!r}")
        return value
    return check


def _callable(want: str) -> Validator:
    def check(op: str, value: Any) -> Any:
        if not callable(value):
            raise ValueError(f"op {op!r}: expected {want}, got {value!r}")
        return value
    return check


def validate_equivalents(op: str, value: Any) -> dict[str, str | Equivalent]:
    """Check an ``equivalents=`` mapping at definition time (ValueError naming the op)."""
    if not isinstance(value, Mapping):
        raise ValueError(f"op {op!r}: equivalents must map namespace names to dotted names "
                         f"or functions, got {type(value).__name__}")
    for key, entry in value.items():
        if key not in NAMESPACES:
            raise ValueError(f"op {op!r}: equivalents has unknown namespace {key!r}; "
                             f"expected one of {', '.join(NAMESPACES)}")
        if not (isinstance(entry, str) or callable(entry)):
            raise ValueError(f"op {op!r}: equivalents[{key!r}] must be a dotted name or a "
                             f"function fn(namespace, *inputs, **params)")
    return dict(value)


def _gauge(op: str, value: Any) -> tuple[tuple[int, int], ...]:
    pairs = tuple(value) if isinstance(value, (tuple, list)) else None
    if pairs is None or not all(
            isinstance(p, (tuple, list)) and len(p) == 2
            and all(isinstance(i, int) and not isinstance(i, bool) for i in p) for p in pairs):
        raise _bad(op, "gauge", "a tuple of (output index, axis) int pairs", value)
    return tuple((int(i), int(a)) for i, a in pairs)


SCHEMA: dict[str, Validator] = {
    "inputs": _inputs,  # tuple[Domain, ...], one per input
    "shapes": _shapes,  # str signature | shapes(draw) -> list of shapes
    "params": _params,  # {name: list | (shapes) -> list} | params(draw, shapes) -> dict
    "kinks": _kinks,  # tuple[float, ...] | one of KINK_NAMES | (params) -> points
    "tolerance": _instance(Tolerance, "tolerance= a gradcheck.domains.Tolerance"),
    "grad_op": _instance(str, "grad_op= the name of the op's gradient op"),
    "grad_of": _instance(str, "grad_of= the name of the op this op is the gradient of"),
    "reference": _callable("reference= a callable computing the op's value"),
    "equivalents": validate_equivalents,  # {namespace: dotted name | Equivalent}
    "gauge": _gauge,  # tuple[tuple[int, int], ...]: (output index, axis)
    # tuple[Domain, ...]: where to draw complex inputs for an op that also takes complex
    # values (its rules hold for complex64/complex128 in JAX's convention)
    "complex_inputs": _complex_inputs,
}


def declare_key(key: str, validator: Validator) -> None:
    """Allow a new metadata key, checked by ``validator(op_name, value) -> value``."""
    if key in SCHEMA:
        raise ValueError(f"metadata key {key!r} is already declared")
    SCHEMA[key] = validator


def validate(op: str, metadata: Mapping[str, Any],
             other_keys: Sequence[str] = ()) -> dict[str, Any]:
    """``metadata`` checked against ``SCHEMA``: unknown keys and bad values raise ValueError.

    ``other_keys`` are the keyword arguments ``define_op`` takes itself; a near miss
    of one of those is suggested too.
    """
    out: dict[str, Any] = {}
    for key, value in metadata.items():
        check = SCHEMA.get(key)
        if check is None:
            close = difflib.get_close_matches(key, [*SCHEMA, *other_keys], n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise ValueError(f"op {op!r}: unknown metadata key {key!r}{hint} (known: "
                             f"{', '.join(sorted(SCHEMA))})")
        out[key] = check(op, value)
    return out
