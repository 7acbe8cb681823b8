"""Findings about what a check could not check: no usable example, only zero-size ones,
nothing compared, paths the target cannot compute, samples that kept landing on kinks.
Nothing checked is never a pass."""

from __future__ import annotations

from typing import Any

from gradcheck.checker.assemble import finding
from gradcheck.checker.complex import DTYPE_NAMES
from gradcheck.checker.examine import ExampleResult
from gradcheck.checker.references import INTERNAL
from gradcheck.checker.report import Cell, Finding
from gradcheck.checker.session import Options

__all__ = ["unusable", "only_empty", "nothing_compared", "unsupported_paths",
           "nondifferentiable", "unchecked_choices", "complex_unchecked", "RESAMPLE_LIMIT"]

#: Examples that sit on a kink before ``nondifferentiable`` is reported (and extra draws).
RESAMPLE_LIMIT = 3


#: Why an example is skipped, as the no-usable-example finding says it.
SKIPPED = {
    "nonfinite": "the function or its numeric derivative is not finite (NaN or inf inputs, "
                 "outputs or derivatives, e.g. sqrt at 0)",
    "kink": "the sample sits on a kink (left and right derivatives differ)",
    "axis": "an axis (among the params, or in the function) is out of bounds for the shapes: "
            "give shapes= that fit it, such as '(...,3)'",
    "empty": "the function does not take empty arrays (its forward raised on a zero-size "
             "input): give shapes= with a named or fixed core size, such as '(n)' or "
             "'(...,3)' (a named size is never zero)",
}


def unusable(op: str, dtypes: list[str], stats: dict[str, Any],
             given: bool = False) -> list[Finding]:
    """No usable example in a dtype is never a pass: a failing finding that says why
    (``given``: every example was the one given point, which cannot be re-sampled)."""
    out = []
    for dtype in dtypes:
        if stats["examples"].get(dtype, 0):
            continue
        skipped = {k: n for k, n in stats["skipped"].items() if n}
        why = "; ".join(f"{k}: {SKIPPED.get(k, k)}" for k in sorted(skipped))
        if given:
            head = (f"no usable example in {dtype}: the given point was skipped ({why}), and "
                    "a given point cannot be re-sampled; give another point or drawn inputs")
        else:
            counts = ", ".join(f"{n} {k}" for k, n in sorted(skipped.items())) or "none drawn"
            head = (f"no usable example in {dtype}: every example drawn was skipped "
                    f"({counts}){'; ' + why if why else ''}")
        out.append(Finding(
            op, "all", "all", "error",
            f"{op}: {head}. Nothing was checked, so this is not a pass",
            details={"dtype": dtype, "skipped": skipped, "reason": "no usable examples"}))
    return out


def unchecked_choices(op: str, stats: dict[str, Any]) -> list[Finding]:
    """A parameter choice no usable example took (each one drawn with it was skipped or
    empty, even on strata of its own) was never checked: never a pass."""
    out = []
    for dtype, choices in sorted(stats.get("unchecked_choices", {}).items()):
        said = ", ".join(f"{c['name']}={c['value']!r}" for c in choices)
        reasons = sorted({r for c in choices for r in c["skipped"]})
        # (without the axis reason's generic shapes= hint: the one below fits the choice)
        why = "; ".join(f"{r}: {SKIPPED[r].split(': give shapes=')[0]}" if r in SKIPPED
                        else r for r in reasons) or "no example drawn took it"
        out.append(Finding(
            op, "all", "all", "error",
            f"{op}: parameter choice {said} never checked in {dtype}: every example drawn "
            f"with it was skipped ({why}). Nothing was checked there, so this is not a "
            f"pass: give shapes= that offer it ({_shapes_for(choices)}), or drop the choice "
            "from params",
            details={"dtype": dtype, "choices": choices,
                     "reason": "parameter choices never checked"}))
    return out


