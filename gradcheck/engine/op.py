"""Ops: a numpy forward with its VJP and JVP rules, declared in one place.

``define_op`` validates the rules when the op is created, so a bad rule fails
at import with a message naming the op.  Calling an op runs its numpy forward
on the raw values and shows the call to every visible tracer (``state``).
With no tensor among the arguments the op is plain numpy and returns an array.
"""

from __future__ import annotations

import functools
import inspect
import types
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gradcheck.domains import Fixed
from gradcheck.domains_complex import COMPLEX_NAMED
from gradcheck.engine.metadata import validate
from gradcheck.engine.registry import Registry, default_registry
from gradcheck.engine.tensor import Tensor, bind, value_of

__all__ = ["Op", "RuleError", "define_op", "bind", "call_rule", "annotate", "refuse_complex",
           "ACCURACIES"]

#: What an op's forward (a function's) may be accurate relative to, as the checker's
#: numeric reference models its rounding (``define_op(accuracy=...)``): each output entry's
#: own size ("entrywise", the default), or its output array's largest entry ("normwise":
#: scipy's expm, accurate to a few ulps of its largest entry, puts that much on its
#: smallest entries too).
ACCURACIES = ("entrywise", "normwise")


class RuleError(ValueError):
    """A derivative rule returned something unusable (wrong count, shape or dtype).

    ``kind`` is ``"count"``, ``"shape"`` or ``"dtype"``; ``op`` and ``argument``
    name where it happened.
    """

    def __init__(self, op: str, argument: str, kind: str, message: str) -> None:
        super().__init__(f"op {op!r}, {argument}: {message}")
        self.op = op
        self.argument = argument
        self.kind = kind


Rule = Callable[..., Any]


@dataclass(eq=False)
class Op:
    """A differentiable primitive.  Build with :func:`define_op`.

    The numpy ``forward(*arrays, **params)`` computes the value;
    ``vjp(g, out, *inputs, **params)`` returns one cotangent per input (None
    where there is none) and ``jvp(tangents, out, *inputs, **params)`` the
    output tangent (``tangents`` holds None for zero tangents).  For ops with
    several outputs ``g``, ``out`` and the JVP result are tuples.  Everything
    else is what the checker needs to know (see ``gradcheck.domains``).
    """

    name: str
    forward: Callable[..., Any]
    vjp: Rule | None
    jvp: Rule | None = None
    nout: int = 1
    nin: int | None = None  # None: variadic
    family: str = ""
    nondiff_argnums: tuple[int, ...] = ()
    differentiable: bool = True
    linear: bool = False
    first_order_only: str | None = None
    transpose_jvp_reason: str | None = None
    fill_zeros: bool = True
    #: Whether the rules hold for complex values (JAX's convention); tracers refuse a complex
    #: input to an op without (see ``refuse_complex``).  ``define_op`` sets it from the
    #: declarations; an Op built directly (``custom_gradient``'s) has the user's own rules.
    complex_rules: bool = True
    meta: dict[str, Any] = field(default_factory=dict)
    doc: str = ""
    # the per-input rules when declared that way: tracers call only the ones they need
    vjp_parts: tuple[Rule | None, ...] | None = None
    jvp_parts: tuple[Rule | None, ...] | None = None
    #: What a tape keeps of a node of this op, by its tracked inputs (worked out from the VJP
    #: rules by ``GradientTape.record``, with the rules it came from).
    tape_plans: dict[Any, Any] = field(default_factory=dict, init=False, repr=False,
                                       compare=False)

    #: Calling an op binds it: ``op(x, y, axis=0)`` is ``bind(op, x, y, axis=0)``.
    __call__ = bind

    def split_parameters(self, args: tuple[Any, ...],
                         params: dict[str, Any]) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """``(inputs, params)`` from a call with parameters passed positionally after the
        inputs, numpy style; a TypeError when the count is wrong."""
        nin = self.nin
        if nin is None or len(args) < nin:
            raise TypeError(f"op {self.name!r} takes {nin} positional inputs, got {len(args)}")
        names, extra = self.param_names, args[nin:]
        if len(extra) > len(names):
            raise TypeError(f"op {self.name!r} takes {nin} inputs and parameters "
                            f"{names}; got {len(args)} positional arguments")
        positional = dict(zip(names, extra, strict=False))
        for name in positional:
            if name in params:  # as Python says for a function: one value per parameter
                raise TypeError(f"op {self.name!r}: parameter {name!r} given positionally and "
                                "as a keyword")
        return args[:nin], {**positional, **params}

    @property
    def param_names(self) -> tuple[str, ...]:
        """Names of the forward's keyword parameters, in order (every call of the op reads
        them: the signature is read once per forward and input count, then kept)."""
        known = self.__dict__.get("_param_names")
        if known is not None and known[0] is self.forward and known[1] == self.nin:
            return known[2]
        try:
            sig = inspect.signature(self.forward)
        except (TypeError, ValueError):
            names: tuple[str, ...] = ()
        else:
            names = tuple(p.name for p in sig.parameters.values()
                          if p.kind is p.POSITIONAL_OR_KEYWORD)[self.nin or 0:]
        self.__dict__["_param_names"] = (self.forward, self.nin, names)
        return names

    def __repr__(self) -> str:
        return f"<Op {self.name}>"

    @property
    def qualified_name(self) -> str:
        """``family.name`` unless the name is already dotted."""
        if "." in self.name or not self.family:
            return self.name
        return f"{self.family}.{self.name}"

    @property
    def has_native_jvp(self) -> bool:
        return self.jvp is not None


