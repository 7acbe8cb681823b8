"""TensorFlow, autograd, PyTorch and JAX functions as targets of ``gradcheck.check``.

``gradcheck.check(fn, inputs=...)`` recognises a function written with TensorFlow (a
``tf.*`` op, a ``tf.custom_gradient`` or ``tf.function``, or a Python function that uses the
``tensorflow`` module) or with autograd (an ``autograd.numpy`` function or a Python function
using it) by :func:`framework_of`, and checks it like a gradcheck function: the same inputs
(example arrays or domains), the same paths against the numeric reference, each path
computed by the framework itself (:mod:`.tensorflow`, :mod:`.autograd`).  TensorFlow's
double-VJP runs in graph mode with a placeholder dummy, so the checker's own leak check
(``double_vjp`` against ``dummy``) also says how the graph reads the dummy.

Detection never imports a framework: it looks at the function's module, its class's bases
(an ``nn.Module`` subclass), what it wraps (a ``functools.partial``, a bound method) and the
modules its code refers to; when the code names no array library (``lambda x: x.sin()``), at
the classes of the arrays given as inputs (torch tensors, JAX arrays, TensorFlow tensors).
:func:`framework_target` builds a target explicitly when detection cannot tell
(``framework="torch"``).
"""

from __future__ import annotations

import functools
import inspect
import sys
import types
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from gradcheck.checker.evaluation import normalise_error_text
from gradcheck.checker.paths import PATHS, SECOND_ORDER
from gradcheck.checker.sampling import Example
from gradcheck.checker.specs import is_complex
from gradcheck.checker.targets import FunctionTarget, Problem
from gradcheck.domains import Domain
from gradcheck.oracles.base import Unsupported
from gradcheck.oracles.inputs import function_name

__all__ = ["FRAMEWORKS", "FrameworkTarget", "framework_of", "framework_target",
           "input_framework", "is_framework_function"]

#: Module prefixes of the frameworks a function can be written in.
FRAMEWORKS = {"tensorflow": ("tensorflow", "keras", "tf_keras"), "autograd": ("autograd",),
              "torch": ("torch",), "jax": ("jax", "jaxlib")}
#: Frameworks whose functions are checked in float64 only (their oracles' precision).
FLOAT64_ONLY = {"tensorflow": "TensorFlow", "torch": "PyTorch", "jax": "JAX"}
#: What TensorFlow cannot compute without a second-order gradient: its forward mode
#: transposes the VJP, so the JVP too.
TF_SECOND_ORDER = ("jvp", "double_vjp", *SECOND_ORDER)


def _module_framework(name: str) -> str | None:
    for framework, prefixes in FRAMEWORKS.items():
        if any(name == p or name.startswith(p + ".") for p in prefixes):
            return framework
    return None


def _referenced_modules(fn: Any) -> list[str]:
    """Names of the modules ``fn``'s code refers to (globals, closures), recursively
    through functions it calls that live beside it."""
    seen: set[int] = set()
    names: list[str] = []
    stack = [fn]
    while stack:
        f = inspect.unwrap(stack.pop())
        code = getattr(f, "__code__", None)
        if code is None or id(code) in seen:
            continue
        seen.add(id(code))
        values = [getattr(f, "__globals__", {}).get(n) for n in code.co_names]
        values += [c.cell_contents for c in (getattr(f, "__closure__", None) or ())
                   if _filled(c)]
        for value in values:
            if isinstance(value, types.ModuleType):
                names.append(value.__name__)
            elif isinstance(value, types.FunctionType):
                names.append(value.__module__ or "")  # a framework's Python function
                stack.append(value)
            elif value is not None:
                names.append(type(value).__module__ or "")
                names.append(getattr(value, "__module__", "") or "")
    return names


def _filled(cell: Any) -> bool:
    try:
        cell.cell_contents  # noqa: B018
    except ValueError:
        return False
    return True


#: Modules of gradcheck's own kind of function (numpy-like): a function naming one of them
#: is not a framework's, whatever arrays it is given (an Op at torch tensors stays an Op).
NATIVE = ("gradcheck", "numpy", "scipy")


def _is_native(name: str) -> bool:
    return any(name == p or name.startswith(p + ".") for p in NATIVE)


