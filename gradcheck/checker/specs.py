"""Input specs: what ``check(target, inputs=..., params=..., wrt=..., outputs=...)`` and a suite
row say about the inputs, resolved once, with errors that name the target, the input and the
key.

``inputs``   one entry per positional input: an example array (held as given), a
             :class:`~gradcheck.domains.Domain`, a domain's name (``"positive"``), or a
             table naming a domain with its arguments (``{"domain": "interval", "low": -3,
             "high": -0.1}``: what a suite row writes as an inline TOML table).
``params``   keyword arguments: a fixed value, or a *list* of choices to explore (pass a
             tuple for a fixed list-like value).
``wrt``      positions of the differentiated inputs (default: every floating input that is
             not declared non-differentiable); the others are held fixed.
``outputs``  positions of the outputs checked (default: all).
``shapes``   a signature with one group per input (``"(...,n,n),(n)"``): dimension names,
             sizes and ``...``; a matrix domain's group ends in two dimensions (equal ones
             for a square domain such as ``spd``).

:func:`check_call` and :func:`check_given` check ``inputs`` and ``params`` against the
target's signature, and
:func:`check_param_refs` that a domain naming a param (``num_segments = "nseg"``) names one
the examples draw.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from gradcheck.checker.sampling import parse_signature
from gradcheck.domains import Domain, Fixed, domain_from_table, domain_named
from gradcheck.domains_complex import COMPLEX_NAMED

__all__ = ["resolve_inputs", "split_params", "resolve_positions", "signature_for",
           "bind_given", "select_outputs", "check_shapes", "is_complex", "complex_inputs",
           "check_call", "check_given", "check_param_refs"]

#: Domain arguments that may hold the name of a param instead of a value (segment ids'
#: ``num_segments``, indices' ``axis``).
PARAM_ARGUMENTS = ("num_segments", "axis")


def resolve_inputs(inputs: Any, who: str) -> list[Domain]:
    """Each input as a domain: arrays become :class:`Fixed`, names are looked up."""
    if isinstance(inputs, str):  # iterated, 'real' would be four inputs 'r', 'e', 'a', 'l'
        raise TypeError(f"gradcheck.check: {who}: inputs= must be a list or tuple with one "
                        f"entry per positional input, got the string {inputs!r}; for one "
                        f"input write inputs=[{inputs!r}]")
    if inputs is None or isinstance(inputs, (np.ndarray, Domain)) or \
            (isinstance(inputs, (list, tuple)) and not inputs):
        raise TypeError(f"gradcheck.check: {who} needs inputs=: a sequence with one entry per "
                        "positional input (an example array, a Domain, or a domain name such "
                        "as 'positive')")
    if not isinstance(inputs, (list, tuple)):
        # a dict or a set would be read by its keys (taken for domain names), a generator
        # once: neither says which input is which
        raise TypeError(f"gradcheck.check: {who}: inputs= must be a list or tuple with one "
                        f"entry per positional input, got a {type(inputs).__name__}")
    return [_input_domain(x, f"gradcheck.check: {who}, input {i}")
            for i, x in enumerate(inputs)]


def _input_domain(x: Any, where: str) -> Domain:
    """One entry of ``inputs`` as a domain; ``where`` names the target and the input."""
    if isinstance(x, Domain):
        return x
    if isinstance(x, str):
        return domain_named(x, where)
    if isinstance(x, dict):
        if not isinstance(x.get("domain"), str):
            raise ValueError(f"{where}: a table input needs domain = \"<name>\" (a domain's "
                             f"name, such as \"interval\") and the domain's arguments, got "
                             f"{x!r}")
        return domain_from_table(x, where)
    if isinstance(x, type) and issubclass(x, Domain):
        raise TypeError(f"{where}: the domain class {x.__name__} is given, not a domain; "
                        f"give an instance ({x.__name__}(...)) or a domain's name")
    try:
        array = np.array(x)
    except Exception as e:  # noqa: BLE001 - named in the message
        raise TypeError(f"{where}: not an array, a Domain or a domain name: "
                        f"{type(x).__name__} ({e})") from None
    if array.dtype.kind not in "biufc":
        hint = "; a list is read as an array, so write a domain's name without brackets" \
            if isinstance(x, (list, tuple)) and array.dtype.kind in "US" else \
            "; pass a non-array argument in params= or bind it with functools.partial"
        raise TypeError(f"{where}: not an array of numbers, a Domain or a domain name: "
                        f"{type(x).__name__} {x!r:.80} (as an array: dtype {array.dtype})"
                        f"{hint}")
    return Fixed(array)


def split_params(params: Any, who: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """``params`` as (fixed values, choices to explore): a list is choices, a callable the
    choices for the drawn shapes (``lambda shapes: [...]``, as ``define_op`` takes them),
    anything else a fixed value."""
    if params is None:
        return {}, {}
    if not isinstance(params, dict):
        raise TypeError(f"gradcheck.check: {who}, params= must be a dict of keyword arguments, "
                        f"got {type(params).__name__}")
    fixed, space = {}, {}
    for name, value in params.items():
        if not isinstance(name, str) or not name.isidentifier():
            raise ValueError(f"gradcheck.check: {who}, params: {name!r} is not a keyword name")
        if isinstance(value, list):
            if not value:
                raise ValueError(f"gradcheck.check: {who}, params[{name!r}]: an empty list of "
                                 "choices")
            space[name] = list(value)
        elif callable(value) and not isinstance(value, type):
            space[name] = value  # choices for the drawn shapes
        else:
            fixed[name] = value
    return fixed, space


def resolve_positions(value: Any, count: int | None, who: str, key: str) -> tuple[int, ...] | None:
    """``wrt`` or ``outputs`` as a tuple of valid positions (None: the default)."""
    if value is None:
        return None
    if isinstance(value, (str, bytes, Mapping)) or \
            not isinstance(value, (int, np.integer, Iterable)):
        raise TypeError(f"gradcheck.check: {who}, {key}= must be a position (an integer) or a "
                        f"list of positions, got {type(value).__name__} {value!r:.80}")
    items = (value,) if isinstance(value, (int, np.integer)) else \
        tuple(np.ravel(value).tolist()) if isinstance(value, np.ndarray) else tuple(value)
    if not items:
        raise ValueError(f"gradcheck.check: {who}, {key}= is empty")
    out = []
    for i in items:
        if not isinstance(i, (int, np.integer)) or isinstance(i, bool):
            raise TypeError(f"gradcheck.check: {who}, {key}: positions are integers, got {i!r}")
        if count is not None and not -count <= int(i) < count:
            raise ValueError(f"gradcheck.check: {who}, {key}: position {i} is out of range for "
                             f"{count} {'inputs' if key == 'wrt' else 'outputs'}")
        out.append(int(i) % count if count else int(i))
    return tuple(dict.fromkeys(out))


def _signature(fn: Callable[..., Any]) -> list[inspect.Parameter] | None:
    """``fn``'s parameters, or None when it has no signature to read (left to its call)."""
    try:
        return list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return None


