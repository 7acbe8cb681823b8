"""What a check costs: time and function evaluations, against other frameworks' checkers.

Run: ``python bench/check_cost.py`` (``--ops PATTERN``, ``--examples N``, ``--sizes``,
``--repeat N``, ``--skip-registry``, ``--skip-others``, ``--per-op``).  One run prints, side
by side:

* **size**: fast mode on ``tanh`` as the input grows from 10 to 10^6 elements, as a multiple
  of one forward evaluation (the issue's target: at most 300x from 10^4 elements on), with
  the evaluations it spent (forward and path calls, the numeric reference's probes), and,
  apart from the check, the time and evaluations reading the report's convergence data takes;
* **registry**: every registered op checked in fast mode with its default examples at its
  drawn (small) shapes, in milliseconds per op per dtype: median and max (target: 15 ms);
  ``--per-op`` lists each op's fast and full time and evaluations;
* **tableau**: the numeric reference's tableau arithmetic alone at 10^4 to 10^6 elements,
  worked on whole arrays and in cache-sized blocks, against numpy's floor;
* **full mode**: ``tanh`` and ``matmul`` at growing sizes, time per Jacobian element: full
  mode builds the whole Jacobian, so this must stay flat or fall;
* **vs others**: the same functions (a few elementwise ops and matmul, at one input) through
  gradcheck fast mode, autograd's ``check_grads`` (order 2), and, where installed,
  ``torch.autograd.gradcheck`` + ``gradgradcheck`` and ``jax.test_util.check_grads``;
  each checker first checks ``x*x`` once, untimed (its imports and first-call caches: torch's
  first check took 4.6 s, JAX's first checks 0.5-1.2 s each while it compiled kernels).

Times are the minimum over ``--repeat`` runs (the machine is shared: relative figures).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import gradcheck  # noqa: E402
import gradcheck.numpy as gnp  # noqa: E402
from gradcheck.checker import check  # noqa: E402

Row = list[str]


def evaluations(report: Any) -> int:
    return int(sum(report.stats.get("evaluations", {}).values()))


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def best(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    """The fastest of ``repeat`` runs (and its result)."""
    runs = [timed(fn) for _ in range(max(1, repeat))]
    return min(runs, key=lambda r: r[0])


def registry_rows(patterns: list[str] | None, examples: int | None, repeat: int,
                  per_op: bool) -> tuple[list[Row], list[Row]]:
    """Fast mode over the registry, per op per dtype: a summary row (median, max, the
    slowest op) and, with ``per_op``, one row per op (fast and full)."""
    ops = gradcheck.default_registry.select(patterns) if patterns else \
        list(gradcheck.default_registry)
    rows, per_dtype = [], []
    for op in ops:
        seconds, report = best(lambda op=op: check(op, examples=examples), repeat)
        per_dtype.append((seconds / max(1, len(report.dtypes)), op.name))
        if per_op:
            full, full_report = timed(lambda op=op: check(op, mode="full", examples=examples))
            rows.append([op.name, f"{seconds * 1e3:.0f}" + ("" if report.passed else " (fails)"),
                         str(evaluations(report)), f"{full * 1e3:.0f}",
                         str(evaluations(full_report))])
    if not per_dtype:
        return [], rows
    ms = sorted(t * 1e3 for t, _ in per_dtype)
    worst = max(per_dtype)
    summary = [[str(len(ms)), f"{statistics.median(ms):.1f}", f"{max(ms):.1f}", worst[1],
                f"{sum(1 for t in ms if t <= 15)}/{len(ms)}"]]
    return summary, rows


# -- the same functions in other checkers ---------------------------------------------------
FUNCTIONS = {
    "sin": (lambda m, x: m.sin(x), (4, 5)),
    "exp": (lambda m, x: m.exp(x), (4, 5)),
    "tanh": (lambda m, x: m.tanh(x), (4, 5)),
    "log": (lambda m, x: m.log(x), (4, 5)),
    "matmul": (lambda m, x, y: m.matmul(x, y), ((3, 4), (4, 2))),
}


def inputs_for(name: str) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(0)
    _, shapes = FUNCTIONS[name]
    shapes = shapes if isinstance(shapes[0], tuple) else (shapes,)
    xs = tuple(rng.standard_normal(s) for s in shapes)
    return tuple(np.abs(x) + 0.5 for x in xs) if name == "log" else xs


class Counted:
    """Counts calls of a function."""

    def __init__(self, fn: Callable[..., Any]) -> None:
        self.fn, self.calls = fn, 0

    def __call__(self, *args: Any) -> Any:
        self.calls += 1
        return self.fn(*args)


#: What each checker checks once, untimed, before the table: imports, first-call caches
#: and kernels of every framework are then out of the figures.
WARM = (lambda m, x: x * x, np.linspace(0.5, 1.5, 6))
Run = Callable[[], int]


def ours(fn: Callable[..., Any], xs: tuple[np.ndarray, ...]) -> Run | None:
    def run() -> int:
        return evaluations(check(lambda *a: fn(gnp, *a), inputs=xs, examples=4))
    return run


def autograd_check(fn: Callable[..., Any], xs: tuple[np.ndarray, ...]) -> Run | None:
    try:
        import autograd.numpy as anp
        from autograd.test_util import check_grads
    except ImportError:
        return None

    def run() -> int:
        f = Counted(lambda *a: fn(anp, *a))
        check_grads(f, modes=["fwd", "rev"], order=2)(*xs)
        return f.calls
    return run


def torch_check(fn: Callable[..., Any], xs: tuple[np.ndarray, ...]) -> Run | None:
    try:
        import torch
    except ImportError:
        return None

    def run() -> int:
        f = Counted(lambda *a: fn(torch, *a))
        ts = tuple(torch.tensor(x, dtype=torch.float64, requires_grad=True) for x in xs)
        torch.autograd.gradcheck(f, ts)
        torch.autograd.gradgradcheck(f, ts)
        return f.calls
    return run


def jax_check(fn: Callable[..., Any], xs: tuple[np.ndarray, ...]) -> Run | None:
    try:
        import jax
        import jax.numpy as jnp
        from jax.test_util import check_grads
    except ImportError:
        return None
    jax.config.update("jax_enable_x64", True)

    def run() -> int:
        f = Counted(lambda *a: fn(jnp, *a))
        check_grads(f, tuple(jnp.asarray(x) for x in xs), order=2, modes=["fwd", "rev"])
        return f.calls
    return run


def comparison_rows(repeat: int) -> list[Row]:
    """Per function, each checker's best time of ``repeat`` and its evaluations of the
    function, after one untimed check of :data:`WARM` by that checker."""
    rows = {name: [name] for name in FUNCTIONS}
    for make in (ours, autograd_check, torch_check, jax_check):
        warm = make(WARM[0], (WARM[1],))
        if warm is None:
            for row in rows.values():
                row.append("not installed")
            continue
        warm()
        for name, (fn, _) in FUNCTIONS.items():
            runner = make(fn, inputs_for(name))
            assert runner is not None
            seconds, calls = best(runner, repeat)
            rows[name].append(f"{seconds:.3f} s / {calls}")
    return list(rows.values())


# -- fast mode against the input size --------------------------------------------------------
def forward_time(n: int) -> float:
    """One forward of tanh at n elements: the faster of numpy's and the engine's."""
    x = np.random.default_rng(1).standard_normal(n)
    numpy = min(timed(lambda: np.tanh(x))[0] for _ in range(20))
    engine = min(timed(lambda: gnp.tanh(x))[0] for _ in range(20))
    return max(numpy, engine)


def size_rows(sizes: list[int], repeat: int) -> list[Row]:
    rows = []
    for n in sizes:
        x = np.random.default_rng(1).standard_normal(n)
        runs = repeat if n <= 100_000 else min(repeat, 2)  # the first run at 1e6 warms memory
        seconds, report = best(lambda x=x: check(lambda a: gnp.tanh(a), inputs=(x,),
                                                 examples=2), runs)
        evals = evaluations(report)
        plot, _ = timed(lambda report=report: report.convergence)  # computed when first read
        forward = forward_time(n)
        rows.append([f"{n:.0e}", f"{seconds:.3f}", f"{forward * 1e3:.3f}",
                     f"{seconds / forward:.0f}", str(evals), f"{plot:.3f}",
                     str(evaluations(report) - evals), "pass" if report.passed else "FAIL"])
    return rows


# -- full mode against the Jacobian's size ---------------------------------------------------
FULL = {
    "tanh": (lambda n: (np.random.default_rng(2).standard_normal(n),),
             lambda a: gnp.tanh(a), lambda n: n * n),
    "matmul": (lambda n: (np.random.default_rng(2).standard_normal((n, n)),
                          np.random.default_rng(3).standard_normal((n, n))),
               lambda a, b: gnp.matmul(a, b), lambda n: n ** 2 * 2 * n ** 2),
}


def full_rows(repeat: int) -> list[Row]:
    """Full mode at growing sizes: microseconds per Jacobian element (all inputs)."""
    rows = []
    for name, sizes in (("tanh", (4, 16, 64)), ("matmul", (2, 4, 6))):
        make, fn, jac = FULL[name]
        for n in sizes:
            xs = make(n)
            seconds, report = best(lambda xs=xs, fn=fn: check(fn, inputs=xs, mode="full",
                                                              examples=1), repeat)
            rows.append([name, "x".join(str(d) for d in xs[0].shape), str(jac(n)),
                         f"{seconds:.3f}", f"{seconds / jac(n) * 1e6:.1f}",
                         str(evaluations(report)), "pass" if report.passed else "FAIL"])
    return rows


# -- the numeric reference's tableau arithmetic ----------------------------------------------
def tableau_rows(sizes: list[int], repeat: int) -> list[Row]:
    """A 6-row one-sided tableau's arithmetic (:func:`gradcheck.checker.tableau.extend`, no
    function calls) on float64 rows, worked on whole or in blocks, against numpy's floor: one
    ``np.add`` of two such arrays, as many times as the tableau makes passes (about twenty
    per cell, 15 cells)."""
    from gradcheck.checker import tableau

    def run(n: int, block: int) -> float:
        saved, tableau.BLOCK = tableau.BLOCK, block
        try:
            firsts = [(np.full(n, 1.0 + 0.01 * i), np.full(n, 1e-12)) for i in range(6)]
            best, prev = tableau.Best(firsts[0][0]), []
            t0 = time.perf_counter()
            for first in firsts:
                prev = tableau.extend(first, prev, 1.4, best)
            return time.perf_counter() - t0
        finally:
            tableau.BLOCK = saved

    rows = []
    for n in sizes:
        a, b = np.ones(n), np.ones(n)
        floor = min(timed(lambda a=a, b=b: np.add(a, b))[0] for _ in range(max(3, repeat)))
        whole = min(run(n, 2 ** 62) for _ in range(max(3, repeat)))
        blocked = min(run(n, tableau.BLOCK) for _ in range(max(3, repeat)))
        rows.append([f"{n:.0e}", f"{whole * 1e3:.1f}", f"{blocked * 1e3:.1f}",
                     f"{blocked / whole:.2f}", f"{whole / (300 * floor):.2f}",
                     f"{blocked / (300 * floor):.2f}"])
    return rows


def table(title: str, header: Row, rows: list[Row]) -> None:
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    print(f"\n{title}")
    for r in [header, ["-" * w for w in widths], *rows]:
        print("  " + "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", nargs="*", help="op names or patterns (default: the registry)")
    parser.add_argument("--examples", type=int, default=None, help="examples per dtype")
    parser.add_argument("--sizes", default="10,10000,100000,1000000")
    parser.add_argument("--repeat", type=int, default=3, help="runs per figure (the fastest)")
    parser.add_argument("--skip-registry", action="store_true")
    parser.add_argument("--skip-others", action="store_true")
    parser.add_argument("--per-op", action="store_true", help="a row per registry op")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    check(lambda a: gnp.tanh(a), inputs=(np.ones(3),), examples=1)  # imports, caches
    print("gradcheck check cost: seconds, and function evaluations (forward + path calls, "
          "numeric probes included; a report's convergence plot data is computed when it is "
          "first read, and shown apart)")
    table("fast mode on tanh as the input grows (2 examples; ratio = check time / one "
          "forward; target <= 300 from 1e4; plot = reading the report's convergence data)",
          ["elements", "check s", "forward ms", "ratio", "evals", "plot s", "plot evals",
           "verdict"],
          size_rows([int(float(s)) for s in args.sizes.split(",")], args.repeat))
    table(f"the numeric reference's tableau arithmetic, 6 rows (blocks of "
          f"{gradcheck.checker.tableau.BLOCK} elements; x floor = against 300 numpy adds of "
          "two arrays of that size)",
          ["elements", "whole ms", "blocks ms", "blocks / whole", "whole x floor",
           "blocks x floor"],
          tableau_rows([n for n in (10_000, 100_000, 1_000_000)
                        if n <= max(int(float(s)) for s in args.sizes.split(","))],
                       args.repeat))
    if not args.skip_registry:
        summary, rows = registry_rows(args.ops, args.examples, args.repeat, args.per_op)
        table("registry, fast mode, default examples: ms per op per dtype (target <= 15)",
              ["ops", "median ms", "max ms", "slowest op", "ops <= 15 ms"], summary)
        if rows:
            table("registry per op (ms for all dtypes)",
                  ["op", "fast ms", "fast evals", "full ms", "full evals"], rows)
    table("full mode against the Jacobian's size (1 example; us per Jacobian element must "
          "stay flat or fall)",
          ["function", "input", "jacobian elements", "check s", "us / element", "evals",
           "verdict"], full_rows(args.repeat))
    if not args.skip_others:
        table(f"vs others: seconds (best of {args.repeat}, after one untimed check of x*x by "
              "each checker) / evaluations of the function (order 2 where offered)",
              ["function", "gradcheck fast", "autograd check_grads",
               "torch gradcheck+gradgrad", "jax check_grads"], comparison_rows(args.repeat))


if __name__ == "__main__":
    main()
