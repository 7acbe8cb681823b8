"""``Tensor``: a numpy array that tapes and forward accumulators can follow.

A tensor is a thin box around an ``ndarray``.  Tracers recognise tensors by
identity, so every op result is a new tensor.  Arithmetic operators, indexing
and the array methods are the op library's registered ops, found by name in
the default registry at first use: the library is built on this module, so
this module cannot import it.
"""

from __future__ import annotations

import importlib
import itertools
from typing import Any

import numpy as np

from gradcheck.engine import state
from gradcheck.engine.registry import UnknownOpError, default_registry

__all__ = ["Tensor", "tensor", "bind", "is_float", "value_of", "read_only"]


class _Ops(dict[str, Any]):
    """Registered ops by name, each looked up in the default registry once."""

    def __missing__(self, name: str) -> Any:
        try:
            op = default_registry.get(name)
        except UnknownOpError:
            raise RuntimeError(f"gradcheck.Tensor's operators call the registered op {name!r}; "
                               "import gradcheck to register the op library") from None
        self[name] = op
        return op


_OPS = _Ops()


class Tensor:
    """A value the engine can differentiate.  Create with :func:`gradcheck.tensor`."""

    # ``_tangents``: {accumulator level: tangent}, kept by forward accumulators on the tensors
    # they compute, so a tangent lives exactly as long as its primal.  ``_key``: a number no
    # other tensor of this process has (from KEYS, given when a tape first tracks the tensor;
    # 0 until then), by which tapes know the tensor without holding it, so a value no rule
    # reads is freed as soon as its user drops it.
    __slots__ = ("_value", "_tangents", "_key", "__weakref__")

    def __init__(self, value: Any) -> None:
        self._value = value
        self._tangents: dict[float, Any] | None = None
        self._key: int = 0

    def __reduce__(self) -> tuple[Any, tuple[Any]]:
        # a copy (copy, deepcopy, pickle) is a new tensor: its own key, no tangents
        return Tensor, (self._value,)

    # -- the array -------------------------------------------------------
    def numpy(self) -> np.ndarray:
        """The wrapped value as a read-only ndarray view (no copy).

        Tapes and accumulators keep the values their rules read, and op results may be
        views of their inputs, so writing into a tensor's array would silently change
        gradients computed later: numpy refuses it ("assignment destination is
        read-only").  Take ``t.numpy().copy()`` for an array to change.
        """
        return read_only(np.asarray(self._value))

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        # read-only unless a copy is made, for the reason numpy() gives
        if copy:
            return np.array(self._value, dtype=dtype, copy=True)
        a = np.asarray(self._value, dtype=dtype)
        return read_only(a) if a is self._value else a

    # numpy's own functions on tensors (``np.sin(t)``, ``np.dot(t, t)``, and an ndarray on
    # the left of an operator: ``a + t`` is ``np.add(a, t)``) run gradcheck.numpy's op of the
    # same name.  Without one, numpy computes only what carries no derivative (shapes,
    # indices, booleans); anything else is an error, never a derivative silently dropped.
    # gradcheck's own ops call the forwards on raw arrays: they never come through here.
    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        """``np.sin(t)`` is ``gnp.sin(t)``; a comparison or ``np.isfinite(t)`` is numpy's."""
        if method == "__call__" and not kwargs:
            fn = _counterpart("numpy", ufunc.__name__, ufunc)
            if fn is not None:
                return fn(*inputs)
        if _predicate(ufunc) or not _float_tensor_in(inputs):
            return getattr(ufunc, method)(*_unwrap(inputs), **_unwrap_out(ufunc, kwargs))
        raise _ufunc_error(ufunc, method, kwargs)

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        """``np.dot(t, t)`` is ``gnp.dot(t, t)``; ``np.shape(t)`` is numpy's."""
        if not all(issubclass(t, (Tensor, np.ndarray)) for t in types):
            return NotImplemented
        if func.__name__ in _VIA_METHOD and func.__module__ == "numpy":
            return func._implementation(*args, **kwargs)  # numpy calls the tensor's method
        fn = _counterpart(func.__module__, func.__name__, func)
        # np.where(condition) alone is np.nonzero(condition): indices, not the op
        if fn is not None and not (func.__name__ == "where" and len(args) == 1):
            return fn(*args, **kwargs)
        return _without_derivative(func, args, kwargs)

    @property
    def shape(self) -> tuple[int, ...]:
        return np.shape(self._value)

    @property
    def dtype(self) -> np.dtype:
        return np.asarray(self._value).dtype if not hasattr(self._value, "dtype") \
            else self._value.dtype

    @property
    def ndim(self) -> int:
        return np.ndim(self._value)

    @property
    def size(self) -> int:
        return int(np.size(self._value))

    def item(self) -> Any:
        return np.asarray(self._value).item()

    def __len__(self) -> int:
        return len(self._value)

    def __iter__(self) -> Any:
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d gradcheck.Tensor")
        return (self[i] for i in range(len(self)))

    def __bool__(self) -> bool:
        return bool(self._value)

    def __float__(self) -> float:
        # as in autograd and JAX: a Python float of a value being differentiated has none
        if any(tracer.watched(self) for tracer in state.current):
            raise TypeError("float() of a gradcheck Tensor being differentiated would lose "
                            "its derivative (math.sqrt(t) and the like call it); use gnp's "
                            "functions (gnp.sqrt(t)), or float(t.numpy()) for a constant")
        return float(self._value)

    def __int__(self) -> int:
        return int(self._value)

    def __repr__(self) -> str:
        body = np.array2string(np.asarray(self._value), separator=", ", prefix="tensor(")
        return f"tensor({body}, dtype={self.dtype})"

    # Comparisons are not differentiable: they give plain boolean arrays.
    def __lt__(self, other: Any) -> Any:
        return np.less(self._value, value_of(other))

    def __le__(self, other: Any) -> Any:
        return np.less_equal(self._value, value_of(other))

    def __gt__(self, other: Any) -> Any:
        return np.greater(self._value, value_of(other))

    def __ge__(self, other: Any) -> Any:
        return np.greater_equal(self._value, value_of(other))

    def __eq__(self, other: Any) -> Any:
        return np.equal(self._value, value_of(other))

    def __ne__(self, other: Any) -> Any:
        return np.not_equal(self._value, value_of(other))

    __hash__ = object.__hash__

    # Arithmetic is differentiable: each operator is a registered op.
    def __add__(self, other: Any) -> Any:
        return bind(_OPS["add"], self, other)

    def __radd__(self, other: Any) -> Any:
        return bind(_OPS["add"], other, self)

    def __sub__(self, other: Any) -> Any:
        return bind(_OPS["subtract"], self, other)

    def __rsub__(self, other: Any) -> Any:
        return bind(_OPS["subtract"], other, self)

    def __mul__(self, other: Any) -> Any:
        return bind(_OPS["multiply"], self, other)

    def __rmul__(self, other: Any) -> Any:
        return bind(_OPS["multiply"], other, self)

    def __truediv__(self, other: Any) -> Any:
        return bind(_OPS["divide"], self, other)

    def __rtruediv__(self, other: Any) -> Any:
        return bind(_OPS["divide"], other, self)

    def __pow__(self, other: Any) -> Any:
        return bind(_OPS["power"], self, other)

    def __rpow__(self, other: Any) -> Any:
        return bind(_OPS["power"], other, self)

    def __matmul__(self, other: Any) -> Any:
        return bind(_OPS["matmul"], self, other)

    def __rmatmul__(self, other: Any) -> Any:
        return bind(_OPS["matmul"], other, self)

    def __neg__(self) -> Any:
        return bind(_OPS["negative"], self)

    def __pos__(self) -> Tensor:
        return self

    def __getitem__(self, index: Any) -> Any:
        return _OPS["getitem"](self, index=index)

    def __abs__(self) -> Any:
        return _OPS["abs"](self)

    # numpy's mod and floor_divide are not registered ops (piecewise: their derivatives
    # jump), so these say what to write instead of Python's "unsupported operand".
    def __mod__(self, other: Any) -> Any:
        raise _not_differentiable("%")

    __rmod__ = __mod__

    def __floordiv__(self, other: Any) -> Any:
        raise _not_differentiable("//")

    __rfloordiv__ = __floordiv__

    # Array methods, with numpy's signatures: numpy's functions call them (``np.sum(t)`` is
    # ``t.sum(axis=None, dtype=None, out=None)``), so they take numpy's ``out=`` (None only)
    # and ``dtype=``.
    @property
    def T(self) -> Any:  # noqa: N802 - numpy's name
        return _OPS["transpose"](self)

    @property
    def real(self) -> Any:
        return _OPS["real"](self)

    @property
    def imag(self) -> Any:
        return _OPS["imag"](self)

    def conj(self) -> Any:
        return _OPS["conj"](self)

    conjugate = conj

    def reshape(self, *shape: Any, order: str = "C", copy: Any = None) -> Any:
        _c_order("reshape", order)
        return _OPS["reshape"](self, shape=shape[0] if len(shape) == 1 else shape)

    def flatten(self, order: str = "C") -> Any:
        """A 1-d tensor of the entries (numpy's ``flatten``; C order only)."""
        _c_order("flatten", order)
        return _OPS["reshape"](self, shape=(-1,))

    def ravel(self, order: str = "C") -> Any:
        """A 1-d tensor of the entries (numpy's ``ravel``; C order only)."""
        _c_order("ravel", order)
        return _OPS["reshape"](self, shape=(-1,))

    def copy(self, order: str = "C") -> Any:
        """A differentiable copy (numpy's ``copy``; C order only)."""
        _c_order("copy", order)
        return _OPS["astype"](self, self.dtype)

    def squeeze(self, axis: Any = None) -> Any:
        return _OPS["squeeze"](self, axis=axis)

    def transpose(self, *axes: Any) -> Any:
        return _OPS["transpose"](self, axes=(axes[0] if len(axes) == 1 else axes) or None)

    def astype(self, dtype: Any) -> Any:
        return _OPS["astype"](self, dtype)

    def dot(self, b: Any, out: Any = None) -> Any:
        _no_out("dot", out)
        return _OPS["dot"](self, b)

    def clip(self, min: Any = None, max: Any = None, out: Any = None,  # noqa: A002 - numpy's
             **numpy_kw: Any) -> Any:
        """numpy's ``clip(min, max)`` (the ``clip`` op: the bounds are held fixed)."""
        _no_out("clip", out)
        return _OPS["clip"](self, a_min=numpy_kw.pop("a_min", min),
                            a_max=numpy_kw.pop("a_max", max), **numpy_kw)

    def cumsum(self, axis: Any = None, dtype: Any = None, out: Any = None) -> Any:
        _no_out("cumsum", out)
        x = self if dtype is None or np.dtype(dtype) == self.dtype else self.astype(dtype)
        return _OPS["cumsum"](x, axis=axis)

    # The reductions take numpy's parameters as numpy passes them (positionally too); the
    # ops refuse an ``out``, ``initial`` or ``where`` they cannot honour.
    def sum(self, *args: Any, **params: Any) -> Any:
        return _OPS["sum"](self, *args, **params)

    def mean(self, *args: Any, **params: Any) -> Any:
        return _OPS["mean"](self, *args, **params)

    def max(self, *args: Any, **params: Any) -> Any:
        return _OPS["max"](self, *args, **params)

    def min(self, *args: Any, **params: Any) -> Any:
        return _OPS["min"](self, *args, **params)

    def prod(self, *args: Any, **params: Any) -> Any:
        return _OPS["prod"](self, *args, **params)

    def var(self, *args: Any, **params: Any) -> Any:
        return _OPS["var"](self, *args, **params)

    def std(self, *args: Any, **params: Any) -> Any:
        return _OPS["std"](self, *args, **params)

    # Not differentiable: plain integer arrays, like the comparisons.
    def argmax(self, axis: Any = None, out: Any = None, *, keepdims: bool = False) -> Any:
        _no_out("argmax", out)
        return np.argmax(self._value, axis=axis, keepdims=keepdims)

    def argmin(self, axis: Any = None, out: Any = None, *, keepdims: bool = False) -> Any:
        _no_out("argmin", out)
        return np.argmin(self._value, axis=axis, keepdims=keepdims)