def _positional(params: list[inspect.Parameter]) -> list[inspect.Parameter]:
    kind = inspect.Parameter
    return [p for p in params if p.kind in (kind.POSITIONAL_ONLY, kind.POSITIONAL_OR_KEYWORD)]


def check_call(fn: Callable[..., Any], count: int, names: Sequence[str], who: str) -> None:
    """Raise unless ``fn`` takes ``count`` positional inputs and the keyword params
    ``names``: a param that is one of the inputs (given twice), or more inputs than ``fn``
    takes.  A function without a signature to read is left to its call."""
    params = _signature(fn)
    if params is None:
        return
    kind = inspect.Parameter
    positional = _positional(params)
    for i, p in enumerate(positional[:count]):
        if p.name in names and p.kind is kind.POSITIONAL_OR_KEYWORD:
            raise ValueError(f"gradcheck.check: {who}, params: {p.name!r} is given twice, as "
                             f"input {i} (inputs= gives {count} positional input"
                             f"{'s' * (count != 1)}) and in params=; give it once: drop it "
                             f"from params=, or drop input {i} from inputs= to pass it by "
                             "keyword")
    if count > len(positional) and not any(p.kind is kind.VAR_POSITIONAL for p in params):
        taken = ", ".join(p.name for p in positional) or "none"
        raise ValueError(f"gradcheck.check: {who}: inputs= gives {count} inputs, but it takes "
                         f"{len(positional)} positional argument{'s' * (len(positional) != 1)}"
                         f" ({taken}); give one entry per positional argument, keyword "
                         "arguments in params=")


def check_given(fn: Callable[..., Any], count: int, names: Sequence[str], who: str) -> None:
    """Raise when ``names`` are all of ``fn``'s params and one without a default is given
    neither as one of the ``count`` inputs nor among them."""
    params = _signature(fn)
    if params is None:
        return
    kind = inspect.Parameter
    for p in _positional(params)[count:] + [p for p in params if p.kind is kind.KEYWORD_ONLY]:
        if p.default is kind.empty and p.name not in names:
            raise ValueError(f"gradcheck.check: {who}: its parameter {p.name!r} has no default "
                             f"and is given neither in inputs= ({count} input"
                             f"{'s' * (count != 1)}) nor in params=")


