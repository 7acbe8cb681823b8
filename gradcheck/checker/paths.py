"""The derivative paths, computed by gradcheck's engine for a function of its primals.

Path names are public and fixed (:data:`PATHS`).  With ``G(x, v) = J(x)^T v`` (the VJP as a
function of the primals *and* the cotangent, as autograd's second-order check treats it) and
``K(x, u) = J(x) u`` (the JVP as a function of the primals and the tangent):

``vjp``          ``J^T v`` from the tape.
``jvp``          ``J u`` from the native JVP rules (transposing an op's VJP where it has none).
``double_vjp``   ``J u`` by transposing the VJP in a dummy cotangent (the "gradients twice"
                 trick); also reports whether the result was computed from the dummy.
``hvp_fwd_rev``  ``DG[u, w] = H_v u + J^T w``: forward over reverse.
``hvp_rev_rev``  ``DG^T s = (H_v s, J s)``: reverse over reverse.
``hvp_rev_fwd``  ``DK^T z = (H_z u, J^T z)``: reverse over forward.

:class:`EngineProblem` computes them on plain numpy arrays and returns plain numpy arrays;
every array it hands the engine is a copy re-checked afterwards, or a read-only array numpy
keeps anything from writing into (see :class:`Guard`), so a rule that writes into an input
raises :class:`InputMutated`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from gradcheck.engine import ForwardAccumulator, GradientTape
from gradcheck.engine.functional import double_vjp as engine_double_vjp
from gradcheck.engine.functional import jvp as engine_jvp
from gradcheck.engine.functional import vjp as engine_vjp
from gradcheck.engine.pytree import flatten, unflatten
from gradcheck.engine.tensor import Tensor, read_only, value_of

__all__ = [
    "PATHS", "FIRST_ORDER", "SECOND_ORDER", "InputMutated", "Guard", "fingerprint", "same_bits",
    "EngineProblem", "no_floating_output",
]

FIRST_ORDER = ("vjp", "jvp", "double_vjp")
SECOND_ORDER = ("hvp_fwd_rev", "hvp_rev_rev", "hvp_rev_fwd")
#: Every path the checker knows, in report order.
PATHS = FIRST_ORDER + SECOND_ORDER

Arrays = list[np.ndarray]


class InputMutated(RuntimeError):
    """A call changed an array it was given; ``names`` says which."""

    def __init__(self, names: list[str]) -> None:
        super().__init__(f"changed in place: {', '.join(names)}")
        self.names = names


def fingerprint(a: Any) -> np.ndarray:
    """A private copy of an array (or a Tensor's array): what it held, bit for bit."""
    return np.array(value_of(a), copy=True)


#: Unsigned integers by item size: bits compared a word at a time, not a byte at a time.
_WORDS = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
_SMALL = 4096


def same_bits(a: np.ndarray, b: Any) -> bool:
    """True when ``b`` (an array or Tensor) still holds exactly the bits of ``a``."""
    b = np.asarray(value_of(b))
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.nbytes <= _SMALL:  # a few words: bytes compare faster than a ufunc runs
        return a.tobytes() == b.tobytes()
    word = _WORDS.get(a.dtype.itemsize, np.uint8)
    return bool(np.array_equal(np.ascontiguousarray(a).view(word),
                               np.ascontiguousarray(b).view(word)))


class Guard:
    """Remembers arrays before a call and tells which changed after it.

    A read-only array (a drawn direction, a probe point, a view of a primal) is lent as it
    is when ``lending``: numpy refuses every write into it, so it needs no copy and no
    comparison afterwards (at 10^6 elements each is a pass over 8 MB, for every array of
    every call).  A call that tries to write into one raises numpy's "read-only" ValueError;
    a call that raises anything while arrays are lent runs again in
    :meth:`EngineProblem._run`, under a guard that copies everything, which names the array
    written into (or raises what the call raises on copies too).
    """

    def __init__(self, lending: bool = True) -> None:
        self._watched: list[tuple[str, Any, np.ndarray]] = []
        self.lending = lending
        #: The read-only arrays lent as they are, by name.
        self.lent: list[tuple[str, np.ndarray]] = []

    def lend(self, name: str, value: Any) -> Any:
        """``value`` itself when it is a read-only array and the guard lends, else a copy of
        it, watched."""
        if self.lending and type(value) is np.ndarray and not value.flags.writeable:
            self.lent.append((name, value))
            return value
        return self.watch(name, np.array(value), value)

    def watch(self, name: str, value: Any, original: Any = None) -> Any:
        """Remember ``value``'s contents (arrays inside tuples, lists and dicts too).

        ``original``, when given, is what ``value`` was copied from, kept by the caller and
        never handed to the call: its arrays are the record of what ``value`` held (no
        second copy)."""
        if isinstance(value, (np.ndarray, Tensor)):  # the usual case: one array, no tree
            self._watched.append((name, value, _record(value, original)))
            return value
        leaves = flatten(value)[0]
        before = flatten(original)[0] if original is not None else [None] * len(leaves)
        if len(before) != len(leaves):
            before = [None] * len(leaves)
        for k, (leaf, was) in enumerate(zip(leaves, before, strict=True)):
            if isinstance(leaf, (np.ndarray, Tensor)):
                label = name if len(leaves) == 1 else f"{name}[{k}]"
                self._watched.append((label, leaf, _record(leaf, was)))
        return value

    def verify(self) -> None:
        changed = [name for name, leaf, before in self._watched if not same_bits(before, leaf)]
        # a lent array made writeable again may have been written: it counts as changed
        changed += [name for name, a in self.lent if a.flags.writeable]
        if changed:
            raise InputMutated(changed)


def _record(leaf: Any, was: Any) -> np.ndarray:
    """What ``leaf`` held before the call: ``was`` (the caller's original, never handed to
    the call) when it is a distinct array of the same shape and dtype, else a fingerprint."""
    held = value_of(leaf)
    if isinstance(was, np.ndarray) and isinstance(held, np.ndarray) and \
            was.dtype == held.dtype and was.shape == held.shape and was is not held:
        return was
    return fingerprint(leaf)


def _copy(value: Any) -> Any:
    if isinstance(value, np.ndarray):  # a leaf: flattening it gives itself
        return np.array(value)
    leaves, tree = flatten(value)
    return unflatten(tree, [np.array(x) if isinstance(x, np.ndarray) else x for x in leaves])


def _shared(tree: Any) -> bool:
    """Whether a flattened tree holds a list or dict below its top: a container a call could
    change, which every call must then get afresh."""
    if tree is None:
        return False
    return any(c is not None and (c[0] is dict or not issubclass(c[0], tuple) or _shared(c))
               for c in tree[-1])


def _arrays(values: Sequence[Any]) -> Arrays:
    return [np.array(value_of(v)) for v in values]


def no_floating_output(name: str, dtypes: Sequence[str]) -> ValueError:
    """The error of a function none of whose outputs is floating or complex (indices, a
    comparison's booleans): nothing can be differentiated, so nothing would be compared."""
    return ValueError(f"{name}: no output is floating or complex (output dtypes: "
                      f"{', '.join(dtypes) or 'none'}), so there is nothing to differentiate "
                      "and no derivative can be checked; return a floating output (or select "
                      "one with outputs=[...])")


class EngineProblem:
    """A function written with gradcheck ops, bound to fixed arguments and parameters.

    ``fn(*args, **params)``; the arguments at ``positions`` are the primals (differentiable),
    the others stay fixed.  ``counts`` tallies calls per path (and ``forward``).
    """

    #: ``vjp`` and ``jvp`` take None for an output's cotangent or an input's tangent, as the
    #: engine does (a rule then gets None there): the linearity check runs those branches.
    partial = True

    def __init__(self, fn: Callable[..., Any], args: Sequence[Any], params: dict[str, Any],
                 positions: Sequence[int], name: str = "f") -> None:
        self.fn, self.args, self.params = fn, list(args), dict(params)
        self.positions = tuple(positions)
        self.name = name
        #: Read-only views of the primals: a call is lent them (see :class:`Guard`).
        self.primals: Arrays = [read_only(np.asarray(self.args[i])) for i in self.positions]
        self.counts: Counter[str] = Counter()
        # what every call does with the parameters, worked out once: they are never handed
        # to a call (copies are), so their leaves stay what they are now
        leaves, self._param_tree = flatten(self.params)
        self._param_leaves = leaves
        #: Parameters holding arrays: copied and guarded at every call.
        self._param_arrays = any(isinstance(x, (np.ndarray, Tensor)) for x in leaves)
        #: Parameters holding lists or dicts: rebuilt for every call (a call may change them).
        self._param_shared = _shared(self._param_tree)
        #: Otherwise one rebuilt dict (its keys in the rebuilt order) serves every call.
        self._param_dict = unflatten(self._param_tree, leaves)

    def _params(self, guard: Guard) -> dict[str, Any]:
        """The parameters a call gets: its own copy of every array in them (guarded) and of
        every list or dict; as they are when they hold neither (the call's keyword dict is
        fresh anyway)."""
        if self._param_arrays:
            return guard.watch("params", _copy(self.params), self.params)
        if self._param_shared:
            return unflatten(self._param_tree, self._param_leaves)
        return self._param_dict

    def _bound(self, guard: Guard) -> Callable[..., Any]:
        fixed = [guard.watch(f"argument {i}", _copy(a), a) if i not in self.positions else None
                 for i, a in enumerate(self.args)]
        params = self._params(guard)

        def f(*primals: Any) -> Any:
            full = list(fixed)
            for i, p in zip(self.positions, primals, strict=True):
                full[i] = p
            out = self.fn(*full, **params)
            self._refuse_no_floating(out)
            return out

        return f

    def _refuse_no_floating(self, out: Any) -> None:
        """Raise when every output is an integer or a boolean (``argmax``, a comparison):
        none is differentiated, so no derivative would be compared.  (An output that is no
        number at all, None or a string, is the session's own error.)"""
        dtypes = [np.asarray(value_of(o)).dtype for o in self.outputs(out)]
        if dtypes and all(d.kind in "biu" for d in dtypes):
            raise no_floating_output(self.name, [d.name for d in dtypes])

    # the engine gets copies (the caller's arrays, never handed over, are their record) or
    # read-only arrays lent as they are (see Guard)
    def _tensors(self, guard: Guard, name: str, values: Sequence[Any]) -> list[Tensor]:
        return [Tensor(guard.lend(f"{name} {k}", v)) for k, v in enumerate(values)]

    def _cotangents(self, guard: Guard, values: Sequence[Any]) -> list[Tensor]:
        """Cotangents a path differentiates through: an integer one (for an integer output,
        which it never weights) as float64, so the accumulator or tape can take it."""
        return self._tensors(guard, "cotangent", [
            np.asarray(v, dtype=np.float64) if np.asarray(v).dtype.kind in "biu" else v
            for v in values])

    def _given(self, guard: Guard, name: str, values: Sequence[Any]) -> list[Any]:
        # None stays None: the engine's own "no tangent / no cotangent here" (see ``partial``)
        return [None if v is None else guard.lend(f"{name} {k}", v)
                for k, v in enumerate(values)]

    def _run(self, path: str, body: Callable[[Guard], Any]) -> Any:
        self.counts[path] += 1
        guard = Guard()
        try:
            result = body(guard)
        except Exception:
            if not guard.lent:
                raise
            # numpy refused a write into a lent array, or a library refused a read-only one
            # with an error of its own: the call runs again on copies, as every call did
            # before arrays were lent, and names what it writes into or raises what it raises
            guard = Guard(lending=False)
            result = body(guard)
        guard.verify()
        return result

    def outputs(self, out: Any) -> list[Any]:
        """The leaves of a function result."""
        if isinstance(out, (np.ndarray, Tensor)):  # a leaf: no tree to walk
            return [out]
        return flatten(out)[0]

    # -- the function and its paths -------------------------------------------------------
    def forward(self, primals: Sequence[Any]) -> Arrays:
        """The outputs on raw arrays (no tracer): what numeric references differentiate."""
        def body(guard: Guard) -> Arrays:
            xs = self._given(guard, "primal", primals)
            return _arrays(self.outputs(self._bound(guard)(*xs)))
        return self._run("forward", body)

    def vjp(self, primals: Sequence[Any], cotangents: Sequence[Any]) -> Arrays:
        """``J^T v``: one array per primal."""
        def body(guard: Guard) -> Arrays:
            xs = self._tensors(guard, "primal", primals)
            vs = self._given(guard, "cotangent", cotangents)
            out, pull = engine_vjp(self._bound(guard), *xs)
            leaves, tree = flatten(out)
            return _arrays(pull(unflatten(tree, _fit(vs, leaves))))
        return self._run("vjp", body)

    def jvp(self, primals: Sequence[Any], tangents: Sequence[Any]) -> Arrays:
        """``J u`` by native forward mode: one array per output."""
        def body(guard: Guard) -> Arrays:
            xs = self._tensors(guard, "primal", primals)
            us = self._given(guard, "tangent", tangents)
            _, out_t = engine_jvp(self._bound(guard), xs, us, method="native")
            return _arrays(self.outputs(out_t))
        return self._run("jvp", body)

    def double_vjp(self, primals: Sequence[Any], tangents: Sequence[Any],
                   dummies: Sequence[Any]) -> tuple[Arrays, bool]:
        """``J u`` by transposing the VJP at cotangent ``dummies``; and whether the engine's
        record shows the result was computed from the dummy (a dependence leak)."""
        def body(guard: Guard) -> tuple[Arrays, bool]:
            xs = self._tensors(guard, "primal", primals)
            us = self._given(guard, "tangent", tangents)
            ds = self._given(guard, "dummy", dummies)
            recorder = GradientTape(persistent=True)
            f = self._bound(guard)
            _, result = engine_double_vjp(f, xs, us, dummy=list(ds), recorder=recorder)
            leaves = self.outputs(result)
            return _arrays(leaves), any(recorder.watched(t) for t in leaves)
        return self._run("double_vjp", body)

    def hvp_fwd_rev(self, primals: Sequence[Any], cotangents: Sequence[Any],
                    tangents: Sequence[Any], cotangent_tangents: Sequence[Any]) -> Arrays:
        """``DG(x, v)[u, w]``: an accumulator (tangents on x *and* v) around a tape."""
        def body(guard: Guard) -> Arrays:
            xs = self._tensors(guard, "primal", primals)
            vs = self._cotangents(guard, cotangents)
            us = self._given(guard, "tangent", tangents)
            ws = self._given(guard, "cotangent tangent", cotangent_tangents)
            f = self._bound(guard)
            with ForwardAccumulator([*xs, *vs], [*us, *ws]) as acc:
                with GradientTape() as tape:
                    tape.watch(xs)
                    out = self.outputs(f(*xs))
                g = tape.gradient(out, xs, output_gradients=_fit(vs, out),
                                  unconnected_gradients="zero")
            return _arrays(acc.jvp(g, unconnected_gradients="zero"))
        return self._run("hvp_fwd_rev", body)

    def hvp_rev_rev(self, primals: Sequence[Any], cotangents: Sequence[Any],
                    second: Sequence[Any]) -> tuple[Arrays, Arrays]:
        """``DG(x, v)^T s``: a tape (watching x and v) around a tape."""
        def body(guard: Guard) -> tuple[Arrays, Arrays]:
            xs = self._tensors(guard, "primal", primals)
            vs = self._cotangents(guard, cotangents)
            ss = self._given(guard, "second-order cotangent", second)
            f = self._bound(guard)
            with GradientTape() as outer:
                outer.watch([*xs, *vs])
                with GradientTape() as inner:
                    inner.watch(xs)
                    out = self.outputs(f(*xs))
                g = inner.gradient(out, xs, output_gradients=_fit(vs, out),
                                   unconnected_gradients="zero")
            res = outer.gradient(g, [*xs, *vs], output_gradients=ss,
                                 unconnected_gradients="zero")
            return _arrays(res[:len(xs)]), _arrays(res[len(xs):])
        return self._run("hvp_rev_rev", body)

    def hvp_rev_fwd(self, primals: Sequence[Any], tangents: Sequence[Any],
                    cotangents: Sequence[Any]) -> tuple[Arrays, Arrays]:
        """``DK(x, u)^T z``: a tape (watching x and u) around an accumulator."""
        def body(guard: Guard) -> tuple[Arrays, Arrays]:
            xs = self._tensors(guard, "primal", primals)
            us = self._tensors(guard, "tangent", tangents)
            zs = self._given(guard, "cotangent", cotangents)
            f = self._bound(guard)
            with GradientTape() as outer:
                outer.watch([*xs, *us])
                with ForwardAccumulator(xs, us) as acc:
                    out = self.outputs(f(*xs))
                t_out = acc.jvp(out, unconnected_gradients="zero")
            res = outer.gradient(t_out, [*xs, *us], output_gradients=_fit(zs, out),
                                 unconnected_gradients="zero")
            return _arrays(res[:len(xs)]), _arrays(res[len(xs):])
        return self._run("hvp_rev_fwd", body)


def _fit(values: Sequence[Any], outputs: list[Any]) -> list[Any]:
    """Cotangents for the outputs: None for an output that is not floating or complex."""
    if len(values) != len(outputs):
        raise ValueError(f"{len(values)} cotangents for {len(outputs)} outputs")
    return [v if np.asarray(value_of(o)).dtype.kind in "fc" else None  # inexact
            for v, o in zip(values, outputs, strict=True)]