def _no_out(method: str, out: Any) -> None:
    """Refuse numpy's ``out=``: an op returns a new tensor, it never writes into an array."""
    if out is not None:
        raise TypeError(f"Tensor.{method}: out= is not supported (ops return a new tensor, they "
                        f"never write into one); got {type(out).__name__}: assign the result "
                        "instead")


def _without_out(params: dict[str, Any]) -> dict[str, Any]:
    """An op's keywords without numpy's ``out=None`` (``np.sum(t)`` passes it itself): rules
    are called as ``rule(g_or_tangents, out, *inputs, **params)``, so a parameter named
    ``out`` would collide with the op's output.  An ``out`` array stays, for the op's
    forward to refuse (an op returns a new array, it never writes into one)."""
    if params["out"] is None:
        return {k: v for k, v in params.items() if k != "out"}
    return params


def _c_order(method: str, order: str) -> None:
    """Refuse an ``order`` other than C (a tensor's entries are read in C order)."""
    if order != "C":
        raise ValueError(f"Tensor.{method}: only order='C' is supported, got {order!r}")


def _not_differentiable(symbol: str) -> TypeError:
    """The error for ``%`` and ``//``: no registered op computes them."""
    instead = {"%": "gnp.fmod(a, b) (the sign of a), or a - gnp.floor(a / b) * b (numpy's "
                    "mod, the sign of b)",
               "//": "gnp.floor(a / b) (its derivative is zero), or a.numpy() // b for a "
                     "constant array"}[symbol]
    return TypeError(f"gradcheck.Tensor does not support {symbol}: it is not a differentiable "
                     f"op; write {instead}")


