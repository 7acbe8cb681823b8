"""autograd (HIPS/autograd) as a reference: ``fn`` is written with ``autograd.numpy``.

One adapter: :class:`AutogradProblem` computes the checker's paths with autograd itself, in
the inputs' dtype; :class:`AutogradOracle` (the lazy import, its status, and the functional
``vjp``/``jvp``/``double_vjp``/``hvp`` on ``fn, args, argnums``) and
:class:`AutogradReference` (an op's declared ``"autograd"`` or ``"numpy"`` equivalent as a
reference of the checker) both run it.

``vjp``          ``make_vjp``
``jvp``          ``make_jvp`` (autograd's own forward rules, independent of its reverse ones,
                 so a real check of gradcheck's JVPs; missing ones are unsupported)
``double_vjp``   the VJP of the VJP with respect to its cotangent, at the dummy
``hvp_fwd_rev``  ``make_jvp`` of ``(x, v) -> J(x)^T v``
``hvp_rev_rev``  ``make_vjp`` of ``(x, v) -> J(x)^T v``
``hvp_rev_fwd``  ``make_vjp`` of ``(x, u) -> J(x) u``

autograd has no forward rule for some functions (most of ``numpy.linalg``: ``det``, ``inv``,
``cholesky``, ...) and no reverse rule for a few argument combinations; it raises
``NotImplementedError``, which becomes :class:`Unsupported` with autograd's own reason rather
than a fall-back to another path.  autograd has no record of which values a result was
computed from, so ``double_vjp`` returns None for that flag (a value leak is still found by
comparing dummies).
"""

from __future__ import annotations

import warnings
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from types import ModuleType
from typing import Any

import numpy as np

from gradcheck.oracles.base import EquivalentReference, Oracle, Unsupported
from gradcheck.oracles.conventions import convention_of
from gradcheck.oracles.inputs import Call

__all__ = ["AutogradOracle", "AutogradProblem", "AutogradReference", "autograd_errors",
           "autograd_module"]

Arrays = list[np.ndarray]


def autograd_module() -> ModuleType:
    """The ``autograd`` module with the submodules the paths use."""
    import autograd
    import autograd.builtins  # noqa: F401  (tuple outputs)
    import autograd.numpy  # noqa: F401  (the equivalents' namespace)

    return autograd


@contextmanager
def autograd_errors(name: str, path: str) -> Iterator[None]:
    """Turn autograd's missing-rule errors into Unsupported; silence its constant warning."""
    with warnings.catch_warnings():
        # A function constant in its argnums has a zero derivative: a result, not a problem.
        warnings.filterwarnings("ignore", message="Output seems independent of input",
                                category=UserWarning)
        try:
            yield
        except NotImplementedError as error:
            # autograd re-raises some failures as a bare NotImplementedError "from" the cause.
            reason = str(error) or repr(error.__cause__)
            raise Unsupported(f"autograd has no {path} rule for {name}: {reason}") from error