def _pieces(fn: Any) -> list[Any]:
    """``fn`` and what it wraps: a ``functools.partial``'s function, a bound method's function
    and owner (a class for a classmethod such as ``Function.apply``)."""
    pieces: list[Any] = []
    stack = [fn]
    while stack:
        f = stack.pop()
        if any(f is p for p in pieces):
            continue
        pieces.append(f)
        if isinstance(f, functools.partial):
            stack.append(f.func)
        elif isinstance(f, types.MethodType):
            stack += [f.__self__, f.__func__]
    return pieces


#: What is a function rather than an object with a ``__call__`` (whose class says more).
_FUNCTIONS = (types.FunctionType, types.BuiltinFunctionType, types.MethodType,
              functools.partial)


def _module_names(piece: Any) -> list[str]:
    """The modules ``piece`` comes from: its own, its type's and, for an object or a class
    (an ``nn.Module`` subclass, a ``tf.Module``), every base class's."""
    names = [type(piece).__module__ or "", getattr(piece, "__module__", None) or ""]
    if isinstance(piece, type):
        names += [c.__module__ for c in piece.__mro__]
    elif not isinstance(piece, _FUNCTIONS):
        names += [c.__module__ for c in type(piece).__mro__]
    return names


def _code(piece: Any) -> list[Any]:
    """The Python code ``piece`` runs: itself, or an object's ``__call__`` and ``forward``."""
    if isinstance(piece, _FUNCTIONS) or isinstance(piece, type):
        return [piece]
    cls = type(piece)
    methods = [cls.__call__] if callable(piece) else []
    return [*methods, *([cls.forward] if hasattr(cls, "forward") else [])]


def _named_framework(fn: Any) -> str | None:
    """The framework ``fn``'s code names, ``"native"`` when it names only gradcheck, numpy or
    scipy, None when it names no array library (a lambda of tensor methods)."""
    if getattr(fn, "_is_autograd_primitive", False):
        return "autograd"
    pieces = _pieces(fn)
    names = [n for p in pieces for n in _module_names(p)]
    if hasattr(fn, "_tf_decorator") and "tensorflow" in sys.modules:
        names.append("tensorflow")
    names += [n for p in pieces for c in _code(p) for n in _referenced_modules(c)]
    for name in names:
        found = _module_framework(name)
        if found is not None:
            return found
    return "native" if any(_is_native(n) for n in names) else None


def input_framework(value: Any) -> str | None:
    """``"torch"``, ``"jax"`` or ``"tensorflow"`` for a torch tensor, a JAX array or a
    TensorFlow tensor or variable given as an input (by its class, nothing imported)."""
    for cls in type(value).__mro__:
        found = _module_framework(cls.__module__ or "")
        if found in ("torch", "jax", "tensorflow"):
            return found
    return None


def _inputs_framework(fn: Any, inputs: Any) -> str | None:
    """The one framework whose arrays ``inputs`` holds (None: numpy arrays or domains); a
    TypeError when they mix two."""
    if inputs is None or isinstance(inputs, (np.ndarray, Domain, str, dict)):
        return None
    found: dict[str, int] = {}
    for i, value in enumerate(inputs):
        framework = input_framework(value)
        if framework is not None:
            found.setdefault(framework, i)
    if len(found) > 1:
        which = ", ".join(f"input {i} is a {f} array" for f, i in found.items())
        raise TypeError(f"gradcheck.check: the inputs of {function_name(fn)} mix frameworks "
                        f"({which}); give arrays of one framework (or numpy arrays) and "
                        "framework= to say which one runs the function")
    return next(iter(found), None)


def framework_of(fn: Any, inputs: Any = None) -> str | None:
    """``"tensorflow"``, ``"autograd"``, ``"torch"``, ``"jax"`` or None: the framework ``fn``
    is written in, by the modules its code (or its class, for an ``nn.Module``) names; when
    it names none (``lambda x: x.sin()``), by the framework of its given ``inputs``."""
    if not callable(fn) or isinstance(fn, type):
        return None
    named = _named_framework(fn)
    if named is not None:
        return None if named == "native" else named
    return _inputs_framework(fn, inputs)


