"""Time limits and stop signals: a hang becomes an ``error`` finding, and a run that is asked
to stop stops cleanly.

:func:`time_limit` uses a real-time interval timer, so it works in the main thread of a POSIX
process (where sweeps and their worker processes run); elsewhere it does nothing, and the
sweep runner's worker processes are the backstop.  Its exception derives from BaseException
so that neither the op's code nor Hypothesis mistakes it for a failure of the op.

:func:`stop_signals` is for the process that runs a sweep: SIGTERM and SIGHUP raise
:class:`Terminated` (so every ``finally`` that ends worker processes runs), and a SIGINT is
remembered, so a ``KeyboardInterrupt`` that an op raises by itself (an ``error`` finding of
that op) is told apart from the user's Ctrl-C (the end of the run).
"""

from __future__ import annotations

import math
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["CheckTimeout", "Terminated", "LONGEST_TIMER", "time_limit", "stop_signals",
           "interrupted"]


class CheckTimeout(BaseException):
    """The check ran longer than its time limit."""


class Terminated(SystemExit):
    """The process was asked to stop by a signal (SIGTERM, SIGHUP).  Uncaught, it ends the
    interpreter quietly with the shell's code for that signal (128 + N), after every
    ``finally`` has run."""

    def __init__(self, signum: int) -> None:
        super().__init__(128 + signum)
        self.signum = signum

    def __str__(self) -> str:
        return f"terminated by {signal.Signals(self.signum).name}"


#: The longest timer set, in seconds (about 31 years): a longer limit, up to ``inf``, is
#: no practical limit, and ``setitimer`` cannot take one much longer (OverflowError).
LONGEST_TIMER = 1e9


@contextmanager
def time_limit(seconds: float | None) -> Iterator[None]:
    """Raise :class:`CheckTimeout` in this block after ``seconds`` (None or ``inf``: no limit;
    more than :data:`LONGEST_TIMER` is cut to it).  ``seconds`` must be positive, not nan."""
    if seconds is not None and not seconds > 0:
        raise ValueError(f"time_limit: timeout must be a positive number of seconds, "
                         f"got {seconds!r}")
    usable = hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
    if seconds is None or seconds == math.inf or not usable:
        yield
        return

    def expire(signum: int, frame: Any) -> None:
        raise CheckTimeout(f"timed out after {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, min(float(seconds), LONGEST_TIMER))
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


_received: set[int] = set()
_STOP = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name))


def interrupted() -> bool:
    """Whether a real SIGINT arrived inside :func:`stop_signals` (not an op's own raise)."""
    return signal.SIGINT in _received


def _on_interrupt(signum: int, frame: Any) -> None:
    _received.add(signum)
    raise KeyboardInterrupt


def _on_stop(signum: int, frame: Any) -> None:
    _received.add(signum)
    raise Terminated(signum)


@contextmanager
def stop_signals() -> Iterator[None]:
    """In this block SIGTERM and SIGHUP raise :class:`Terminated` and SIGINT is remembered
    (see :func:`interrupted`).  Signals someone else handles or ignores are left alone;
    outside the main thread this does nothing (no signal reaches other threads)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    if signal.getsignal(signal.SIGINT) is not _on_interrupt:  # not nested in another
        _received.clear()
    previous: dict[int, Any] = {}
    for signum, handler, default in ((signal.SIGINT, _on_interrupt, signal.default_int_handler),
                                     *((s, _on_stop, signal.SIG_DFL) for s in _STOP)):
        if signal.getsignal(signum) is default:
            previous[signum] = signal.signal(signum, handler)
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
