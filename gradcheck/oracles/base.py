"""The interface every external reference (autograd, TensorFlow) implements.

An oracle runs a function written in its own framework and returns plain numpy arrays for
the four derivative paths gradcheck checks: reverse mode (``vjp``), forward mode (``jvp``),
the double-VJP JVP (``double_vjp``: the VJP taken at a dummy cotangent, differentiated again
with respect to that dummy) and second order (``hvp``).

The public methods validate their inputs the same way for every framework and then run the
framework's Problem (the adapter the checker evaluates, built by :meth:`Oracle.problem` from
a checked :class:`~.inputs.Call`), so each framework's derivative code exists once.
A framework that cannot be imported makes ``status()`` return a sentence that says how to
install it, and every method raise :class:`Unavailable`; importing gradcheck never needs it.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any

import numpy as np

from gradcheck.checker.references import Unsupported as _CheckerUnsupported
from gradcheck.oracles.inputs import Call, Output, make_call, pack_output, per_output, tangents_for

__all__ = ["Unsupported", "Unavailable", "NoEquivalent", "Oracle", "EquivalentReference",
           "unavailable_status"]


# The checker's: a framework that cannot compute something (never a wrong derivative).
Unsupported = _CheckerUnsupported


class Unavailable(Exception):
    """The framework cannot be imported; the message says how to install it."""


class NoEquivalent(Unsupported):
    """The framework has no function computing this op for these parameters or inputs.

    Raised by an op's declared equivalent (``equivalents=``, see :mod:`gradcheck.ops.refs`) when
    it covers only part of the op: an ``alpha`` TensorFlow does not take, an index mode
    autograd cannot differentiate, a point where the framework's rule is known to be
    undefined.  The message says why.
    """


def unavailable_status(why: str, extra: str) -> str:
    """The ``status()`` sentence of an oracle whose framework failed to import."""
    return f"unavailable: {why}; install with: pip install gradcheck[{extra}]"


class Oracle(abc.ABC):
    """A reference implementation of VJP, JVP, double-VJP and HVP in another framework.

    ``fn`` is written in the oracle's framework and takes the positional ``args``; floating
    ``args`` are converted to float64 so the reference is as accurate as the framework can
    be.  ``argnums`` (an int or a sequence of ints) names the differentiable positions;
    ``tangents`` holds one array per argnum, shaped like that argument.  ``cotangent`` and
    ``dummy`` are shaped like the output (a sequence of arrays when ``fn`` returns a tuple).
    """

    #: Reference name used by :func:`gradcheck.oracles.get_oracle`.
    name: str = ""
    #: Optional dependency group that installs the framework (``gradcheck[<extra>]``).
    extra: str = ""

    _module: ModuleType | None = None
    _why: str | None = None

    @abc.abstractmethod
    def _import(self) -> ModuleType:
        """Import the framework; any exception makes the oracle unavailable."""

    def load(self) -> ModuleType:
        """The framework's module, imported on first use; Unavailable if it cannot be."""
        if self._module is None and self._why is None:
            try:
                self._module = self._import()
            except Exception as error:  # noqa: BLE001  (a broken install must not crash us)
                # ImportError when absent; a mismatched protobuf/numpy raises other types.
                self._why = f"{self.name} cannot be imported ({type(error).__name__}: {error})"
        if self._module is None:
            raise Unavailable(f"{self.name}: {unavailable_status(str(self._why), self.extra)}")
        return self._module

    def status(self) -> str | None:
        """None when the framework can be used, else ``"unavailable: <why>; install ..."``."""
        try:
            self.load()
        except Unavailable:
            return unavailable_status(str(self._why), self.extra)
        return None

    def ensure_available(self) -> None:
        """Raise :class:`Unavailable` (with the install hint) unless the framework imports."""
        status = self.status()
        if status is not None:
            raise Unavailable(f"{self.name}: {status}")

    @abc.abstractmethod
    def problem(self, call: Call) -> Any:
        """The framework's Problem (the checker's adapter) for the checked ``call``."""

    def _bound(self, fn: Callable[..., Any], args: Sequence[Any],
               argnums: int | Sequence[int]) -> tuple[Call, Any, list[tuple[int, ...]], bool]:
        """The checked call, its Problem, the output shapes and whether ``fn`` returns a tuple.

        Every method below is the Problem's path with the caller's arguments checked and its
        per-output results packed, so each framework's derivative code exists once."""
        self.ensure_available()
        call = make_call(fn, args, argnums)
        problem = self.problem(call)
        outs = problem.forward(problem.primals)
        return call, problem, [np.shape(o) for o in outs], problem.returns_tuple

    def forward(self, fn: Callable[..., Any], args: Sequence[Any],
                argnums: int | Sequence[int]) -> Output:
        """The value of ``fn`` at ``args`` (float64), as the framework computes it."""
        _, problem, _, is_tuple = self._bound(fn, args, argnums)
        return pack_output(problem.forward(problem.primals), is_tuple)

    def vjp(self, fn: Callable[..., Any], args: Sequence[Any], argnums: int | Sequence[int],
            cotangent: Any) -> list[np.ndarray]:
        """Reverse mode: ``cotangent`` pulled back through ``fn``, one array per argnum."""
        call, problem, shapes, is_tuple = self._bound(fn, args, argnums)
        cts = per_output(call, "cotangent", cotangent, shapes, is_tuple)
        return _float64(problem.vjp(problem.primals, cts))

    def jvp(self, fn: Callable[..., Any], args: Sequence[Any], argnums: int | Sequence[int],
            tangents: Sequence[Any]) -> Output:
        """Forward mode: ``tangents`` pushed forward through ``fn`` (shaped like the output)."""
        call, problem, _, is_tuple = self._bound(fn, args, argnums)
        return pack_output(problem.jvp(problem.primals, tangents_for(call, tangents)), is_tuple)

    def double_vjp(self, fn: Callable[..., Any], args: Sequence[Any],
                   argnums: int | Sequence[int], tangents: Sequence[Any], dummy: Any) -> Output:
        """The JVP obtained by transposing the VJP taken at the cotangent value ``dummy``.

        Mathematically the result does not depend on ``dummy`` (the VJP is linear in its
        cotangent); a framework whose second-order rules break that linearity gives a result
        that does, which the checker's leak check (``double_vjp`` against ``dummy``) finds.
        """
        call, problem, shapes, is_tuple = self._bound(fn, args, argnums)
        us = tangents_for(call, tangents)
        dummies = per_output(call, "dummy", dummy, shapes, is_tuple)
        return pack_output(problem.double_vjp(problem.primals, us, dummies)[0], is_tuple)

    def hvp(self, fn: Callable[..., Any], args: Sequence[Any], argnums: int | Sequence[int],
            tangents: Sequence[Any], cotangent: Any) -> list[np.ndarray]:
        """Second order: ``∇ₓ⟨∇ₓ⟨cotangent, fn(x)⟩, tangents⟩``, one array per argnum.

        This is ``Hᵀ t`` for the Hessian ``H`` of ``⟨cotangent, fn⟩`` over the argnums jointly,
        equal to ``H t`` whenever the second derivative is symmetric (any C² function): the
        Problem's ``hvp_rev_rev``, reverse over reverse.
        """
        call, problem, shapes, is_tuple = self._bound(fn, args, argnums)
        us = tangents_for(call, tangents)
        cts = per_output(call, "cotangent", cotangent, shapes, is_tuple)
        return _float64(problem.hvp_rev_rev(problem.primals, cts, us)[0])