#: gradcheck.numpy's namespace for each numpy module whose functions it mirrors.
_NAMESPACES = {"numpy": "gradcheck.numpy", "numpy.linalg": "gradcheck.numpy.linalg",
               "numpy.fft": "gradcheck.numpy.fft"}
_COUNTERPARTS: dict[tuple[str, str], Any] = {}
_PREDICATES: dict[Any, bool] = {}
#: numpy functions that call the array method of their name, which a tensor has with
#: numpy's signature (``np.clip(t, min=0)`` is ``t.clip(min=0)``): numpy's code runs them.
_VIA_METHOD = frozenset({"sum", "mean", "max", "min", "amax", "amin", "prod", "var", "std",
                         "clip", "cumsum", "reshape", "squeeze", "transpose", "argmax",
                         "argmin", "real", "imag"})
#: numpy functions that write their other arguments' values into their first.
_WRITES = frozenset({"copyto", "put", "place", "putmask", "put_along_axis", "fill_diagonal"})
#: numpy functions whose result depends on their first argument's shape and dtype only.
_SHAPE_ONLY = frozenset({"zeros_like", "ones_like", "empty_like", "full_like"})
_FLOATS = "efdgFDG"  # numpy's type codes of floating values
_INEXACT = _FLOATS + "O"  # and of values that may hold them
#: What to write for a ufunc method, by ``(ufunc, method)``.
_METHOD_INSTEAD = {("add", "reduce"): "gnp.sum", ("multiply", "reduce"): "gnp.prod",
                   ("maximum", "reduce"): "gnp.max", ("minimum", "reduce"): "gnp.min",
                   ("add", "accumulate"): "gnp.cumsum", ("multiply", "accumulate"): "gnp.cumprod",
                   ("logaddexp", "accumulate"): "gnp.cumlogsumexp",
                   ("multiply", "outer"): "gnp.outer", ("add", "at"): "gnp.scatter_add"}


