"""What a check costs in memory as its input grows, against other frameworks' checkers.

Run: ``python bench/check_memory.py`` (``--sizes``, ``--checkers``).  Each checker checks
``tanh`` at one float64 input of each size, to second order where it offers it, each in a
fresh interpreter, so one checker's memory never counts against another's:

* **gradcheck**: ``check(lambda a: gnp.tanh(a), inputs=(x,), examples=2)``, fast mode;
* **autograd**: ``check_grads(f, modes=["fwd", "rev"], order=2)``;
* **torch**: ``gradcheck`` and ``gradgradcheck`` with ``fast_mode=True`` (the default mode
  builds whole Jacobians, 10^12 entries at 10^6 elements);
* **JAX**: ``check_grads(f, order=2, modes=["fwd", "rev"])``, float64.

Figures per run:

* **peak**: the process's peak resident memory during the check above what it held just
  before (Linux: the peak is reset through ``/proc/self/clear_refs`` first), in MB and as a
  multiple of the input's size;
* **left**: resident memory still held after the check returns, its result kept, before any
  garbage collection: what a loop of checks would pile up;
* for gradcheck, the same two from ``tracemalloc`` (numpy's own allocations, free of the
  allocator's caching): its peak and what is still allocated after the check.

Each checker first checks a 10-element input, untimed and unmeasured: its imports and first
calls' caches are not the check's.  Resident figures include what the allocator keeps from
freed memory, so they are upper bounds and move by a few MB between runs.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from typing import Any

MB = 1024 * 1024
CHECKERS = ("gradcheck", "autograd", "torch", "jax")


def _status(field: str) -> int:
    """A ``/proc/self/status`` field in bytes (``VmRSS``, ``VmHWM``)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    raise KeyError(field)


def _reset_peak() -> bool:
    """Reset the process's peak resident memory to its current one (Linux 4.0+)."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def _checker(name: str) -> Any:
    """A function checking tanh at a float64 array, to second order where offered."""
    if name == "gradcheck":
        import gradcheck.numpy as gnp
        from gradcheck.checker import check
        return lambda x: check(lambda a: gnp.tanh(a), inputs=(x,), examples=2)
    if name == "autograd":
        import autograd.numpy as anp
        from autograd.test_util import check_grads
        return lambda x: check_grads(anp.tanh, modes=["fwd", "rev"], order=2)(x)
    if name == "torch":
        import torch

        def run(x: Any) -> Any:
            t = torch.tensor(x, dtype=torch.float64, requires_grad=True)
            torch.autograd.gradcheck(torch.tanh, (t,), fast_mode=True)
            return torch.autograd.gradgradcheck(torch.tanh, (t,), fast_mode=True)
        return run
    if name == "jax":
        import jax
        jax.config.update("jax_enable_x64", True)
        import jax.numpy as jnp
        from jax.test_util import check_grads
        return lambda x: check_grads(jnp.tanh, (jnp.asarray(x),), order=2,
                                     modes=["fwd", "rev"])
    raise ValueError(f"unknown checker {name!r}")


def measure(name: str, size: int, traced: bool) -> dict[str, float]:
    """One checker at one size, in this process (see :func:`main`'s subprocesses)."""
    import gc

    import numpy as np
    run = _checker(name)
    rng = np.random.default_rng(0)
    run(rng.uniform(-2, 2, 10))  # imports and first-call caches, unmeasured
    x = rng.uniform(-2, 2, size)
    gc.collect()
    if traced:
        import tracemalloc
        tracemalloc.start()
    before = _status("VmRSS")
    reset = _reset_peak()  # without it (not Linux 4.0+) the resident peak is not the check's
    collecting = gc.isenabled()
    gc.disable()  # "left" is what stays without a collection, as in a loop of checks
    try:
        result = run(x)
        out = {"peak": (_status("VmHWM") - before) / MB if reset else float("nan"),
               "left": (_status("VmRSS") - before) / MB}
        if traced:
            now, peak = tracemalloc.get_traced_memory()
            out.update(traced_peak=peak / MB, traced_left=now / MB)
        del result
    finally:
        if collecting:
            gc.enable()
        if traced:
            tracemalloc.stop()
    return out


def _subprocess(name: str, size: int, traced: bool) -> dict[str, float] | str:
    env = {**os.environ, "OPENBLAS_NUM_THREADS": os.environ.get("OPENBLAS_NUM_THREADS", "1")}
    cmd = [sys.executable, __file__, "--one", name, str(size)] + (["--traced"] if traced else [])
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    if done.returncode:
        last = (done.stderr.strip().splitlines() or ["failed"])[-1]
        return "not installed" if "ModuleNotFoundError" in last else last[:60]
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--checkers", default=",".join(CHECKERS))
    parser.add_argument("--one", nargs=2, help=argparse.SUPPRESS)
    parser.add_argument("--traced", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(measure(args.one[0], int(args.one[1]), args.traced)))
        return
    sizes = [int(float(s)) for s in args.sizes.split(",")]
    names = args.checkers.split(",")
    print("check memory: tanh at one float64 input, each checker in a fresh interpreter; "
          "peak = resident memory above the process's before the check, left = still "
          "resident after it (result kept, no garbage collection); x input = / input size")
    header = f"  {'checker':<10} {'elements':>9} {'input MB':>9} {'peak MB':>9} " \
             f"{'x input':>8} {'left MB':>9} {'x input':>8}"
    print(header)
    print("  " + "-" * (len(header) - 2))
    for size in sizes:
        mb = size * 8 / MB
        for name in names:
            got = _subprocess(name, size, traced=False)
            if isinstance(got, str):
                print(f"  {name:<10} {size:>9.0e} {mb:>9.1f} {got}")
                continue
            print(f"  {name:<10} {size:>9.0e} {mb:>9.1f} {got['peak']:>9.1f} "
                  f"{got['peak'] / mb:>8.1f} {got['left']:>9.1f} {got['left'] / mb:>8.1f}")
    if "gradcheck" in names:
        print("\ngradcheck under tracemalloc (numpy's allocations, without the allocator's "
              "caching): peak during the check, and still allocated after it")
        print(f"  {'elements':>9} {'peak MB':>9} {'x input':>8} {'left MB':>9}")
        for size in sizes:
            got = _subprocess("gradcheck", size, traced=True)
            if isinstance(got, str):
                print(f"  {size:>9.0e} {got}")
                continue
            mb = size * 8 / MB
            print(f"  {size:>9.0e} {got['traced_peak']:>9.1f} {got['traced_peak'] / mb:>8.1f} "
                  f"{got['traced_left']:>9.1f}")


if __name__ == "__main__":
    main()