class AutogradProblem:
    """``fn(*args)`` written with ``autograd.numpy``; ``positions`` are differentiated."""

    #: autograd's VJP of holomorphic f is ``c·f'(z)`` (see :mod:`.conventions`).
    cotangent_convention = convention_of("autograd")

    def __init__(self, fn: Callable[..., Any], args: Sequence[Any], positions: Sequence[int],
                 name: str) -> None:
        self.ag = autograd_module()
        self.fn, self.name = fn, name
        self.args = list(args)
        self.positions = tuple(positions)
        self.primals: Arrays = [np.asarray(self.args[i]) for i in self.positions]
        self.counts: Counter[str] = Counter()
        #: Whether ``fn`` returned a tuple (known after its first call).
        self.returns_tuple = False

    def _f(self, primals: Sequence[Any]) -> Any:
        """The outputs as an autograd tuple (boxes flow through it)."""
        full: list[Any] = list(self.args)
        for i, p in zip(self.positions, primals, strict=True):
            full[i] = p
        out = self.fn(*full)
        self.returns_tuple = isinstance(out, (tuple, list))
        outs = tuple(out) if self.returns_tuple else (out,)
        return self.ag.builtins.tuple(outs)

    def _g(self, xs: Any, vs: Any) -> Any:
        """``J(x)^T v``, differentiable in x and v."""
        pull, _ = self.ag.make_vjp(self._f)(tuple(xs))
        return pull(self.ag.builtins.tuple(tuple(vs)))

    def _k(self, xs: Any, us: Any) -> Any:
        """``J(x) u``, differentiable in x and u."""
        _, tangent = self.ag.make_jvp(self._f)(tuple(xs))(tuple(us))
        return tangent

    @staticmethod
    def _arrays(values: Any) -> Arrays:
        return [np.asarray(v) for v in values]

    def forward(self, primals: Sequence[Any]) -> Arrays:
        self.counts["forward"] += 1
        return self._arrays(self._f(list(primals)))

    def vjp(self, primals: Sequence[Any], cotangents: Sequence[Any]) -> Arrays:
        self.counts["vjp"] += 1
        with autograd_errors(self.name, "reverse-mode"):
            return self._arrays(self._g(primals, cotangents))

    def jvp(self, primals: Sequence[Any], tangents: Sequence[Any]) -> Arrays:
        self.counts["jvp"] += 1
        with autograd_errors(self.name, "forward-mode"):
            return self._arrays(self._k(primals, tangents))

    def double_vjp(self, primals: Sequence[Any], tangents: Sequence[Any],
                   dummies: Sequence[Any]) -> tuple[Arrays, None]:
        self.counts["double_vjp"] += 1
        with autograd_errors(self.name, "reverse-mode"):
            # J^T v is written in autograd primitives, so it is differentiable in v.
            transpose, _ = self.ag.make_vjp(lambda v: self._g(primals, v))(tuple(dummies))
            return self._arrays(transpose(self.ag.builtins.tuple(tuple(tangents)))), None

    def hvp_fwd_rev(self, primals: Sequence[Any], cotangents: Sequence[Any],
                    tangents: Sequence[Any], cotangent_tangents: Sequence[Any]) -> Arrays:
        self.counts["hvp_fwd_rev"] += 1
        n = len(primals)
        with autograd_errors(self.name, "forward-mode"):
            joint = lambda z: self._g(z[:n], z[n:])  # noqa: E731
            _, out = self.ag.make_jvp(joint)((*primals, *cotangents))(
                (*tangents, *cotangent_tangents))
        return self._arrays(out)

    def hvp_rev_rev(self, primals: Sequence[Any], cotangents: Sequence[Any],
                    second: Sequence[Any]) -> tuple[Arrays, Arrays]:
        self.counts["hvp_rev_rev"] += 1
        n = len(primals)
        with autograd_errors(self.name, "second-order"):
            pull, _ = self.ag.make_vjp(lambda z: self._g(z[:n], z[n:]))((*primals, *cotangents))
            res = self._arrays(pull(self.ag.builtins.tuple(tuple(second))))
        return res[:n], res[n:]

    def hvp_rev_fwd(self, primals: Sequence[Any], tangents: Sequence[Any],
                    cotangents: Sequence[Any]) -> tuple[Arrays, Arrays]:
        self.counts["hvp_rev_fwd"] += 1
        n = len(primals)
        with autograd_errors(self.name, "forward-mode"):
            pull, _ = self.ag.make_vjp(lambda z: self._k(z[:n], z[n:]))((*primals, *tangents))
            res = self._arrays(pull(self.ag.builtins.tuple(tuple(cotangents))))
        return res[:n], res[n:]


class AutogradOracle(Oracle):
    """The ``autograd`` reference (install with ``pip install gradcheck[autograd]``)."""

    name = "autograd"
    extra = "autograd"

    def _import(self) -> ModuleType:
        return autograd_module()

    def problem(self, call: Call) -> AutogradProblem:
        return AutogradProblem(call.fn, call.args, call.argnums, call.name)


class AutogradReference(EquivalentReference):
    """autograd as a reference of the checker: the op's ``"autograd"`` (or ``"numpy"``)
    equivalent, differentiated by :class:`AutogradProblem` in float64."""

    name = "autograd"
    distributions = ("autograd",)

    def oracle(self) -> Oracle:
        return AutogradOracle()

    def namespace(self, module: ModuleType) -> Any:
        return module.numpy