class FrameworkTarget(FunctionTarget):
    """A function written in TensorFlow, autograd, PyTorch or JAX, at example inputs or on
    domains.

    Checked in float64 for TensorFlow, PyTorch and JAX (the precision their oracles work in);
    in the inputs' dtype for autograd.
    """

    def __init__(self, fn: Callable[..., Any], inputs: Sequence[Any], *, framework: str,
                 name: str | None = None, **options: Any) -> None:
        if framework not in FRAMEWORKS:
            raise ValueError(f"gradcheck.check: unknown framework {framework!r}; expected one "
                             f"of {', '.join(FRAMEWORKS)}")
        super().__init__(fn, inputs, name=name, family=framework, **options)
        self.framework = framework
        self._unsupported: dict[str, str] | None = None
        self._probed: tuple[str, ...] = ()

    def default_dtypes(self) -> tuple[str, ...]:
        if self.framework in FLOAT64_ONLY:
            return ("float64",)
        return super().default_dtypes()

    def unsupported_dtype(self, dtype: str) -> str | None:
        """Why this function cannot be checked in ``dtype`` (None when it can): TensorFlow,
        PyTorch and JAX functions run in float64, the precision their oracles work in."""
        if self.framework not in FLOAT64_ONLY or dtype == "float64":
            return None
        label = FLOAT64_ONLY[self.framework]
        if self.spec.domains is not None and any(is_complex(d) for d in self.spec.domains):
            # complex inputs: dtypes names their precision as complex128 / complex64
            return (f"gradcheck.check: {self.name} is a {label} function, checked in "
                    f"complex128 only for complex inputs (the precision {label}'s derivatives "
                    "are computed in; complex64 example inputs are upcast to complex128), not "
                    "in complex64 (float32's precision): leave dtypes out or pass "
                    "dtypes='complex128'")
        return (f"gradcheck.check: {self.name} is a {label} function, checked in float64 "
                f"only (the precision {label}'s derivatives are computed in; float32 example "
                f"inputs are upcast to float64), not in {dtype}: leave dtypes out or pass "
                "dtypes='float64'")

    def strategy(self, dtype: str, stratum: Any = None) -> Any:
        why = self.unsupported_dtype(dtype)
        if why is not None:
            raise ValueError(why)
        return super().strategy(dtype, stratum)

    def bind(self, example: Example) -> Problem:
        from gradcheck.oracles import get_oracle
        from gradcheck.oracles.inputs import Call

        fn = self.spec.function(self.fn)  # the outputs= selection
        if example.params:  # params= keyword arguments, fixed or drawn from their choices
            fn = functools.partial(fn, **example.params)
        call = Call(fn=fn, name=self.name, args=tuple(example.args),
                    argnums=tuple(self.positions(example)))
        problem: Problem = get_oracle(self.framework).problem(call)
        return problem

    def unsupported(self, paths: Sequence[str] | None = None) -> dict[str, str]:
        """Paths the framework cannot compute for this function, found by trying once at a
        sample input (TensorFlow: no second-order gradient, or no graph mode for its
        double-VJP; autograd: no forward rule).  Only ``paths`` are tried (default: all)."""
        out = dict(super().unsupported())
        wanted = tuple(PATHS if paths is None else paths)
        if self._unsupported is None or self._probed != wanted:
            self._unsupported, self._probed = self._probe(wanted), wanted
        out.update(self._unsupported)
        return out

    def sample(self) -> Example:
        """A representative input: the given arrays, or the first draw from the domains."""
        from gradcheck.checker.explore import draw_examples

        if not self.domains:
            return Example(args=list(self.fixed), params={}, dtype="float64", scale=1.0,
                           seed=0, shapes=[a.shape for a in self.fixed])
        return draw_examples(self.strategy("float64"), 1, seed=0)[0]

    def _probe(self, paths: tuple[str, ...]) -> dict[str, str]:
        """Try the paths that can be unsupported once: a missing gradient or rule is the
        framework's answer for every example; any other failure is left to the checker,
        which reports it as a finding on the path that hits it."""
        problem: Any = self.bind(self.sample())
        x = problem.primals
        try:
            outs = problem.forward(x)
        except Exception:  # noqa: BLE001  (the checker reports a failing forward itself)
            return {}
        zeros = [np.zeros_like(o, dtype=np.float64) for o in outs]
        tf = self.framework == "tensorflow"
        out: dict[str, str] = {}
        if "double_vjp" in paths or (not tf and set(paths) & set(SECOND_ORDER)):
            out = self._probe_double_vjp(problem, x, zeros)
            if tf and out.keys() != {"double_vjp"}:
                # it ran (forward mode needs nothing more), or a gradient is missing (and
                # forward mode, the double-VJP op by op, is unsupported with it)
                return out
        if set(paths) - {"vjp"}:
            out.update(self._probe_jvp(problem, x))
        return out

    def _probe_double_vjp(self, problem: Any, x: list[np.ndarray],
                          zeros: list[np.ndarray]) -> dict[str, str]:
        """A framework that cannot differentiate the VJP again.  TensorFlow's double-VJP is
        built in graph mode, which a function may not support (``x.numpy()``, a
        ``tf.py_function``): then the double-VJP alone is unsupported, in TensorFlow's words;
        an op with no gradient at all makes every path unsupported."""
        try:
            problem.double_vjp(x, [np.zeros_like(a) for a in x], zeros)
        except Unsupported as error:
            why = normalise_error_text(str(error))
            if self.framework != "tensorflow":  # torch's once_differentiable, say
                return {p: why for p in ("double_vjp", *SECOND_ORDER)}
            if getattr(error, "order", None) == 1:  # the VJP itself is missing
                return {p: why for p in PATHS}
            if getattr(error, "order", None) == 2:
                return {p: why for p in TF_SECOND_ORDER}
            return {"double_vjp": why}  # no graph mode: only the double-VJP needs it
        except Exception:  # noqa: BLE001  (a wrong rule is the checker's finding)
            pass
        return {}

    def _probe_jvp(self, problem: Any, x: list[np.ndarray]) -> dict[str, str]:
        """A framework with no forward rule for this function (for TensorFlow, whose forward
        mode transposes the VJP: no second order, or no VJP at all)."""
        try:
            problem.jvp(x, [np.zeros_like(a) for a in x])
        except Unsupported as error:
            why, order = normalise_error_text(str(error)), getattr(error, "order", None)
            if self.framework == "tensorflow" and order is not None:
                return {p: why for p in (PATHS if order == 1 else TF_SECOND_ORDER)}
            return {p: why for p in ("jvp", "hvp_fwd_rev", "hvp_rev_fwd")}
        except Exception:  # noqa: BLE001  (a wrong rule is the checker's finding)
            pass
        return {}


