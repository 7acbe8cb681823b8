"""Inputs from Hypothesis: seeded exploration, and shrinking a failure to a minimal example.

Exploration draws examples with ``@seed``, no database and only the generate phase, so the
same seed gives the same examples in any process.  Shrinking re-runs Hypothesis (same seed)
with a predicate that says whether an example still shows one particular failure; Hypothesis
finds it again and shrinks it (smaller shapes, first parameter choices, scale 1).  A budget
of predicate calls bounds the cost; it counts calls, not seconds, so results stay
deterministic.
"""

from __future__ import annotations

import hashlib
import pickle
import random
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from hypothesis import HealthCheck, Phase, Verbosity, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st

from gradcheck.checker.sampling import Example

__all__ = ["draw_examples", "draw_one", "stream_start", "shrink", "stream_seed"]

#: Fresh draws :func:`draw_one` tries when the strategy rejects one (filters, overruns).
DRAW_ATTEMPTS = 4


def _settings(count: int, phases: tuple[Phase, ...]) -> settings:
    return settings(max_examples=max(1, count), database=None, deadline=None,
                    phases=phases, suppress_health_check=list(HealthCheck),
                    verbosity=Verbosity.quiet, derandomize=False, print_blob=False,
                    report_multiple_bugs=False)


def stream_seed(seed: int, name: str, dtype: str) -> int:
    """The Hypothesis seed of one target and dtype: differs per target, fixed by ``seed``."""
    return zlib.crc32(f"{seed}:{name}:{dtype}".encode())


@contextmanager
def _same_in_every_process() -> Iterator[None]:
    """Hypothesis mixes literals from the local modules a process has loaded into what it
    draws (5% of draws), so one seed draws differently in a pytest process than in a sweep's
    worker.  Draw without them: the same seed must give the same examples on any executor.
    (Internal to Hypothesis; if it moves, there is nothing to switch off.)"""
    try:
        from hypothesis.internal.conjecture import providers
        original = providers._get_local_constants
        empty = type(providers._local_constants)()
        cache = providers.CONSTANTS_CACHE.cache
    except (ImportError, AttributeError, TypeError):
        yield
        return
    providers._get_local_constants = lambda: empty
    cache.clear()
    try:
        yield
    finally:
        providers._get_local_constants = original
        cache.clear()


def draw_examples(strategy: st.SearchStrategy[Example], count: int, seed: int) -> list[Example]:
    """Up to ``count`` distinct examples (fewer when the strategy has fewer)."""
    out: list[Example] = []

    @hypothesis_seed(seed)
    @_settings(count, (Phase.generate,))
    @given(strategy)
    def collect(example: Example) -> None:
        out.append(example)

    _no_database_key(collect)
    with _same_in_every_process():
        collect()
    return out


def draw_one(strategy: st.SearchStrategy[Example], seed: int) -> Example | None:
    """One random example, drawn straight from ``strategy`` with a generator seeded by
    ``seed``: what a later draw of a Hypothesis run gives, without the run (a run costs 5 to
    8 times one draw).  None when every attempt was rejected."""
    try:
        for attempt in range(DRAW_ATTEMPTS):
            example = _direct(strategy, random.Random(f"{seed}:{attempt}"))
            if example is not None:
                return example
    except _Unavailable:
        drawn = draw_examples(strategy, 3, seed)  # a run's first draw is its simplest
        return drawn[-1] if drawn else None
    return None


def stream_start(strategy: st.SearchStrategy[Example], count: int, seed: int) -> list[Example]:
    """The first ``count`` examples of the seeded stream :func:`draw_examples` draws.  A
    Hypothesis run draws its simplest example first (every size 1, the first parameter
    choices, whatever the seed): one example is drawn as that, without a run."""
    if count == 1:
        try:
            example = _direct(strategy, random.Random(seed), simplest=True)
            if example is not None:
                return [example]
        except _Unavailable:
            pass
    return draw_examples(strategy, count, seed)


class _Unavailable(Exception):
    """Hypothesis' internals moved: examples are drawn by a run instead."""


def _direct(strategy: st.SearchStrategy[Example], generator: random.Random,
            simplest: bool = False) -> Example | None:
    """One example drawn from ``strategy`` with ``generator`` (its simplest with
    ``simplest``), as a Hypothesis run draws one; None when the strategy rejects the draw.
    (Internal to Hypothesis: raises :class:`_Unavailable` if it moves.)"""
    try:
        from hypothesis.control import BuildContext
        from hypothesis.errors import StopTest
        from hypothesis.internal.conjecture.choice import ChoiceTemplate
        from hypothesis.internal.conjecture.data import ConjectureData

        data = ConjectureData(random=generator, prefix=[ChoiceTemplate("simplest", count=None)]
                              if simplest else None)
        context = BuildContext(data, wrapped_test=_direct)
    except (ImportError, TypeError) as e:
        raise _Unavailable from e
    try:
        with _same_in_every_process(), context:
            return data.draw(strategy)
    except StopTest:
        return None


def _no_database_key(test: Any) -> None:
    """Without a database Hypothesis still names each run's entry, from the test function's
    source read afresh (~1 ms a run, a run per stratum): say there is none.  (Internal to
    Hypothesis; if it moves, the key is computed as before.)"""
    test._hypothesis_internal_database_key = None


def _key(example: Example) -> bytes | None:
    """A digest of everything ``example`` holds (None when something in it cannot be
    pickled): equal digests are the same example, at which ``shows`` gives the same."""
    try:
        data = pickle.dumps((example.args, sorted(example.params.items()), example.dtype,
                             example.scale, example.seed, example.shapes), protocol=5)
    except Exception:  # noqa: BLE001 - a parameter pickle cannot take: no reuse
        return None
    return hashlib.blake2b(data, digest_size=16).digest()


class _Reproduced(Exception):
    """Raised inside the Hypothesis test to mark an example that shows the failure."""


def shrink(strategy: st.SearchStrategy[Example], count: int, seed: int,
           shows: Callable[[Example], Any], budget: int) -> tuple[Any, int]:
    """Search the same stream for an example where ``shows(example)`` is truthy and shrink it.

    Returns ``(the truthy value at the smallest such example, or None; calls made)``.
    """
    best: list[Any] = [None]
    calls = [0]
    # Hypothesis meets one example again (its last call replays the smallest failure, and
    # shrinking passes reach the same one): shows() is not run twice on it
    seen: dict[bytes, Any] = {}

    @hypothesis_seed(seed)
    @_settings(count, (Phase.generate, Phase.shrink))
    @given(strategy)
    def search(example: Example) -> None:
        if calls[0] >= budget:
            return  # out of budget: everything "passes" and Hypothesis stops soon
        calls[0] += 1  # counted when answered from ``seen`` too: the search stays the same
        key = _key(example)
        if key is not None and key in seen:
            found = seen[key]
        else:
            found = shows(example)
            if key is not None:
                seen[key] = found
        if found:
            best[0] = found
            raise _Reproduced()

    _no_database_key(search)
    try:
        with _same_in_every_process():
            search()
    except Exception:  # noqa: BLE001 - _Reproduced, or Hypothesis' Flaky when the budget ran out
        pass
    return best[0], calls[0]
