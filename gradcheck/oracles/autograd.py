"""autograd (HIPS/autograd) as a reference: ``fn`` is written with ``autograd.numpy``.

Paths: reverse mode with ``make_vjp``; autograd's own forward mode with ``make_jvp`` (an
independent set of rules, so a real check of gradcheck's JVPs); the double-VJP as the VJP
of the VJP with respect to its cotangent; the HVP as grad-of-grad.

autograd has no forward rule for some functions (most of ``numpy.linalg``: ``det``, ``inv``,
``cholesky``, ...) and no reverse rule for a few argument combinations; it raises
``NotImplementedError`` and the oracle turns that into :class:`Unsupported` with autograd's
own reason, rather than falling back to another path.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np

from gradcheck.oracles.autograd_problem import autograd_errors, autograd_module
from gradcheck.oracles.base import EquivalentReference, Oracle
from gradcheck.oracles.inputs import Call, Output, pack_output, per_output

__all__ = ["AutogradOracle", "AutogradReference"]


class AutogradOracle(Oracle):
    """The ``autograd`` reference (install with ``pip install gradcheck[autograd]``)."""

    name = "autograd"
    extra = "autograd"

    def _import(self) -> ModuleType:
        return autograd_module()

    def _packed(self, call: Call) -> Callable[[tuple[Any, ...]], Any]:
        """``fn`` as a function of the tuple of differentiable arguments (autograd's container)."""
        ag = self.load()

        def packed(primals: tuple[Any, ...]) -> Any:
            out = call.fn(*call.substitute(primals))
            if isinstance(out, (tuple, list)):
                return ag.builtins.tuple(tuple(out))
            return out

        return packed

    def _forward(self, call: Call) -> tuple[list[tuple[int, ...]], bool]:
        """Output shapes of ``fn`` at ``args`` and whether it returns a tuple."""
        out = call.fn(*call.args)
        is_tuple = isinstance(out, (tuple, list))
        outs = list(out) if is_tuple else [out]
        return [np.shape(o) for o in outs], is_tuple

    def _forward_value(self, call: Call) -> Output:
        self.load()
        out = call.fn(*call.args)
        is_tuple = isinstance(out, (tuple, list))
        return pack_output([np.asarray(o) for o in (out if is_tuple else [out])], is_tuple)

    def _vjp(self, call: Call, cotangent: Any) -> list[np.ndarray]:
        ag = self.load()
        with autograd_errors(call.name, "reverse-mode"):
            vjp_fn, out = ag.make_vjp(self._packed(call))(tuple(call.primals))
            is_tuple = isinstance(out, tuple)
            shapes = [np.shape(o) for o in out] if is_tuple else [np.shape(out)]
            cts = per_output(call, "cotangent", cotangent, shapes, is_tuple)
            grads = vjp_fn(tuple(cts) if is_tuple else cts[0])
        return [np.asarray(g, dtype=np.float64) for g in grads]

    def _jvp(self, call: Call, tangents: list[np.ndarray]) -> Output:
        ag = self.load()
        with autograd_errors(call.name, "forward-mode"):
            out, jvp = ag.make_jvp(self._packed(call))(tuple(call.primals))(tuple(tangents))
        is_tuple = isinstance(out, tuple)
        return pack_output(list(jvp) if is_tuple else [jvp], is_tuple)

    def _double_vjp(self, call: Call, tangents: list[np.ndarray], dummy: Any) -> Output:
        ag = self.load()
        with autograd_errors(call.name, "reverse-mode"):
            vjp_fn, out = ag.make_vjp(self._packed(call))(tuple(call.primals))
            is_tuple = isinstance(out, tuple)
            shapes = [np.shape(o) for o in out] if is_tuple else [np.shape(out)]
            dummies = per_output(call, "dummy", dummy, shapes, is_tuple)
            # vjp_fn is written in autograd primitives, so it is differentiable in the cotangent.
            transpose, _ = ag.make_vjp(vjp_fn)(tuple(dummies) if is_tuple else dummies[0])
            jvp = transpose(tuple(tangents))
        return pack_output(list(jvp) if is_tuple else [jvp], is_tuple)

    def _hvp(self, call: Call, tangents: list[np.ndarray], cotangent: Any) -> list[np.ndarray]:
        ag = self.load()
        shapes, is_tuple = self._forward(call)
        cts = per_output(call, "cotangent", cotangent, shapes, is_tuple)

        def weighted(primals: tuple[Any, ...]) -> Any:
            out = call.fn(*call.substitute(primals))
            outs = list(out) if is_tuple else [out]
            return sum(ag.numpy.sum(c * o) for c, o in zip(cts, outs, strict=True))

        gradient = ag.grad(weighted)

        def along(primals: tuple[Any, ...]) -> Any:
            return sum(ag.numpy.sum(g * t)
                       for g, t in zip(gradient(primals), tangents, strict=True))

        with autograd_errors(call.name, "second-order"):
            hvp = ag.grad(along)(tuple(call.primals))
        return [np.asarray(h, dtype=np.float64) for h in hvp]


class AutogradReference(EquivalentReference):
    """autograd as a reference of the checker: the op's ``"autograd"`` (or ``"numpy"``)
    equivalent, differentiated by :class:`AutogradProblem` in float64."""

    name = "autograd"

    def oracle(self) -> Oracle:
        return AutogradOracle()

    def problem(self, fn: Callable[..., Any], args: Any, positions: Any, name: str) -> Any:
        from gradcheck.oracles.autograd_problem import AutogradProblem

        return AutogradProblem(fn, args, positions, name)

    def namespace(self, module: ModuleType) -> Any:
        return module.numpy
