"""A large check keeps its heap (gradcheck.checker.heap): the same results, the allocator's
thresholds raised only while it runs, the user's own settings left alone."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import gradcheck.numpy as gnp
from gradcheck.checker import check, heap


class FakeLibc:
    """Records the allocator calls a block makes."""

    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []

    def mallopt(self, param: int, value: int) -> int:
        self.calls.append(("mallopt", param, value))
        return 1

    def malloc_trim(self, pad: int) -> int:
        self.calls.append(("malloc_trim", pad))
        return 1


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> FakeLibc:
    libc = FakeLibc()
    monkeypatch.setattr(heap, "allocator", lambda: libc)
    return libc


def test_thresholds_rise_for_the_outermost_large_check_and_fall_after(fake: FakeLibc) -> None:
    raised = [("mallopt", -3, heap.MMAP), ("mallopt", -1, heap.TRIM_WHILE)]
    with heap.heap_kept(heap.LARGE):
        assert fake.calls == raised
        with heap.heap_kept(10 * heap.LARGE):  # a check inside a check changes nothing
            pass
        assert fake.calls == raised
    assert fake.calls == [*raised, ("malloc_trim", 0), ("mallopt", -1, heap.TRIM_AFTER)]


def test_a_small_check_leaves_the_allocator_alone(fake: FakeLibc) -> None:
    with heap.heap_kept(heap.LARGE - 1):
        pass
    assert fake.calls == []


def test_the_thresholds_fall_when_the_check_raises(fake: FakeLibc) -> None:
    with pytest.raises(RuntimeError), heap.heap_kept(heap.LARGE):
        raise RuntimeError("the op failed")
    assert fake.calls[-2:] == [("malloc_trim", 0), ("mallopt", -1, heap.TRIM_AFTER)]
    with heap.heap_kept(heap.LARGE):  # the depth is back at zero: the next check raises again
        pass
    assert fake.calls[-4][0] == "mallopt" and fake.calls[-4][2] == heap.MMAP


@pytest.mark.parametrize("env", [("MALLOC_TRIM_THRESHOLD_", "131072"),
                                 ("MALLOC_MMAP_THRESHOLD_", "65536"),
                                 ("GLIBC_TUNABLES", "glibc.malloc.trim_threshold=1")])
def test_the_users_own_allocator_settings_are_kept(monkeypatch: pytest.MonkeyPatch,
                                                   env: tuple[str, str]) -> None:
    monkeypatch.setenv(*env)
    heap.allocator.cache_clear()
    try:
        assert heap.allocator() is None
    finally:
        monkeypatch.delenv(env[0])
        heap.allocator.cache_clear()


def test_a_large_check_gives_the_same_bits_with_and_without_the_kept_heap(
        monkeypatch: pytest.MonkeyPatch) -> None:
    x = np.random.default_rng(5).standard_normal(heap.LARGE + 1)

    def run() -> str:
        return check(lambda a: gnp.tanh(a) * a, inputs=(x,), examples=1, seed=3).to_json()

    if heap.allocator() is None:  # not glibc here: both runs are the system's allocator
        assert run() == run()
        return
    kept = run()
    monkeypatch.setattr(heap, "allocator", lambda: None)
    assert run() == kept


def test_check_keeps_the_heap_for_a_large_given_input_only(fake: FakeLibc) -> None:
    check("tanh", examples=1)  # drawn examples: small
    assert fake.calls == []
    check("tanh", inputs=[np.linspace(-2, 2, heap.LARGE)], examples=1)
    assert [c[0] for c in fake.calls] == ["mallopt", "mallopt", "malloc_trim", "mallopt"]
