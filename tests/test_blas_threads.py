"""A check in the caller's own process runs with one BLAS thread (as the sweep's workers do),
unless the user chose a count or gives a large input, and gives the count back after."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from gradcheck.checker.threads import LARGE, ONE_THREAD, largest_input

# Run in a fresh interpreter: this one loaded BLAS with whatever the test runner set.
PROBE = """
import json, sys
import numpy as np
from threadpoolctl import threadpool_info, threadpool_limits
import gradcheck
import gradcheck.numpy as gnp

def blas():
    return sorted({i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"})

seen = []
def f(x):
    seen.append(blas())
    return gnp.tanh(x)

size = int(sys.argv[1])
with threadpool_limits(limits=2, user_api="blas"):
    before = blas()
    report = gradcheck.check(f, inputs=[np.linspace(-1.0, 1.0, size)], examples=1)
    during = sorted({n for s in seen for n in s})
    after = blas()
    seen.clear()
    report.convergence  # computed when first read: under the same rule
    plot = sorted({n for s in seen for n in s})
print(json.dumps({"before": before, "during": during, "after": after, "plot": plot,
                  "passed": report.passed}))
"""


def _probe(size: int, **env: str) -> dict[str, list[int]]:
    clean = {k: v for k, v in os.environ.items() if k not in ONE_THREAD}
    out = subprocess.run([sys.executable, "-c", PROBE, str(size)], capture_output=True,
                         text=True, env={**clean, **env}, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    seen: dict[str, list[int]] = json.loads(out.stdout.strip().splitlines()[-1])
    # the premise: the caller's BLAS runs two threads when the check starts
    assert seen["before"] == [2], seen
    return seen


def test_a_small_check_runs_with_one_blas_thread_and_gives_the_count_back() -> None:
    seen = _probe(5)
    assert seen["passed"]
    assert seen["during"] == [1] and seen["plot"] == [1]
    assert seen["after"] == [2]


def test_a_count_the_user_set_is_kept() -> None:
    seen = _probe(5, OPENBLAS_NUM_THREADS="2")
    assert seen["during"] == [2] and seen["after"] == [2]


def test_a_large_given_input_keeps_the_threads() -> None:
    seen = _probe(LARGE)
    assert seen["passed"]
    assert seen["during"] == [2]


def test_without_threadpoolctl_a_check_still_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    import gradcheck
    import gradcheck.numpy as gnp

    for name in ONE_THREAD:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setitem(sys.modules, "threadpoolctl", None)  # import raises ImportError
    report = gradcheck.check(lambda x: gnp.sin(x), inputs=[np.ones(3)], examples=1)
    assert report.passed


@pytest.mark.parametrize("inputs, size", [
    (None, 0),
    ([np.ones((3, 4)), 2.0, "positive"], 12),
    (np.ones((2, 300)), 600),
    ({"x": np.ones(7)}, 7),
])
def test_largest_input_counts_the_elements_of_given_arrays(inputs: object, size: int) -> None:
    assert largest_input(inputs) == size


def test_a_thread_limiter_that_fails_does_not_fail_the_check(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import types

    import gradcheck
    import gradcheck.numpy as gnp

    def broken(**kwargs: object) -> None:
        raise RuntimeError("cannot read the loaded libraries")

    for name in ONE_THREAD:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setitem(sys.modules, "threadpoolctl",
                        types.SimpleNamespace(threadpool_limits=broken))
    report = gradcheck.check(lambda x: gnp.sin(x), inputs=[np.ones(3)], examples=1)
    assert report.passed, [f.message for f in report.findings]


def test_the_libraries_are_looked_up_again_only_after_an_import(monkeypatch) -> None:
    import types

    import threadpoolctl

    from gradcheck.checker import threads

    made = []

    class Counting(threadpoolctl.ThreadpoolController):
        def __init__(self) -> None:
            made.append(1)
            super().__init__()

    monkeypatch.setattr(threadpoolctl, "ThreadpoolController", Counting)
    threads._controller.cache_clear()
    for name in ONE_THREAD:
        monkeypatch.delenv(name, raising=False)
    for _ in range(3):
        with threads.one_blas_thread():
            pass
    assert len(made) == 1
    # a module imported since (a framework bringing its own BLAS): found again
    monkeypatch.setitem(sys.modules, "_gradcheck_test_new_module", types.ModuleType("m"))
    with threads.one_blas_thread():
        pass
    assert len(made) == 2
