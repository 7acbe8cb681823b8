"""One BLAS thread while a check runs, unless the user chose a count.

A check evaluates its function hundreds of times on small arrays (drawn axes have at most 8
entries).  On such arrays a multithreaded BLAS only wakes its threads: on this project's
2-core machine, with other processes running, the linalg ops' checks took 5-9 times as long
with OpenBLAS's default threads as with one (``bench/blas_threads.py``).  The sweep's worker
processes get one thread from their environment (:data:`ONE_THREAD`); a check run in the
caller's own process (``check()`` in a session or a test, ``gradcheck run --jobs 1``) gets it
here, through ``threadpoolctl``, and the count is restored when the check ends.

Nothing is changed when the user set one of :data:`ONE_THREAD`'s variables (their choice),
when a given input is large (:data:`LARGE`: there threads pay), or when ``threadpoolctl`` is
not installed.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

__all__ = ["ONE_THREAD", "LARGE", "one_blas_thread", "largest_input"]

#: The variables BLAS and OpenMP libraries read when they load, each set to one thread: what
#: worker processes run with (a multithreaded BLAS in each would oversubscribe the cores).
ONE_THREAD = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}

#: A given input with this many elements or more keeps the BLAS threads (a 256 x 256 matrix).
LARGE = 1 << 16


def largest_input(inputs: Any) -> int:
    """The number of elements of the largest array among ``inputs`` (0 for none or drawn)."""
    if inputs is None:
        return 0
    items = inputs.values() if isinstance(inputs, dict) else \
        inputs if isinstance(inputs, (list, tuple)) else [inputs]
    sizes = [0]
    for a in items:
        try:  # numpy, torch and JAX shapes are tuples; TensorFlow's iterates as one
            sizes.append(int(np.prod(tuple(a.shape), dtype=np.int64)))
        except (AttributeError, TypeError, ValueError):
            continue  # a number, a nested list, a domain name: small or drawn
    return max(sizes)


@functools.lru_cache(maxsize=1)
def _controller(modules: int) -> Any:
    """threadpoolctl's view of the loaded libraries while ``modules`` modules are imported.
    Finding the libraries reads the process's loaded objects (about 1 ms, 3-5% of a small
    check), so it is done again only when modules were imported since: a framework brings
    its BLAS with its modules."""
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


@contextmanager
def one_blas_thread(largest: int = 0) -> Iterator[None]:
    """BLAS libraries limited to one thread inside the block (see the module's docstring);
    ``largest``: the elements of the largest given input."""
    if largest >= LARGE or any(os.environ.get(name) for name in ONE_THREAD):
        yield
        return
    try:
        limits = _controller(len(sys.modules)).limit(limits=1, user_api="blas")
    except Exception:  # noqa: BLE001 - a speed-up: without it the check runs as it is
        yield
        return
    try:
        yield
    finally:
        limits.restore_original_limits()