def _counterpart(module: str, name: str, original: Any) -> Any:
    """gradcheck.numpy's differentiable function for numpy's ``module.name``, or None.

    Looked up at first use: gradcheck.numpy is built on this module, so this module cannot
    import it.  A name gradcheck.numpy re-exports from numpy (``zeros_like``) is not one:
    calling it would come straight back here.
    """
    key = (module, name)
    if key not in _COUNTERPARTS:
        namespace = _NAMESPACES.get(module)
        fn = None if namespace is None or name.startswith("_") else \
            getattr(importlib.import_module(namespace), name, None)
        _COUNTERPARTS[key] = None if fn is original or not callable(fn) else fn
    return _COUNTERPARTS[key]


def _without_derivative(func: Any, args: Any, kwargs: Any) -> Any:
    """numpy's ``func`` on the tensors' arrays, if its result carries no derivative (a
    shape, indices, booleans, or floats computed from integers only); else the error."""
    # a ``*_like`` function reads only its prototype's shape and dtype
    fed = (args[1:], kwargs) if func.__name__ in _SHAPE_ONLY else (args, kwargs)
    if (func.__name__ in _WRITES or kwargs.get("out") is not None) and _float_tensor_in(fed):
        raise _function_error(func, "it writes the values into an array, which cannot hold "
                                    "their derivative")
    result = func(*_unwrap(args), **_unwrap(kwargs))
    if _holds_float(result) and _float_tensor_in(fed):
        got = type(result).__name__ if not hasattr(result, "dtype") else \
            f"{type(result).__name__} of {result.dtype}"
        raise _function_error(func, f"numpy's result (a plain {got}) would lose the "
                                    "derivative")
    return result


