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
import difflib
import inspect
from collections.abc import Callable, Sequence
from typing import Any, Protocol

import numpy as np
from hypothesis import strategies as st

from gradcheck.checker.complex import complex_dtype, real_dtype
from gradcheck.checker.numeric import ACCURACIES
from gradcheck.checker.paths import PATHS, SECOND_ORDER, EngineProblem
from gradcheck.checker.references import TARGET_KINDS, load, register_target_kind
from gradcheck.checker.sampling import Example, Stratum, examples
from gradcheck.checker.specs import (
    check_call,
    check_given,
    check_param_refs,
    check_shapes,
    resolve_inputs,
    resolve_positions,
    select_outputs,
    signature_for,
    split_params,
)
from gradcheck.domains import REAL, Domain, Fixed, Tolerance
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
    #: What the function's evaluation error is relative to, which the numeric reference's
    #: rounding model follows: "entrywise" or "normwise" (see ``numeric.ACCURACIES``).
    accuracy: str = "entrywise"
    #: Name of the gradient op the VJP calls (named in value-leak messages), if any.
    grad_op: str | None = None
    #: ((output, axis), ...): outputs whose vectors are defined up to sign.
    gauge: tuple[tuple[int, int], ...] = ()
    #: Whether every example is one given point (only the directions differ): what skips
    #: one example there (a kink, an overflow) skips them all.
    given_point: bool = False

    @abc.abstractmethod
    def strategy(self, dtype: str, stratum: Stratum | None = None) -> st.SearchStrategy[Example]:
        """Hypothesis strategy of examples in ``dtype`` (of one stratum of the exploration:
        a magnitude, shape family and kink region; ignored at a given point)."""

    @abc.abstractmethod
    def bind(self, example: Example) -> Problem:
        """The function at this example, as a :class:`Problem`."""

    def unsupported(self, paths: Sequence[str] | None = None) -> dict[str, str]:
        """Paths this target does not offer, with the reason (``paths``: those asked about;
        None: all)."""
        return {}

    def param_space(self) -> Any:
        """The explored parameters' choices (see ``_Spec.param_space``), or None: the
        exploration adds strata until each choice has been taken (see ``api._strata``)."""
        return None

    def default_dtypes(self) -> tuple[str, ...]:
        return DEFAULT_DTYPES

    def reference(self, example: Example) -> Arrays | None:
        """A trusted forward value at ``example`` (the op's declared reference), or None."""
        return None


def with_dtype(example: Example, dtype: str) -> Example:
    """The example with its floating arrays cast to ``dtype`` (upcast for references), its
    complex arrays to the complex dtype of that precision."""
    args = [np.asarray(a).astype(dtype) if np.asarray(a).dtype.kind == "f" else
            np.asarray(a).astype(complex_dtype(dtype)) if np.asarray(a).dtype.kind == "c" else a
            for a in example.args]
    return Example(args=args, params=example.params, dtype=dtype, scale=example.scale,
                   seed=example.seed, shapes=example.shapes)


def _leaves(value: Any) -> Arrays:
    return [np.asarray(v) for v in flatten(value)[0]]


