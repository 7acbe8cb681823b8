"""What the README generators of the audits share (``readme_tf.py``, ``readme_torch.py``):
the worst error ratio of a row's findings, findings per kind, running a suite, and
rewriting one marked block of README.md."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"

Finding = dict[str, Any]

#: Kinds whose error against tolerance is worth showing (a dependence leak's is not).
RATIO_KINDS = {"mismatch", "silently_zero", "value_leak"}


def worst(findings: list[Finding]) -> str:
    """`` (ratio R)``: the largest error-to-tolerance ratio among ``findings``, or ''."""
    ratios = []
    for f in findings:
        if f["kind"] not in RATIO_KINDS:
            continue
        err, tol = f.get("max_abs_err"), f.get("tolerance")
        if isinstance(err, (int, float)) and isinstance(tol, (int, float)) and tol > 0:
            ratios.append(err / tol)
        elif err in ("inf", float("inf")):  # JSON keeps a non-finite error as text
            ratios.append(float("inf"))
    if not ratios:
        return ""
    top = max(ratios)
    return " (ratio inf)" if top == float("inf") else f" (ratio {top:.3g})"


def counts(reports: list[dict[str, Any]]) -> dict[str, int]:
    """Findings per kind over the whole audit."""
    out: dict[str, int] = {}
    for r in reports:
        for f in r["findings"]:
            out[f["kind"]] = out.get(f["kind"], 0) + 1
    return dict(sorted(out.items()))


def run_suite(suite: str, path: Path) -> tuple[float, float]:
    """Run ``suite`` with ``--jobs 2`` into ``path``: its wall time and the machine's load
    average (1 min) over it."""
    start = time.perf_counter()
    before = os.getloadavg()[0]
    subprocess.run([str(Path(sys.executable).parent / "gradcheck"), "run", "--suite", suite,
                    "--jobs", "2", "--json", str(path), "--no-html"],
                   cwd=ROOT, check=False, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start, (before + os.getloadavg()[0]) / 2


def write_block(begin: str, end: str, body: str) -> None:
    """Replace what stands between the markers ``begin`` and ``end`` in README.md."""
    text = README.read_text()
    if begin not in text or end not in text:
        raise SystemExit(f"{README}: the markers {begin} and {end} are missing")
    head, rest = text.split(begin, 1)
    _, tail = rest.split(end, 1)
    README.write_text(f"{head}{begin}\n{body}\n{end}{tail}")
