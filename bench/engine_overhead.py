"""Engine overhead: chains of K ops, timed against numpy, autograd, TensorFlow and torch.

Run: ``python bench/engine_overhead.py`` (``--k``, ``--sizes``, ``--repeat``, ``--chains``).
Two chains, every framework running the same Python function:

``unary``  sin, exp, tanh, cos repeated (the README's chain);
``mixed``  sin, *0.9, tanh, +x, y*y, neg, exp, cos, +0.5, *x repeated: the binary ops take
           a constant or the watched input ``x``, so the tape records two-input nodes.

For each it prints microseconds per op, the ratio to the plain numpy forward (the floor)
and the ratio to autograd in the same mode (reverse to ``autograd grad``, forward to
``autograd make_jvp``), all in one run: our reverse mode (tape + gradient), our native JVP,
our transpose (double-VJP) JVP, and where installed autograd's grad and make_jvp,
TensorFlow eager GradientTape and ForwardAccumulator, and torch's backward.

The cases run in interleaved rounds (each round times every case once) and the median of
the rounds is reported, so a burst of load on a shared machine hits every case alike.  The
default clock is the process's CPU time (``--clock cpu``), which does not count the time
other processes hold the CPU; ``--clock wall`` measures elapsed time.  TensorFlow and torch
may use more than one thread, which CPU time adds up.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")


def unary_chain(ns: Any, x: Any, k: int) -> Any:
    """sin, exp, tanh, cos repeated: one op per step, values stay bounded."""
    fns = [ns.sin, ns.exp, ns.tanh, ns.cos]
    y = x
    for i in range(k):
        y = fns[i % 4](y)
    return y


def mixed_chain(ns: Any, x: Any, k: int) -> Any:
    """sin, *0.9, tanh, +x, y*y, neg, exp, cos, +0.5, *x repeated (K ops, K a multiple of 10)."""
    y = x
    for _ in range(k // 10):
        y = ns.sin(y)
        y = y * 0.9
        y = ns.tanh(y)
        y = y + x
        y = y * y
        y = -y
        y = ns.exp(y)
        y = ns.cos(y)
        y = y + 0.5
        y = y * x
    return y


CHAINS: dict[str, Callable[[Any, Any, int], Any]] = {"unary": unary_chain, "mixed": mixed_chain}


CLOCKS = {"cpu": time.process_time, "wall": time.perf_counter}


def time_rounds(cases: dict[str, Callable[[], object]], repeat: int,
                clock: Callable[[], float]) -> dict[str, float]:
    """Median seconds per case over ``repeat`` interleaved rounds (after one warm-up round)."""
    times: dict[str, list[float]] = {name: [] for name in cases}
    for round_ in range(repeat + 1):
        for name, fn in cases.items():
            t0 = clock()
            fn()
            if round_:
                times[name].append(clock() - t0)
    return {name: statistics.median(ts) for name, ts in times.items()}


Cases = dict[str, tuple[str, Callable[[], object]]]  # name -> (mode, run)


def engine_cases(chain: Callable[..., Any], x0: np.ndarray, k: int) -> Cases:
    import gradcheck as gc
    import gradcheck.numpy as gnp

    u = np.ones_like(x0)

    def reverse() -> object:
        x = gc.tensor(x0)
        with gc.GradientTape() as tape:
            tape.watch(x)
            y = chain(gnp, x, k)
        return tape.gradient(y, x)

    def forward(force: bool) -> Callable[[], object]:
        def run() -> object:
            x = gc.tensor(x0)
            with gc.ForwardAccumulator(x, u, force_transpose=force) as acc:
                y = chain(gnp, x, k)
            return acc.jvp(y)
        return run

    return {"gradcheck reverse": ("reverse", reverse),
            "gradcheck jvp (native)": ("forward", forward(False)),
            "gradcheck jvp (transpose)": ("forward", forward(True))}


def autograd_cases(chain: Callable[..., Any], x0: np.ndarray, k: int) -> Cases:
    try:
        import autograd
        import autograd.numpy as anp
    except ImportError:
        return {}
    u = np.ones_like(x0)
    g = autograd.grad(lambda x: anp.sum(chain(anp, x, k)))
    jvp = autograd.make_jvp(lambda x: chain(anp, x, k))
    return {"autograd grad": ("reverse", lambda: g(x0)),
            "autograd make_jvp": ("forward", lambda: jvp(x0)(u))}


def tensorflow_cases(chain: Callable[..., Any], x0: np.ndarray, k: int) -> Cases:
    try:
        import tensorflow as tf
    except ImportError:
        return {}
    tf.get_logger().setLevel("ERROR")

    class TfNs:  # the chain's functions under TensorFlow
        sin, tanh, exp, cos = tf.sin, tf.tanh, tf.exp, tf.cos

    x = tf.constant(x0)
    u = tf.ones_like(x)

    def reverse() -> object:
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = chain(TfNs, x, k)
        return tape.gradient(y, x)

    def forward() -> object:
        with tf.autodiff.ForwardAccumulator(x, u) as acc:
            y = chain(TfNs, x, k)
        return acc.jvp(y)

    return {"tensorflow GradientTape": ("reverse", reverse),
            "tensorflow ForwardAccumulator": ("forward", forward)}


def torch_cases(chain: Callable[..., Any], x0: np.ndarray, k: int) -> Cases:
    try:
        import torch
    except ImportError:
        return {}
    torch.set_num_threads(1)

    def reverse() -> object:
        x = torch.tensor(x0, requires_grad=True)
        y = chain(torch, x, k)
        y.backward(torch.ones_like(y))
        return x.grad

    return {f"torch backward ({torch.__version__})": ("reverse", reverse)}


def run_chain(name: str, n: int, k: int, repeat: int, clock: Callable[[], float],
              rng: np.random.Generator) -> None:
    """Time one chain at one size and print every figure."""
    chain = CHAINS[name]
    x0 = rng.uniform(-1, 1, n)
    cases = {"numpy forward (floor)": ("floor", lambda: chain(np, x0, k)),
             **engine_cases(chain, x0, k), **autograd_cases(chain, x0, k),
             **tensorflow_cases(chain, x0, k), **torch_cases(chain, x0, k)}
    times = time_rounds({case: fn for case, (_, fn) in cases.items()}, repeat, clock)
    floor = times["numpy forward (floor)"]
    baseline = {"reverse": times.get("autograd grad"), "forward": times.get("autograd make_jvp")}
    print(f"\n{name} chain, K={k} ops, float64, n={n}")
    print(f"{'':36s} {'us/op':>9s} {'x numpy':>9s} {'x autograd':>11s}")
    for case, (mode, _) in cases.items():
        t, base = times[case], baseline.get(mode)
        vs = f"{t / base:11.2f}" if base else f"{'':11s}"
        print(f"{case:36s} {t / k * 1e6:9.2f} {t / floor:9.2f} {vs}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--k", type=int, default=1000, help="ops in a chain (a multiple of 10)")
    parser.add_argument("--sizes", default="10,100000", help="array sizes, comma-separated")
    parser.add_argument("--chains", default="unary,mixed", help="chains, comma-separated")
    parser.add_argument("--repeat", type=int, default=7, help="timed rounds (median)")
    parser.add_argument("--clock", choices=sorted(CLOCKS), default="cpu",
                        help="cpu: this process's CPU time (default); wall: elapsed time")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    print(f"clock: {args.clock}; median of {args.repeat} interleaved rounds")
    for name in args.chains.split(","):
        for n in (int(s) for s in args.sizes.split(",")):
            run_chain(name, n, args.k, args.repeat, CLOCKS[args.clock], rng)


if __name__ == "__main__":
    main()
