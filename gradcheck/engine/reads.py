"""Which arguments a VJP rule reads, so a tape keeps only those values until the gradient.

A rule is called as ``rule(g, out, *inputs, **params)``.  One that never mentions ``out``
(``tanh``'s reads only its output; ``negative``'s nothing but ``g``) does not need the
forward's values kept alive: the tape then drops them as soon as the user does, and the
next op's output lands on memory the allocator just freed instead of on fresh pages.

The answer comes from the rule's bytecode: a parameter counts as read when any instruction
names it (a load, a store, a ``del``, a cell for a closure that captures it).  Anything the
bytecode cannot settle (no code object, ``*args``, ``locals()``, ``eval``) reads everything.
Wrong in the safe direction only: an unneeded value kept, never a needed one dropped.
"""

from __future__ import annotations

import dis
import functools
import inspect
from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["Reads", "EVERYTHING", "NOTHING", "rule_reads", "parameters_read", "union"]

#: ``(reads out, positions of the inputs read)``; None means everything.
Reads = tuple[bool, frozenset[int]] | None
EVERYTHING: Reads = None
NOTHING: Reads = (False, frozenset())

# names through which a function can reach its own parameters without naming them
_DYNAMIC = frozenset({"locals", "vars", "eval", "exec", "_getframe", "currentframe", "dir"})


def rule_reads(rule: Callable[..., Any] | None, nin: int) -> Reads:
    """What ``rule(g, out, *inputs)`` reads of ``out`` and of its ``nin`` inputs."""
    if rule is None:
        return NOTHING
    read = parameters_read(rule, 2 + nin)
    if read is None:
        return EVERYTHING
    return 1 in read, frozenset(i - 2 for i in read if i >= 2)


def parameters_read(fn: Callable[..., Any], count: int) -> frozenset[int] | None:
    """Which of the first ``count`` positional parameters ``fn`` reads (None: it cannot be
    told, so all of them)."""
    code = getattr(fn, "__code__", None)
    if code is None or getattr(fn, "__self__", None) is not None:
        return None  # a builtin, a partial, a callable object, a bound method
    if code.co_flags & inspect.CO_VARARGS:  # the arguments reach it as a tuple
        return None
    if code.co_argcount < count or _DYNAMIC & set(code.co_names):
        return None
    return _read(code, count)


@functools.lru_cache(maxsize=4096)
def _read(code: Any, count: int) -> frozenset[int]:
    # by code object: lambdas made in a loop, or an op declared per call, share one
    names, used = code.co_varnames[:count], _named(code)
    return frozenset(i for i, name in enumerate(names) if name in used)


def union(reads: Sequence[Reads]) -> Reads:
    """What several rules called on the same node read together."""
    out, inputs = False, frozenset[int]()
    for r in reads:
        if r is None:
            return EVERYTHING
        out, inputs = out or r[0], inputs | r[1]
    return out, inputs


def _named(code: Any) -> set[str]:
    """Every name an instruction of ``code`` refers to (``argval``, or each of a pair)."""
    used: set[str] = set(code.co_cellvars)
    for ins in dis.get_instructions(code):
        val = ins.argval
        if isinstance(val, str):
            used.add(val)
        elif isinstance(val, tuple):  # LOAD_FAST_LOAD_FAST and friends (3.13+)
            used.update(v for v in val if isinstance(v, str))
    return used
