"""JAX as a reference and as a target: ``fn`` is written with ``jax.numpy`` (``jax.jit``,
``jax.custom_jvp`` and ``jax.custom_vjp`` functions too) and runs in float64.

One adapter: :class:`JaxProblem` computes the checker's paths with JAX itself;
:class:`JaxOracle` (the lazy import, its status, and the functional
``vjp``/``jvp``/``double_vjp``/``hvp`` on ``fn, args, argnums``) and :class:`JaxReference`
(an op's declared ``"jax"`` or ``"numpy"`` equivalent as a reference of the checker) both
run it.

``vjp``          ``jax.vjp``
``jvp``          ``jax.jvp`` (a ``custom_vjp`` function has no forward mode: unsupported,
                 with JAX's own words)
``double_vjp``   ``jax.vjp`` of the VJP as a function of its cotangent, at the dummy: the
                 VJP transposed by JAX's reverse mode, so a backward rule that is not linear
                 in its cotangent makes the result depend on the dummy's value
``hvp_fwd_rev``  ``jax.jvp`` of ``(x, v) -> J(x)^T v``
``hvp_rev_rev``  ``jax.vjp`` of ``(x, v) -> J(x)^T v``
``hvp_rev_fwd``  ``jax.vjp`` of ``(x, u) -> J(x) u``

JAX traces functions and keeps no record of which values a traced result was computed from
once it is evaluated, so ``double_vjp`` returns None for that flag (a value leak is still
found by comparing dummies).

JAX computes in float32 unless x64 is on, whatever its inputs; the adapter switches x64 on
for its own calls only (``jax.enable_x64(True)`` around each path), so the user's process
keeps its own setting.  ``fn`` may return float32 or complex64 (a cast inside): each
cotangent is handed to JAX in its output's dtype, and the checker's tolerances follow the
coarser output.  Its output may be any pytree (a dict, nested tuples): the checker sees its
leaves as a flat tuple, in ``jax.tree_util``'s fixed order (a dict's keys sorted); an integer
or boolean leaf has no derivative and is refused with a message naming it.  Fixed (not
differentiated) arrays reach ``fn`` as JAX arrays, so JAX methods such as ``x.at[i].set(v)``
work on them; a ``jax.jit`` function's static arguments (``static_argnums`` or
``static_argnames``) get Python scalars instead, which JAX can hash.
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from types import ModuleType
from typing import Any

import numpy as np

from gradcheck.engine import RuleError
from gradcheck.oracles.base import EquivalentReference, NoEquivalent, Oracle, Unsupported
from gradcheck.oracles.conventions import convention_of, precise, upcast
from gradcheck.oracles.inputs import Call

__all__ = ["JaxOracle", "JaxProblem", "JaxReference", "import_jax", "jax_errors"]

Arrays = list[np.ndarray]


def import_jax() -> ModuleType:
    """The ``jax`` module, its x64 setting left as the user has it (the adapter turns x64 on
    around its own calls only, see :meth:`JaxProblem._running`)."""
    import jax
    import jax.numpy  # noqa: F401  (the equivalents' namespace)
    import jax.scipy.special  # noqa: F401

    return jax


#: JAX's check of a ``custom_vjp`` bwd rule's outputs against the primal inputs.
_BWD_TYPES = re.compile(r"produced an output of (?:type|shape/dtype) (\w+)\[([\d,]*)\] "
                        r"corresponding to an input of (?:type|shape/dtype) (\w+)\[([\d,]*)\]")

#: JAX's own refusals to differentiate, by the phrases of its messages (JAX 0.10.2):
#: ``lax.while_loop`` in reverse mode (``_while_transpose_error``), ``jax.pure_callback``,
#: ``io_callback`` and buffer callbacks without a custom rule ("... do not support JVP." /
#: "... do not support transpose."), a ``custom_vjp`` function in forward mode, and a
#: primitive without a JVP or transpose rule.
_REFUSALS = {
    ValueError: ("Reverse-mode differentiation does not work", "do not support JVP",
                 "do not support transpose"),
    TypeError: ("can't apply forward-mode autodiff",),
    NotImplementedError: ("Differentiation rule for", "Transpose rule (for reverse-mode "
                                                      "differentiation)"),
}


#: Words of JAX's own derivative refusals in general, as torch's :data:`~.torch.CANNOT`:
#: ``jax.scipy.special.betainc`` ("Betainc gradient with respect to a and b not supported."),
#: ``polygamma`` with respect to ``m`` ("... is not supported"), a rule left unimplemented.
_CANNOT = ("not supported", "not implemented", "not been implemented", "does not support")


def _is_refusal(error: BaseException) -> bool:
    if any(isinstance(error, kind) and any(p in str(error) for p in phrases)
           for kind, phrases in _REFUSALS.items()):
        return True
    return any(p in str(error) for p in _CANNOT) and _raised_by_jax(error)


def _raised_by_jax(error: BaseException) -> bool:
    """Whether ``error`` was raised in JAX's own code (the innermost frame of its traceback is
    a ``jax`` or ``jaxlib`` module): the same words raised by the user's function are its own
    failure, never a refusal."""
    tb = error.__traceback__
    if tb is None:
        return False
    while tb.tb_next is not None:
        tb = tb.tb_next
    module = str(tb.tb_frame.f_globals.get("__name__", ""))
    return module.split(".")[0] in ("jax", "jaxlib")


#: JAX's words when a ``jax.jit`` function's static argument cannot be hashed.
_NON_HASHABLE = "Non-hashable static arguments are not supported"


def _static_positions(fn: Any) -> tuple[int, ...]:
    """The positions a ``jax.jit`` function takes as static (its ``static_argnums``, with
    those of its ``static_argnames``), through ``functools.partial`` keyword bindings; ``()``
    for any other function."""
    while isinstance(fn, functools.partial) and not fn.args:
        fn = fn.func
    info = getattr(fn, "_jit_info", None)  # jax.jit's (the names already turned into numbers)
    return tuple(getattr(info, "static_argnums", None) or ())


def _static_value(value: Any, i: int, name: str) -> Any:
    """A fixed input at a static position of a ``jax.jit`` function as JAX can hash it: a
    0-d array as its Python scalar; any other array is refused, naming the input."""
    if not isinstance(value, (np.ndarray, np.generic)):
        return value
    if np.ndim(value) == 0:
        return value.item()
    raise ValueError(f"{name}: input {i} is a static argument of the jax.jit function "
                     f"(static_argnums or static_argnames), but an array of shape "
                     f"{np.shape(value)}, which JAX cannot hash: give it in params= or bind it "
                     "with functools.partial")


@contextmanager
def jax_errors(name: str, path: str) -> Iterator[None]:
    """JAX's refusal to differentiate a function in some mode as Unsupported, in its words; a
    ``custom_vjp`` bwd output of the wrong shape or dtype as a RuleError of that kind."""
    try:
        yield
    except (ValueError, TypeError, NotImplementedError) as error:
        if _NON_HASHABLE in str(error):  # a static argument gradcheck could not see as one
            raise ValueError(f"{name}: a static argument of a jax.jit function got an array, "
                             "which JAX cannot hash (gradcheck hands fixed inputs to JAX as "
                             "arrays): give it in params= or bind it with functools.partial; "
                             f"JAX said: {error}") from error
        if _is_refusal(error):
            raise Unsupported(f"jax cannot compute the {path} of {name}: {error}") from error
        found = _BWD_TYPES.search(str(error)) if isinstance(error, ValueError) else None
        if found is None:
            raise
        kind = "shape" if found.group(2) != found.group(4) else "dtype"
        raise RuleError(name, path, kind, str(error)) from error


class JaxProblem:
    """``fn(*args)`` written with JAX; ``positions`` are the differentiated arguments (float64,
    or complex128).  Every path runs under :meth:`_running` (x64 on, JAX's refusals
    translated); fixed arrays are JAX arrays, made once inside it."""

    #: JAX's VJP of holomorphic f is ``c·f'(z)`` (see :mod:`.conventions`).
    cotangent_convention = convention_of("jax")

    def __init__(self, fn: Callable[..., Any], args: Sequence[Any], positions: Sequence[int],
                 name: str) -> None:
        self.jax = import_jax()
        self.fn, self.name = fn, name
        self.args = [_float64(a) for a in args]
        self.positions = tuple(positions)
        n = len(self.args)
        #: The positions ``fn`` (a ``jax.jit`` function) takes as static arguments.
        self._static = {i % n for i in _static_positions(fn) if -n <= i < n}
        self.primals: Arrays = [upcast(self.args[i]) for i in self.positions]
        self.counts: Counter[str] = Counter()
        #: Whether ``fn`` returned a tuple (or any pytree but a bare array; known after its
        #: first call).
        self.returns_tuple = False
        self._fixed: list[Any] | None = None
        self._out_dtypes: list[Any] | None = None

    @contextmanager
    def _running(self, path: str) -> Iterator[None]:
        """x64 on for this call only (the user's setting is restored after it: JAX computes
        in float32 otherwise), and JAX's refusals to differentiate as Unsupported."""
        with self.jax.enable_x64(True), jax_errors(self.name, path):
            yield

    def _full(self, primals: Sequence[Any]) -> list[Any]:
        """``fn``'s arguments: ``primals`` at the positions, JAX arrays elsewhere (made in x64,
        so floating ones stay float64; integer and boolean ones keep their dtypes)."""
        if self._fixed is None:
            self._fixed = [self._fixed_value(i, a) for i, a in enumerate(self.args)]
        full = list(self._fixed)
        for i, p in zip(self.positions, primals, strict=True):
            full[i] = p
        return full

    def _fixed_value(self, i: int, value: Any) -> Any:
        """Argument ``i`` as ``fn`` gets it: a static one of a ``jax.jit`` function as a
        Python scalar (JAX hashes it; a differentiated one is refused), an array as a JAX
        array, anything else as it is."""
        if i in self._static:
            if i in self.positions:
                raise ValueError(f"{self.name}: input {i} is a static argument of the jax.jit "
                                 "function (static_argnums or static_argnames), which JAX "
                                 "cannot differentiate: hold it fixed (name the differentiated "
                                 "inputs in wrt=, or give it in params=)")
            return _static_value(value, i, self.name)
        if isinstance(value, (np.ndarray, np.generic)):
            return self.jax.numpy.asarray(value)
        return value

    def _f(self, *primals: Any) -> tuple[Any, ...]:
        """``fn``'s output pytree as a flat tuple of its leaves (``tree_flatten``'s order)."""
        out = self.fn(*self._full(primals))
        tree_util = self.jax.tree_util
        paths_leaves, tree = tree_util.tree_flatten_with_path(out)
        self.returns_tuple = not tree_util.treedef_is_leaf(tree)
        leaves = [self.jax.numpy.asarray(leaf) for _, leaf in paths_leaves]
        if not leaves:
            raise ValueError(f"{self.name}: returned {out!r}, which holds no array to "
                             "differentiate")
        for k, (path, leaf) in enumerate(zip((p for p, _ in paths_leaves), leaves,
                                             strict=True)):
            if not self.jax.numpy.issubdtype(leaf.dtype, self.jax.numpy.inexact):
                raise ValueError(self._not_floating(out, tree_util.keystr(path), k, leaf))
        self._out_dtypes = [leaf.dtype for leaf in leaves]
        return tuple(leaves)

    def _not_floating(self, out: Any, where: str, k: int, leaf: Any) -> str:
        """Why an integer or boolean output leaf is refused, and what to do instead."""
        label = f"output {where}" if where else "the output"
        why = (f"{self.name}: {label} has dtype {leaf.dtype}, which has no derivative "
               "(JAX's float0 cotangent); ")
        flat = isinstance(out, (tuple, list)) and all(_is_array(o) for o in out)
        floating = [i for i, o in enumerate(out) if _is_floating(self.jax, o)] if flat else []
        if floating:  # outputs= selects positions of a flat tuple
            return why + f"check the floating outputs only with outputs={floating}"
        return why + "return only the floating leaves from fn (a wrapper function)"

    def _g(self, xs: Sequence[Any], vs: Sequence[Any]) -> tuple[Any, ...]:
        """``J(x)^T v``, differentiable in x and v."""
        _, pull = self.jax.vjp(self._f, *xs)
        return tuple(pull(tuple(vs)))

    def _k(self, xs: Sequence[Any], us: Sequence[Any]) -> tuple[Any, ...]:
        """``J(x) u``, differentiable in x and u."""
        _, tangent = self.jax.jvp(self._f, tuple(xs), tuple(us))
        return tuple(tangent)

    def _in(self, values: Sequence[Any]) -> tuple[Any, ...]:
        """Primal-space values: complex ones stay complex (complex128), real ones float64."""
        return tuple(self.jax.numpy.asarray(upcast(v)) for v in values)

    def _out(self, values: Sequence[Any], xs: Sequence[Any]) -> tuple[Any, ...]:
        """Output-space values (cotangents, dummies) in each output's dtype, as JAX requires:
        float32 for a float32 output, complex64 for a complex64 one."""
        if self._out_dtypes is None:  # the output dtypes, without running fn's computation
            self.jax.eval_shape(self._f, *xs)
        dtypes = self._out_dtypes or []
        if len(dtypes) != len(values):
            return self._in(values)  # the checker reports the mismatch in number
        return tuple(self.jax.numpy.asarray(upcast(v)).astype(d)
                     for v, d in zip(values, dtypes, strict=True))

    @staticmethod
    def _arrays(values: Sequence[Any]) -> Arrays:
        return [np.array(v) for v in values]

    def forward(self, primals: Sequence[Any]) -> Arrays:
        self.counts["forward"] += 1
        with self._running("forward"):
            return self._arrays(self._f(*self._in(primals)))

    def vjp(self, primals: Sequence[Any], cotangents: Sequence[Any]) -> Arrays:
        self.counts["vjp"] += 1
        with self._running("reverse mode"):
            xs = self._in(primals)
            return self._arrays(self._g(xs, self._out(cotangents, xs)))

    def jvp(self, primals: Sequence[Any], tangents: Sequence[Any]) -> Arrays:
        self.counts["jvp"] += 1
        with self._running("forward mode"):
            return self._arrays(self._k(self._in(primals), self._in(tangents)))

    def double_vjp(self, primals: Sequence[Any], tangents: Sequence[Any],
                   dummies: Sequence[Any]) -> tuple[Arrays, None]:
        self.counts["double_vjp"] += 1
        with self._running("reverse mode of the VJP"):
            xs = self._in(primals)
            _, transpose = self.jax.vjp(lambda *v: self._g(xs, v), *self._out(dummies, xs))
            return self._arrays(transpose(self._in(tangents))), None

    def hvp_fwd_rev(self, primals: Sequence[Any], cotangents: Sequence[Any],
                    tangents: Sequence[Any], cotangent_tangents: Sequence[Any]) -> Arrays:
        self.counts["hvp_fwd_rev"] += 1
        n = len(primals)
        with self._running("forward mode of the VJP"):
            xs = self._in(primals)
            _, out = self.jax.jvp(lambda *z: self._g(z[:n], z[n:]),
                                  (*xs, *self._out(cotangents, xs)),
                                  (*self._in(tangents), *self._out(cotangent_tangents, xs)))
            return self._arrays(out)

    def hvp_rev_rev(self, primals: Sequence[Any], cotangents: Sequence[Any],
                    second: Sequence[Any]) -> tuple[Arrays, Arrays]:
        self.counts["hvp_rev_rev"] += 1
        n = len(primals)
        with self._running("reverse mode of the VJP"):
            xs = self._in(primals)
            _, pull = self.jax.vjp(lambda *z: self._g(z[:n], z[n:]),
                                   *xs, *self._out(cotangents, xs))
            res = self._arrays(pull(self._in(second)))
        return res[:n], res[n:]

    def hvp_rev_fwd(self, primals: Sequence[Any], tangents: Sequence[Any],
                    cotangents: Sequence[Any]) -> tuple[Arrays, Arrays]:
        self.counts["hvp_rev_fwd"] += 1
        n = len(primals)
        with self._running("forward mode"):
            xs = self._in(primals)
            _, pull = self.jax.vjp(lambda *z: self._k(z[:n], z[n:]),
                                   *xs, *self._in(tangents))
            res = self._arrays(pull(self._out(cotangents, xs)))
        return res[:n], res[n:]


