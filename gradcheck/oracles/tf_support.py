"""Importing TensorFlow quietly and the small conversions every TensorFlow path shares.

TensorFlow is imported only here, only when an oracle is used.  Before the import, its C++
log level is raised to errors only and oneDNN's custom kernels are switched off (their
start-up banner goes to stderr, and their reordered reductions make float64 results depend
on the machine); both are ``setdefault`` so a value set by the user wins.  TensorFlow 2.21
emits no Python warnings on import or on the paths used here, so no warning filter is
installed: a warning that appears with another version reaches pytest (which turns warnings
into errors) and should get a targeted filter naming it, not a blanket one.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from types import ModuleType
from typing import Any

import numpy as np

from gradcheck.oracles.base import Unsupported
from gradcheck.oracles.inputs import Call, output_leaves

__all__ = ["import_tensorflow", "is_missing_gradient", "missing_gradient", "MissingGradient",
           "as_tensor_args", "call_fn", "outputs_of", "inexact", "dense"]


def import_tensorflow() -> ModuleType:
    """Import TensorFlow with its logging quietened; ImportError (or its own error) if broken."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")
    import tensorflow as tf

    # Python-side loggers: TF's deprecation notices and absl's info lines are not results.
    for name in ("tensorflow", "absl"):
        logging.getLogger(name).setLevel(logging.ERROR)
    return tf


def is_missing_gradient(error: BaseException) -> bool:
    """Whether ``error`` is TensorFlow saying an op has no registered gradient.

    Graph mode says "No gradient defined for operation ..."; eager mode (and forward mode,
    which transposes gradients) says "gradient registry has no entry for: ...".  Only plain
    ``LookupError`` counts: ``KeyError``/``IndexError`` from the user's code are not this.
    """
    text = str(error)
    return type(error) is LookupError and (
        "No gradient defined" in text or "gradient registry has no entry" in text)


class MissingGradient(Unsupported):
    """TensorFlow has no gradient for an op: of ``fn`` itself (``order`` 1, so no path at
    all can be computed) or of its gradient (``order`` 2: no second order, and no forward
    mode either, which transposes the VJP)."""

    def __init__(self, message: str, order: int) -> None:
        super().__init__(message)
        self.order = order


#: What is missing, worded once so every path that hits it says the same; TensorFlow's own
#: words follow.
_MISSING = {1: "TensorFlow has no VJP for {name} (the VJP itself is missing): {error}",
            2: "TensorFlow cannot differentiate the VJP of {name} again (no second order, so "
               "no forward mode either): {error}"}


def missing_reason(name: str, order: int, error: BaseException) -> str:
    """Why a path cannot run when an op of ``name`` (order 1) or of its VJP (order 2) has no
    gradient, the same way whichever path found it, then TensorFlow's own text."""
    return _MISSING[order].format(name=name, error=error)


@contextmanager
def missing_gradient(name: str, order: int,
                     vjp_missing: Callable[[], bool] | None = None) -> Iterator[None]:
    """Turn TensorFlow's missing-gradient LookupError (or its own NotImplementedError) inside
    the block into :class:`MissingGradient` (``name`` is the function's).  ``order`` is the
    derivative the block takes (1: the VJP, 2: the VJP of the VJP); a block that cannot
    tell which op failed (a ForwardAccumulator, a nested tape) passes ``vjp_missing``, asked
    on failure whether the VJP itself is missing, so the reason says so."""
    try:
        yield
    except LookupError as error:
        if not is_missing_gradient(error):
            raise
        if order == 2 and vjp_missing is not None and vjp_missing():
            order = 1
        raise MissingGradient(missing_reason(name, order, error), order) from error
    except NotImplementedError as error:
        if not _raised_by_tensorflow(error):
            raise
        if order == 2 and vjp_missing is not None and vjp_missing():
            order = 1
        what = "the VJP" if order == 1 else "the VJP of the VJP (second order)"
        raise MissingGradient(f"TensorFlow does not implement {what} of {name}: "
                              f"{error}", order) from error
    except Exception as error:
        if not _too_few_gradients(error):
            raise
        # a tf.function's forward-mode function, differentiated again (a tape around a
        # ForwardAccumulator): TensorFlow's own refusal, also outside gradcheck
        raise MissingGradient(f"TensorFlow cannot differentiate {name} this way (its "
                              f"traced function's gradient): {error}", order) from error


