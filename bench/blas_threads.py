"""What one BLAS thread saves a check run in the caller's own process.

Run: ``python bench/blas_threads.py`` (``--ops PATTERN``, ``--seeds N``, ``--busy N``).
Each row checks the same ops (fast mode, default examples) in a fresh interpreter, two
ways, interleaved:

* **default**: BLAS's own thread count (one per core), as before
  ``gradcheck.checker.threads``: ``OPENBLAS_NUM_THREADS`` names the machine's cores, a
  count the user chose, which gradcheck keeps;
* **one thread**: what ``check()`` now does by itself when no count is set.

With ``--busy N``, N processes spin on the CPU meanwhile (a shared machine, a CI runner,
a test suite on the other cores). Times are CPU seconds (and wall) of the checks alone.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import subprocess
import sys
import time

CHILD = """
import json, sys, time
import gradcheck
from gradcheck.checker import check
patterns, seeds = sys.argv[1].split(","), int(sys.argv[2])
ops = gradcheck.default_registry.select(patterns)
for op in ops:  # imports and first calls out of the timing
    check(op, seed=0, examples=1)
c, w = time.process_time(), time.perf_counter()
for op in ops:
    for s in range(seeds):
        check(op, seed=100 + s)
print(json.dumps({"ops": len(ops), "cpu": time.process_time() - c,
                  "wall": time.perf_counter() - w}))
"""

ONE_THREAD = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def run(patterns: str, seeds: int, threads: int | None) -> dict[str, float]:
    env = {k: v for k, v in os.environ.items() if k not in ONE_THREAD}
    if threads is not None:
        env["OPENBLAS_NUM_THREADS"] = str(threads)
    out = subprocess.run([sys.executable, "-c", CHILD, patterns, str(seeds)], env=env,
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def spin(stop: float) -> None:
    while time.time() < stop:
        pass


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--ops", default="linalg.*", help="op name patterns, comma-separated")
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--busy", type=int, default=0,
                        help="processes spinning on the CPU while the checks run")
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    cores = os.cpu_count() or 1
    spinners = [multiprocessing.Process(target=spin, args=(time.time() + 3600,))
                for _ in range(args.busy)]
    for p in spinners:
        p.start()
    try:
        rows: dict[str, list[dict[str, float]]] = {"default": [], "one thread": []}
        for _ in range(args.repeat):  # interleaved: the machine's drift hits both
            rows["default"].append(run(args.ops, args.seeds, cores))
            rows["one thread"].append(run(args.ops, args.seeds, None))
    finally:
        for p in spinners:
            p.kill()
    best = {k: min(v, key=lambda r: r["cpu"]) for k, v in rows.items()}
    one = best["one thread"]
    print(f"{one['ops']:.0f} ops ({args.ops}), {args.seeds} seeds each, fast mode; "
          f"{cores} cores, {args.busy} busy processes beside; best of {args.repeat}")
    print("| BLAS threads | CPU s | wall s | × one thread: CPU | wall |")
    print("|---|---:|---:|---:|---:|")
    for name, r in best.items():
        print(f"| {name} ({cores if name == 'default' else 1}) | {r['cpu']:.2f} | "
              f"{r['wall']:.2f} | {r['cpu'] / one['cpu']:.2f} | {r['wall'] / one['wall']:.2f} |")


if __name__ == "__main__":
    main()
