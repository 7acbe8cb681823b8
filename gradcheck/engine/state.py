"""Which tracers (tapes and forward accumulators) see the ops being executed.

An op is shown to every tracer in ``visible()``: those whose context is active.
Every tracer has a *level*, increasing in the order contexts are entered.  An
accumulator's own work (its JVP rules) runs with only the tracers of lower level
visible: tracers entered before it see it and can differentiate it again (higher
order); the accumulator itself and tracers entered after it do not.  A tape's
backward pass is seen by every active tracer but the tape itself (a persistent tape
inside its context sees it too).  These are TensorFlow's rules for nesting tapes and
accumulators: a tape records every op run while it records, and accumulators apply
in the order their contexts were entered.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

_levels = itertools.count(start=2, step=2)  # even: room for helpers at odd levels
#: The tracers that currently see executed ops, lowest level first.  The hot path reads
#: it directly; change it only through ``push``/``pop``/``swap``/``hide_from``/``only``.
current: tuple[Any, ...] = ()


def new_level() -> int:
    """A level higher than every level given so far."""
    return next(_levels)


def visible() -> tuple[Any, ...]:
    """The tracers that currently see executed ops, lowest level first."""
    return current


def push(tracer: Any) -> None:
    global current
    current = tuple(sorted((*current, tracer), key=lambda t: t.level))


def pop(tracer: Any) -> None:
    global current
    current = tuple(t for t in current if t is not tracer)


def without(tracer: Any) -> tuple[Any, ...]:
    """The visible tracers other than ``tracer``."""
    if tracer not in current:
        return current
    return tuple(t for t in current if t is not tracer)


def hide_from(level: float) -> tuple[Any, ...]:
    """Make only the tracers below ``level`` visible; returns what was (give it to ``swap``).

    An accumulator does this around every rule it runs."""
    global current
    saved = current
    current = () if not saved or saved[0].level >= level else \
        tuple(t for t in saved if t.level < level)
    return saved


def swap(tracers: tuple[Any, ...]) -> tuple[Any, ...]:
    """Make exactly ``tracers`` visible; returns what was visible (give it to ``swap`` back).

    The hot paths use this pair instead of the ``only`` context manager.
    """
    global current
    saved = current
    current = tracers
    return saved


@contextmanager
def only(tracers: tuple[Any, ...]) -> Iterator[None]:
    """Run a block with exactly ``tracers`` visible."""
    global current
    saved = current
    current = tracers
    try:
        yield
    finally:
        current = saved