def _predicate(ufunc: Any) -> bool:
    """True if ``ufunc`` gives no floats for floats (comparisons, ``isfinite``,
    ``signbit``...): no derivative to lose, so numpy may compute it."""
    if ufunc not in _PREDICATES:
        _PREDICATES[ufunc] = not any(
            any(c in _FLOATS for c in ins) and any(c in _INEXACT for c in outs)
            for ins, outs in (types.split("->") for types in ufunc.types))
    return _PREDICATES[ufunc]


def _float_tensor_in(x: Any) -> bool:
    """True if ``x`` (arguments, possibly nested in lists, tuples and dicts) holds a
    floating tensor: one a derivative can flow from."""
    if type(x) is Tensor:
        return is_float(x)
    if isinstance(x, (tuple, list)):
        return any(_float_tensor_in(v) for v in x)
    if isinstance(x, dict):
        return any(_float_tensor_in(v) for v in x.values())
    return False


def _unwrap(x: Any) -> Any:
    """``x`` with every tensor replaced by its read-only array, in lists, tuples and dicts."""
    if type(x) is Tensor:
        return x.numpy()
    if isinstance(x, (tuple, list)):
        return type(x)(_unwrap(v) for v in x)
    if isinstance(x, dict):
        return {k: _unwrap(v) for k, v in x.items()}
    return x


def _unwrap_out(ufunc: Any, kwargs: dict[str, Any]) -> dict[str, Any]:
    """A ufunc's keywords for numpy, refusing a tensor as ``out``: tensors are immutable."""
    if any(type(o) is Tensor for o in kwargs.get("out", ())):
        raise TypeError(f"numpy.{ufunc.__name__}(..., out=...): a gradcheck Tensor cannot be "
                        "written into (tensors are immutable); assign the result instead")
    return _unwrap(kwargs)


def _holds_float(x: Any) -> bool:
    """True if a numpy result holds floating values (a derivative would live in them)."""
    if isinstance(x, (tuple, list)):
        return any(_holds_float(v) for v in x)
    if isinstance(x, (np.ndarray, np.generic)):
        return x.dtype.char in _INEXACT
    return isinstance(x, (float, complex))


def _ufunc_error(ufunc: Any, method: str, kwargs: dict[str, Any]) -> TypeError:
    """The error for a ufunc call gradcheck.numpy cannot differentiate."""
    name = ufunc.__name__
    call = f"numpy.{name}(...)" if method == "__call__" else f"numpy.{name}.{method}(...)"
    if method != "__call__":
        instead = _METHOD_INSTEAD.get((name, method), "gnp's functions (broadcasting)")
        why = f"ufunc methods are not differentiable; use {instead}"
    elif _counterpart("numpy", name, ufunc) is not None:
        keys = ", ".join(f"{k}=" for k in kwargs)
        why = f"gnp.{name} takes no {keys}; call gnp.{name} without {keys}"
        if "out" in kwargs:
            why += (" and assign the result: an array cannot hold a derivative (for an "
                    "in-place a += t on an ndarray a, write a = a + t)")
    elif name in ("remainder", "floor_divide"):
        return _not_differentiable("%" if name == "remainder" else "//")
    else:
        why = (f"gradcheck.numpy has no differentiable {name}, and numpy's would lose the "
               "derivative; write it with gnp's functions, or take t.numpy() for a constant")
    return TypeError(f"{call} on a gradcheck Tensor: {why}")


