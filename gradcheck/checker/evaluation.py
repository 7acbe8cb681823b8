"""Evaluating a path so that every way it can go wrong becomes a recorded outcome.

A rule error (count, shape, dtype), an in-place write, a crash, a path the framework cannot
compute, a result of the wrong shape or dtype, and two identical calls that disagree are
each an :class:`~gradcheck.checker.compare.Outcome` of the path (then :class:`Stop`, so
what needs the path is skipped), never an exception out of the checker.
"""

from __future__ import annotations

import re
import traceback
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from gradcheck.checker.compare import Outcome
from gradcheck.checker.paths import InputMutated, same_bits
from gradcheck.checker.references import Unsupported
from gradcheck.engine import RuleError
from gradcheck.ops.refs import NoEquivalent

__all__ = ["Guarded", "Stop", "STRUCTURE", "leaves", "normalise_error_text"]

#: Reference name of structural findings (shape, dtype, input_mutated, nondeterministic, error).
STRUCTURE = "structure"


#: Names and numbers in exception texts that count something in the process (TensorFlow's
#: generated function and gradient names, object addresses): they differ between runs of the
#: same seed with another --jobs, so they are replaced (``_<n>``, ``-<n>``, ``0x<addr>``).
_COUNTERS = (
    # TensorFlow's traced functions: every number in the name (__forward_b_4294_4587)
    (re.compile(r"\b__(?:inference|forward|backward)\w+"),
     lambda m: re.sub(r"_\d+", "_<n>", m.group())),
    (re.compile(r"\bpyfunc_\d+"), lambda m: "pyfunc_<n>"),
    (re.compile(r"\bCustomGradient-\d+"), lambda m: "CustomGradient-<n>"),
    (re.compile(r"\b0x[0-9a-fA-F]{4,}\b"), lambda m: "0x<addr>"),
    # any other large counter suffix (a name's _1234)
    (re.compile(r"(?<=[A-Za-z0-9])_\d{3,}(?=\W|_|$)"), lambda m: "_<n>"),
)


def normalise_error_text(text: str) -> str:
    """``text`` (an exception's message or traceback) with process-dependent counters and
    addresses replaced, so the same seed gives byte-identical results whatever ran before in
    the process (``--jobs``)."""
    for pattern, replacement in _COUNTERS:
        text = pattern.sub(replacement, text)
    return text


class Stop(Exception):
    """A path could not be evaluated (its outcome is recorded): skip what needs it."""


def _same_bits(a: Any, b: Any) -> bool:
    la = a if isinstance(a, (list, tuple)) else [a]
    lb = b if isinstance(b, (list, tuple)) else [b]
    if len(la) != len(lb):
        return False
    for x, y in zip(la, lb, strict=True):
        if isinstance(x, (list, tuple)) or isinstance(y, (list, tuple)):
            if not _same_bits(x, y):
                return False
        elif isinstance(x, np.ndarray) or isinstance(y, np.ndarray):
            if not same_bits(np.asarray(x), y):
                return False
        elif x != y:
            return False
    return True


class Guarded:
    """Records outcomes and evaluates paths guarded; ``side`` is a reference framework's name
    ("" for the checked target), whose exceptions mean it cannot compute the path."""

    side: str = ""

    def __init__(self) -> None:
        self.outcomes: list[Outcome] = []
        self._failed: set[str] = set()

    def record(self, outcome: Outcome) -> Outcome:
        self.outcomes.append(outcome)
        return outcome

    def structural(self, path: str, kind: str, message: str, tb: str | None = None,
                   **directions: Any) -> None:
        self.record(Outcome(path, STRUCTURE, kind, message=normalise_error_text(message),
                            traceback=None if tb is None else normalise_error_text(tb),
                            directions={k: v for k, v in directions.items()}))

    def evaluate(self, path: str, call: Callable[[], Any],
                 expect: Sequence[np.ndarray] | None = None, primary: bool = False,
                 **directions: Any) -> Any:
        """Call a path, turning every way it can go wrong into a recorded outcome (then
        :class:`Stop`).  ``expect`` are the arrays the result must match in shape and dtype;
        a primary evaluation is repeated and must agree bit for bit."""
        if path in self._failed:
            raise Stop(path)
        try:
            result = call()
            if primary and not _same_bits(result, call()):
                self.structural(path, "nondeterministic", f"{path}: two identical calls gave "
                                "different results", **directions)
        except RuleError as e:
            kind = e.kind if e.kind in ("shape", "dtype") else "error"
            self._fail(path, kind, f"{path}: {e}", traceback.format_exc(), directions)
        except (Unsupported, NoEquivalent) as e:  # it cannot compute this path: its reason
            self._fail(path, "unsupported", f"{path}: unsupported: {e}", None, directions)
        except InputMutated as e:
            self._fail(path, "input_mutated", f"{path} wrote into its inputs: {e}", None,
                       directions)
        except Exception as e:  # an op's crash is a finding, never the checker's crash
            if self.side:  # a framework that raises cannot compute this path: its own words
                self._fail(path, "unsupported", f"{path}: unsupported: {self.side} raised "
                           f"{type(e).__name__}: {_first_line(e)}", None, directions)
            self._fail(path, "error", f"{path} raised {type(e).__name__}: {e}",
                       traceback.format_exc(), directions)
        if expect is not None:
            self._check_structure(path, result, expect, directions)
        return result

    def _fail(self, path: str, kind: str, message: str, tb: str | None,
              directions: dict[str, Any]) -> None:
        self._failed.add(path)
        self.structural(path, kind, message, tb, **directions)
        raise Stop(path)

    def _check_structure(self, path: str, result: Any, expect: Sequence[np.ndarray],
                         directions: dict[str, Any]) -> None:
        got = leaves(result)
        if len(got) != len(expect):
            self._fail(path, "error", f"{path} returned {len(got)} arrays, expected "
                       f"{len(expect)}", None, directions)
        for k, (g, e) in enumerate(zip(got, expect, strict=True)):
            if g.shape != e.shape:
                self._fail(path, "shape", f"{path}: result {k} has shape {g.shape}, expected "
                           f"{e.shape} (its input's)", None, directions)
            if e.dtype.kind == "f" and g.dtype != e.dtype:
                self._fail(path, "dtype", f"{path}: result {k} has dtype {g.dtype}, expected "
                           f"{e.dtype} (its input's)", None, directions)

def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else ""


def leaves(result: Any) -> list[np.ndarray]:
    if isinstance(result, tuple) and len(result) == 2 and isinstance(result[1], (bool, np.bool_)):
        return [*leaves(result[0]), np.asarray(result[1])]  # double_vjp: (arrays, read flag)
    if isinstance(result, (list, tuple)):
        return [leaf for r in result for leaf in leaves(r)]
    return [np.asarray(result)]