def _shapes_for(choices: list[dict[str, Any]]) -> str:
    """A ``shapes=`` hint for unchecked choices: for axis-like ones (ints, tuples of ints),
    inputs with as many dimensions as the largest axis needs."""
    needed = 0
    for c in choices:
        value = c["value"]
        axes = value if isinstance(value, (tuple, list)) else [value]
        if all(isinstance(a, int) and not isinstance(a, bool) for a in axes):
            needed = max([needed, *(a + 1 if a >= 0 else -a for a in axes)])
    if not needed:
        return "inputs of the sizes the choice needs"
    dims = ",".join("abcdefghijklmnopqrstuvwxyz"[k % 26] for k in range(needed))
    return f"inputs of {needed} dimension{'s' * (needed != 1)} or more, such as '({dims})'"


def only_empty(op: str, dtypes: list[str]) -> list[Finding]:
    """Examples whose differentiated inputs or outputs were all zero-size compared nothing:
    when every usable one was, that is never a pass."""
    return [Finding(
        op, "all", "all", "error",
        f"{op}: every usable example in {dtype} was empty (the differentiated inputs or the "
        "checked outputs had no element), so no derivative entry was compared. Nothing was "
        "checked, so this is not a pass: give inputs (or shapes) with elements",
        details={"dtype": dtype, "reason": "only empty examples"}) for dtype in dtypes]


def nothing_compared(op: str, cells: list[Cell], options: Options, sides: tuple[str, ...],
                      findings: list[Finding]) -> list[Finding]:
    """When no path of the target itself was compared with anything (every selected path
    unsupported, by the target or by its framework) and nothing else failed: an error, never
    a pass."""
    if not options.paths or any(f.kind == "error" for f in findings):
        return []
    if any(c.status in ("pass", "warn", "undecided", "fail") for c in cells
           if c.reference not in sides):
        return []
    why = sorted({c.note for c in cells
                  if c.status == "unsupported" and c.reference in INTERNAL and c.note})
    return [Finding(
        op, "all", "all", "error",
        f"{op}: nothing was compared: no selected path ({', '.join(options.paths)}) could be "
        "computed" + (f" ({'; '.join(why)})" if why else "") + ". Nothing was checked, so "
        "this is not a pass: choose paths the target supports",
        details={"reason": "nothing compared"})]


def unsupported_paths(op: str, unsupported: dict[str, str]) -> list[Finding]:
    return [Finding(op, path, "all", "unsupported", f"{path}: unsupported: {why}",
                    details={"reason": why}) for path, why in unsupported.items()]


def nondifferentiable(op: str, kinks: list[tuple[ExampleResult, Any]],
                      given: bool = False) -> list[Finding]:
    """One info finding when samples kept landing on kinks after re-sampling, or when the
    one ``given`` point sits on a kink."""
    if not kinks or (len(kinks) < RESAMPLE_LIMIT and not given):
        return []
    result, _ = kinks[0]
    outcome = next(o for o in result.outcomes if o.kind == "nondifferentiable")
    f = finding(op, outcome, result.example, kinks=len(kinks))
    f.message = (f"the given point is where {op} is not differentiable (left and right "
                 f"derivatives differ): {outcome.message}" if given else
                 f"{len(kinks)} samples landed on points where {op} is not differentiable "
                 f"(left and right derivatives differ), after re-sampling; first: "
                 f"{outcome.message}")
    return [f]


def complex_unchecked(op: str, asked: list[str], why: str, only_complex: bool) -> list[Finding]:
    """``dtypes=`` named complex dtypes but no usable example had a complex input or output:
    an error when only complex ones were asked (nothing asked was checked), else said as
    unsupported beside the real check."""
    real = sorted({DTYPE_NAMES[n] for n in asked})
    head = (f"{op}: dtypes= asked for complex values ({', '.join(asked)}), but no checked "
            f"example had a complex input or output ({why}); only real {', '.join(real)} "
            "values were checked")
    if only_complex:
        head += ". Nothing complex was checked, so this is not a pass"
    return [Finding(op, "all", "all", "error" if only_complex else "unsupported", head,
                    details={"dtypes": asked, "reason": "no complex example"})]