def _function_error(func: Any, why: str) -> TypeError:
    """The error for a numpy function gradcheck.numpy has no op for, applied to a tensor a
    derivative flows from."""
    method = f"the method t.{func.__name__}(), " if hasattr(Tensor, func.__name__) else ""
    return TypeError(f"{func.__module__}.{func.__name__}(...) on a gradcheck Tensor: "
                     f"gradcheck.numpy has no differentiable {func.__name__}, and {why}; "
                     f"write it with {method}gnp's functions, or pass t.numpy() for a "
                     "constant")


def read_only(a: np.ndarray) -> np.ndarray:
    """A view of ``a`` that cannot be written to."""
    view = a.view()
    view.flags.writeable = False
    return view


def value_of(x: Any) -> Any:
    """The raw value of a tensor; anything else unchanged."""
    return x._value if type(x) is Tensor else x


def is_float(x: Any) -> bool:
    """True for floating-point values (the only ones the engine differentiates)."""
    v = x._value if type(x) is Tensor else x
    dtype = getattr(v, "dtype", None)
    if dtype is None:
        return isinstance(v, float)
    return dtype.kind in "fc"


def tensor(value: Any, dtype: Any = None) -> Tensor:
    """A :class:`Tensor` holding ``np.array(value, dtype)`` (a copy).

    >>> import gradcheck as gc
    >>> gc.tensor([1.0, 2.0]).shape
    (2,)
    """
    if type(value) is Tensor:
        value = value._value
    return Tensor(np.array(value, dtype=dtype))


def bind(op: Any, /, *args: Any, **params: Any) -> Any:
    """Call the op ``op`` (a :class:`~gradcheck.engine.op.Op`; ``Op.__call__`` is this
    function): its numpy forward, then every visible tracer sees the call.  Without a
    tensor among ``args`` it is plain numpy and returns the forward's value."""
    n = len(args)
    if op.nin is not None and n != op.nin:
        args, params = op.split_parameters(args, params)
        n = len(args)
    if "out" in params:
        params = _without_out(params)
    # unrolled for one and two inputs, the common cases on the hot path
    if n == 1:
        a = args[0]
        if type(a) is not Tensor:
            return op.forward(a, **params)
        out = op.forward(a._value, **params)
    elif n == 2:
        a, b = args
        ta, tb = type(a) is Tensor, type(b) is Tensor
        if not (ta or tb):
            return op.forward(a, b, **params)
        out = op.forward(a._value if ta else a, b._value if tb else b, **params)
    else:
        if not any(type(a) is Tensor for a in args):
            return op.forward(*args, **params)
        out = op.forward(*[a._value if type(a) is Tensor else a for a in args], **params)
    outs: Any
    if op.nout == 1:
        # Tensor(out) without the __init__ call: this runs once per op
        if type(out) is not np.ndarray:
            if isinstance(out, (tuple, list)):  # np.asarray would stack several outputs
                raise _output_count_error(op, out)
            out = np.asarray(out)
        outs = _new(Tensor)
        outs._value = out
        outs._tangents = None
        outs._key = 0
    else:
        if not isinstance(out, (tuple, list)) or len(out) != op.nout:
            raise _output_count_error(op, out)
        outs = tuple(Tensor(np.asarray(o)) for o in out)
    if op.differentiable:
        for tracer in state.current:
            tracer.record(op, args, outs, params)
    return outs


def _output_count_error(op: Any, out: Any) -> ValueError:
    """The error for a forward that does not return the ``nout`` outputs its op declares
    (iterating an array instead would make one output per row)."""
    if isinstance(out, (tuple, list)):
        got = f"a {type(out).__name__} of {len(out)} values"
    else:
        got = f"a {type(out).__name__} of shape {np.shape(out)}"
    if op.nout == 1:
        return ValueError(f"op {op.name!r} declares nout=1 output (the default), but its "
                          f"forward returned {got}; it must return one array (give nout= "
                          "for an op with several outputs)")
    return ValueError(f"op {op.name!r} declares nout={op.nout} outputs, but its forward "
                      f"returned {got}; it must return a tuple of {op.nout} arrays")


_new = object.__new__
#: Tapes' keys for tensors (see ``Tensor._key``): ``next(KEYS)`` is one no tensor has had.
KEYS = itertools.count(1)
