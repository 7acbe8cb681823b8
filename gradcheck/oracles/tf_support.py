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
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from types import ModuleType
from typing import Any

import numpy as np

from gradcheck.oracles.base import Unsupported
from gradcheck.oracles.inputs import Call

__all__ = ["import_tensorflow", "is_missing_gradient", "missing_gradient", "as_tensor_args",
           "outputs_of", "dense"]


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


@contextmanager
def missing_gradient(name: str, what: str) -> Iterator[None]:
    """Turn TensorFlow's missing-gradient LookupError (or its own NotImplementedError) inside
    the block into Unsupported (``name`` is the function's, ``what`` the derivative taken)."""
    try:
        yield
    except LookupError as error:
        if not is_missing_gradient(error):
            raise
        raise Unsupported(f"TensorFlow cannot differentiate {what} of {name}: "
                          f"{error}") from error
    except NotImplementedError as error:
        if not _raised_by_tensorflow(error):
            raise
        raise Unsupported(f"TensorFlow does not implement {what} of {name}: "
                          f"{error}") from error


def _raised_by_tensorflow(error: BaseException) -> bool:
    """Whether TensorFlow's own code raised ``error`` (``tf.recompute_grad`` in forward mode
    raises NotImplementedError), not the user's function."""
    tb = error.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return tb is not None and "/tensorflow/" in tb.tb_frame.f_code.co_filename


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
    """``fn``'s result as a list of float64 tensors, and whether it was a tuple."""
    is_tuple = isinstance(out, (tuple, list))
    outs = []
    for k, value in enumerate(list(out) if is_tuple else [out]):
        tensor = tf.convert_to_tensor(value)
        if tensor.dtype not in (tf.float64, tf.complex128, tf.float32):
            label = f"output {k}" if is_tuple else "the output"
            raise ValueError(f"{call.name}: {label} has dtype {tensor.dtype.name}; the "
                             "TensorFlow oracle works in float64 or complex128, or float32 "
                             "for a float32-only kernel (create constants inside fn with "
                             "dtype=tf.float64)")
        outs.append(tensor)
    return outs, is_tuple


def dense(tf: ModuleType, gradients: Sequence[Any]) -> list[Any]:
    """Gradients as dense tensors (None stays None).

    ``tf.gather`` and friends return ``IndexedSlices`` gradients, which numpy cannot read
    and which cannot be differentiated again as they are; densifying is itself an op, so
    the result stays differentiable.
    """
    return [None if g is None else tf.convert_to_tensor(g) for g in gradients]
