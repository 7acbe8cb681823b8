"""How a TensorFlow graph's results reach a placeholder: by data, shape, control, or not.

Used to explain *why* the double-VJP needs its dummy cotangent fed.  Every edge into an op
is classified: an ordinary input is ``data``; an input of an op that reads only its input's
shape (``Shape``, ``ZerosLike``, ...) is ``shape``; an entry of ``op.control_inputs`` is
``control``.  A path is as weak as its weakest edge (control < shape < data) and the answer
is the strongest path from the placeholder to any result.

The path shown is picked by a stable rule, so the same graph always gives the same text
(TensorFlow's op sets iterate in a different order every run): of the strongest paths, the
shortest; of those, the one whose op names come first (a breadth-first walk visiting
consumers in name order).  The walk is iterative and visits each op once per kind, so large
graphs and (v1) loops are fine.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["DEPENDENCE_KINDS", "SHAPE_READERS", "Dependence", "trace_dependence"]

#: Weakest to strongest; "none" means the results never reach the placeholder.
DEPENDENCE_KINDS = ("none", "control", "shape", "data")
#: Op types whose output depends on their input's shape (and dtype) only, never its values.
SHAPE_READERS = frozenset({"Shape", "ShapeN", "Size", "Rank", "ZerosLike", "OnesLike"})

_RANK = {kind: rank for rank, kind in enumerate(DEPENDENCE_KINDS)}


@dataclass(frozen=True)
class Dependence:
    """The strongest kind of path from a placeholder to the results, and one such path.

    ``path`` lists ``"name (OpType)"`` from the placeholder to a result, each step after the
    first prefixed with the edge kind, e.g. ``"control: gradients/Sin_grad/Cos (Cos)"``.
    """

    kind: str
    path: tuple[str, ...]


def _cone(results: Iterable[Any]) -> set[Any]:
    """Every op the result tensors depend on, through data or control inputs."""
    seen: set[Any] = set()
    stack = [t.op for t in results]
    while stack:
        op = stack.pop()
        if op in seen:
            continue
        seen.add(op)
        stack.extend(t.op for t in op.inputs)
        stack.extend(op.control_inputs)
    return seen


def _edges(cone: set[Any]) -> dict[Any, list[tuple[Any, str]]]:
    """Consumers of each op within ``cone`` with the strongest kind of edge to each, in
    name order."""
    strongest: dict[Any, dict[Any, str]] = {op: {} for op in cone}
    for op in cone:
        kind = "shape" if op.type in SHAPE_READERS else "data"
        links = [(t.op, kind) for t in op.inputs] + [(p, "control") for p in op.control_inputs]
        for producer, edge in links:
            known = strongest[producer].get(op)
            if known is None or _RANK[edge] > _RANK[known]:
                strongest[producer][op] = edge
    return {op: sorted(consumers.items(), key=lambda item: item[0].name)
            for op, consumers in strongest.items()}


def trace_dependence(sources: Sequence[Any], results: Sequence[Any]) -> Dependence:
    """Classify how ``results`` (tensors) depend on the ``sources`` (placeholder ops)."""
    cone = _cone(results)
    edges = _edges(cone)
    starts = sorted((op for op in set(sources) if op in cone), key=lambda op: op.name)
    ends = {t.op for t in results}
    for kind in reversed(DEPENDENCE_KINDS[1:]):  # the strongest kind any result is reached by
        path = _shortest(starts, ends, edges, _RANK[kind])
        if path is not None:
            return Dependence(kind=kind, path=path)
    return Dependence(kind="none", path=())


def _shortest(starts: list[Any], ends: set[Any], edges: dict[Any, list[tuple[Any, str]]],
              rank: int) -> tuple[str, ...] | None:
    """The first path (breadth first, name order) from ``starts`` to ``ends`` over edges of
    at least ``rank``, or None."""
    previous: dict[Any, tuple[Any, str] | None] = {op: None for op in starts}
    frontier = starts
    while frontier:
        reached = [op for op in frontier if op in ends]
        if reached:
            return _path_to(min(reached, key=lambda op: op.name), previous)
        following = []
        for op in frontier:
            for consumer, kind in edges[op]:
                if _RANK[kind] >= rank and consumer not in previous:
                    previous[consumer] = (op, kind)
                    following.append(consumer)
        frontier = following
    return None


def _path_to(end: Any, previous: dict[Any, tuple[Any, str] | None]) -> tuple[str, ...]:
    steps: list[str] = []
    op: Any = end
    while op is not None:
        label = f"{op.name} ({op.type})"
        step = previous[op]
        steps.append(label if step is None else f"{step[1]}: {label}")
        op = None if step is None else step[0]
    return tuple(reversed(steps))
