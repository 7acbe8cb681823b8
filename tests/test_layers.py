"""Layers import one way: no module imports a package of a higher layer.

Every import statement counts, including those inside functions (a lazy
import is still a dependency).  ``gradcheck/__init__.py`` is the composition
root and may import anything.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

import gradcheck

PACKAGE = Path(gradcheck.__file__).parent

#: Lowest first; a module may import its own layer or a lower one.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("gradcheck.engine", "gradcheck.domains", "gradcheck.domains_complex"),
    ("gradcheck.ops", "gradcheck.numpy", "gradcheck.nn", "gradcheck.special", "gradcheck.extend"),
    ("gradcheck.checker",),
    ("gradcheck.oracles", "gradcheck.references"),
    ("gradcheck.cli", "gradcheck.render", "gradcheck.pytest_plugin", "gradcheck.suites"),
)


def layer_of(module: str) -> int | None:
    """The layer of a ``gradcheck`` module (None outside the package or for the root)."""
    for level, prefixes in enumerate(LAYERS):
        if any(module == p or module.startswith(p + ".") for p in prefixes):
            return level
    return None


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported(tree: ast.Module, name: str, is_package: bool) -> list[tuple[int, str]]:
    """``(line, module)`` for every import in ``tree``; relative imports made absolute."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = name.split(".")
                anchor = anchor[: len(anchor) - node.level + (1 if is_package else 0)]
                base = ".".join([*anchor, base] if base else anchor)
            # ``from gradcheck import ops`` imports the submodule gradcheck.ops
            out += [(node.lineno, f"{base}.{a.name}" if layer_of(base) is None else base)
                    for a in node.names]
    return out


@functools.cache
def upward_imports() -> tuple[str, ...]:
    """Every import of a higher layer, as ``module:line imports target``."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        name = module_name(path)
        own = layer_of(name)
        if own is None:  # the composition root
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for line, target in imported(tree, name, path.name == "__init__.py"):
            level = layer_of(target)
            if level is not None and level > own:
                found.append(f"{name}:{line} imports {target}")
    return tuple(found)


def test_every_module_has_a_layer() -> None:
    unplaced = [module_name(p) for p in PACKAGE.rglob("*.py")
                if layer_of(module_name(p)) is None and module_name(p) != "gradcheck"]
    assert unplaced == []


@pytest.mark.parametrize("layer", [p for level in LAYERS for p in level])
def test_no_upward_imports(layer: str) -> None:
    bad = [f for f in upward_imports() if f.startswith((layer + ".", layer + ":"))]
    assert bad == [], "\n".join(bad)


def test_the_walker_sees_lazy_and_relative_imports() -> None:
    source = "def f():\n    from ..checker import api\n    import gradcheck.cli\n"
    found = imported(ast.parse(source), "gradcheck.ops.binary", is_package=False)
    assert [t for _, t in found] == ["gradcheck.checker", "gradcheck.cli"]
