"""``Tensor``: a numpy array that tapes and forward accumulators can follow.

A tensor is a thin box around an ``ndarray``.  Tracers recognise tensors by
identity, so every op result is a new tensor.  Arithmetic operators, indexing
and the array methods are the op library's registered ops, found by name in
the default registry at first use: the library is built on this module, so
this module cannot import it.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from gradcheck.engine import state
from gradcheck.engine.registry import UnknownOpError, default_registry

__all__ = ["Tensor", "tensor", "bind", "is_float", "value_of"]


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
    # numpy defers binary operators with an ndarray on the left to our reflected ones.
    __array_ufunc__ = None

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
        return _read_only(np.asarray(self._value))

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        # read-only unless a copy is made, for the reason numpy() gives
        if copy:
            return np.array(self._value, dtype=dtype, copy=True)
        a = np.asarray(self._value, dtype=dtype)
        return _read_only(a) if a is self._value else a

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

    # Array methods, with numpy's signatures.
    @property
    def T(self) -> Any:  # noqa: N802 - numpy's name
        return _OPS["transpose"](self)

    def reshape(self, *shape: Any) -> Any:
        return _OPS["reshape"](self, shape=shape[0] if len(shape) == 1 else shape)

    def transpose(self, *axes: Any) -> Any:
        return _OPS["transpose"](self, axes=(axes[0] if len(axes) == 1 else axes) or None)

    def astype(self, dtype: Any) -> Any:
        return _OPS["astype"](self, dtype)

    def sum(self, axis: Any = None, keepdims: bool = False) -> Any:
        return _OPS["sum"](self, axis=axis, keepdims=keepdims)

    def mean(self, axis: Any = None, keepdims: bool = False) -> Any:
        return _OPS["mean"](self, axis=axis, keepdims=keepdims)

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


def _read_only(a: np.ndarray) -> np.ndarray:
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
        outs = _new(Tensor)
        outs._value = out if type(out) is np.ndarray else np.asarray(out)
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
    return ValueError(f"op {op.name!r} declares nout={op.nout} outputs, but its forward "
                      f"returned {got}; it must return a tuple of {op.nout} arrays")


_new = object.__new__
#: Tapes' keys for tensors (see ``Tensor._key``): ``next(KEYS)`` is one no tensor has had.
KEYS = itertools.count(1)
