"""prod and cumsum declare complex values, and their rules run through linear_recurrence:
every second-order path raised "op 'linear_recurrence' cannot be differentiated at a complex
input" once real-only ops refused complex inputs.  linear_recurrence and cumprod are right
on complex values (checked here on every path, and against jax.jvp by an exploration)."""

from __future__ import annotations

import pytest

import gradcheck as gc
import gradcheck.numpy as gnp

FUNCTIONS = {
    "prod": lambda z: gnp.prod(z, axis=-1),
    "cumsum times z": lambda z: gnp.cumsum(z, axis=-1) * z,
    "cumprod": lambda z: gnp.cumprod(z, axis=-1),
    "cumprod over the first axis": lambda z: gnp.cumprod(z, axis=0),
}


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_complex_scans_pass_every_path(name: str, seed: int) -> None:
    report = gc.check(FUNCTIONS[name], inputs=["complex"], seed=seed, examples=3)
    assert report.passed, [f.message for f in report.findings]