def _too_few_gradients(error: BaseException) -> bool:
    """TensorFlow's InternalError "Recorded operation '__forward_...' returned too few
    gradients": a traced function's recorded gradient in reverse over forward mode."""
    kind = type(error)
    return kind.__name__ == "InternalError" and kind.__module__.startswith("tensorflow") \
        and "returned too few gradients" in str(error)


def _raised_by_tensorflow(error: BaseException) -> bool:
    """Whether TensorFlow's own code raised ``error`` (``tf.recompute_grad`` in forward mode
    raises NotImplementedError), not the user's function."""
    tb = error.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return tb is not None and "/tensorflow/" in tb.tb_frame.f_code.co_filename


def call_fn(call: Call, args: Sequence[Any]) -> Any:
    """``fn(*args)``; a ``tf.function`` whose ``input_signature`` refuses the float64 tensors
    gradcheck feeds is a clear TypeError naming it, not TensorFlow's binding error."""
    try:
        return call.fn(*args)
    except TypeError as error:
        text = str(error)
        if "Binding inputs to tf.function" not in text:
            raise
        why = text.split("Received args", 1)[0].strip().rstrip(".")
        raise TypeError(f"{call.name}: its tf.function input_signature does not accept the "
                        "tensors gradcheck feeds: TensorFlow functions are checked in float64, "
                        "so the signature must accept float64 (tf.TensorSpec(..., tf.float64)) "
                        f"and the inputs' shapes, or be left out (TensorFlow: {why})") from error


def as_tensor_args(tf: ModuleType, call: Call, primals: Sequence[Any]) -> list[Any]:
    """Positional arguments for ``fn``: ``primals`` at the argnums, constants elsewhere.

    Non-array arguments (Python scalars, strings, None) are passed through unchanged.
    """
    full = call.substitute(primals)
    for i, arg in enumerate(full):
        if i not in call.argnums and isinstance(arg, np.ndarray):
            full[i] = tf.constant(arg)
    return full


def outputs_of(tf: ModuleType, call: Call, out: Any) -> tuple[list[Any], bool]:
    """``fn``'s result as a list of tensors, and whether it was several (a tuple, list or
    dict: a dict's values in sorted-key order, as a pytree).  Floating outputs must be
    float64 or complex128, or float32 for a float32-only kernel; integer and boolean outputs
    (``tf.math.top_k``'s indices) are kept but not differentiated (see :func:`inexact`)."""
    is_tuple = isinstance(out, (tuple, list, dict))
    outs = []
    for k, (_, value) in enumerate(output_leaves(out)):
        label = f"output {k}" if is_tuple else "the output"
        tensor = _as_tensor(tf, call, label, value)
        if inexact(tensor) and tensor.dtype not in (tf.float64, tf.complex128, tf.float32):
            raise ValueError(f"{call.name}: {label} has dtype {tensor.dtype.name}; the "
                             "TensorFlow oracle works in float64 or complex128, or float32 "
                             "for a float32-only kernel (create constants inside fn with "
                             "dtype=tf.float64)")
        outs.append(tensor)
    return outs, is_tuple


def _as_tensor(tf: ModuleType, call: Call, label: str, value: Any) -> Any:
    """``value`` as a tensor; a clear error naming the function when it is not one."""
    try:
        return tf.convert_to_tensor(value)
    except (TypeError, ValueError) as error:
        raise ValueError(f"{call.name}: {label} is a {type(value).__name__}, which TensorFlow "
                         "cannot make a tensor; a TensorFlow function must return tensors, "
                         f"or tuples, lists or dicts of them ({error})") from error


def inexact(tensor: Any) -> bool:
    """Whether an output is differentiated: floating or complex (integer and boolean outputs
    are not, as for torch and JAX functions)."""
    return bool(tensor.dtype.is_floating or tensor.dtype.is_complex)


def dense(tf: ModuleType, gradients: Sequence[Any]) -> list[Any]:
    """Gradients as dense tensors (None stays None).

    ``tf.gather`` and friends return ``IndexedSlices`` gradients, which numpy cannot read
    and which cannot be differentiated again as they are; densifying is itself an op, so
    the result stays differentiable.
    """
    return [None if g is None else tf.convert_to_tensor(g) for g in gradients]
