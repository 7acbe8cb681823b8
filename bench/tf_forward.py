"""TensorFlow's forward mode, as the TensorFlow reference runs it: each op's JVP looked up
TensorFlow's way, and by gradcheck's keyed dispatch (``gradcheck/oracles/tf_forward.py``).

Run: ``python bench/tf_forward.py [--repeat N] [--calls N]``.  The function is the engine
bench's mixed chain (sin, *0.9, tanh, +x, y*y, neg, exp, cos, +0.5, *x: 10 ops) on a 10- and
a 1 000-element float64 array.  Each figure is the fastest of ``--repeat`` runs of
``--calls`` JVPs at one shape, in ms per JVP of CPU, after a first call has traced every op:

* **TensorFlow's lookup**: ``ForwardAccumulator`` with TensorFlow's dispatch, which builds
  and hashes the trace type of every op's arguments to find the op's traced JVP;
* **gradcheck's dispatch**: the same inside ``exact_shapes()``, keyed by op, attributes,
  dtypes and shapes, calling the same trace (the bits are compared);
* **torch** ``torch.func.jvp`` and **JAX** ``jax.jvp`` (jitted and not) of the same chain,
  when installed, for scale.

A framework that is not installed is said, never a crash.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable
from typing import Any

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")


def _best(fn: Callable[[], object], calls: int, repeat: int) -> float:
    """Fastest of ``repeat`` runs of ``calls`` calls, in ms of CPU per call."""
    fn()
    best = float("inf")
    for _ in range(repeat):
        t = time.process_time()
        for _ in range(calls):
            fn()
        best = min(best, (time.process_time() - t) / calls)
    return best * 1e3


def _chain(m: Any, x: Any) -> Any:
    """sin, *0.9, tanh, +x, y*y, neg, exp, cos, +0.5, *x in the framework module ``m``."""
    y = m.tanh(m.sin(x) * 0.9) + x
    return (m.cos(m.exp(-(y * y))) + 0.5) * x


def _tensorflow(x: np.ndarray, u: np.ndarray, calls: int, repeat: int) -> list[str]:
    try:
        import tensorflow as tf

        from gradcheck.oracles.tf_forward import exact_shapes
    except ImportError as e:
        return [f"TensorFlow: unavailable ({e})"]
    tx, tu = tf.constant(x), tf.constant(u)

    def jvp() -> np.ndarray:
        with tf.autodiff.ForwardAccumulator(tx, tu) as acc:
            y = _chain(tf.math, tx)
        return acc.jvp(y).numpy()

    def keyed() -> np.ndarray:
        with exact_shapes():
            return jvp()

    theirs, ours = _best(jvp, calls, repeat), _best(keyed, calls, repeat)
    same = np.array_equal(jvp(), keyed())
    return [f"TensorFlow's lookup      {theirs:8.3f} ms",
            f"gradcheck's dispatch     {ours:8.3f} ms  ({ours / theirs:.2f}x; same bits: {same})"]


def _torch(x: np.ndarray, u: np.ndarray, calls: int, repeat: int) -> list[str]:
    try:
        import torch
    except ImportError as e:
        return [f"torch: unavailable ({e})"]
    tx, tu = torch.from_numpy(x), torch.from_numpy(u)
    ms = _best(lambda: torch.func.jvp(lambda a: _chain(torch, a), (tx,), (tu,)), calls, repeat)
    return [f"torch.func.jvp           {ms:8.3f} ms"]


def _jax(x: np.ndarray, u: np.ndarray, calls: int, repeat: int) -> list[str]:
    try:
        import jax
        import jax.numpy as jnp
    except ImportError as e:
        return [f"JAX: unavailable ({e})"]
    jax.config.update("jax_enable_x64", True)
    jx, ju = jnp.asarray(x), jnp.asarray(u)

    def f(a: Any) -> Any:
        return _chain(jnp, a)

    jitted = jax.jit(lambda a, t: jax.jvp(f, (a,), (t,)))
    eager = _best(lambda: jax.block_until_ready(jax.jvp(f, (jx,), (ju,))), calls, repeat)
    fast = _best(lambda: jax.block_until_ready(jitted(jx, ju)), calls, repeat)
    return [f"jax.jvp                  {eager:8.3f} ms", f"jax.jit(jax.jvp)         {fast:8.3f} ms"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--calls", type=int, default=100)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    for n in (10, 1000):
        x, u = rng.standard_normal(n), rng.standard_normal(n)
        print(f"JVP of the 10-op mixed chain, n={n}, CPU per JVP (best of {args.repeat} x "
              f"{args.calls}):")
        for line in (*_tensorflow(x, u, args.calls, args.repeat),
                     *_torch(x, u, args.calls, args.repeat),
                     *_jax(x, u, args.calls, args.repeat)):
            print("  " + line)


if __name__ == "__main__":
    main()