def _float64(values: Sequence[Any]) -> list[np.ndarray]:
    # complex results stay complex (in the framework's convention, see .conventions)
    return [np.asarray(v, dtype=np.result_type(np.asarray(v).dtype, np.float64))
            for v in values]


class EquivalentReference:
    """A framework as a reference of the checker: a registry op's declared equivalent
    (``equivalents=`` with the op), run by the framework's Problem (:meth:`Oracle.problem`).

    Subclasses set ``name`` and implement :meth:`oracle`."""

    name: str = ""
    #: Package names the framework is installed under (for its version in reports).
    distributions: tuple[str, ...] = ()
    #: op name -> (factor, reason): facts about the framework's kernels, which are only this
    #: many times the checker's rounding allowance close to the exact derivative.
    accuracy: dict[str, tuple[float, str]] = {}

    @abc.abstractmethod
    def oracle(self) -> Oracle:
        """The framework's oracle (its lazy import and status)."""

    def problem(self, fn: Callable[..., Any], args: Sequence[Any], positions: Sequence[int],
                name: str) -> Any:
        """The framework's Problem for ``fn(*args)``, differentiated at ``positions``."""
        return self.oracle().problem(Call(fn=fn, name=name, args=tuple(args),
                                          argnums=tuple(positions)))

    def status(self) -> str | None:
        return self.oracle().status()

    def supports(self, target: Any) -> str | None:
        from gradcheck.oracles.equivalents import equivalence

        if not _is_registry_op(target):
            return f"no equivalent in {self.name}: {_not_an_op(target)}"
        if equivalence(self.name, _op_name(target)) is None:
            return f"no equivalent in {self.name}"
        return None

    def note(self, target: Any) -> str:
        """Said in the report of the op's cells: an equivalent written as a formula."""
        from gradcheck.ops.refs import formula_reason
        from gradcheck.oracles.equivalents import equivalence

        equiv = equivalence(self.name, _op_name(target))
        why = formula_reason(equiv.fn) if equiv is not None else None
        accuracy = self.accuracy.get(_op_name(target))
        notes = [f"{self.name} has no API for this op; its equivalent is a formula: {why}"
                 if why else "", f"tolerance x{accuracy[0]:g}: {accuracy[1]}"
                 if accuracy else ""]
        return "; ".join(n for n in notes if n)

    def bind(self, target: Any, example: Any) -> Any:
        from gradcheck.oracles.equivalents import equivalence

        equiv = equivalence(self.name, _op_name(target))
        if equiv is None:
            raise Unsupported(f"no equivalent in {self.name}")
        module = self.oracle().load()
        params = dict(example.params)
        namespace = self.namespace(module)

        def fn(*args: Any) -> Any:
            return equiv.fn(namespace, *args, **params)

        fn.__name__ = f"{self.name}:{_op_name(target)}"
        problem = self.problem(fn, example.args, target.positions(example), fn.__name__)
        problem.accuracy = self.accuracy.get(_op_name(target))
        return problem

    def namespace(self, module: ModuleType) -> Any:
        """What the equivalents receive: the framework's module by default."""
        return module


def _is_registry_op(target: Any) -> bool:
    """Whether ``target`` checks a registry op itself (under any row name): equivalents are
    declared with the registry's ops, and a function (or another registry's op) that only
    shares an op's name computes something else (``leaky_relu``'s slope, ``elu`` with
    ``alpha=2``, a user's ``sin(2 x)``)."""
    from gradcheck.engine import UnknownOpError, default_registry

    op = getattr(target, "op", None)
    if op is None or not hasattr(target, "positions"):
        return False
    try:
        return default_registry.get(str(op.name)) is op
    except UnknownOpError:
        return False


def _not_an_op(target: Any) -> str:
    """Why a target has no declared equivalent, and what checks it instead."""
    name = getattr(target, "name", None) or type(target).__name__
    return (f"{name} is a function, not a registry op (equivalents are declared with "
            "gradcheck's registry ops, so a function of the same name is not matched to one); "
            "its paths are checked against the numeric reference and each other")


def _op_name(target: Any) -> str:
    """The registry name of a target's op: a suite row may check an op under its own name
    (``"linalg.det, complex"``), and the equivalents are the op's."""
    return str(target.op.name)
