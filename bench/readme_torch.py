"""The README's "What PyTorch 2.13 does", generated from the torch_audit suite's JSON.

    python bench/readme_torch.py --run              # run the suite (--jobs 2), then write
    python bench/readme_torch.py --json PATH        # from an earlier run's results.json
    python bench/readme_torch.py --json PATH --write   # replace the README section's body

The section's body sits between the markers ``<!-- torch-audit:begin -->`` and
``<!-- torch-audit:end -->``; ``--write`` replaces only that, so other README sections are
left alone.  Without ``--write`` the markdown goes to stdout.

Every number is counted from the findings in the JSON (nothing is typed in by hand): a row
of the audit lands in a category when one of its findings has that kind on that path.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench/, also when loaded by path
from audit_readme import ROOT, Finding, counts, run_suite, worst, write_block  # noqa: E402

BEGIN, END = "<!-- torch-audit:begin -->", "<!-- torch-audit:end -->"
WRAPPERS = "gradcheck.suites.torch_wrappers."


FIRST = {"vjp", "jvp"}
SECOND = {"double_vjp", "hvp_fwd_rev", "hvp_rev_rev", "hvp_rev_fwd"}


def _inconclusive(f: Finding) -> bool:
    """A comparison the numeric reference could not judge (never a pass, but no evidence
    that torch is wrong either)."""
    return f["kind"] == "mismatch" and bool((f.get("details") or {}).get("inconclusive"))


def _is(kind: str, paths: set[str], reference: str | None = None) -> Callable[[Finding], bool]:
    def test(f: Finding) -> bool:
        return f["kind"] == kind and f["path"] in paths and not _inconclusive(f) and (
            reference is None or f["reference"] == reference)
    return test


#: (title, what it means, which findings put a row there), in the README's order.
CATEGORIES: list[tuple[str, str, Callable[[Finding], bool]]] = [
    ("value leak", "torch.autograd.functional.jvp's double-VJP changes with the dummy "
     "cotangent (zeros, ones, random, random with exact zeros, ~1e3)",
     _is("value_leak", {"double_vjp"})),
    ("dependence leak", "the double-VJP reads the dummy although its value does not matter "
     "(a warning)", _is("dependence_leak", {"double_vjp"})),
    ("no double backward", "autograd.grad of the gradient raises: so "
     "torch.autograd.functional.jvp cannot run", _is("unsupported", {"double_vjp"})),
    ("silently zero", "a path identically zero where the numeric derivative is not",
     _is("silently_zero", FIRST | SECOND)),
    ("no forward AD", "torch.func.jvp raises (not implemented)", _is("unsupported", {"jvp"})),
    ("forward AD wrong", "torch.func.jvp disagrees with the numeric derivative",
     _is("mismatch", {"jvp"}, "numeric")),
    ("backward wrong", "autograd.grad disagrees with the numeric derivative",
     _is("mismatch", {"vjp"}, "numeric")),
    ("second order wrong", "an HVP nesting or the double-VJP disagrees with the numeric "
     "derivative", _is("mismatch", SECOND, "numeric")),
    ("reverse-over-forward wrong", "torch.func.vjp of torch.func.jvp disagrees with the "
     "numeric derivative", _is("mismatch", {"hvp_rev_fwd"}, "numeric")),
    ("forward over reverse missing", "torch.func.jvp of torch.func.vjp raises",
     _is("unsupported", {"hvp_fwd_rev"})),
    ("reverse over forward missing", "torch.func.vjp of torch.func.jvp raises",
     _is("unsupported", {"hvp_rev_fwd"})),
    ("cannot be judged", "the numeric reference's error estimate stayed of the order of the "
     "values compared, even from smaller steps, and no kink was found (never a pass)",
     _inconclusive),
    ("nondeterministic", "two identical calls gave different results",
     lambda f: f["kind"] == "nondeterministic"),
    ("paths inconsistent only", "two of torch's own paths (or an adjoint identity) disagree "
     "where no path disagrees with the numeric derivative",
     lambda f: False),  # filled in by _inconsistent
]


def _short(op: str) -> str:
    return op.replace(WRAPPERS, "wrappers.").replace("torch.nn.functional.", "F.")


def _inconsistent(report: dict[str, Any]) -> list[Finding]:
    fs = report["findings"]
    if any(f["kind"] == "silently_zero" or (f["kind"] == "mismatch" and
                                            f["reference"] == "numeric") for f in fs):
        return []  # the inconsistency follows from a path that is wrong
    return [f for f in fs if f["kind"] == "mismatch" and f["reference"] == "self"]


def categorize(reports: list[dict[str, Any]]) -> dict[str, list[tuple[str, str]]]:
    """Category title -> [(row name, worst ratio text)]."""
    out: dict[str, list[tuple[str, str]]] = {title: [] for title, _, _ in CATEGORIES}
    for r in reports:
        for title, _, test in CATEGORIES:
            hits = _inconsistent(r) if title == "paths inconsistent only" else \
                [f for f in r["findings"] if test(f)]
            if hits:
                out[title].append((r["op"], worst(hits)))
    return out


def render(data: dict[str, Any], seconds: float | None, torch_version: str,
           load: float | None = None) -> str:
    reports = data["reports"]
    config = data.get("config", {})
    cats = categorize(reports)
    clean = sum(1 for r in reports if not r["findings"])
    lines = [
        f"Measured with torch {torch_version} by `gradcheck run --suite torch_audit --jobs 2` "
        f"(seed {config.get('seed', 0)}, {config.get('examples', '?')} examples per row, "
        f"float64, mode {config.get('mode', 'fast')}"
        + (f"; {seconds:.0f} s wall time on this 2-core machine" if seconds else "")
        + (f" at a load average of {load:.1f}" if seconds and load else "")
        # the suite's two workers alone make 2: beyond that, other jobs shared the machine
        + (" (other jobs shared it)" if seconds and load and load > 2.5 else "")
        + f"), then `python bench/readme_torch.py --json <results.json> --write`. "
        f"{len(reports)} rows (ops, activations per region, keyword-argument choices "
        f"explored), {clean} with no finding at all. The target is torch's own function, so "
        "every path is torch's; a finding is torch's.",
        "",
        "| category | rows | what it means |",
        "|---|---:|---|",
    ]
    for title, meaning, _ in CATEGORIES:
        lines.append(f"| {title} | {len(cats[title])} | {meaning} |")
    lines += ["", "Findings by kind: " + ", ".join(
        f"`{k}` {n}" for k, n in counts(reports).items()) + ".", ""]
    for title, _, _ in CATEGORIES:
        rows = cats[title]
        if rows:
            names = ", ".join(f"`{_short(op)}`{ratio}" for op, ratio in rows)
            lines.append(f"- **{title}**: {names}.")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, default=ROOT / "reports" / "torch_audit.json")
    parser.add_argument("--run", action="store_true", help="run the suite first (--jobs 2)")
    parser.add_argument("--seconds", type=float, help="the run's wall time, if measured")
    parser.add_argument("--load", type=float, help="the load average during that run")
    parser.add_argument("--write", action="store_true", help="replace the README section")
    args = parser.parse_args(argv)
    seconds, load = run_suite("torch_audit", args.json) if args.run else (args.seconds, args.load)
    try:
        import torch
        version = torch.__version__.split("+")[0]
    except ImportError:
        version = "(not installed here)"
    body = render(json.loads(args.json.read_text()), seconds, version, load)
    if args.write or args.run:
        write_block(BEGIN, END, body)
    else:
        print(body)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
