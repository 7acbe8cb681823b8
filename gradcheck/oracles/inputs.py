"""Checking and normalising what callers hand to an oracle, the same way for every framework.

Errors name the function, the argument and what was wrong, before any framework runs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from gradcheck.checker.paths import no_floating_output

__all__ = ["Output", "Call", "make_call", "tangents_for", "per_output", "pack_output",
           "function_name", "no_floating_output"]

#: What ``jvp``/``double_vjp`` return: one array, or a tuple when ``fn`` returns a tuple.
Output = np.ndarray | tuple[np.ndarray, ...]


def function_name(fn: Any) -> str:
    """A readable name for ``fn`` in error messages (``functools.partial``, lambdas and
    callable objects too)."""
    # __name__ first: wrappers (autograd primitives, TF dispatch) copy it but not __qualname__.
    name = getattr(fn, "__name__", None) or getattr(fn, "__qualname__", None)
    if name is None and hasattr(fn, "func"):
        return function_name(fn.func)
    if name is None and callable(fn):  # an object with __call__ (an nn.Module): its class
        return type(fn).__name__
    return str(name or repr(fn))


def output_leaves(out: Any, where: str = "") -> list[tuple[str, Any]]:
    """A framework function's result, leaf by leaf at any depth, with where each sits
    (``[1][0]``, ``['b']``): tuples (named ones and torch's return types too) and lists in
    order, dicts by sorted key (as :func:`~gradcheck.engine.pytree.flatten` orders them),
    anything else one leaf.  An inner tuple is never handed to the framework whole (its
    ``as_tensor`` would stack it)."""
    if isinstance(out, dict):
        return [leaf for key in sorted(out, key=repr)
                for leaf in output_leaves(out[key], f"{where}[{key!r}]")]
    if isinstance(out, (tuple, list)):
        return [leaf for i, value in enumerate(out)
                for leaf in output_leaves(value, f"{where}[{i}]")]
    return [(where, out)]


@dataclass(frozen=True, eq=False)
class Call:
    """A checked call: ``fn(*args)`` differentiated with respect to ``args[i]``, i in argnums.

    Floating arrays are float64 here; other arguments are passed through unchanged.
    """

    fn: Callable[..., Any]
    name: str
    args: tuple[Any, ...]
    argnums: tuple[int, ...]

    @property
    def primals(self) -> list[np.ndarray]:
        """The differentiable arguments, in argnum order."""
        return [self.args[i] for i in self.argnums]

    def substitute(self, values: Sequence[Any]) -> list[Any]:
        """``args`` with ``values[k]`` put at position ``argnums[k]``."""
        full = list(self.args)
        for i, value in zip(self.argnums, values, strict=True):
            full[i] = value
        return full


def _as_float64(value: Any, what: str, name: str) -> np.ndarray:
    array = np.asarray(value)
    if array.dtype.kind not in "fiuc":
        raise ValueError(f"{name}: {what} must be a real numeric array or a complex one, got "
                         f"dtype {array.dtype}")
    # complex stays complex: the checker realifies it in each framework's convention
    return array.astype(np.complex128 if array.dtype.kind == "c" else np.float64)


def _check_argnums(argnums: int | Sequence[int], nargs: int, name: str) -> tuple[int, ...]:
    if isinstance(argnums, (int, np.integer)):
        argnums = (int(argnums),)
    argnums = tuple(argnums)
    if not argnums:
        raise ValueError(f"{name}: argnums is empty; name at least one differentiable argument")
    for i in argnums:
        if not isinstance(i, (int, np.integer)) or isinstance(i, bool):
            raise ValueError(f"{name}: argnums must be integers, got {i!r}")
        if not 0 <= i < nargs:
            raise ValueError(f"{name}: argnum {i} is out of range for {nargs} argument(s)")
    if len(set(argnums)) != len(argnums):
        raise ValueError(f"{name}: argnums {argnums} repeats a position")
    return tuple(int(i) for i in argnums)


def make_call(fn: Callable[..., Any], args: Sequence[Any],
              argnums: int | Sequence[int]) -> Call:
    """Check ``fn``, ``args`` and ``argnums``; convert floating arguments to float64.

    Differentiable arguments must be numeric: integer ones are promoted to float64, complex
    ones are complex128 (each framework's VJP in its own convention, see
    :mod:`.conventions`), booleans and object arrays are rejected.
    """
    name = function_name(fn)
    if not callable(fn):
        raise TypeError(f"{name}: fn must be callable")
    if isinstance(args, (np.ndarray, str, bytes)) or not isinstance(args, Sequence):
        raise TypeError(f"{name}: args must be a sequence of positional arguments, "
                        f"got {type(args).__name__}")
    positions = _check_argnums(argnums, len(args), name)
    converted: list[Any] = []
    for i, arg in enumerate(args):
        if i in positions:
            converted.append(_as_float64(arg, f"differentiable argument {i}", name))
        elif isinstance(arg, np.ndarray) and arg.dtype.kind == "f":
            converted.append(arg.astype(np.float64))
        else:
            converted.append(arg)
    return Call(fn=fn, name=name, args=tuple(converted), argnums=positions)


def tangents_for(call: Call, tangents: Sequence[Any]) -> list[np.ndarray]:
    """One float64 tangent per argnum, each shaped like its argument."""
    if isinstance(tangents, np.ndarray) or not isinstance(tangents, Sequence):
        raise TypeError(f"{call.name}: tangents must be a sequence with one array per argnum "
                        f"{call.argnums}, got {type(tangents).__name__}")
    if len(tangents) != len(call.argnums):
        raise ValueError(f"{call.name}: got {len(tangents)} tangent(s) for argnums "
                         f"{call.argnums}")
    checked = []
    for i, tangent in zip(call.argnums, tangents, strict=True):
        array = _as_float64(tangent, f"tangent for argument {i}", call.name)
        if array.shape != call.args[i].shape:
            raise ValueError(f"{call.name}: tangent for argument {i} has shape {array.shape}, "
                             f"expected {call.args[i].shape}")
        checked.append(array)
    return checked


def per_output(call: Call, what: str, value: Any, shapes: Sequence[tuple[int, ...]],
               is_tuple: bool) -> list[np.ndarray]:
    """Split ``value`` (a cotangent or dummy) into one float64 array per output of ``fn``.

    ``shapes`` are the output shapes; ``is_tuple`` says whether ``fn`` returned a tuple, in
    which case ``value`` must be a sequence with one array per output.
    """
    if is_tuple:
        if isinstance(value, np.ndarray) or not isinstance(value, Sequence):
            raise TypeError(f"{call.name}: returns {len(shapes)} outputs, so {what} must be a "
                            f"sequence of {len(shapes)} arrays")
        if len(value) != len(shapes):
            raise ValueError(f"{call.name}: {what} has {len(value)} parts for "
                             f"{len(shapes)} outputs")
        parts = list(value)
    else:
        parts = [value]
    checked = []
    for k, (part, shape) in enumerate(zip(parts, shapes, strict=True)):
        label = f"{what} for output {k}" if is_tuple else what
        array = _as_float64(part, label, call.name)
        if array.shape != tuple(shape):
            raise ValueError(f"{call.name}: {label} has shape {array.shape}, expected the "
                             f"output shape {tuple(shape)}")
        checked.append(array)
    return checked


def pack_output(values: Sequence[np.ndarray], is_tuple: bool) -> Output:
    """The caller-facing form of per-output results: one array, or a tuple of them."""
    arrays = [np.asarray(v, dtype=np.result_type(np.asarray(v).dtype, np.float64))
              for v in values]
    return tuple(arrays) if is_tuple else arrays[0]
