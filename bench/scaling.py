"""How sweeps scale: local worker processes against a Dask cluster, 1 against 2 workers.

Run: ``python bench/scaling.py`` (``--ops N``, ``--seeds N``, ``--repeat N``).  Sweeps the
same units -- N cheap elementwise ops of the registry at each seed, ``--examples`` per dtype
(default 3), every path against the numeric derivative -- four ways:

* ``local 1`` / ``local 2``: ``run_sweep(jobs=1 or 2, isolate=True)``, the CLI's default
  executor (worker processes of this machine, started fresh);
* ``dask 1`` / ``dask 2``: a ``distributed.LocalCluster`` of 1 or 2 worker processes (one
  thread each), started before the clock runs; each sweep connects a client, uploads nothing,
  and runs every unit in the worker's contained process.

For each: wall time of the sweep (the best of ``--repeat``), units per second, the
overhead per unit of the cluster against local processes with as many workers
((t_dask - t_local) / units), and the CPU time per unit of every process involved (start-up
and shut-down included: the figure a loaded machine changes least).  Every run's JSON is
compared with the first: they must be byte-identical.  The machine this runs on may be
shared: run it on an idle one for figures to quote.
"""

from __future__ import annotations

import argparse
import os
import resource
import time
from typing import Any

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from gradcheck import default_registry  # noqa: E402
from gradcheck.checker import run_sweep  # noqa: E402

OPTIONS: dict[str, Any] = {"references": ["numeric"], "dtypes": ["float64", "float32"]}


def cheap_ops(n: int) -> list[str]:
    """The first ``n`` elementwise ops, by name (each check takes a fraction of a second)."""
    ops = sorted(op.name for op in default_registry if op.family == "elementwise")
    return ops[:n]


def cpu() -> float:
    """CPU seconds of this process and of its ended children (worker processes, and the
    cluster's, which count once they have ended)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def timed(repeat: int, **kwargs: Any) -> tuple[float, str]:
    best, text = float("inf"), ""
    for _ in range(repeat):
        start = time.perf_counter()
        results = run_sweep(**kwargs)
        best = min(best, time.perf_counter() - start)
        text = results.to_json()
    return best, text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", type=int, default=20)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--examples", type=int, default=3, help="examples per dtype")
    args = parser.parse_args()
    ops = cheap_ops(args.ops)
    seeds = list(range(args.seeds))
    units = len(ops) * len(seeds)
    sweep = {"ops": ops, "seeds": seeds, "examples": args.examples, **OPTIONS}
    print(f"{len(ops)} ops x {len(seeds)} seeds = {units} units; cores: {os.cpu_count()}; "
          f"best of {args.repeat}")
    rows: list[tuple[str, float]] = []
    spent: dict[str, float] = {}  # CPU seconds per unit, start-up and shut-down included
    texts: list[str] = []
    for jobs in (1, 2):
        before = cpu()
        seconds, text = timed(args.repeat, jobs=jobs, isolate=True, **sweep)
        spent[f"local {jobs}"] = (cpu() - before) / (units * args.repeat)
        rows.append((f"local {jobs}", seconds))
        texts.append(text)
    try:
        import distributed
    except ImportError:
        print("dask: unavailable: pip install gradcheck[distributed]")
        distributed = None
    if distributed is not None:
        for workers in (1, 2):
            start, before = time.perf_counter(), cpu()
            with distributed.LocalCluster(n_workers=workers, threads_per_worker=1,
                                          processes=True, dashboard_address=":0") as cluster:
                started = time.perf_counter() - start
                seconds, text = timed(args.repeat, scheduler=cluster.scheduler_address,
                                      **sweep)
            spent[f"dask {workers}"] = (cpu() - before) / (units * args.repeat)
            rows.append((f"dask {workers}", seconds))
            texts.append(text)
            print(f"(LocalCluster of {workers} started in {started:.1f} s, not counted)")
    same = all(t == texts[0] for t in texts)
    local = dict(rows)
    print(f"{'executor':10} {'seconds':>8} {'units/s':>8} {'vs 1 worker':>11} "
          f"{'overhead/unit':>14} {'CPU ms/unit':>12}")
    for name, seconds in rows:
        kind, workers = name.split()
        speedup = local[f"{kind} 1"] / seconds
        overhead = ""
        if kind == "dask":
            overhead = f"{(seconds - local[f'local {workers}']) / units * 1000:+.0f} ms"
        print(f"{name:10} {seconds:8.2f} {units / seconds:8.1f} {speedup:10.2f}x "
              f"{overhead:>14} {spent[name] * 1000:12.0f}")
    print(f"JSON byte-identical across all {len(texts)} runs: {same}")
    if not same:
        raise SystemExit("the executors disagree: a bug")


if __name__ == "__main__":
    main()
