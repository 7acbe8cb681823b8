"""One torch autograd.Function checked by torch's own gradcheck + gradgradcheck, and by
gradcheck (at the same example, and on drawn examples): wall time of each, after a warm-up.

    .venv/bin/python bench/torch_vs_gradcheck.py [--repeat 5]

What each does: ``torch.autograd.gradcheck(..., check_forward_ad=True)`` +
``gradgradcheck`` compare one input's full Jacobian (backward and forward mode) and one
second-order product with finite differences at fixed tolerances.  ``gradcheck.check`` runs
the backward, forward mode, ``torch.autograd.functional.jvp``'s double-VJP at five dummies and
the three HVP nestings, each against the numeric reference (Ridders' extrapolation with an
error estimate) and against each other, shrinks any finding and records convergence data.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable
from typing import Any

import torch

import gradcheck


class Cube(torch.autograd.Function):
    """``x**3`` with its backward and forward-mode rules."""

    @staticmethod
    def forward(x: Any) -> Any:
        return x ** 3

    @staticmethod
    def setup_context(ctx: Any, inputs: Any, output: Any) -> None:
        (x,) = inputs
        ctx.save_for_backward(x)
        ctx.save_for_forward(x)

    @staticmethod
    def backward(ctx: Any, grad: Any) -> Any:
        (x,) = ctx.saved_tensors
        return 3 * x ** 2 * grad

    @staticmethod
    def jvp(ctx: Any, tangent: Any) -> Any:
        (x,) = ctx.saved_tensors
        return 3 * x ** 2 * tangent


def _seconds(fn: Callable[[], Any], repeat: int) -> float:
    fn()  # warm-up: imports, dispatch caches
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    x = torch.randn(3, 4, dtype=torch.float64, generator=torch.Generator().manual_seed(0),
                    requires_grad=True)

    def torch_checks() -> None:
        assert torch.autograd.gradcheck(Cube.apply, (x,), check_forward_ad=True)
        assert torch.autograd.gradgradcheck(Cube.apply, (x,))

    def at_example() -> None:
        assert gradcheck.check(Cube.apply, inputs=[x]).passed

    def drawn() -> None:
        assert gradcheck.check(Cube.apply, inputs=["real"]).passed

    rows = {
        "torch gradcheck + gradgradcheck (one 3x4 input)": _seconds(torch_checks, args.repeat),
        "gradcheck.check at that input (all paths)": _seconds(at_example, args.repeat),
        "gradcheck.check on drawn inputs (default examples)": _seconds(drawn, args.repeat),
    }
    print(json.dumps({"torch": torch.__version__, "repeat": args.repeat,
                      "median_seconds": {k: round(v, 4) for k, v in rows.items()}}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