def framework_target(fn: Callable[..., Any], inputs: Sequence[Any] | None = None, *,
                     framework: str | None = None, **options: Any) -> FrameworkTarget:
    """The target for a TensorFlow, autograd, PyTorch or JAX function ``fn`` with ``inputs``
    (example arrays, torch tensors, JAX arrays or :class:`~gradcheck.domains.Domain` s);
    ``framework`` overrides detection."""
    framework = framework or framework_of(fn, inputs)
    if framework is None:
        raise TypeError(f"gradcheck.check: cannot tell which framework {fn!r} is written in "
                        "(its code names none and no input is a torch, JAX or TensorFlow "
                        "array); pass framework='tensorflow' or 'autograd' (or 'torch' or "
                        "'jax')")
    if inputs is None or isinstance(inputs, (np.ndarray, Domain)):
        raise TypeError(f"gradcheck.check: a {framework} function needs inputs=: a tuple of "
                        "example arrays or of input domains")
    owner = getattr(fn, "__self__", None)  # torch.autograd.Function's apply: its class's name
    options.setdefault("name", f"{owner.__name__}.{fn.__name__}" if isinstance(owner, type)
                       else function_name(fn))
    if isinstance(inputs, (list, tuple)):
        inputs = [_as_numpy(x) for x in inputs]
    # anything else (a string, a dict) is refused by the spec, which names what it got
    return FrameworkTarget(fn, inputs, framework=framework, **options)


def _as_numpy(value: Any) -> Any:
    """A torch tensor, JAX array or TensorFlow tensor or variable given as an input, as a
    numpy array."""
    framework = input_framework(value)
    if framework == "torch":
        return value.detach().cpu().numpy()
    if framework == "tensorflow":
        return np.asarray(value.numpy())
    if framework == "jax":
        return np.asarray(value)
    return value


def is_framework_function(obj: Any, inputs: Any = None, framework: str | None = None) -> bool:
    """Whether ``gradcheck.check`` should treat ``obj`` as a framework's function
    (registered as a target kind at the composition root): ``framework=`` says so, else
    :func:`framework_of` with the given ``inputs``."""
    if framework is not None:
        return callable(obj) and not isinstance(obj, type)
    return framework_of(obj, inputs) is not None
