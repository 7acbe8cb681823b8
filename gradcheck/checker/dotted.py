"""Functions named by a dotted path, as suite rows name them: ``"tf.math.sin"``,
``"torch.nn.functional.gelu"``, ``"jnp.cumsum"`` or ``"my_module:my_function"``.

The longest importable prefix is the module and the rest are attributes, so a row can name
anything a user could import.  Short roots that every framework's users write are accepted
(:data:`ALIASES`).  Plain numpy (``np.sin``) is refused with the ``gnp.`` name to use:
numpy computes no derivatives, so every path would only fail.  Importing happens only when a
function is loaded: a suite that names TensorFlow functions costs nothing until they are
checked.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

__all__ = ["ALIASES", "root_module", "load_function"]

#: Roots a dotted path may start with instead of the module's full name.
ALIASES = {"tf": "tensorflow", "jnp": "jax.numpy", "np": "numpy", "F": "torch.nn.functional",
           "gc": "gradcheck", "gnp": "gradcheck.numpy"}


def root_module(path: str) -> str:
    """The top-level module a dotted path lives in (``"tf.math.sin"`` -> ``"tensorflow"``)."""
    head = path.partition(":")[0].split(".")[0]
    return ALIASES.get(head, head).split(".")[0]


def _expand(path: str) -> str:
    head, dot, rest = path.partition(".")
    return ALIASES[head] + dot + rest if head in ALIASES and ":" not in path else path


def load_function(path: str, who: str = "function") -> Callable[..., Any]:
    """The callable at ``path``; a ValueError naming ``who``, the path and the part that is
    missing otherwise (an ImportError of a missing framework propagates unchanged, so the
    caller can report the framework as unavailable)."""
    if not isinstance(path, str) or not path or path.startswith(".") or path.endswith("."):
        raise ValueError(f"{who}: target must be a dotted path such as 'tf.math.sin' or "
                         f"'my_module:my_function', got {path!r}")
    full = _expand(path)
    if root_module(path) == "numpy":
        raise ValueError(_plain_numpy(path, full, who))
    if ":" in full:
        module_name, _, attrs = full.partition(":")
        module = importlib.import_module(module_name)
        parts = attrs.split(".")
    else:
        parts = full.split(".")
        module, parts = _longest_module(parts, who, path)
    found: Any = module
    for i, part in enumerate(parts):
        try:
            found = getattr(found, part)
        except AttributeError:
            where = ".".join([module.__name__, *parts[:i]])
            raise ValueError(f"{who}: {path!r}: {where} has no attribute {part!r}") from None
    if not callable(found):
        raise ValueError(f"{who}: {path!r} is a {type(found).__name__}, not a function")
    return found


def _plain_numpy(path: str, full: str, who: str) -> str:
    """Why a plain numpy function cannot be a target (numpy computes no derivatives, and
    gradcheck's engine records only its own ops), and the ``gnp.`` name to use instead."""
    attrs = full.replace(":", ".").split(".")[1:]
    found: Any = importlib.import_module("gradcheck.numpy")
    for attr in attrs:
        found = getattr(found, attr, None)
    instead = "gnp." + ".".join(attrs)
    hint = f"use {instead!r} (gradcheck.numpy, the differentiable numpy) instead" \
        if callable(found) else \
        f"gradcheck.numpy has no {instead!r}: write it with gnp's functions in a module " \
        "of your own and name that ('my_module:my_function')"
    return f"{who}: {path!r} is plain numpy, which computes no derivatives to check; {hint}"


def _longest_module(parts: list[str], who: str, path: str) -> tuple[Any, list[str]]:
    """The module of the longest importable prefix of ``parts`` and the attributes after it."""
    root = importlib.import_module(parts[0])  # a missing framework raises ImportError here
    module, used = root, 1
    for n in range(2, len(parts)):
        try:
            module, used = importlib.import_module(".".join(parts[:n])), n
        except ImportError:
            break
    if used == len(parts):
        raise ValueError(f"{who}: {path!r} names a module, not a function")
    return module, parts[used:]
