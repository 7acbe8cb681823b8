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
found by comparing dummies).  x64 is switched on when the adapter loads JAX: JAX computes in
float32 otherwise, whatever its inputs.
"""

from __future__ import annotations

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
    """The ``jax`` module, with float64 enabled (the references' precision)."""
    import jax
    import jax.numpy  # noqa: F401  (the equivalents' namespace)
    import jax.scipy.special  # noqa: F401

    jax.config.update("jax_enable_x64", True)
    return jax


#: JAX's check of a ``custom_vjp`` bwd rule's outputs against the primal inputs.
_BWD_TYPES = re.compile(r"produced an output of (?:type|shape/dtype) (\w+)\[([\d,]*)\] "
                        r"corresponding to an input of (?:type|shape/dtype) (\w+)\[([\d,]*)\]")


@contextmanager
def jax_errors(name: str, path: str) -> Iterator[None]:
    """JAX's refusal to differentiate a function in some mode as Unsupported, in its words; a
    ``custom_vjp`` bwd output of the wrong shape or dtype as a RuleError of that kind."""
    try:
        yield
    except ValueError as error:
        found = _BWD_TYPES.search(str(error))
        if found is None:
            raise
        kind = "shape" if found.group(2) != found.group(4) else "dtype"
        raise RuleError(name, path, kind, str(error)) from error
    except TypeError as error:
        # e.g. "can't apply forward-mode autodiff (jvp) to a custom_vjp function."
        if "autodiff" not in str(error):
            raise
        raise Unsupported(f"jax cannot compute the {path} of {name}: {error}") from error


class JaxProblem:
    """``fn(*args)`` written with JAX; ``positions`` are the differentiated arguments (float64,
    or complex128)."""

    #: JAX's VJP of holomorphic f is ``c·f'(z)`` (see :mod:`.conventions`).
    cotangent_convention = convention_of("jax")

    def __init__(self, fn: Callable[..., Any], args: Sequence[Any], positions: Sequence[int],
                 name: str) -> None:
        self.jax = import_jax()
        self.fn, self.name = fn, name
        self.args = [_float64(a) for a in args]
        self.positions = tuple(positions)
        self.primals: Arrays = [upcast(self.args[i]) for i in self.positions]
        self.counts: Counter[str] = Counter()
        #: Whether ``fn`` returned a tuple (known after its first call).
        self.returns_tuple = False

    def _f(self, *primals: Any) -> tuple[Any, ...]:
        full: list[Any] = list(self.args)
        for i, p in zip(self.positions, primals, strict=True):
            full[i] = p
        out = self.fn(*full)
        self.returns_tuple = isinstance(out, (tuple, list))
        return tuple(out) if self.returns_tuple else (out,)

    def _g(self, xs: Sequence[Any], vs: Sequence[Any]) -> tuple[Any, ...]:
        """``J(x)^T v``, differentiable in x and v."""
        _, pull = self.jax.vjp(self._f, *xs)
        return tuple(pull(tuple(vs)))

    def _k(self, xs: Sequence[Any], us: Sequence[Any]) -> tuple[Any, ...]:
        """``J(x) u``, differentiable in x and u."""
        _, tangent = self.jax.jvp(self._f, tuple(xs), tuple(us))
        return tuple(tangent)

    def _in(self, values: Sequence[Any]) -> tuple[Any, ...]:
        # complex values stay complex (complex128), real ones are float64
        return tuple(self.jax.numpy.asarray(upcast(v)) for v in values)

    @staticmethod
    def _arrays(values: Sequence[Any]) -> Arrays:
        return [np.array(v) for v in values]

    def forward(self, primals: Sequence[Any]) -> Arrays:
        self.counts["forward"] += 1
        return self._arrays(self._f(*self._in(primals)))

    def vjp(self, primals: Sequence[Any], cotangents: Sequence[Any]) -> Arrays:
        self.counts["vjp"] += 1
        with jax_errors(self.name, "reverse mode"):
            return self._arrays(self._g(self._in(primals), self._in(cotangents)))

    def jvp(self, primals: Sequence[Any], tangents: Sequence[Any]) -> Arrays:
        self.counts["jvp"] += 1
        with jax_errors(self.name, "forward mode"):
            return self._arrays(self._k(self._in(primals), self._in(tangents)))

    def double_vjp(self, primals: Sequence[Any], tangents: Sequence[Any],
                   dummies: Sequence[Any]) -> tuple[Arrays, None]:
        self.counts["double_vjp"] += 1
        xs = self._in(primals)
        with jax_errors(self.name, "reverse mode of the VJP"):
            _, transpose = self.jax.vjp(lambda *v: self._g(xs, v), *self._in(dummies))
            return self._arrays(transpose(self._in(tangents))), None

    def hvp_fwd_rev(self, primals: Sequence[Any], cotangents: Sequence[Any],
                    tangents: Sequence[Any], cotangent_tangents: Sequence[Any]) -> Arrays:
        self.counts["hvp_fwd_rev"] += 1
        n = len(primals)
        with jax_errors(self.name, "forward mode of the VJP"):
            _, out = self.jax.jvp(lambda *z: self._g(z[:n], z[n:]),
                                  self._in([*primals, *cotangents]),
                                  self._in([*tangents, *cotangent_tangents]))
        return self._arrays(out)

    def hvp_rev_rev(self, primals: Sequence[Any], cotangents: Sequence[Any],
                    second: Sequence[Any]) -> tuple[Arrays, Arrays]:
        self.counts["hvp_rev_rev"] += 1
        n = len(primals)
        with jax_errors(self.name, "reverse mode of the VJP"):
            _, pull = self.jax.vjp(lambda *z: self._g(z[:n], z[n:]),
                                   *self._in([*primals, *cotangents]))
            res = self._arrays(pull(self._in(second)))
        return res[:n], res[n:]

    def hvp_rev_fwd(self, primals: Sequence[Any], tangents: Sequence[Any],
                    cotangents: Sequence[Any]) -> tuple[Arrays, Arrays]:
        self.counts["hvp_rev_fwd"] += 1
        n = len(primals)
        with jax_errors(self.name, "forward mode"):
            _, pull = self.jax.vjp(lambda *z: self._k(z[:n], z[n:]),
                                   *self._in([*primals, *tangents]))
            res = self._arrays(pull(self._in(cotangents)))
        return res[:n], res[n:]


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