def check_param_refs(domains: Sequence[Domain] | None, params: Any, who: str) -> None:
    """Raise when an input's domain names a param (segment ids' ``num_segments = "nseg"``,
    indices' ``axis``) that is not among ``params``, the params examples are drawn with (a
    dict by name; a callable drawing them all names none up front and is not checked)."""
    if not domains or callable(params):
        return
    known = sorted(params or {})
    for i, domain in enumerate(domains):
        for argument in PARAM_ARGUMENTS:
            value = getattr(domain, argument, None)
            if isinstance(value, str) and value not in known:
                raise ValueError(f"gradcheck.check: {who}, input {i} ({domain.describe()}): "
                                 f"{argument} names the param {value!r}, which is not among "
                                 f"the params ({', '.join(known) or 'none'}): give it in "
                                 f"params= (a fixed value or choices), or give {argument} as "
                                 "a number")


def signature_for(domains: Sequence[Domain], shapes: Any) -> Any:
    """The shape signature: as given, else one broadcasting group per drawn input (a matrix
    domain's own, ``"(...,n,n)"``) and the literal shape of each given array (drawn inputs
    beside given arrays take the shape the given ones broadcast to)."""
    if shapes is not None:
        return bind_given(shapes, domains) if isinstance(shapes, str) else shapes
    given = [np.shape(d.value) for d in domains if isinstance(d, Fixed)]
    # beside given arrays, a drawn input takes their broadcast shape
    try:
        drawn = "(" + ",".join(str(n) for n in np.broadcast_shapes(*given)) + ")" if given \
            else "(...)"
    except ValueError:  # given arrays of unrelated shapes (values and indices): any shape
        drawn = "(...)"
    return ",".join("(" + ",".join(str(n) for n in np.shape(d.value)) + ")"
                    if isinstance(d, Fixed) else
                    d.signature if d.signature != "(...)" else drawn for d in domains)


def bind_given(shapes: str, domains: Sequence[Domain], who: str = "") -> str:
    """``shapes`` with each given array's group replaced by its shape, and what the given
    arrays fix (dimension names, the batch of a ``...`` group) carried into the drawn inputs'
    groups: ``"(m,n),(n,k)"`` with a given (3, 4) array first is ``"(3,4),(4,k)"``.  Raise
    when a given array does not fit its group, naming the input."""
    groups = parse_signature(shapes)
    if not any(isinstance(d, Fixed) for d in domains) or len(groups) != len(domains):
        return shapes
    sizes: dict[str, int] = {}
    batches = []
    for i, (domain, group) in enumerate(zip(domains, groups, strict=True)):
        if isinstance(domain, Fixed):
            shape = tuple(np.shape(domain.value))
            where = (f"gradcheck.check: {who}, shapes: input {i} is {domain.describe()}, "
                     f"which does not fit its group ({','.join(group)}): ")
            batch = _fit(shape, group, sizes, where)
            if batch is not None:
                batches.append(batch)
    try:
        batch = np.broadcast_shapes(*batches) if batches else None
    except ValueError:
        raise ValueError(f"gradcheck.check: {who}, shapes: the given arrays' batch "
                         f"dimensions {', '.join(map(str, batches))} do not broadcast "
                         "together") from None
    out = []
    for domain, group in zip(domains, groups, strict=True):
        if isinstance(domain, Fixed):
            dims = [str(n) for n in np.shape(domain.value)]
        else:
            dims = []
            for t in group:
                if t == "...":
                    dims.extend(["..."] if batch is None else [str(n) for n in batch])
                else:
                    dims.append(str(sizes[t]) if t in sizes else t)
        out.append("(" + ",".join(dims) + ")")
    return ",".join(out)


def _fit(shape: tuple[int, ...], group: list[str], sizes: dict[str, int],
         where: str) -> tuple[int, ...] | None:
    """Match a given array's shape to its group, binding names in ``sizes``; its batch (the
    dimensions ``...`` stands for), or None for a group without ``...``."""
    if "..." in group:
        k = group.index("...")
        pre, post = group[:k], group[k + 1:]
        if len(shape) < len(pre) + len(post):
            raise ValueError(f"{where}it has {len(shape)} dimension(s), the group needs at "
                             f"least {len(pre) + len(post)}")
        core = list(zip(pre, shape[:len(pre)], strict=True)) + \
            list(zip(post, shape[len(shape) - len(post):], strict=True))
        batch: tuple[int, ...] | None = shape[len(pre):len(shape) - len(post)]
    else:
        if len(shape) != len(group):
            raise ValueError(f"{where}it has {len(shape)} dimension(s), the group "
                             f"{len(group)}")
        core, batch = list(zip(group, shape, strict=True)), None
    for token, n in core:
        if token.isdigit() and int(token) != n:
            raise ValueError(f"{where}its dimension {token!r} is {n}")
        if not token.isdigit() and sizes.setdefault(token, n) != n:
            raise ValueError(f"{where}its dimension {token!r} is {n}, but {sizes[token]} in "
                             "an earlier given array")
    return batch


