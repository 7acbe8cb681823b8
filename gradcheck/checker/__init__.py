"""The checker: every path of a target against numeric references and each other.

``check`` returns a :class:`Report`; ``assert_gradients`` raises on failures; ``run_sweep``
checks many ops (in worker processes with ``jobs=N``) and returns :class:`Results`.

Names load on first use, so that importing a light submodule (``references``, ``report``,
``policy``) does not load Hypothesis.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = [
    "check", "assert_gradients", "run_sweep", "format_failure", "PATHS", "KINDS",
    "Report", "Finding", "Cell", "Results",
    "Target", "OpTarget", "FunctionTarget", "Problem", "as_target", "register_target_kind",
]

_WHERE = {
    "check": "api", "assert_gradients": "api", "format_failure": "api", "PATHS": "paths",
    "KINDS": "report", "Report": "report", "Finding": "report", "Cell": "report",
    "Results": "report", "run_sweep": "runner", "Target": "targets", "OpTarget": "targets",
    "FunctionTarget": "targets", "Problem": "targets", "as_target": "targets",
    "register_target_kind": "targets",
}


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module 'gradcheck.checker' has no attribute {name!r}")
    return getattr(importlib.import_module(f"gradcheck.checker.{_WHERE[name]}"), name)