def call_rule(op: Op, rule: Rule, first: Any, out: Any, args: Sequence[Any],
              params: dict[str, Any]) -> Any:
    """Call a VJP or JVP rule, turning a crash into an error that names the op."""
    try:
        return rule(first, out, *args, **params)
    except Exception as exc:
        annotate(exc, op, rule)
        raise


def annotate(exc: Exception, op: Op, rule: Rule) -> None:
    """Add a note naming the op and the rule to an exception a rule raised."""
    if not isinstance(exc, RuleError):
        kind = "JVP" if rule is op.jvp else "VJP"
        exc.add_note(f"(in the {kind} rule of op {op.name!r})")


def _per_argument(rules: Sequence[Rule | None], kind: str) -> Rule:
    """One rule from per-input rules (autograd's ``defvjp`` / JAX's ``defjvp`` style)."""
    rules = tuple(rules)
    if kind == "vjp":
        def vjp(g: Any, out: Any, *inputs: Any, **params: Any) -> tuple[Any, ...]:
            return tuple(None if r is None else r(g, out, *inputs, **params) for r in rules)
        return vjp

    def jvp(tangents: Sequence[Any], out: Any, *inputs: Any, **params: Any) -> Any:
        total = None
        for r, t in zip(rules, tangents, strict=True):
            if r is None or t is None:
                continue
            term = r(t, out, *inputs, **params)
            total = term if total is None else total + term
        return total
    return jvp


def _linear_jvp(op: Op) -> Rule:
    """The JVP of a linear op is the op applied to the tangents (zeros where None)."""

    def jvp(tangents: Sequence[Any], out: Any, *inputs: Any, **params: Any) -> Any:
        if len(tangents) == 1:  # the common case: the tangent is there (else no JVP is asked)
            return bind(op, tangents[0], **params)
        args = [
            x if i in op.nondiff_argnums else (_zero(x) if t is None else t)
            for i, (t, x) in enumerate(zip(tangents, inputs, strict=True))
        ]
        return bind(op, *args, **params)

    return jvp


def _zero(x: Any) -> Any:
    """A zero tangent for ``x``: a constant, so a plain array serves (nothing differentiates
    it); a Python number stays a (weak) Python number, so float32 stays float32."""
    if type(x) in (int, float, complex):
        return type(x)(0)
    return np.zeros_like(x._value if type(x) is Tensor else x)


def _count_inputs(name: str, rule: Rule, what: str, leading: int) -> int | None:
    """How many inputs a rule takes after its ``leading`` arguments (None: variadic)."""
    try:
        sig = inspect.signature(rule)
    except (TypeError, ValueError):
        return None
    positional = 0
    for p in sig.parameters.values():
        if p.kind is p.VAR_POSITIONAL:
            return None
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty:
            positional += 1
    if positional < leading:
        raise TypeError(
            f"op {name!r}: the {what} rule must take ({'g' if what == 'vjp' else 'tangents'},"
            f" out, *inputs, **params); it takes only {positional} positional arguments"
        )
    return positional - leading


