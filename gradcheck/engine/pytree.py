"""Nested lists, tuples and dicts of leaves, flattened and rebuilt."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

__all__ = ["flatten", "unflatten"]


def flatten(tree: Any) -> tuple[list[Any], Any]:
    """Leaves of ``tree`` in a fixed order, and a description to rebuild it."""
    leaves: list[Any] = []
    return leaves, _walk(tree, leaves)


def _walk(node: Any, leaves: list[Any]) -> Any:
    # a module-level function: a recursive closure would be a reference cycle holding the
    # leaves until the cyclic garbage collector runs
    kind = type(node)
    if kind is list or kind is tuple:  # the common containers, without the generic tests
        return (kind, [_walk(c, leaves) for c in node])
    if isinstance(node, tuple) and hasattr(node, "_fields"):  # a namedtuple: by position
        return (type(node)._make, [_walk(c, leaves) for c in node])  # type: ignore[attr-defined]
    if isinstance(node, (list, tuple)):
        return (type(node), [_walk(c, leaves) for c in node])
    if isinstance(node, dict):
        keys = sorted(node, key=repr)
        return (dict, keys, [_walk(node[k], leaves) for k in keys])
    leaves.append(node)
    return None


def unflatten(treedef: Any, leaves: list[Any]) -> Any:
    """Inverse of :func:`flatten`."""
    return _build(treedef, iter(leaves))


def _build(d: Any, it: Iterator[Any]) -> Any:
    if d is None:
        return next(it)
    if d[0] is dict:
        return {k: _build(c, it) for k, c in zip(d[1], d[2], strict=False)}
    return d[0](_build(c, it) for c in d[1])