def check_shapes(shapes: Any, domains: Sequence[Domain] | None, who: str) -> None:
    """Raise unless ``shapes`` is None, a callable drawing shapes, or a signature whose
    tokens are dimension names, sizes and ``...`` (once a group), with one group per input
    of ``domains`` (when known) that the input's domain can fill."""
    if shapes is None or callable(shapes):
        return
    if not isinstance(shapes, str):
        raise TypeError(f"gradcheck.check: {who}, shapes= must be a signature string such as "
                        "'(...,n,n),(n)' (one group per input), got "
                        f"{type(shapes).__name__} {shapes!r}")
    try:
        groups = parse_signature(shapes)
    except ValueError as error:
        raise ValueError(f"gradcheck.check: {who}, shapes: {error}") from None
    for k, group in enumerate(groups, 1):
        for token in group:
            if not (token == "..." or token.isidentifier() or
                    (token.isascii() and token.isdigit())):
                raise ValueError(f"gradcheck.check: {who}, shapes: {token!r} in group {k} of "
                                 f"{shapes!r} is not a dimension name, a size or '...'")
        if group.count("...") > 1:
            raise ValueError(f"gradcheck.check: {who}, shapes: group {k} of {shapes!r} has "
                             "'...' twice (one batch per group)")
    if domains is None:
        return
    if len(groups) != len(domains):
        raise ValueError(f"gradcheck.check: {who}, shapes: {shapes!r} has {len(groups)} groups "
                         f"for {len(domains)} inputs (one group per input)")
    for i, (domain, group) in enumerate(zip(domains, groups, strict=True)):
        _check_matrix_group(domain, group, i, who)
    bind_given(shapes, domains, who)


def _check_matrix_group(domain: Domain, group: list[str], i: int, who: str) -> None:
    """A matrix domain (signature ``"(...,n,n)"``) samples its last two dimensions as a
    matrix, a square one as a square matrix: raise unless ``group`` gives it those."""
    if isinstance(domain, Fixed) or domain.signature == "(...)":
        return
    text = "(" + ",".join(group) + ")"
    what = f"input {i} ({domain.describe()}) is a batch of {'square ' * domain.square}matrices"
    last = group[-2:]
    if len(last) < 2 or "..." in last:
        raise ValueError(f"gradcheck.check: {who}, shapes: {what}: its group {text!r} needs two "
                         f"last dimensions, such as {domain.signature!r}")
    if domain.square and last[0] != last[1]:
        raise ValueError(f"gradcheck.check: {who}, shapes: {what}: its group {text!r} ends in "
                         f"dimensions {last[0]!r} and {last[1]!r}; give them the same name or "
                         f"size, such as {domain.signature!r}")


def is_complex(domain: Domain) -> bool:
    """Whether ``domain`` draws complex values (a complex domain, or a given complex array)."""
    if isinstance(domain, Fixed):
        return np.asarray(domain.value).dtype.kind == "c"
    return any(type(domain) is type(d) for d in COMPLEX_NAMED.values())


def complex_inputs(domains: Sequence[Domain] | None,
                   declared: Sequence[Domain] | None) -> list[Domain] | None:
    """For a check whose ``dtypes`` ask for complex values: an op's declared
    ``complex_inputs`` when no inputs were given and its own inputs are real (None: keep the
    inputs as they are; a real input may still give complex outputs, as ``rfft`` does)."""
    if declared and not (domains and any(is_complex(d) for d in domains)):
        return list(declared)
    return None


def select_outputs(out: Any, outputs: tuple[int, ...]) -> Any:
    """The chosen outputs of a function's result (a dict's values in sorted-key order; one
    stays one, several a tuple); a position out of range is a ValueError saying how many
    outputs there are (a function's count is known only once it has run)."""
    leaves = [out[k] for k in sorted(out)] if isinstance(out, dict) else \
        list(out) if isinstance(out, (tuple, list)) else [out]
    n = len(leaves)
    for i in outputs:
        if not -n <= i < n:
            raise ValueError(f"outputs={list(outputs)}: the function returns {n} "
                             f"output{'s' * (n != 1)} (positions {-n} to {n - 1}); there is "
                             f"no output {i}")
    chosen = tuple(leaves[i] for i in outputs)
    return chosen[0] if len(chosen) == 1 else chosen
