"""What the checker can check: a registered op, an ``Op``, or a function with inputs.

A :class:`Target` knows its name, how to draw examples (a Hypothesis strategy of
:class:`~gradcheck.checker.sampling.Example`), and how to *bind* an example into a
:class:`Problem`: an object that computes the function and its derivative paths on plain
numpy arrays.  The checker only talks to these two interfaces.

Extension point (for other frameworks): subclass :class:`Target`, return from ``bind`` any
object implementing :class:`Problem` (TensorFlow's tape for ``vjp``, its
``ForwardAccumulator`` for ``jvp``, ...), and make :func:`as_target` recognise your objects
with :func:`register_target_kind`::

    register_target_kind(lambda obj: is_tf_function(obj), TensorFlowTarget)

A path a target does not offer is listed by ``unsupported()`` with the reason.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Sequence
from typing import Any, Protocol

import numpy as np
from hypothesis import strategies as st

from gradcheck.checker.paths import PATHS, SECOND_ORDER, EngineProblem
from gradcheck.checker.references import TARGET_KINDS, load, register_target_kind
from gradcheck.checker.sampling import Example, examples
from gradcheck.domains import Domain, Tolerance
from gradcheck.engine import Op, Registry, default_registry
from gradcheck.engine.pytree import flatten

__all__ = [
    "Problem", "Target", "OpTarget", "FunctionTarget", "as_target", "register_target_kind",
    "with_dtype", "fixed_point", "DEFAULT_DTYPES",
]

DEFAULT_DTYPES = ("float64", "float32")
Arrays = list[np.ndarray]


class Problem(Protocol):
    """A target bound to one example: a function of its differentiable inputs (``primals``).

    Every method takes and returns lists of numpy arrays (see :mod:`gradcheck.checker.paths`
    for what each path computes).  ``double_vjp`` also returns whether the result was
    computed from the dummy (None when the framework cannot tell).  A method may raise
    :class:`~gradcheck.checker.paths.InputMutated` or :class:`~gradcheck.engine.RuleError`
    (``kind`` "shape"/"dtype"); anything else is reported as an ``error``.
    """

    primals: Arrays
    counts: Any

    def forward(self, primals: Sequence[Any]) -> Arrays: ...
    def vjp(self, primals: Sequence[Any], cotangents: Sequence[Any]) -> Arrays: ...
    def jvp(self, primals: Sequence[Any], tangents: Sequence[Any]) -> Arrays: ...
    def double_vjp(self, primals: Sequence[Any], tangents: Sequence[Any],
                   dummies: Sequence[Any]) -> tuple[Arrays, bool | None]: ...
    def hvp_fwd_rev(self, primals: Sequence[Any], cotangents: Sequence[Any],
                    tangents: Sequence[Any], cotangent_tangents: Sequence[Any]) -> Arrays: ...
    def hvp_rev_rev(self, primals: Sequence[Any], cotangents: Sequence[Any],
                    second: Sequence[Any]) -> tuple[Arrays, Arrays]: ...
    def hvp_rev_fwd(self, primals: Sequence[Any], tangents: Sequence[Any],
                    cotangents: Sequence[Any]) -> tuple[Arrays, Arrays]: ...


class Target(abc.ABC):
    """Something to check.  Subclasses set ``name`` and ``family`` and implement the rest."""

    name: str = "target"
    family: str = ""
    #: The op's declared wider tolerance, if any.
    tolerance: Tolerance | None = None
    #: Name of the gradient op the VJP calls (named in value-leak messages), if any.
    grad_op: str | None = None
    #: ((output, axis), ...): outputs whose vectors are defined up to sign.
    gauge: tuple[tuple[int, int], ...] = ()

    @abc.abstractmethod
    def strategy(self, dtype: str) -> st.SearchStrategy[Example]:
        """Hypothesis strategy of examples in ``dtype``."""

    @abc.abstractmethod
    def bind(self, example: Example) -> Problem:
        """The function at this example, as a :class:`Problem`."""

    def unsupported(self) -> dict[str, str]:
        """Paths this target does not offer, with the reason."""
        return {}

    def default_dtypes(self) -> tuple[str, ...]:
        return DEFAULT_DTYPES

    def reference(self, example: Example) -> Arrays | None:
        """A trusted forward value at ``example`` (the op's declared reference), or None."""
        return None


def with_dtype(example: Example, dtype: str) -> Example:
    """The example with its floating arrays cast to ``dtype`` (upcast for references)."""
    args = [np.asarray(a).astype(dtype) if np.asarray(a).dtype.kind == "f" else a
            for a in example.args]
    return Example(args=args, params=example.params, dtype=dtype, scale=example.scale,
                   seed=example.seed, shapes=example.shapes)


def _leaves(value: Any) -> Arrays:
    return [np.asarray(v) for v in flatten(value)[0]]


class OpTarget(Target):
    """A registered :class:`~gradcheck.engine.Op`, checked with its declared metadata; with
    ``inputs`` (a tuple of arrays), at that point only (each example draws new directions)."""

    def __init__(self, op: Op, inputs: Sequence[Any] | None = None) -> None:
        self.op = op
        self.name, self.family = op.name, op.family
        self.tolerance = op.meta.get("tolerance")
        self.grad_op = op.meta.get("grad_op")
        #: Outputs defined up to the sign of each vector (see :mod:`gradcheck.checker.gauge`).
        self.gauge = tuple(op.meta.get("gauge") or ())
        self.domains: tuple[Domain, ...] = tuple(op.meta.get("inputs") or ())
        self.fixed = None if inputs is None else [np.array(x) for x in inputs]

    def strategy(self, dtype: str) -> st.SearchStrategy[Example]:
        if self.fixed is not None:
            return fixed_point(self.fixed, dtype)
        return examples(self.op, dtype)

    def default_dtypes(self) -> tuple[str, ...]:
        return DEFAULT_DTYPES if self.fixed is None else _float_dtypes(self.fixed)

    def positions(self, example: Example) -> list[int]:
        """Arguments that are differentiated: floating, and not declared otherwise."""
        out = []
        for i, a in enumerate(example.args):
            dom = self.domains[i] if i < len(self.domains) else None
            if i in self.op.nondiff_argnums or (dom is not None and not dom.differentiable):
                continue
            if np.asarray(a).dtype.kind == "f":
                out.append(i)
        return out

    def bind(self, example: Example) -> Problem:
        return EngineProblem(self.op, example.args, example.params, self.positions(example),
                             name=self.op.name)

    def unsupported(self) -> dict[str, str]:
        if not self.op.differentiable:
            return {p: f"op {self.name!r} is declared not differentiable" for p in PATHS}
        if self.domains and not any(d.differentiable for i, d in enumerate(self.domains)
                                    if i not in self.op.nondiff_argnums):
            return {p: f"op {self.name!r} has no differentiable input" for p in PATHS}
        if self.op.first_order_only:
            why = f"op {self.name!r} is first-order only: {self.op.first_order_only}"
            return {p: why for p in ("double_vjp", *SECOND_ORDER)}
        return {}

    def reference(self, example: Example) -> Arrays | None:
        ref = self.op.meta.get("reference")
        if ref is None:
            return None
        with np.errstate(all="ignore"):
            return _leaves(ref(*example.args, **example.params))


class FunctionTarget(Target):
    """A Python function written with ``gradcheck.numpy``, at fixed inputs or on domains.

    ``inputs`` is either a sequence of arrays (checked at that point; each example draws new
    directions) or a sequence of :class:`~gradcheck.domains.Domain` (values drawn by the
    sampler; ``shapes`` is a signature as for ops, default: all inputs broadcast together).
    Every floating input is differentiated.
    """

    def __init__(self, fn: Callable[..., Any], inputs: Sequence[Any], *, name: str | None = None,
                 shapes: Any = None, kinks: Any = (), params: Any = None,
                 first_order_only: str | None = None, tolerance: Tolerance | None = None,
                 family: str = "function") -> None:
        if not callable(fn):
            raise TypeError(f"gradcheck.check: target must be callable, got {type(fn).__name__}")
        if inputs is None or isinstance(inputs, (np.ndarray, Domain)) or not len(inputs):
            raise TypeError(f"gradcheck.check: a function target ({_name(fn)}) needs inputs=: "
                            "a tuple of example arrays or of input domains")
        self.fn, self.name, self.family = fn, name or _name(fn), family
        self.tolerance, self.first_order_only = tolerance, first_order_only
        self.domains = all(isinstance(x, Domain) for x in inputs)
        if self.domains:
            sig = shapes or ",".join(["(...)"] * len(inputs))
            meta = {"inputs": tuple(inputs), "shapes": sig, "kinks": kinks, "params": params}
            self.op = Op(name=self.name, forward=fn, vjp=None, nin=len(inputs), meta=meta)
            self.fixed: list[np.ndarray] = []
        elif any(isinstance(x, Domain) for x in inputs):
            raise TypeError(f"gradcheck.check: inputs of {self.name} mix arrays and domains")
        else:
            self.fixed = [np.array(x) for x in inputs]

    def default_dtypes(self) -> tuple[str, ...]:
        return DEFAULT_DTYPES if self.domains else _float_dtypes(self.fixed)

    def strategy(self, dtype: str) -> st.SearchStrategy[Example]:
        return examples(self.op, dtype) if self.domains else fixed_point(self.fixed, dtype)

    def bind(self, example: Example) -> Problem:
        positions = [i for i, a in enumerate(example.args) if np.asarray(a).dtype.kind == "f"]
        return EngineProblem(self.fn, example.args, example.params, positions, name=self.name)

    def unsupported(self) -> dict[str, str]:
        if self.first_order_only:
            why = f"{self.name} is first-order only: {self.first_order_only}"
            return {p: why for p in ("double_vjp", *SECOND_ORDER)}
        return {}


def _float_dtypes(arrays: Sequence[np.ndarray]) -> tuple[str, ...]:
    floats = [a.dtype.name for a in arrays if a.dtype.kind == "f"]
    return (floats[0],) if floats else ("float64",)


def fixed_point(arrays: Sequence[np.ndarray], dtype: str) -> st.SearchStrategy[Example]:
    """Examples at one point (cast to ``dtype``); the drawn seed picks the directions."""
    base = with_dtype(Example(args=list(arrays), params={}, dtype=dtype, scale=1.0, seed=0,
                              shapes=[a.shape for a in arrays]), dtype)
    return st.integers(0, 2**32 - 1).map(
        lambda seed: Example(args=base.args, params={}, dtype=dtype, scale=1.0, seed=seed,
                             shapes=base.shapes))


def _name(fn: Any) -> str:
    return str(getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn))


def as_target(target: Any, inputs: Any = None, registry: Registry | None = None) -> Target:
    """The :class:`Target` for ``target``: a Target, an op name or an ``Op`` (``inputs``:
    optional arrays to check at), or a function (``inputs``: example arrays or domains)."""
    if isinstance(target, Target):
        return target
    for accepts, factory in TARGET_KINDS:
        if load(accepts)(target):
            return load(factory)(target, inputs=inputs)
    if isinstance(target, str):
        return OpTarget((registry or default_registry).get(target), inputs)
    if isinstance(target, Op):
        return OpTarget(target, inputs)
    if callable(target):
        return FunctionTarget(target, inputs)
    raise TypeError(f"gradcheck.check: cannot check a {type(target).__name__}; give an op name, "
                    "an Op, a Target, or a function with inputs=")