def _check_rules_agree(name: str, rules: dict[str, Any], counts: dict[str, int]) -> None:
    """Raise TypeError when the VJP rule takes more inputs than the JVP rule (or the other way
    round) and the other rule cannot take the extra ones as keyword parameters either:
    inputs or parameters, one of the two rules would fail when called.  Only plain
    functions are compared (a per-input sequence's count is checked against ``nin``)."""
    plain = {what: rule for what, rule in rules.items()
             if what in counts and callable(rule) and not isinstance(rule, (list, tuple))}
    if len(plain) < 2:
        return
    (more, n_more), (fewer, n_fewer) = sorted(((w, counts[w]) for w in plain),
                                              key=lambda item: -item[1])
    if n_more == n_fewer:
        return
    extra = _required_names(plain[more])[2 + n_fewer:2 + n_more]
    params = inspect.signature(plain[fewer]).parameters.values()
    if any(p.kind is p.VAR_KEYWORD for p in params):
        return
    known = {p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    missing = [n for n in extra if n not in known]
    if missing:
        raise TypeError(
            f"op {name!r}: the {more} rule handles {n_more} inputs but the {fewer} rule "
            f"{n_fewer}, which cannot take {', '.join(map(repr, missing))} as a keyword "
            "parameter either; give both rules the same inputs"
        )


#: How the engine calls a rule, for the errors of rules that cannot be called that way.
_SIGNATURES = {"vjp": "vjp(g, out, *inputs, **params)",
               "jvp": "jvp(tangents, out, *inputs, **params)"}


def _check_calls(name: str, forward: Callable[..., Any], nin: int,
                 rules: Sequence[tuple[str, Rule]]) -> None:
    """Raise TypeError when the engine could not call a rule with the op's ``nin`` inputs:
    a rule with fewer positional places than ``(g, out, *inputs)`` (autograd's and JAX's
    habit of leaving out ``out``), one that cannot take by keyword a parameter the forward
    requires after its inputs (a rule written for fewer inputs than the forward), or rules
    that leave the op no input at all."""
    required = _forward_parameters(name, forward, nin)
    for what, rule in rules:
        _check_call(name, what, rule, nin, required)
    if nin == 0 and rules:  # nothing to differentiate: the input went into `out`'s place
        what, rule = rules[0]
        raise TypeError(f"op {name!r}: the {what} rule {_shown(what, rule)} takes no input "
                        f"after its first two arguments; {_usage(what)}")


def _check_call(name: str, what: str, rule: Rule, nin: int, required: list[str]) -> None:
    """One rule of :func:`_check_calls`."""
    try:
        params = list(inspect.signature(rule).parameters.values())
    except (TypeError, ValueError):
        return
    slots = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if len(slots) < 2 + nin and not any(p.kind is p.VAR_POSITIONAL for p in params):
        raise TypeError(f"op {name!r}: the {what} rule {_shown(what, rule)} has {len(slots)} "
                        f"positional arguments, but the op has {nin} inputs; {_usage(what)}")
    taken = {p.name for p in slots[:2 + nin]}
    by_keyword = {p.name for p in params[len(taken):]
                  if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    any_keyword = any(p.kind is p.VAR_KEYWORD for p in params)
    for param in required:
        if param not in by_keyword and (param in taken or not any_keyword):
            raise TypeError(
                f"op {name!r}: the {what} rule {_shown(what, rule)} takes {nin} inputs after "
                f"its first two arguments, but the forward requires {nin + len(required)} "
                f"positional arguments: its {param!r} would reach the rule as a keyword "
                f"parameter, which the rule cannot take; {_usage(what)}")


def _shown(what: str, rule: Rule) -> str:
    """A rule's name and signature, for an error."""
    try:
        return f"{getattr(rule, '__name__', what)}{inspect.signature(rule)}"
    except (TypeError, ValueError):
        return getattr(rule, "__name__", what)


def _usage(what: str) -> str:
    return (f"a {what} rule's signature is {_SIGNATURES[what]}: the op's output `out` comes "
            "second (autograd's and JAX's rules leave it out), then the forward's inputs")


def _forward_parameters(name: str, forward: Callable[..., Any], nin: int) -> list[str]:
    """The forward's required parameters after its ``nin`` inputs: every call passes them
    to the rules by keyword.  A TypeError when the forward cannot take ``nin`` inputs."""
    try:
        params = list(inspect.signature(forward).parameters.values())
    except (TypeError, ValueError):
        return []
    if any(p.kind is p.VAR_POSITIONAL for p in params):
        return []
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if len(positional) < nin:
        raise TypeError(f"op {name!r}: the rules take {nin} inputs after their first two "
                        f"arguments, but the forward takes only {len(positional)} positional "
                        f"arguments; a rule's signature is {_SIGNATURES['vjp']} or "
                        f"{_SIGNATURES['jvp']}")
    return [p.name for p in positional[nin:]
            if p.default is p.empty and p.kind is p.POSITIONAL_OR_KEYWORD]


def _required_names(rule: Rule) -> list[str]:
    """The names of a rule's positional parameters without defaults, in order."""
    return [p.name for p in inspect.signature(rule).parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty]


def define_op(
    name: str,
    forward: Callable[..., Any],
    vjp: Rule | Sequence[Rule | None] | None,
    jvp: Rule | Sequence[Rule | None] | None = None,
    *,
    nout: int = 1,
    nin: int | None = None,
    family: str = "",
    nondiff_argnums: Sequence[int] = (),
    differentiable: bool = True,
    linear: bool = False,
    first_order_only: str | None = None,
    transpose_jvp_reason: str | None = None,
    fill_zeros: bool = True,
    complex_rules: bool | None = None,
    variadic: bool = False,
    accuracy: str = "entrywise",
    registry: Registry | None = None,
    register: bool = True,
    doc: str = "",
    **metadata: Any,
) -> Op:
    """Declare an op: its numpy forward, VJP, JVP and metadata, validated now.

    ``vjp`` and ``jvp`` are either one rule for all inputs, or a sequence with
    one rule per input (``None`` for an input with no derivative): a per-input
    VJP rule returns that input's cotangent, a per-input JVP rule the output
    tangent's contribution from that input's tangent.  ``jvp=None`` means the
    JVP comes from transposing the VJP (give ``transpose_jvp_reason``).
    ``accuracy="normwise"`` says the forward (and the rules, computed the same way) is
    accurate to a few ulps of each output's largest entry, not of every entry (scipy's
    expm): the checker's numeric reference then models its rounding so (stored in
    ``meta["accuracy"]``; the default, "entrywise", is not stored).
    Extra keyword arguments are checker metadata (``inputs``, ``shapes``,
    ``params``, ``kinks``, ``tolerance``, ``equivalents``, ``gauge``, ...; see
    ``gradcheck.domains``), validated by ``gradcheck.engine.metadata``: an unknown
    key or a value of the wrong kind raises ValueError naming the op and the key.
    """
    if not isinstance(name, str) or not name:
        raise TypeError(f"define_op: name must be a non-empty string, got {name!r}")
    if not callable(forward):
        raise TypeError(f"op {name!r}: forward must be callable, got {type(forward).__name__}")
    if nout < 1:
        raise ValueError(f"op {name!r}: nout must be at least 1, got {nout}")
    meta = validate(name, metadata, _KEYWORDS)
    if accuracy not in ACCURACIES:
        raise ValueError(f"op {name!r}: accuracy must be one of "
                         f"{', '.join(map(repr, ACCURACIES))}, got {accuracy!r}")
    if accuracy != "entrywise":
        meta["accuracy"] = accuracy
    counts: dict[str, int | None] = {}
    rule_forms = {"vjp": vjp, "jvp": jvp}
    vjp_parts = None
    if isinstance(vjp, (list, tuple)):
        counts["vjp"] = len(vjp)
        vjp_parts = tuple(vjp)
        vjp = _per_argument(vjp, "vjp")
    elif vjp is not None:
        if not callable(vjp):
            raise TypeError(f"op {name!r}: vjp must be callable or a sequence of rules")
        counts["vjp"] = _count_inputs(name, vjp, "vjp", 2)
    elif differentiable:
        raise TypeError(
            f"op {name!r}: a differentiable op needs a vjp rule (use zero_derivative(...) or "
            "differentiable=False for ops without derivatives)"
        )
    jvp_parts = None
    if isinstance(jvp, (list, tuple)):
        counts["jvp"] = len(jvp)
        jvp_parts = tuple(jvp)
        jvp = _per_argument(jvp, "jvp")
    elif jvp is not None:
        if not callable(jvp):
            raise TypeError(f"op {name!r}: jvp must be callable or a sequence of rules")
        counts["jvp"] = _count_inputs(name, jvp, "jvp", 2)
    known = {k: v for k, v in counts.items() if v is not None}
    if nin is None and "inputs" in meta:
        nin = len(meta["inputs"])
    if nin is None and known:
        nin = min(known.values())
    for what, n in known.items():
        # a rule takes the inputs positionally, and may take parameters positionally too
        too_few = n < nin if nin is not None else False
        per_input = isinstance(rule_forms.get(what), (list, tuple))
        if too_few or (per_input and n != nin):
            raise TypeError(
                f"op {name!r}: the {what} rule handles {n} inputs but the op has {nin}; "
                f"a {what} rule's signature is {_SIGNATURES[what]}"
            )
    _check_rules_agree(name, rule_forms, known)
    if nin is not None and not variadic:
        _check_calls(name, forward, nin, [
            (what, r) for what, form in (("vjp", vjp_parts or vjp), ("jvp", jvp_parts or jvp))
            for r in (form if isinstance(form, tuple) else (form,)) if r is not None])
    if variadic:  # any number of inputs; ``inputs`` only says how many the checker draws
        nin = None
    for i in nondiff_argnums:
        if nin is not None and not 0 <= i < nin:
            raise ValueError(f"op {name!r}: nondiff_argnums entry {i} is out of range")
    if not variadic:
        forward = _keyword_checked(name, forward, nin, [vjp_parts or vjp, jvp_parts or jvp])
    op = Op(
        name=name, forward=forward, vjp=vjp, jvp=jvp, nout=nout, nin=nin, family=family,
        nondiff_argnums=tuple(nondiff_argnums), differentiable=differentiable, linear=linear,
        first_order_only=first_order_only, transpose_jvp_reason=transpose_jvp_reason,
        fill_zeros=fill_zeros, meta=meta, doc=doc or (forward.__doc__ or ""),
        vjp_parts=vjp_parts, jvp_parts=jvp_parts,
    )
    op.complex_rules = _holds_for_complex(complex_rules, linear, meta)
    if linear and op.jvp is None:
        op.jvp = _linear_jvp(op)
    if register:
        (registry if registry is not None else default_registry).add(op)
    return op


def _keyword_checked(name: str, forward: Callable[..., Any], nin: int | None,
                     forms: Sequence[Any]) -> Callable[..., Any]:
    """``forward`` refusing, before it computes anything, every keyword argument that it or one
    of the op's rules cannot take (numpy's ufunc keywords dtype/casting/where/order for a ufunc
    forward), with a TypeError naming the op, the keyword and the op's keywords.

    A Python forward that takes exactly the keywords its rules take refuses the others itself:
    it stays as it is (a renamed copy, so Python's own error names the op and no call pays for
    a check).  Any other forward is wrapped in the check, worked out once here."""
    forward_keys = _keyword_names(forward, nin or 0)
    rule_keys: frozenset[str] | None = None
    for form in forms:
        for rule in form if isinstance(form, tuple) else (form,):
            if rule is not None:
                keys = _keyword_names(rule, 2 + (nin or 0))
                if keys is not None:
                    rule_keys = keys if rule_keys is None else rule_keys & keys
    if forward_keys is None:
        if rule_keys is None:  # the forward and every rule take any keyword
            return forward
        accepted = rule_keys
    elif rule_keys is None or forward_keys <= rule_keys:
        return _renamed(forward, name)
    else:
        accepted = forward_keys & rule_keys

    @functools.wraps(forward)
    def checked(*args: Any, **params: Any) -> Any:
        if params and not params.keys() <= accepted:
            raise _keyword_error(name, forward, params.keys() - accepted, accepted)
        return forward(*args, **params)
    return checked


def _keyword_names(fn: Callable[..., Any], skip: int) -> frozenset[str] | None:
    """The keywords ``fn`` takes after its first ``skip`` positional arguments: None when it
    takes any (``**params``); the empty set when its signature cannot be read, as for a numpy
    ufunc (its keywords dtype, casting, where, ... are not parameters of an op)."""
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return frozenset()
    if any(p.kind is p.VAR_KEYWORD for p in params):
        return None
    slots = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return frozenset(p.name for p in params if p.kind is p.KEYWORD_ONLY
                     or (p.kind is p.POSITIONAL_OR_KEYWORD and p not in slots[:skip]))


def _keyword_error(name: str, forward: Callable[..., Any], unknown: Iterable[str],
                   accepted: frozenset[str]) -> TypeError:
    """The error for keywords an op does not take."""
    keyword = sorted(unknown)[0]
    if keyword == "out":  # numpy's ``out=None`` never gets here: the op drops it
        return TypeError(f"op {name!r}: out= is not supported (ops return a new array, they "
                         "never write into one): assign the result instead")
    ufunc = (" (numpy's ufunc keywords dtype/casting/where/order/subok are not)"
             if isinstance(forward, np.ufunc) else "")
    supported = sorted(accepted)
    takes = f"supported: {', '.join(supported)}" if supported else "it takes none"
    return TypeError(f"op {name!r}: keyword argument {keyword!r} is not supported{ufunc}; "
                     f"{takes}")


def _renamed(forward: Callable[..., Any], name: str) -> Callable[..., Any]:
    """A copy of the Python function ``forward`` named after the op, so that Python's error
    for an unexpected keyword or a wrong count names the op (``var() got an unexpected
    keyword argument 'correction'``), not ``<lambda>`` or an internal function."""
    if type(forward) is not types.FunctionType or forward.__qualname__ == name:
        return forward
    copy = types.FunctionType(forward.__code__, forward.__globals__, name,
                              forward.__defaults__, forward.__closure__)
    copy.__kwdefaults__ = forward.__kwdefaults__
    copy.__dict__.update(forward.__dict__)
    copy.__doc__, copy.__module__ = forward.__doc__, forward.__module__
    copy.__annotations__ = forward.__annotations__
    copy.__qualname__ = name
    return copy


_COMPLEX_DOMAINS = tuple(type(d) for d in COMPLEX_NAMED.values())


def _holds_for_complex(declared: bool | None, linear: bool, meta: dict[str, Any]) -> bool:
    """Whether an op's rules hold for complex values: ``complex_rules=`` when given, else
    for a linear op (numpy's linear forwards are complex-linear, so the real transpose is
    the JAX-convention VJP) and an op the checker draws complex inputs for
    (``complex_inputs=``, or a complex domain in ``inputs=``)."""
    if declared is not None:
        return declared
    return linear or "complex_inputs" in meta or any(
        isinstance(d, _COMPLEX_DOMAINS) or (isinstance(d, Fixed) and np.iscomplexobj(d.value))
        for d in meta.get("inputs", ()))


def refuse_complex(op: Op, args: Sequence[Any], positions: Iterable[int], tracer: str) -> None:
    """Raise TypeError when an input at ``positions`` of ``args`` is complex and ``op``'s
    rules hold for real values only: its derivative there would be silently wrong (also
    when that input is a constant: ``huber(x, y_complex)``'s rule for x is real-only)."""
    for i in positions:
        dtype = getattr(value_of(args[i]), "dtype", None)
        if dtype is not None and dtype.kind == "c":
            raise TypeError(
                f"{tracer}: op {op.name!r} cannot be differentiated at a complex input: input "
                f"{i} has dtype {dtype}, and the op's rules hold for real values only. The ops "
                "that take complex values are listed in gradcheck's README (Complex numbers) "
                "and have op.complex_rules True; otherwise differentiate gnp.real(z) and "
                "gnp.imag(z) separately. An op of your own whose rules hold for complex values "
                "says so with define_op(..., complex_rules=True) or complex_inputs=(...)")


# define_op's own keywords: a misspelt one would otherwise be taken for metadata
_KEYWORDS = tuple(inspect.signature(define_op).parameters)[2:]
