"""PyTorch as a reference and as a target: ``fn`` takes and returns tensors and runs in float64.

One adapter: :class:`TorchProblem` computes the checker's paths with PyTorch itself;
:class:`TorchOracle` (the lazy import, its status, and the functional
``vjp``/``jvp``/``double_vjp``/``hvp`` on ``fn, args, argnums``) and :class:`TorchReference`
(an op's declared ``"torch"`` equivalent, else its ``"numpy"`` one through :class:`TorchNumpy`)
both run it.  ``fn`` may be a plain function of tensors, a ``torch.autograd.Function``'s
``.apply`` or a ``torch.library`` custom op with ``register_autograd``.

``vjp``          ``torch.autograd.grad(outputs, inputs, grad_outputs=...)``
``jvp``          ``torch.func.jvp`` (an ``autograd.Function`` runs its ``jvp`` staticmethod;
                 without one it is unsupported, in torch's words)
``double_vjp``   what ``torch.autograd.functional.jvp`` does: a VJP at a dummy cotangent that
                 requires grad (``create_graph=True``), then the gradient of that VJP with
                 respect to the dummy in the tangent direction -- at the dummy the checker
                 passes rather than at zeros; unconnected gradients are zeros, as there
``hvp_fwd_rev``  ``torch.func.jvp`` of ``(x, v) -> J(x)^T v`` (``torch.func.vjp``)
``hvp_rev_rev``  ``torch.autograd.grad`` twice, ``create_graph=True``
``hvp_rev_fwd``  ``torch.func.vjp`` of ``(x, u) -> J(x) u`` (``torch.func.jvp``)

When ``torch.func`` refuses ``fn`` with a RuntimeError (an ``autograd.Function`` without
``setup_context``, ``requires_grad_`` or a data pointer inside ``fn``), ``jvp`` and the two HVPs
that use forward mode run on ``torch.autograd.forward_ad``'s dual tensors instead, as
``torch.autograd.gradcheck(check_forward_ad=True)`` does: ``jvp`` is the outputs' tangents,
``hvp_fwd_rev`` the tangent of ``autograd.grad`` at dual inputs and cotangents, ``hvp_rev_fwd``
``autograd.grad`` of the tangents.  Only what neither route computes is unsupported, in the
words of the second.

``double_vjp`` also says whether its result was computed from the dummy: whether the autograd
graph of the result (built with ``create_graph=True``) reaches the dummy's leaf.

``fn``'s output may be any pytree of tuples, lists and dicts: the checker sees its leaves as a
flat tuple.  Integer and boolean leaves (``torch.sort``'s indices) are held out of every path;
a function with no floating or complex leaf at all is an error (nothing to differentiate).
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
from gradcheck.oracles.inputs import Call, no_floating_output, output_leaves

__all__ = ["TorchNumpy", "TorchOracle", "TorchProblem", "TorchReference", "import_torch",
           "torch_errors"]

Arrays = list[np.ndarray]

#: Words of torch's errors that mean "torch cannot compute this", not "computed wrongly".
CANNOT = ("not implemented", "not been implemented", "does not support", "once_differentiable",
          "setup_context", "implement the jvp", "forward AD", "forward-mode AD")


#: torch's internal assertion when a backward returns a complex gradient for a real input.
COMPLEX_FOR_REAL = "input_is_complex == grad_is_complex"


def import_torch() -> ModuleType:
    """The ``torch`` module with ``torch.func``."""
    import torch
    import torch.func  # noqa: F401

    return torch


@contextmanager
def torch_errors(name: str, path: str) -> Iterator[None]:
    """torch's missing-rule errors as Unsupported, in its own words; a custom rule's gradient
    of the wrong shape or dtype (torch's "invalid gradient") as a RuleError of that kind."""
    try:
        yield
    except NotImplementedError as error:
        raise Unsupported(f"torch has no {path} for {name}: {error}") from error
    except RuntimeError as error:
        text = str(error)
        if "returned an invalid gradient" in text:
            kind = "dtype" if "expected type" in text else "shape"
            raise RuleError(name, path, kind, text) from error
        if COMPLEX_FOR_REAL in text:
            raise RuleError(name, path, "dtype", "a backward returned a complex gradient for "
                            f"a real input (torch: {text.split('  (Could')[0]})") from error
        if not any(word in text for word in CANNOT):
            raise
        raise Unsupported(f"torch has no {path} for {name}: {error}") from error


def as_numpy(value: Any) -> Any:
    """A torch tensor as a numpy array (detached, on the CPU); anything else as it is."""
    if hasattr(value, "detach") and hasattr(value, "cpu"):
        return value.detach().cpu().numpy()
    return value


class TorchProblem:
    """``fn(*args)`` written with PyTorch; ``positions`` are differentiated (float64, or
    complex128)."""

    #: torch's VJP of holomorphic f is ``c·conj(f'(z))`` (see :mod:`.conventions`).
    cotangent_convention = convention_of("torch")

    def __init__(self, fn: Callable[..., Any], args: Sequence[Any], positions: Sequence[int],
                 name: str) -> None:
        self.torch = import_torch()
        self.fn, self.name = fn, name
        self.args = [as_numpy(a) for a in args]
        self.positions = tuple(positions)
        self.primals: Arrays = [upcast(self.args[i]) for i in self.positions]
        self.counts: Counter[str] = Counter()
        #: Whether ``fn`` returned a tuple (known after its first call).
        self.returns_tuple = False
        #: The floating (or complex) outputs' positions (known after the first forward).
        self._kept: list[int] | None = None

    # -- helpers ------------------------------------------------------------------------------
    def _tensors(self, values: Sequence[Any], requires_grad: bool = False) -> list[Any]:
        """Primals and tangents, as float64 (or complex128) tensors."""
        return [self.torch.tensor(upcast(v), requires_grad=requires_grad) for v in values]

    def _cotangents(self, values: Sequence[Any], requires_grad: bool = False) -> list[Any]:
        """Output-shaped directions (cotangents, dummies) in the dtype the checker drew them
        in, each output's own: a float32 output's cotangent stays float32, so are the
        derivatives with respect to it."""
        return [self.torch.tensor(_floating(v), requires_grad=requires_grad) for v in values]

    def _number(self, value: Any) -> Any:
        """An output that is not a tensor: a Python float as float64 (torch's default dtype
        would make it float32), a numpy value in its own dtype."""
        if isinstance(value, (float, complex)):
            return self.torch.as_tensor(value, dtype=self.torch.complex128
                                        if isinstance(value, complex) else self.torch.float64)
        return self.torch.as_tensor(value)

    def _differentiable(self, out: Any) -> bool:
        return bool(out.is_floating_point() or out.is_complex())

    def _fixed(self, value: Any) -> Any:
        # a held input drawn as a 0-d value is a numpy scalar: torch wants a tensor too
        if isinstance(value, (np.ndarray, np.generic)):
            return self.torch.from_numpy(np.array(precise(value)))
        return value

    def _f(self, *primals: Any) -> tuple[Any, ...]:
        """``fn``'s output pytree (tuples, lists, dicts, nested) as a flat tuple of tensors,
        leaf by leaf (a dict's values in sorted-key order), as JAX flattens it."""
        full = [self._fixed(a) for a in self.args]
        for i, p in zip(self.positions, primals, strict=True):
            full[i] = p
        try:
            out = self.fn(*full)
        except RuntimeError as error:
            hint = _float32_hint(str(error))
            if hint is None:
                raise
            raise RuntimeError(f"{error} ({hint})") from error
        self.returns_tuple = isinstance(out, (tuple, list, dict))
        leaves = output_leaves(out)
        if not leaves:
            raise ValueError(f"{self.name}: returned {out!r}, which holds no tensor to "
                             "differentiate")
        outs = tuple(self._leaf(k, where, leaf) for k, (where, leaf) in enumerate(leaves))
        if not any(self._differentiable(o) for o in outs):
            raise no_floating_output(self.name, [str(o.dtype).removeprefix("torch.")
                                                 for o in outs])
        return outs

    def _leaf(self, k: int, where: str, value: Any) -> Any:
        """One output leaf as a tensor: a tensor as it is, a number or numpy value as
        :meth:`_number` makes it; anything else (None, a string) is an error naming it."""
        if isinstance(value, self.torch.Tensor):
            return value
        label = "the output" if not where else \
            f"output {k}" + ("" if where == f"[{k}]" else f" (out{where})")
        numeric = isinstance(value, (bool, int, float, complex)) or (
            isinstance(value, (np.ndarray, np.generic)) and value.dtype.kind in "biufc")
        if not numeric:
            what = "None" if value is None else f"a {type(value).__name__} ({value!r:.40})"
            raise TypeError(f"{self.name}: {label} is {what}, not a tensor or a number; "
                            "return tensors, or tuples, lists or dicts of them (leave "
                            "anything else out of fn's result)")
        return self._number(value)

    def _grad(self, outs: Sequence[Any], inputs: Sequence[Any], weights: Sequence[Any],
              create_graph: bool = False) -> list[Any]:
        """``autograd.grad`` with unconnected outputs and inputs giving zeros (as
        ``torch.autograd.functional`` does with ``strict=False``)."""
        pairs = [(o, w) for o, w in zip(outs, weights, strict=True) if o.requires_grad]
        if not pairs:
            return [self.torch.zeros_like(x) for x in inputs]
        grads = self.torch.autograd.grad([o for o, _ in pairs], list(inputs),
                                         [w for _, w in pairs], create_graph=create_graph,
                                         allow_unused=True)
        return [self.torch.zeros_like(x) if g is None else g
                for g, x in zip(grads, inputs, strict=True)]

    def _floating_outputs(self, primals: Sequence[Any]) -> list[int]:
        """Which outputs are floating or complex (known from a forward at ``primals``, run
        here if none ran yet).  ``torch.func.vjp`` refuses integer outputs (``torch.sort``'s
        indices): the ``torch.func`` paths hold them out with their cotangents, as
        :meth:`_grad` does."""
        if self._kept is None:
            self.forward(primals)
        assert self._kept is not None
        return self._kept

    def _g(self, xs: Sequence[Any], vs: Sequence[Any], kept: Sequence[int]) -> tuple[Any, ...]:
        """``J(x)^T v`` by ``torch.func.vjp`` for the ``kept`` outputs, composable with
        ``torch.func`` transforms."""
        _, pull = self.torch.func.vjp(lambda *z: _pick(self._f(*z), kept), *xs)
        return tuple(pull(_pick(vs, kept)))

    def _k(self, xs: Sequence[Any], us: Sequence[Any]) -> tuple[Any, ...]:
        """``J(x) u`` by ``torch.func.jvp``."""
        _, tangent = self.torch.func.jvp(self._f, tuple(xs), tuple(us))
        return tuple(tangent)

    def _func_else_dual(self, func: Callable[[], Any], dual: Callable[[], Any]) -> Any:
        """``func()``, the ``torch.func`` route; when torch.func refuses ``fn`` (its refusals
        are RuntimeErrors), ``dual()`` inside a ``torch.autograd.forward_ad`` dual level.  A
        NotImplementedError (torch has no forward formula) is both routes' and goes up."""
        try:
            return func()
        except RuntimeError:
            with self.torch.autograd.forward_ad.dual_level():
                return dual()

    def _dual_k(self, xs: Sequence[Any], us: Sequence[Any]) -> tuple[Any, ...]:
        """``J(x) u`` by forward_ad (inside a dual level): each output's tangent at ``x + εu``,
        zeros where torch gives none."""
        make_dual = self.torch.autograd.forward_ad.make_dual
        return tuple(self._tangent(o) for o in
                     self._f(*(make_dual(x, u) for x, u in zip(xs, us, strict=True))))

    def _tangent(self, dual: Any) -> Any:
        primal, tangent = self.torch.autograd.forward_ad.unpack_dual(dual)
        return self.torch.zeros_like(primal) if tangent is None else tangent

    @staticmethod
    def _arrays(values: Sequence[Any]) -> Arrays:
        # force: torch.func hands back ZeroTensors for structurally zero results
        return [np.array(v.numpy(force=True)) for v in values]

    def _reaches(self, results: Sequence[Any], leaves: Sequence[Any]) -> bool:
        """Whether the autograd graph of any of ``results`` reaches one of ``leaves``."""
        targets = {id(leaf) for leaf in leaves}
        stack = [r.grad_fn for r in results if r.grad_fn is not None]
        seen: set[int] = set()
        while stack:
            node = stack.pop()
            if node is None or id(node) in seen:
                continue
            seen.add(id(node))
            if id(getattr(node, "variable", None)) in targets:
                return True
            stack.extend(nxt for nxt, _ in node.next_functions)
        return False

    # -- the paths ------------------------------------------------------------------------------
    def forward(self, primals: Sequence[Any]) -> Arrays:
        self.counts["forward"] += 1
        with self.torch.no_grad():
            outs = self._f(*self._tensors(primals))
        self._kept = [i for i, o in enumerate(outs) if self._differentiable(o)]
        return self._arrays(outs)

    def vjp(self, primals: Sequence[Any], cotangents: Sequence[Any]) -> Arrays:
        self.counts["vjp"] += 1
        xs = self._tensors(primals, requires_grad=True)
        with torch_errors(self.name, "backward"):
            return self._arrays(self._grad(self._f(*xs), xs, self._cotangents(cotangents)))

    def jvp(self, primals: Sequence[Any], tangents: Sequence[Any]) -> Arrays:
        self.counts["jvp"] += 1
        xs, us = self._tensors(primals), self._tensors(tangents)
        with torch_errors(self.name, "forward AD (torch.func.jvp, else forward_ad)"):
            return self._arrays(self._func_else_dual(lambda: self._k(xs, us),
                                                     lambda: self._dual_k(xs, us)))

    def double_vjp(self, primals: Sequence[Any], tangents: Sequence[Any],
                   dummies: Sequence[Any]) -> tuple[Arrays, bool]:
        self.counts["double_vjp"] += 1
        xs = self._tensors(primals, requires_grad=True)
        vs = self._cotangents(dummies, requires_grad=True)
        with torch_errors(self.name, "double backward"):
            g = self._grad(self._f(*xs), xs, vs, create_graph=True)
            res = self._grad(g, vs, self._tensors(tangents), create_graph=True)
        return self._arrays(res), self._reaches(res, vs)

    def hvp_fwd_rev(self, primals: Sequence[Any], cotangents: Sequence[Any],
                    tangents: Sequence[Any], cotangent_tangents: Sequence[Any]) -> Arrays:
        self.counts["hvp_fwd_rev"] += 1
        n, kept = len(primals), self._floating_outputs(primals)

        def func() -> Any:
            return self.torch.func.jvp(
                lambda *z: self._g(z[:n], z[n:], kept),
                (*self._tensors(primals), *self._cotangents(cotangents)),
                (*self._tensors(tangents), *self._cotangents(cotangent_tangents)))[1]

        def dual() -> tuple[Any, ...]:
            make_dual = self.torch.autograd.forward_ad.make_dual
            xs = self._tensors(primals, requires_grad=True)
            duals = [make_dual(x, u) for x, u in zip(xs, self._tensors(tangents), strict=True)]
            vs = [make_dual(v, w) for v, w in zip(self._cotangents(cotangents),
                                                  self._cotangents(cotangent_tangents),
                                                  strict=True)]
            grads = self._grad(self._f(*duals), xs, vs, create_graph=True)
            return tuple(self._tangent(g) for g in grads)

        with torch_errors(self.name, "forward AD over backward"):
            return self._arrays(self._func_else_dual(func, dual))

    def hvp_rev_rev(self, primals: Sequence[Any], cotangents: Sequence[Any],
                    second: Sequence[Any]) -> tuple[Arrays, Arrays]:
        self.counts["hvp_rev_rev"] += 1
        xs = self._tensors(primals, requires_grad=True)
        vs = self._cotangents(cotangents, requires_grad=True)
        with torch_errors(self.name, "double backward"):
            g = self._grad(self._f(*xs), xs, vs, create_graph=True)
            res = self._arrays(self._grad(g, [*xs, *vs], self._tensors(second)))
        return res[:len(xs)], res[len(xs):]

    def hvp_rev_fwd(self, primals: Sequence[Any], tangents: Sequence[Any],
                    cotangents: Sequence[Any]) -> tuple[Arrays, Arrays]:
        self.counts["hvp_rev_fwd"] += 1
        n, kept = len(primals), self._floating_outputs(primals)
        vs = _pick(self._cotangents(cotangents), kept)

        def func() -> Any:
            _, pull = self.torch.func.vjp(lambda *z: _pick(self._k(z[:n], z[n:]), kept),
                                          *self._tensors([*primals, *tangents]))
            return pull(vs)

        def dual() -> list[Any]:
            xs = self._tensors([*primals, *tangents], requires_grad=True)
            return self._grad(_pick(self._dual_k(xs[:n], xs[n:]), kept), xs, vs)

        with torch_errors(self.name, "backward over forward AD"):
            res = self._arrays(self._func_else_dual(func, dual))
        return res[:n], res[n:]


#: torch's words when two operands' dtypes differ, for a float64 and a float32 operand
#: ("mat1 and mat2 must have the same dtype, but got Double and Float", "expected m1 and m2
#: to have the same dtype, but got: double != float", "expected scalar type Double but found
#: Float", "Input type (double) and bias type (float) should be the same").
_DOUBLE_AND_FLOAT = (re.compile(r"\bdouble\b", re.IGNORECASE), re.compile(r"\bfloat\b",
                                                                          re.IGNORECASE))


def _float32_hint(text: str) -> str | None:
    """What to do when ``fn`` fails because float32 state meets the float64 inputs gradcheck
    runs it with (None when ``text`` is not such a failure)."""
    if not all(word.search(text) for word in _DOUBLE_AND_FLOAT):
        return None
    return ("gradcheck runs torch functions in float64, and float32 state met the float64 "
            "inputs: call .double() on an nn.Module (model.double()), give float64 tensors in "
            "params=, and create tensors inside fn with dtype=torch.float64")


def _pick(values: Sequence[Any], kept: Sequence[int]) -> tuple[Any, ...]:
    return tuple(values[i] for i in kept)


def _floating(value: Any) -> np.ndarray:
    """A floating or complex array as it is; integers and booleans as float64."""
    array = np.asarray(value)
    return array if array.dtype.kind in "fc" else upcast(array)


class TorchOracle(Oracle):
    """The ``torch`` reference (install with ``pip install gradcheck[torch]``)."""

    name = "torch"
    extra = "torch"

    def _import(self) -> ModuleType:
        return import_torch()

    def problem(self, call: Call) -> TorchProblem:
        return TorchProblem(call.fn, call.args, call.argnums, call.name)


#: torch's words when numpy itself is handed a tensor that is being differentiated.
NUMPY_ON_TENSORS = ("numpy()", "doesn't have storage")

#: numpy / scipy.special names whose torch function is spelled differently (torch.max and
#: torch.min with a dim return indices too).
RENAMED = {"absolute": "abs", "power": "pow", "max": "amax", "min": "amin",
           "concatenate": "cat"}


def _dot(torch: Any) -> Callable[..., Any]:
    def dot(a: Any, b: Any) -> Any:
        # numpy's dot: a product with a scalar, else a's last axis with b's second-to-last
        if a.ndim == 0 or b.ndim == 0:
            return a * b
        return torch.tensordot(a, b, dims=([a.ndim - 1], [max(b.ndim - 2, 0)]))
    return dot


def _outer(torch: Any) -> Callable[..., Any]:
    return lambda a, b: torch.outer(torch.ravel(a), torch.ravel(b))  # numpy flattens


def _over_axes(name: str) -> Callable[[Any], Callable[..., Any]]:
    """numpy's reduction ``name(x, axis, keepdims)`` with torch's: torch's ``prod`` takes one
    int dim and its ``logsumexp`` no ``None``, so numpy's ``axis=None`` (every axis) and tuple
    of axes reduce the moved and flattened axes as one."""
    def adapt(torch: Any) -> Callable[..., Any]:
        fn = getattr(torch, name)

        def reduce(x: Any, axis: Any = None, keepdims: bool = False) -> Any:
            if isinstance(axis, (int, np.integer)) and x.ndim:
                return fn(x, dim=int(axis), keepdim=keepdims)
            # a 0-d input has nothing to reduce (numpy reads its axis 0 or -1 so)
            axes = [] if not x.ndim else range(x.ndim) if axis is None else \
                sorted({int(a) % x.ndim for a in np.atleast_1d(axis).tolist()})
            rest = [i for i in range(x.ndim) if i not in axes]
            size = int(np.prod([x.shape[i] for i in axes]))
            out = fn(x.permute([*rest, *axes]).reshape(*(x.shape[i] for i in rest), size), dim=-1)
            return out.reshape([1 if i in axes else n for i, n in enumerate(x.shape)]) \
                if keepdims else out
        return reduce
    return adapt


def _polygamma(torch: Any) -> Callable[..., Any]:
    def polygamma(n: Any, x: Any) -> Any:
        # torch's order is one int: an array of orders takes each order where it is
        orders = torch.as_tensor(n)
        if orders.ndim == 0:
            return torch.special.polygamma(int(orders), x)
        if orders.is_complex() or bool((orders < 0).any() or (orders != orders.round()).any()):
            raise NoEquivalent(f"torch's polygamma takes non-negative int orders, got {n!r}")
        orders, x = torch.broadcast_tensors(orders, x)
        out = torch.zeros_like(x)
        for k in torch.unique(orders).tolist():
            out = torch.where(orders == k, torch.special.polygamma(int(k), x), out)
        return out
    return polygamma


#: numpy (and scipy.special) functions whose torch namesake means something else or takes
#: other arguments, written with torch's, by namespace.
ADAPTED = {"torch.": {"dot": _dot, "outer": _outer, "prod": _over_axes("prod"),
                      "logsumexp": _over_axes("logsumexp")},
           "torch.special.": {"logsumexp": _over_axes("logsumexp"), "polygamma": _polygamma}}


class _Translated:
    """One torch namespace (``torch``, ``torch.linalg``, ``torch.special``) under numpy's
    names: a name torch lacks is :class:`NoEquivalent`, with the reason."""

    def __init__(self, torch: Any, module: Any, label: str) -> None:
        self._torch, self._module, self._label = torch, module, label

    def __getattr__(self, name: str) -> Any:
        if name in ADAPTED.get(self._label, {}):
            return ADAPTED[self._label][name](self._torch)
        fn = getattr(self._module, RENAMED.get(name, name), None)
        if fn is None:
            raise NoEquivalent(f"torch has no {self._label}{name} (numpy's name)")
        if not callable(fn):
            return fn
        label = f"{self._label}{name}"

        torch = self._torch

        def call(*args: Any, **kwargs: Any) -> Any:
            try:
                return fn(*args, **kwargs)
            except TypeError as error:
                first = error
            # numpy takes Python numbers where torch wants tensors (np.minimum(x, 0.0))
            tensors = [torch.as_tensor(a, dtype=torch.float64) if isinstance(a, (int, float))
                       and not isinstance(a, bool) else a for a in args]
            try:
                return fn(*tensors, **kwargs)
            except TypeError:
                raise NoEquivalent(f"torch's {label} does not take numpy's arguments "
                                   f"here: {first}") from first
        return call


class TorchNumpy(_Translated):
    """What an op's ``"numpy"`` equivalent sees under torch: torch's functions by numpy's
    names, ``.linalg`` (``torch.linalg``) and ``.special`` (``torch.special`` for
    scipy.special's names)."""

    def __init__(self, torch: Any) -> None:
        super().__init__(torch, torch, "torch.")
        self.linalg = _Translated(torch, torch.linalg, "torch.linalg.")
        self.special = _Translated(torch, torch.special, "torch.special.")


class TorchReference(EquivalentReference):
    """PyTorch as a reference of the checker: the op's ``"torch"`` equivalent (given
    ``torch``), else its ``"numpy"`` one (given :class:`TorchNumpy`), differentiated by
    :class:`TorchProblem` in float64."""

    name = "torch"
    distributions = ("torch",)

    def oracle(self) -> Oracle:
        return TorchOracle()

    def bind(self, target: Any, example: Any) -> Any:
        problem = super().bind(target, example)
        from gradcheck.engine import default_registry

        if "torch" in (default_registry.get(target.name).meta.get("equivalents") or {}):
            return problem
        numpy_equivalent = problem.fn

        def fn(*args: Any) -> Any:
            # a numpy equivalent that uses numpy itself, or an ndarray method, on tensors
            try:
                return numpy_equivalent(*args)
            except (AttributeError, TypeError, RuntimeError) as error:
                if isinstance(error, RuntimeError) and not any(
                        word in str(error) for word in NUMPY_ON_TENSORS):
                    raise
                raise NoEquivalent(f"{target.name}'s numpy equivalent does not run on torch "
                                   f"tensors: {error}") from error
        problem.fn = fn
        return problem
