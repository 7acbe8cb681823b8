"""The README's "What TensorFlow 2.21 does", generated from the tensorflow_audit suite's JSON.

    python bench/readme_tf.py --run                  # run the suite (--jobs 2), then write
    python bench/readme_tf.py --json PATH            # from an earlier run's results.json
    python bench/readme_tf.py --json PATH --write    # replace the README section's body

The section's body sits between the markers ``<!-- tf-audit:begin -->`` and
``<!-- tf-audit:end -->``; ``--write`` replaces only that, so other README sections are left
alone.  Without ``--write`` the markdown goes to stdout.

Every number is counted from the findings in the JSON (nothing is typed in by hand).  A row
lands in a category when one of its findings has that kind on that path and side; the
forward modes are told apart by path and side: ``double_vjp`` is the graph-mode double-VJP,
``jvp`` the eager ``ForwardAccumulator``, ``jvp`` on the ``tf_function`` side the same
accumulator traced in a ``tf.function``.  The API a row audits is its name up to the first
comma (``tf.nn.relu, x < 0`` audits ``tf.nn.relu``); [[op]] rows (registry ops compared with
TensorFlow) are counted apart.
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

BEGIN, END = "<!-- tf-audit:begin -->", "<!-- tf-audit:end -->"
SIDE = "tf_function"


SECOND = {"hvp_fwd_rev", "hvp_rev_rev", "hvp_rev_fwd"}


def _side(f: Finding) -> str:
    return str(f.get("attributed_to") or "")


def _is(kind: str, paths: set[str], side: str | None = "",
        reference: str | None = None) -> Callable[[Finding], bool]:
    def test(f: Finding) -> bool:
        return (f["kind"] == kind and f["path"] in paths
                and (side is None or _side(f) == side)
                and (reference is None or f["reference"] == reference))
    return test


def _graph_mode_only(f: Finding) -> bool:
    """An unsupported double-VJP because the function cannot run in graph mode at all."""
    text = str(f.get("message", ""))
    return "in graph mode" in text and ("cannot run" in text or "cannot build" in text)


#: The forward modes: (name, which findings are that mode's).
MODES: list[tuple[str, Callable[[Finding], bool]]] = [
    ("graph double-VJP", lambda f: f["path"] == "double_vjp" and _side(f) != SIDE),
    ("eager ForwardAccumulator", lambda f: f["path"] == "jvp" and _side(f) != SIDE),
    ("ForwardAccumulator in tf.function", lambda f: f["path"] == "jvp" and _side(f) == SIDE),
]

#: (title, what it means, which findings put a row there), in the README's order.
CATEGORIES: list[tuple[str, str, Callable[[Finding], bool]]] = [
    ("dependence leak, control", "the double-VJP graph reaches the dummy cotangent only "
     "through control dependencies (any value of the right shape would do)",
     lambda f: f["kind"] == "dependence_leak"
     and f.get("details", {}).get("dependence") == "control"),
    ("dependence leak, shape", "the double-VJP graph reads only the dummy's shape",
     lambda f: f["kind"] == "dependence_leak"
     and f.get("details", {}).get("dependence") == "shape"),
    ("dependence leak, data", "the double-VJP graph reads the dummy's values (they cancel)",
     lambda f: f["kind"] == "dependence_leak"
     and f.get("details", {}).get("dependence") == "data"),
    ("value leak", "the double-VJP's JVP changes with the dummy's value",
     _is("value_leak", {"double_vjp"}, None)),
    ("no graph mode", "the function runs eagerly only (numpy inside it or its gradient), so "
     "TensorFlow has no graph-mode double-VJP for it",
     lambda f: f["kind"] == "unsupported" and f["path"] == "double_vjp"
     and _graph_mode_only(f)),
    ("no second order", "TensorFlow cannot differentiate the VJP again (so neither the "
     "double-VJP nor ForwardAccumulator can run)",
     lambda f: _is("unsupported", {"double_vjp"}, None)(f) and not _graph_mode_only(f)),
    ("silently zero", "a path identically zero where the numeric derivative is not",
     lambda f: f["kind"] == "silently_zero"),
    ("wrong JVP, graph double-VJP", "the double-VJP disagrees with the numeric derivative",
     _is("mismatch", {"double_vjp"}, "", "numeric")),
    ("wrong JVP, eager ForwardAccumulator", "disagrees with the numeric derivative",
     _is("mismatch", {"jvp"}, "", "numeric")),
    ("wrong JVP, ForwardAccumulator in tf.function", "disagrees with the numeric derivative",
     _is("mismatch", {"jvp"}, SIDE, "numeric")),
    ("ForwardAccumulator fails in tf.function", "TensorFlow cannot trace the accumulator "
     "in a tf.function (tensor lists, switch_case, IndexedSlices)",
     _is("unsupported", {"jvp"}, SIDE)),
    ("not linear in the direction", "a path is not linear in its tangent or cotangent: mostly "
     "float64 APIs that compute in float32 inside", lambda f: f["kind"] == "nonlinear"),
    ("eager and tf.function disagree", "the two ForwardAccumulator runs differ where the "
     "numeric derivative cannot settle it", _is("mismatch", {"jvp"}, None, SIDE)),
    ("wrong gradient", "tf.GradientTape's VJP disagrees with the numeric derivative",
     _is("mismatch", {"vjp"}, "", "numeric")),
    ("wrong second order", "an HVP nesting disagrees with the numeric derivative",
     _is("mismatch", SECOND, "", "numeric")),
    ("error", "a path raised something other than a missing gradient",
     lambda f: f["kind"] == "error"),
]

def api_of(name: str) -> str:
    """The TensorFlow API a row audits: its name up to the first comma."""
    return name.split(",", 1)[0].strip()


def is_function_row(report: dict[str, Any]) -> bool:
    """A TensorFlow function row (not a registry [[op]] row)."""
    return str(report["op"]).startswith("tf.")


def categorize(reports: list[dict[str, Any]]) -> dict[str, list[tuple[str, str]]]:
    """Category title -> [(row name, worst ratio text)]."""
    out: dict[str, list[tuple[str, str]]] = {title: [] for title, _, _ in CATEGORIES}
    for r in reports:
        for title, _, test in CATEGORIES:
            hits = [f for f in r["findings"] if test(f)]
            if hits:
                out[title].append((r["op"], worst(hits)))
    return out


def per_mode(reports: list[dict[str, Any]]) -> dict[str, dict[str, int]]:
    """Forward mode -> {kind: rows with such a finding in that mode}."""
    out: dict[str, dict[str, int]] = {name: {} for name, _ in MODES}
    for name, test in MODES:
        for r in reports:
            for kind in sorted({f["kind"] for f in r["findings"] if test(f)}):
                out[name][kind] = out[name].get(kind, 0) + 1
    return out


def render(data: dict[str, Any], seconds: float | None, tf_version: str) -> str:
    reports = [r for r in data["reports"] if is_function_row(r)]
    config = data.get("config", {})
    cats = categorize(reports)
    apis = sorted({api_of(r["op"]) for r in reports})
    clean = sum(1 for r in reports if not r["findings"])
    lines = [
        f"Measured with TensorFlow {tf_version} by `gradcheck run --suite tensorflow_audit "
        f"--jobs 2` (seed {config.get('seed', 0)}, {config.get('examples', '?')} examples per "
        f"row, float64 unless the kernel is float32-only, mode {config.get('mode', 'fast')}"
        + (f"; {seconds:.0f} s wall time on this 2-core machine" if seconds else "")
        + "), then `python bench/readme_tf.py --json <results.json> --write`. "
        f"{len(apis)} APIs in {len(reports)} rows (activations per region, keyword-argument "
        f"choices explored), {clean} rows with no finding at all. The target is TensorFlow's "
        "own function, so every path is TensorFlow's; a finding is TensorFlow's.",
        "",
        "| category | rows | what it means |",
        "|---|---:|---|",
    ]
    for title, meaning, _ in CATEGORIES:
        lines.append(f"| {title} | {len(cats[title])} | {meaning} |")
    lines += ["", "Findings by kind: " + ", ".join(
        f"`{k}` {n}" for k, n in counts(reports).items()) + ".", "",
        "Rows with a finding, per forward mode: " + "; ".join(
            f"{mode}: " + (", ".join(f"`{k}` {n}" for k, n in kinds.items()) or "none")
            for mode, kinds in per_mode(reports).items()) + ".", ""]
    for title, _, _ in CATEGORIES:
        rows = cats[title]
        if rows:
            names = ", ".join(f"`{op}`{ratio}" for op, ratio in rows)
            lines.append(f"- **{title}**: {names}.")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path,
                        default=ROOT / "reports" / "tensorflow_audit.json")
    parser.add_argument("--run", action="store_true", help="run the suite first (--jobs 2)")
    parser.add_argument("--seconds", type=float, help="the run's wall time, if measured")
    parser.add_argument("--write", action="store_true", help="replace the README section")
    args = parser.parse_args(argv)
    seconds = run_suite("tensorflow_audit", args.json)[0] if args.run else args.seconds
    try:
        from gradcheck.oracles.tf_support import import_tensorflow
        version = str(import_tensorflow().__version__)
    except ImportError:
        version = "(not installed here)"
    body = render(json.loads(args.json.read_text()), seconds, version)
    if args.write or args.run:
        write_block(BEGIN, END, body)
    else:
        print(body)
    return 0


if __name__ == "__main__":
    sys.exit(main())
