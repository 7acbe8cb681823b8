"""The same checks under different Python interpreters: what the Makefile's choice is worth.

Run: ``python bench/interpreters.py [--python PY ...] [--candidates PY ...] [--ops-step N]
[--repeat N]``.  Each interpreter runs in its own process, one after another:

* **loop**: a pure-Python workload (dict updates and method calls, no numpy), on every
  interpreter named and on the ``--candidates`` that exist (``make bench`` passes the
  Makefile's ``PY_CANDIDATES``, the interpreters ``.venv`` may be made from);
* **registry**: every ``--ops-step``-th registry op checked in fast mode with its default
  examples, as CPU seconds, on the interpreters that can import gradcheck (a venv's
  ``bin/python``; this one's by default).

The fastest of ``--repeat`` runs is printed, with each figure as a multiple of the first
interpreter's.  A source build of CPython without ``--enable-optimizations`` (pyenv's
default) runs Python code slower than a distribution's build with profile-guided
optimisation; numpy's own loops run at the same speed under both.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys

LOOP = """
import time
class A:
    def __init__(self, x): self.x = x
    def m(self, y): return self.x + y
t = time.process_time()
d, a, s = {}, A(1), 0
for i in range(1_000_000):
    d[i % 1000] = d.get(i % 1000, 0) + i
    s = a.m(s)
print(time.process_time() - t)
"""

REGISTRY = """
import os, sys, time
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import gradcheck
from gradcheck.checker import check
ops = list(gradcheck.default_registry)[::{step}]
for op in ops[:2]:
    check(op)  # imports and first-call caches
t = time.process_time()
for op in ops:
    check(op)
print(time.process_time() - t)
"""

def _run(python: str, code: str) -> float | None:
    try:
        done = subprocess.run([python, "-c", code], capture_output=True, text=True,
                              env={**os.environ, "OPENBLAS_NUM_THREADS": "1",
                                   "OMP_NUM_THREADS": "1"})
    except OSError:
        return None
    if done.returncode:
        return None
    return float(done.stdout.split()[-1])


def _version(python: str) -> str:
    code = "import sys; print(sys.version.split()[0], sys.base_prefix)"
    try:
        return subprocess.run([python, "-c", code], capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "?"


def _best(python: str, code: str, repeat: int) -> float | None:
    runs = [_run(python, code) for _ in range(max(1, repeat))]
    found = [r for r in runs if r is not None]
    return min(found) if found else None


def _table(title: str, rows: list[tuple[str, str, float | None]]) -> None:
    print(title)
    print(f"  {'interpreter':<45} {'version, base':<40} {'CPU s':>7} {'x first':>8}")
    first = next((s for _, _, s in rows if s is not None), None)
    for python, version, seconds in rows:
        shown = "n/a" if seconds is None else f"{seconds:.2f}"
        ratio = "" if seconds is None or not first else f"{seconds / first:.2f}"
        print(f"  {python:<45} {version:<40} {shown:>7} {ratio:>8}")
    print()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--python", nargs="*", default=[sys.executable],
                        help="interpreters (a venv's bin/python) to run the registry under")
    parser.add_argument("--candidates", nargs="*", default=[],
                        help="more interpreters for the loop alone (skipped when missing)")
    parser.add_argument("--ops-step", type=int, default=3, help="every N-th registry op")
    parser.add_argument("--repeat", type=int, default=2, help="runs per figure (the fastest)")
    args = parser.parse_args()
    named = list(dict.fromkeys(args.python))
    found = [p for p in args.candidates if shutil.which(p)]
    loop = list(dict.fromkeys(named + found))
    _table("pure-Python loop (10^6 dict updates and method calls)",
           [(p, _version(p), _best(p, LOOP, args.repeat)) for p in loop])
    _table(f"one registry op in {args.ops_step}, fast mode, default examples",
           [(p, _version(p), _best(p, REGISTRY.format(step=args.ops_step), args.repeat))
            for p in named])


if __name__ == "__main__":
    main()