def _is_array(value: Any) -> bool:
    """Whether ``value`` (a part of ``fn``'s output) is one array (a pytree leaf)."""
    return hasattr(value, "dtype") or isinstance(value, (bool, int, float, complex))


def _is_floating(jax: ModuleType, value: Any) -> bool:
    """Whether ``value`` (an array in ``fn``'s output) is floating or complex."""
    return bool(jax.numpy.issubdtype(jax.numpy.result_type(value), jax.numpy.inexact))


def _float64(value: Any) -> Any:
    """Floating arrays (numpy or JAX) as float64 numpy arrays, complex ones as complex128;
    anything else as it is."""
    return precise(value)


class JaxOracle(Oracle):
    """The ``jax`` reference (install with ``pip install gradcheck[jax]``)."""

    name = "jax"
    extra = "jax"

    def _import(self) -> ModuleType:
        return import_jax()

    def problem(self, call: Call) -> JaxProblem:
        return JaxProblem(call.fn, call.args, call.argnums, call.name)


class JaxReference(EquivalentReference):
    """JAX as a reference of the checker: the op's ``"jax"`` (or ``"numpy"``) equivalent,
    differentiated by :class:`JaxProblem` in float64."""

    name = "jax"
    distributions = ("jax", "jaxlib")

    def oracle(self) -> Oracle:
        return JaxOracle()

    def bind(self, target: Any, example: Any) -> Any:
        problem = super().bind(target, example)
        equivalent = problem.fn

        def fn(*args: Any) -> Any:
            # e.g. jnp.take's mode="raise": "The 'raise' mode to jnp.take is not supported."
            try:
                return equivalent(*args)
            except NotImplementedError as error:
                raise NoEquivalent(f"jax cannot compute {target.name} here: {error}") from error
        problem.fn = fn
        return problem

    def namespace(self, module: ModuleType) -> Any:
        return module.numpy
