"""``gradcheck list``: the registry with what the checker knows about each op."""

from __future__ import annotations

import argparse
import importlib.util
import json
from collections.abc import Sequence
from typing import Any

from gradcheck.cli.terminal import Terminal
from gradcheck.engine import Op, Registry, default_registry

__all__ = ["add_parser", "run_list", "op_info", "describe_kinks", "describe_rules",
           "op_references", "installed_frameworks"]

#: Frameworks that can serve as references, and the module each needs.
_FRAMEWORKS = {"autograd": "autograd", "jax": "jax", "tensorflow": "tensorflow",
               "torch": "torch"}


def add_parser(subparsers: Any) -> None:
    """Register ``gradcheck list`` on the CLI's subparsers."""
    parser = subparsers.add_parser(
        "list", help="list the registered ops and what the checker knows about them",
        description="List the registered ops: family, input domains, kinks, the derivative "
                    "rules present and the references each can be compared with.")
    parser.add_argument("patterns", nargs="*", metavar="OP",
                        help="only these ops (names, globs such as 'linalg.*', or families)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.add_argument("--import", dest="imports", action="append", default=[], metavar="MODULE",
                        help="import this module first, from the current folder or the Python "
                             "path (it registers your own ops; repeatable)")
    parser.set_defaults(handler=run_list)


def describe_kinks(op: Op) -> str:
    """Where the op is not differentiable, in words (``""`` when nowhere)."""
    kinks = op.meta.get("kinks", ())
    if not kinks:
        return ""
    if isinstance(kinks, str):
        return kinks
    if callable(kinks):
        return "depends on parameters"
    return ", ".join(f"{k:g}" if isinstance(k, (int, float)) else str(k) for k in kinks)


def describe_rules(op: Op) -> str:
    """Which derivative rules the op has and how its JVP is obtained."""
    if not op.differentiable:
        return "not differentiable"
    if op.linear:
        parts = ["vjp", "jvp (linear)"]
    elif op.jvp is not None:
        parts = ["vjp", "jvp native"]
    else:
        parts = ["vjp", "jvp by transpose"]
    if op.first_order_only:
        parts.append(f"first-order only ({op.first_order_only})")
    text = ", ".join(parts)
    if op.jvp is None and op.transpose_jvp_reason:
        text += f" ({op.transpose_jvp_reason})"
    return text


def op_references(op: Op) -> list[str]:
    """References an op can be compared with: ``numeric`` (every differentiable op) and
    each framework whose table has an equivalent of it (looked up without importing it)."""
    from gradcheck.oracles import has_equivalent

    if not op.differentiable:
        return []
    return ["numeric", *(name for name in _FRAMEWORKS if has_equivalent(name, op.name))]


def installed_frameworks() -> dict[str, bool]:
    """Which reference frameworks are installed (found, not imported: TensorFlow is slow)."""
    return {name: importlib.util.find_spec(module) is not None
            for name, module in _FRAMEWORKS.items()}


def op_info(op: Op) -> dict[str, Any]:
    """Plain data about one op (what ``gradcheck list --json`` prints per op)."""
    domains = op.meta.get("inputs", ())
    shapes = op.meta.get("shapes", "")
    tolerance = op.meta.get("tolerance")
    return {
        "name": op.name,
        "family": op.family,
        "inputs": op.nin,
        "domain": [d.describe() for d in domains],
        "shapes": shapes if isinstance(shapes, str) else "drawn by a function",
        "kinks": describe_kinks(op),
        "rules": describe_rules(op),
        "vjp": op.vjp is not None,
        "jvp": "linear" if op.linear else ("native" if op.jvp is not None else "transpose"),
        "first_order_only": op.first_order_only,
        "differentiable": op.differentiable,
        "references": op_references(op),
        "tolerance": None if tolerance is None else {"factor": tolerance.factor,
                                                     "reason": tolerance.reason},
        "grad_op": op.meta.get("grad_op"),
        "grad_of": op.meta.get("grad_of"),
        "doc": (op.doc or "").strip().splitlines()[0] if (op.doc or "").strip() else "",
    }


def _ops(registry: Registry, patterns: Sequence[str]) -> list[Op]:
    return registry.select(patterns) if patterns else list(registry)


def run_list(args: argparse.Namespace, terminal: Terminal,
             registry: Registry | None = None) -> int:
    """Print the registry (table or JSON); unknown patterns raise ``UnknownOpError``."""
    from gradcheck.cli.run import import_modules

    registry = default_registry if registry is None else registry
    import_modules(args.imports)
    infos = [op_info(op) for op in _ops(registry, args.patterns)]
    frameworks = installed_frameworks()
    if args.json:
        text = json.dumps({"ops": infos, "frameworks_installed": frameworks},
                          indent=2, sort_keys=True)
        terminal.raw(text)
        return 0
    rows = [[i["name"], i["family"], ", ".join(i["domain"]), i["kinks"], i["rules"],
             ", ".join(i["references"])] for i in infos]
    terminal.table(f"{len(infos)} registered op{'' if len(infos) == 1 else 's'}",
                   ["op", "family", "domain", "kinks", "rules", "references"], rows,
                   styles=["bold", "dim", None, None, None, None])
    installed = ", ".join(
        f"{name} installed" if ok else f"{name} not installed (pip install gradcheck[{name}])"
        for name, ok in frameworks.items())
    terminal.line(f"reference frameworks: {installed}")
    return 0
