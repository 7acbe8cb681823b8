"""A sweep worker's heap after its first unit: garbage collected, the rest frozen."""

from __future__ import annotations

import gc
import weakref

from gradcheck.checker.executors.unit import settle_heap


class _Node:
    def __init__(self) -> None:
        self.me = self  # a reference cycle: only the cycle collector frees it


def test_settle_heap_collects_cycles_and_freezes_the_rest() -> None:
    was = gc.get_freeze_count()
    gc.unfreeze()  # (pytest's own start froze the imports; thawed, they count again)
    try:
        kept, dropped = _Node(), _Node()
        gone = weakref.ref(dropped)
        del dropped
        settle_heap()
        assert gone() is None  # the cycle was collected, not frozen with the rest
        assert gc.get_freeze_count() > 0
        assert not any(o is kept for o in gc.get_objects())  # frozen: out of the collector's view
    finally:
        gc.unfreeze()
        if was:
            gc.freeze()