class _Spec:
    """What ``inputs=``, ``params=``, ``wrt=``, ``outputs=`` and ``shapes=`` say (see
    :mod:`gradcheck.checker.specs`), resolved for one target and checked before anything
    runs.  ``declared`` are the target's own input domains, which ``shapes`` applies to when
    ``inputs`` is not given; ``nout`` its number of outputs, when known before it runs."""

    def __init__(self, who: str, inputs: Any, params: Any, wrt: Any, outputs: Any,
                 shapes: Any = None, declared: Sequence[Domain] | None = None,
                 nout: int | None = None) -> None:
        self.domains: list[Domain] | None = None if inputs is None else \
            resolve_inputs(inputs, who)
        self.fixed_params, self.space = split_params(params, who)
        domains = self.domains if self.domains is not None else declared
        n = None if domains is None else len(domains)
        self.wrt = resolve_positions(wrt, n, who, "wrt")
        for i in self.wrt or ():
            d = domains[i] if domains is not None else None
            if d is not None and not d.differentiable:
                raise ValueError(f"gradcheck.check: {who}, wrt: input {i} ({d.describe()}) is "
                                 "not differentiable")
        self.outputs = resolve_positions(outputs, nout, who, "outputs")
        check_shapes(shapes, domains, who)
        self.shapes = shapes
        self.who = who

    @property
    def point(self) -> list[np.ndarray] | None:
        """The arrays of a check at one given point (every input given, nothing to explore)."""
        if self.domains is None or self.space or \
                not all(isinstance(d, Fixed) for d in self.domains):
            return None
        return [np.array(d.value) for d in self.domains]  # type: ignore[attr-defined]

    def strategy(self, op: Op, dtype: str,
                 stratum: Stratum | None = None) -> st.SearchStrategy[Example]:
        point = self.point
        if point is not None:
            return fixed_point(point, dtype, self.fixed_params)
        if self._declared_only:
            return examples(op, dtype, stratum=stratum)
        meta = self._meta(op)
        drawn = Op(name=op.name, forward=op.forward, vjp=None,
                   nin=len(meta.get("inputs") or ()) or op.nin,
                   nondiff_argnums=op.nondiff_argnums, meta=meta)
        fixed = self.fixed_params
        found = examples(drawn, dtype, stratum=stratum)
        return found.map(lambda ex: _with_params(ex, fixed)) if fixed else found

    @property
    def _declared_only(self) -> bool:
        """Whether examples are drawn from the op's own metadata, as given."""
        return self.domains is None and not self.space and not self.fixed_params and \
            self.shapes is None

    def param_space(self, op: Op) -> Any:
        """The parameter choices examples are drawn from (the op's declared ones, or those
        this check gives): a dict of name -> choices (a list, or a callable of the shapes),
        a callable drawing them all, or None."""
        return op.meta.get("params") if self._declared_only else self._meta(op).get("params")

    def _meta(self, op: Op) -> dict[str, Any]:
        """The op's metadata with this check's domains, shapes and params in place."""
        meta = dict(op.meta)
        if self.domains is None and self.shapes is not None:
            meta["shapes"] = self.shapes  # the op's own inputs in the shapes asked for
        if self.domains is not None:
            declared = meta.get("shapes")
            keep = self.shapes is None and declared is not None and \
                len(self.domains) == len(meta.get("inputs") or ()) and \
                not any(isinstance(d, Fixed) for d in self.domains)
            meta["inputs"] = tuple(self.domains)
            # other domains for an op's inputs keep its declared shapes
            meta["shapes"] = declared if keep else signature_for(self.domains, self.shapes)
        # fixed params join the choices (one each), so drawn inputs see them: segment ids
        # drawn for a fixed num_segments, indices for a fixed axis
        fixed = {k: [v] for k, v in self.fixed_params.items()}
        declared = meta.get("params")
        if self.space:
            meta["params"] = {**fixed, **self.space}
        elif fixed and not callable(declared):
            meta["params"] = {**(declared or {}), **fixed}
        return meta

    def positions(self, args: Sequence[Any], differentiable: Callable[[int], bool]) -> list[int]:
        if self.wrt is None:
            return [i for i, a in enumerate(args)
                    if differentiable(i) and np.asarray(a).dtype.kind in "fc"]
        for i in self.wrt:
            if i >= len(args) or np.asarray(args[i]).dtype.kind not in "fc":
                kind = "missing" if i >= len(args) else np.asarray(args[i]).dtype.name
                raise ValueError(f"gradcheck.check: {self.who}, wrt: input {i} is {kind}, not "
                                 "a floating or complex array, so it cannot be differentiated")
        return list(self.wrt)

    def function(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        if self.outputs is None:
            return fn
        outputs = self.outputs
        return lambda *a, **p: select_outputs(fn(*a, **p), outputs)


def _with_params(example: Example, fixed: dict[str, Any]) -> Example:
    return Example(args=example.args, params={**example.params, **fixed}, dtype=example.dtype,
                   scale=example.scale, seed=example.seed, shapes=example.shapes)


class OpTarget(Target):
    """A registered :class:`~gradcheck.engine.Op`, checked with its declared metadata, which
    ``inputs``, ``params``, ``wrt`` and ``outputs`` override (see :mod:`.specs`): arrays alone
    check that point only (each example draws new directions)."""

    def __init__(self, op: Op, inputs: Sequence[Any] | None = None, *, params: Any = None,
                 wrt: Any = None, outputs: Any = None, shapes: Any = None) -> None:
        self.op = op
        self.name, self.family = op.name, op.family
        self.tolerance = op.meta.get("tolerance")
        self.accuracy = op.meta.get("accuracy", "entrywise")
        self.grad_op = op.meta.get("grad_op")
        #: Outputs defined up to the sign of each vector (see :mod:`gradcheck.checker.gauge`).
        self.gauge = tuple(op.meta.get("gauge") or ())
        who = f"op {op.name!r}"
        # the domains the op's examples are drawn from (as sampling.examples draws them)
        declared = tuple(op.meta.get("inputs") or (REAL,) * (op.nin or 1))
        if inputs is not None and op.nin is not None and isinstance(inputs, (list, tuple)) \
                and inputs and len(inputs) != op.nin:
            # an extra input would be taken for a positional parameter, which the drawn
            # params then replace: the check would pass having checked something else
            raise ValueError(f"gradcheck.check: {who}: {_input_count(op, len(inputs))}")
        if isinstance(params, dict):
            if op.nin is not None:
                check_call(op.forward, op.nin, list(params), who)
            _known_params(who, op, params)
        self.spec = _Spec(who, inputs, params, wrt, outputs, shapes,
                          declared=declared, nout=op.nout)
        self.domains: tuple[Domain, ...] = tuple(self.spec.domains or op.meta.get("inputs")
                                                 or ())
        check_param_refs(self.domains, self.param_space(), who)
        self.fixed = self.spec.point

    @property
    def given_point(self) -> bool:  # type: ignore[override]
        return self.fixed is not None

    def strategy(self, dtype: str, stratum: Stratum | None = None) -> st.SearchStrategy[Example]:
        return self.spec.strategy(self.op, dtype, stratum)

    def param_space(self) -> Any:
        return None if self.spec.point is not None else self.spec.param_space(self.op)

    def default_dtypes(self) -> tuple[str, ...]:
        return DEFAULT_DTYPES if self.fixed is None else _float_dtypes(self.fixed)

    def positions(self, example: Example) -> list[int]:
        """Arguments that are differentiated: floating, and not declared otherwise."""
        def differentiable(i: int) -> bool:
            dom = self.domains[i] if i < len(self.domains) else None
            return i not in self.op.nondiff_argnums and (dom is None or dom.differentiable)
        return self.spec.positions(example.args, differentiable)

    def bind(self, example: Example) -> Problem:
        return EngineProblem(self.spec.function(self.op), example.args, example.params,
                             self.positions(example), name=self.op.name)

    def unsupported(self, paths: Sequence[str] | None = None) -> dict[str, str]:
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
        if ref is None or self.spec.outputs is not None:
            return None
        with np.errstate(all="ignore"):
            return _leaves(ref(*example.args, **example.params))


class FunctionTarget(Target):
    """A Python function written with ``gradcheck.numpy``, at given inputs or on domains.

    ``inputs`` has one entry per positional input: an example array, a
    :class:`~gradcheck.domains.Domain` or a domain's name; arrays alone check that point
    (each example draws new directions), otherwise values are drawn (``shapes`` is a
    signature as for ops; default: drawn inputs broadcast together, given arrays keep their
    shape).  ``params``, ``wrt`` and ``outputs`` as in :mod:`.specs`; by default every
    floating input is differentiated.  ``accuracy="normwise"`` says that ``fn`` is accurate
    to a few ulps of each output array's largest entry, not of each entry (see
    ``numeric.ACCURACIES``).
    """

    def __init__(self, fn: Callable[..., Any], inputs: Sequence[Any], *, name: str | None = None,
                 shapes: Any = None, kinks: Any = (), params: Any = None, wrt: Any = None,
                 outputs: Any = None, first_order_only: str | None = None,
                 tolerance: Tolerance | None = None, family: str = "function",
                 accuracy: str = "entrywise") -> None:
        if not callable(fn):
            raise TypeError(f"gradcheck.check: target must be callable, got {type(fn).__name__}")
        self.fn, self.name, self.family = fn, name or _name(fn), family
        self.tolerance, self.first_order_only = tolerance, first_order_only
        if accuracy not in ACCURACIES:
            raise ValueError(f"gradcheck.check: function {self.name}, accuracy: must be one of "
                             f"{', '.join(map(repr, ACCURACIES))}, got {accuracy!r}")
        self.accuracy = accuracy
        if inputs is None:
            resolve_inputs(inputs, f"a function target ({self.name})")  # raises: says how
        self.spec = _Spec(f"function {self.name}", inputs, params, wrt, outputs, shapes)
        n = len(self.spec.domains or ())
        self.op = Op(name=self.name, forward=fn, vjp=None, nin=n,
                     meta={"inputs": tuple(self.spec.domains or ()),
                           "shapes": signature_for(self.spec.domains or (), shapes),
                           "kinks": kinks})
        # a param given twice, then an unknown one, then one given nowhere: the most
        # specific mistake is said first
        check_call(fn, n, list(params or {}), f"function {self.name}")
        if isinstance(params, dict):
            _known_params(f"function {self.name}", self.op, params)
        check_given(fn, n, list(params or {}), f"function {self.name}")
        check_param_refs(self.spec.domains, self.spec.param_space(self.op),
                         f"function {self.name}")
        point = self.spec.point
        self.fixed: list[np.ndarray] = point or []
        #: Whether values are drawn (False: checked at the given point).
        self.domains = point is None

    @property
    def given_point(self) -> bool:  # type: ignore[override]
        return not self.domains

    def default_dtypes(self) -> tuple[str, ...]:
        return DEFAULT_DTYPES if self.domains else _float_dtypes(self.fixed)

    def strategy(self, dtype: str, stratum: Stratum | None = None) -> st.SearchStrategy[Example]:
        return self.spec.strategy(self.op, dtype, stratum)

    def param_space(self) -> Any:
        return None if self.spec.point is not None else self.spec.param_space(self.op)

    def positions(self, example: Example) -> list[int]:
        doms = self.spec.domains or []
        return self.spec.positions(
            example.args, lambda i: i >= len(doms) or doms[i].differentiable)

    def bind(self, example: Example) -> Problem:
        return EngineProblem(_hinted(self.spec.function(self.fn), self.name), example.args,
                             example.params, self.positions(example), name=self.name)

    def unsupported(self, paths: Sequence[str] | None = None) -> dict[str, str]:
        if self.first_order_only:
            why = f"{self.name} is first-order only: {self.first_order_only}"
            return {p: why for p in ("double_vjp", *SECOND_ORDER)}
        return {}


def _input_count(op: Op, given: int) -> str:
    """Why ``given`` inputs are not the ``op.nin`` an op takes, and where parameters go."""
    names = op.param_names
    where = f"its parameters ({', '.join(names)}) go in params=, such as " \
        f"params={{{names[0]!r}: ...}}" if names else "it takes no parameters"
    return f"takes {op.nin} input{'s' * (op.nin != 1)}, inputs= gives {given}; {where}"


def _known_params(who: str, op: Op, params: dict[str, Any]) -> None:
    """Refuse a ``params=`` name the op's forward (or the function) does not take (``axsi``
    for ``axis``): every call would raise, and the check would report it as broken."""
    try:
        sig = inspect.signature(op.forward)
    except (TypeError, ValueError):
        return  # a forward without a signature to read: its call will say
    kinds = inspect.Parameter
    if any(p.kind is kinds.VAR_KEYWORD for p in sig.parameters.values()):
        return
    taken = list(op.param_names) + [p.name for p in sig.parameters.values()
                                    if p.kind is kinds.KEYWORD_ONLY]
    declared = op.meta.get("params")
    if isinstance(declared, dict):  # (a callable drawing them all names none up front)
        taken += [n for n in declared if n not in taken]
    for name in params:
        if isinstance(name, str) and name not in taken:
            close = difflib.get_close_matches(name, taken, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            listed = ", ".join(taken) if taken else "none"
            raise ValueError(f"gradcheck.check: {who}, params: unknown parameter {name!r} "
                             f"(its parameters: {listed}){hint}")


def _float_dtypes(arrays: Sequence[np.ndarray]) -> tuple[str, ...]:
    floats = [real_dtype(a.dtype).name for a in arrays if a.dtype.kind in "fc"]
    return (floats[0],) if floats else ("float64",)


def fixed_point(arrays: Sequence[np.ndarray], dtype: str,
                params: dict[str, Any] | None = None) -> st.SearchStrategy[Example]:
    """Examples at one point (cast to ``dtype``); the drawn seed picks the directions."""
    fixed = dict(params or {})
    base = with_dtype(Example(args=list(arrays), params=fixed, dtype=dtype, scale=1.0, seed=0,
                              shapes=[a.shape for a in arrays]), dtype)
    return st.integers(0, 2**32 - 1).map(
        lambda seed: Example(args=base.args, params=fixed, dtype=dtype, scale=1.0, seed=seed,
                             shapes=base.shapes))


def _name(fn: Any) -> str:
    return str(getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn))


def _accepts(accepts: Any, target: Any, inputs: Any, framework: str | None) -> bool:
    """Whether a target kind takes ``target``: a predicate with an ``inputs`` parameter is
    also given the inputs and ``framework=`` (a framework's function is told by its arrays);
    a one-argument predicate (``register_target_kind``'s contract) only the target."""
    if "inputs" in inspect.signature(accepts).parameters:
        return bool(accepts(target, inputs=inputs, framework=framework))
    return bool(accepts(target))


#: What a framework's function says when it gets numpy arrays or gradcheck tensors.
_FOREIGN = ("numpy.ndarray", "'Tensor' object", "must be Tensor", "not Tensor")


def _hinted(fn: Callable[..., Any], name: str) -> Callable[..., Any]:
    """``fn``, whose errors on gradcheck's own arrays say that gradcheck took it for a
    ``gradcheck.numpy`` function (a framework's function it could not tell by its code, its
    class or its inputs raises on them) and how to name its framework."""
    def call(*args: Any, **params: Any) -> Any:
        try:
            return fn(*args, **params)
        except (AttributeError, TypeError) as e:
            if not any(s in str(e) for s in _FOREIGN):
                raise
            kind = AttributeError if isinstance(e, AttributeError) else TypeError
            raise kind(f"{e} (gradcheck ran {name} as a gradcheck.numpy function: nothing in "
                       "its code, class or inputs named a framework; if it is written in "
                       "one, pass framework='torch', 'jax', 'tensorflow' or 'autograd')") from e
    return call


def as_target(target: Any, inputs: Any = None, registry: Registry | None = None,
              **spec: Any) -> Target:
    """The :class:`Target` for ``target``: a Target, an op name or an ``Op`` (``inputs``:
    optional overrides of its metadata), or a function (``inputs``: one example array, domain
    or domain name per input); ``spec`` holds ``params``, ``wrt`` and ``outputs``."""
    spec = {k: v for k, v in spec.items() if v is not None}
    if "name" in spec and isinstance(target, (str, Target)):
        raise TypeError("gradcheck.check: name= names a function or an Op; an op name or a "
                        "Target is its own name")
    if isinstance(target, Target):
        if inputs is not None or spec:
            raise TypeError(f"gradcheck.check: {target.name} is a Target; give inputs, params, "
                            "wrt and outputs to it, not to check()")
        return target
    framework = spec.get("framework")
    if framework is not None and (isinstance(target, (str, Op)) or not callable(target)):
        raise TypeError(f"gradcheck.check: framework={framework!r} names the framework of a "
                        "function; an op name or an Op is gradcheck's own")
    for accepts, factory in TARGET_KINDS:
        if _accepts(load(accepts), target, inputs, framework):
            return load(factory)(target, inputs=inputs, **spec)
    spec.pop("framework", None)
    if "accuracy" in spec and isinstance(target, (str, Op)):
        raise TypeError(f"gradcheck.check: accuracy= describes a function; the op "
                        f"{getattr(target, 'name', target)!r} declares its own "
                        "(define_op(..., accuracy=...))")
    if isinstance(target, str):
        return OpTarget((registry or default_registry).get(target), inputs, **spec)
    if isinstance(target, Op):
        name = spec.pop("name", None)
        found = OpTarget(target, inputs, **spec)
        found.name = name or found.name  # a suite row's own name for it
        return found
    if callable(target):
        return FunctionTarget(target, inputs, **spec)
    raise TypeError(f"gradcheck.check: cannot check a {type(target).__name__}; give an op name, "
                    "an Op, a Target, or a function with inputs=")

