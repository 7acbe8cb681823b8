"""The double-VJP JVP built in a TensorFlow graph, exactly as in the forward-mode thread.

The construction (renmengye/tensorflow-forward-ad issue 2): with placeholders ``x`` for the
primals, ``u`` for the tangents and ``v`` for a dummy cotangent,
``g = tf.gradients(f(x), x, grad_ys=v)`` is linear in ``v``, so
``tf.gradients(g, v, grad_ys=u)`` is ``J u``.  The whole graph is built before any session
runs, so a caller can first run it without feeding ``v`` (does TensorFlow need the dummy?)
and then with several dummy values (does the answer change with it?).

A function that reads an eager tensor from outside (a ``tf.Variable``, a Keras layer's
weights, a constant made eagerly) cannot be put in a plain ``tf.Graph``: TensorFlow only
lets a ``tf.function`` capture eager tensors.  Such a function gets the same construction
traced in a ``tf.function`` (:class:`DoubleVjpFunction`), the dummies being its arguments:
the dependence on them is read from its graph the same way, but TensorFlow cannot be asked
to run it without them.

Building can fail in three ways, each said in TensorFlow's words: an op without a gradient
(:class:`~.tf_support.MissingGradient`); a gradient of the wrong shape or count (a
``tf.custom_gradient`` bug: :class:`~gradcheck.engine.RuleError`, a finding on the path);
and anything else, a function that runs eagerly only (``x.numpy()``, ``tf.py_function``):
:class:`GraphModeUnsupported`, which makes the double-VJP alone unsupported.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

import numpy as np

from gradcheck.engine import RuleError
from gradcheck.oracles.base import Unsupported
from gradcheck.oracles.inputs import Call
from gradcheck.oracles.tf_support import (
    as_tensor_args,
    call_fn,
    dense,
    inexact,
    missing_gradient,
    outputs_of,
)

__all__ = ["DoubleVjpGraph", "DoubleVjpFunction", "GraphModeUnsupported",
           "build_double_vjp_graph"]


class GraphModeUnsupported(Unsupported):
    """TensorFlow cannot build the graph-mode double-VJP of a function that runs eagerly
    only; the other paths (eager) are unaffected."""


@dataclass(eq=False)
class DoubleVjpGraph:
    """Placeholders and result tensors of the double-VJP construction in its own ``tf.Graph``.

    ``vjp[k]`` is the first-order VJP for argnum ``k`` at the dummy (None when the output does
    not depend on that argument); ``jvp[k]`` is the double-VJP JVP of output ``k`` (None when
    the VJP does not depend on that dummy: the JVP is zero).
    """

    graph: Any
    primals: list[Any]
    tangents: list[Any]
    dummies: list[Any]
    #: The outputs' static shapes (an unknown size as 0: callers pass the dummies' shapes).
    out_shapes: list[tuple[int, ...]]
    is_tuple: bool
    vjp: list[Any | None]
    jvp: list[Any | None]
    #: One session per graph, made on first use (creating one costs ~30 ms).
    _session: Any = field(default=None, init=False, repr=False)

    def feed(self, primals: Sequence[np.ndarray], tangents: Sequence[np.ndarray],
             dummies: Sequence[np.ndarray] | None) -> dict[Any, np.ndarray]:
        """Feed dict for ``primals`` and ``tangents``; ``dummies=None`` leaves ``v`` unfed."""
        feed = dict(zip(self.primals, primals, strict=True))
        feed.update(zip(self.tangents, tangents, strict=True))
        if dummies is not None:
            feed.update(zip(self.dummies, dummies, strict=True))
        return feed

    def run(self, session: Any, tensors: Sequence[Any | None], shapes: Sequence[tuple[int, ...]],
            feed: dict[Any, np.ndarray]) -> list[np.ndarray]:
        """Evaluate ``tensors`` in ``session``; a None tensor is a zero array of its shape."""
        live = [t for t in tensors if t is not None]
        values = iter(session.run(live, feed) if live else [])
        return [np.zeros(shape) if t is None else np.asarray(next(values))
                for t, shape in zip(tensors, shapes, strict=True)]

    def evaluate(self, tf: ModuleType, primals: Sequence[np.ndarray],
                 tangents: Sequence[np.ndarray], dummies: Sequence[np.ndarray]) -> list[np.ndarray]:
        """The double-VJP JVP at these values, one array per output."""
        if self._session is None:
            self._session = tf.compat.v1.Session(graph=self.graph)
        return self.run(self._session, self.jvp, [np.shape(d) for d in dummies],
                        self.feed(primals, tangents, dummies))

    def unfed_error(self, tf: ModuleType, primals: Sequence[np.ndarray],
                    tangents: Sequence[np.ndarray]) -> str | None:
        """TensorFlow's message when it refuses to run the JVP without a value for the dummy
        (in a fresh session), else None."""
        with tf.compat.v1.Session(graph=self.graph) as session:
            return self.feed_error(tf, session, self.feed(primals, tangents, None))

    def feed_error(self, tf: ModuleType, session: Any,
                   feed: dict[Any, np.ndarray]) -> str | None:
        """Run the JVP without feeding the dummy (``feed`` from ``feed(..., None)``):
        TensorFlow's message when it demands a value for the dummy's placeholder, else None."""
        try:
            self.run(session, self.jvp, self.out_shapes, feed)
        except tf.errors.InvalidArgumentError as error:
            if error.op is None or error.op.name not in {d.op.name for d in self.dummies}:
                raise
            lines = [line for line in error.message.splitlines() if "must feed" in line]
            return lines[0].strip() if lines else str(error.message)
        return None


@dataclass(eq=False)
class DoubleVjpFunction:
    """The same construction traced in a ``tf.function`` (for a function that captures eager
    tensors): ``dummies`` are its dummy arguments' placeholders and ``jvp`` the JVP tensors
    inside its graph (for the dependence trace); :meth:`evaluate` calls it."""

    concrete: Any
    dummies: list[Any]
    is_tuple: bool
    jvp: list[Any | None]

    def evaluate(self, tf: ModuleType, primals: Sequence[np.ndarray],
                 tangents: Sequence[np.ndarray], dummies: Sequence[np.ndarray]) -> list[np.ndarray]:
        """The double-VJP JVP at these values, one array per output."""
        ds = [tf.constant(d, dtype=p.dtype) for d, p in zip(dummies, self.dummies, strict=True)]
        values = iter(self.concrete(list(primals), list(tangents), ds))
        return [np.zeros(np.shape(d)) if t is None else np.asarray(next(values))
                for t, d in zip(self.jvp, dummies, strict=True)]

    def unfed_error(self, tf: ModuleType, primals: Sequence[np.ndarray],
                    tangents: Sequence[np.ndarray]) -> str | None:
        """None: a function's arguments are always given, so TensorFlow cannot be asked."""
        return None


BuiltDoubleVjp = DoubleVjpGraph | DoubleVjpFunction


def build_double_vjp_graph(tf: ModuleType, call: Call) -> BuiltDoubleVjp:
    """Build the double-VJP graph for ``call``: in a ``tf.Graph``, or in a ``tf.function``
    when ``fn`` captures eager tensors (variables).  Raises MissingGradient,
    GraphModeUnsupported or RuleError (see the module docstring)."""
    try:
        return _in_graph(tf, call)
    except GraphModeUnsupported as error:
        if not _captures_eager_tensor(error.__cause__):
            raise
    return _in_function(tf, call)


def _captures_eager_tensor(error: BaseException | None) -> bool:
    return isinstance(error, RuntimeError) and "capture an EagerTensor" in str(error)


def _in_graph(tf: ModuleType, call: Call) -> DoubleVjpGraph:
    graph = tf.Graph()
    with graph.as_default():
        # float64, or complex128 for a complex argument (make_call's dtypes)
        primals = [tf.compat.v1.placeholder(call.args[i].dtype, call.args[i].shape,
                                            name=f"x{i}") for i in call.argnums]
        tangents = [tf.compat.v1.placeholder(call.args[i].dtype, call.args[i].shape,
                                             name=f"u{i}") for i in call.argnums]

        def placeholders(outs: list[Any]) -> list[Any]:
            # an output whose shape depends on values (segment_sum, boolean_mask) gets a
            # dummy placeholder of that partial shape; the values fed give it its size
            return [tf.compat.v1.placeholder(_dummy_dtype(tf, out), out.shape, name=f"v{k}")
                    for k, out in enumerate(outs)]

        outs, is_tuple, dummies, vjp, jvp = _construct(tf, call, primals, tangents,
                                                       placeholders)
    return DoubleVjpGraph(graph=graph, primals=primals, tangents=tangents, dummies=dummies,
                          out_shapes=[_static_shape(o) for o in outs],
                          is_tuple=is_tuple, vjp=list(vjp), jvp=list(jvp))


def _in_function(tf: ModuleType, call: Call) -> DoubleVjpFunction:
    specs = [tf.TensorSpec(call.args[i].shape, tf.as_dtype(call.args[i].dtype))
             for i in call.argnums]

    def forward(*xs: Any) -> list[Any]:
        with _graph_mode(call.name):
            return outputs_of(tf, call, call_fn(call, as_tensor_args(tf, call, list(xs))))[0]

    outs = tf.function(forward, autograph=False).get_concrete_function(*specs).structured_outputs
    dummy_specs = [tf.TensorSpec(o.shape, _dummy_dtype(tf, o)) for o in outs]
    traced: dict[str, Any] = {}

    def body(xs: list[Any], us: list[Any], vs: list[Any]) -> list[Any]:
        _, traced["is_tuple"], traced["dummies"], _, traced["jvp"] = _construct(
            tf, call, xs, us, lambda _: list(vs))
        return [t for t in traced["jvp"] if t is not None]

    concrete = tf.function(body, autograph=False).get_concrete_function(specs, specs,
                                                                        dummy_specs)
    return DoubleVjpFunction(concrete=concrete, dummies=traced["dummies"],
                             is_tuple=traced["is_tuple"], jvp=list(traced["jvp"]))


def _construct(tf: ModuleType, call: Call, primals: list[Any], tangents: list[Any],
               dummies_for: Callable[[list[Any]], list[Any]]) -> tuple[Any, ...]:
    """The double-VJP in the current graph: outputs, whether a tuple, dummies, VJP, JVP.
    Integer outputs get an (unread) dummy but are not differentiated."""
    with _graph_mode(call.name):
        outs, is_tuple = outputs_of(tf, call, call_fn(call, as_tensor_args(tf, call, primals)))
    dummies = dummies_for(outs)
    kept = [k for k, out in enumerate(outs) if inexact(out)]
    vjp: list[Any | None] = [None] * len(primals)
    if kept and primals:
        with _gradient_errors(call.name, "VJP"), missing_gradient(call.name, 1):
            vjp = dense(tf, tf.compat.v1.gradients([outs[k] for k in kept], primals,
                                                   grad_ys=[dummies[k] for k in kept]))
    linked = [(g, u) for g, u in zip(vjp, tangents, strict=True) if g is not None]
    jvp: list[Any | None] = [None] * len(dummies)
    if linked:
        with _gradient_errors(call.name, "VJP of the VJP"), missing_gradient(call.name, 2):
            found = dense(tf, tf.compat.v1.gradients([g for g, _ in linked],
                                                     [dummies[k] for k in kept],
                                                     grad_ys=[u for _, u in linked]))
        for k, j in zip(kept, found, strict=True):
            jvp[k] = j
    return outs, is_tuple, dummies, vjp, jvp


def _dummy_dtype(tf: ModuleType, out: Any) -> Any:
    """The dummy cotangent's dtype: the output's, float64 for an integer output (unread)."""
    return out.dtype if inexact(out) else tf.float64


def _static_shape(out: Any) -> tuple[int, ...]:
    """An output's static shape, an unknown size as 0 and an unknown rank as ()
    (``tf.numpy_function``): only the unfed run uses it, for results that are None."""
    if out.shape.rank is None:
        return ()
    return tuple(0 if n is None else n for n in out.shape.as_list())


@contextmanager
def _graph_mode(name: str) -> Iterator[None]:
    """Running ``fn`` in graph mode: a function that works eagerly only (``x.numpy()``,
    eager tensors captured outside a ``tf.function``) has no graph-mode double-VJP."""
    try:
        yield
    except Unsupported:
        raise
    except Exception as error:  # noqa: BLE001  (the eager paths report fn's own errors)
        raise GraphModeUnsupported(
            f"TensorFlow cannot run {name} in graph mode, so it has no graph-mode double-VJP: "
            f"{type(error).__name__}: {_first_line(error)}") from error


#: TensorFlow's graph-mode words for a gradient function that returned the wrong thing.
_WRONG_SHAPE = "Incompatible shapes between op input and calculated input gradient"
_WRONG_COUNT = re.compile(r"Num gradients (\d+) generated for op name: \"([^\"]*)\".*"
                          r"do not match num inputs (\d+)", re.DOTALL)


@contextmanager
def _gradient_errors(name: str, what: str) -> Iterator[None]:
    """Building ``what`` in graph mode: a gradient of the wrong shape or count is a
    :class:`RuleError` (a ``shape`` or ``error`` finding on the double-VJP, as the eager
    paths find it); any other failure means the gradient runs eagerly only."""
    try:
        yield
    except Unsupported:  # a missing gradient, said by missing_gradient
        raise
    except ValueError as error:
        text = str(error)
        count = _WRONG_COUNT.search(text)
        if text.startswith(_WRONG_SHAPE):
            raise RuleError(name, f"its {what} in graph mode", "shape",
                            f"TensorFlow: {_first_line(error)}") from error
        if count is not None:
            raise RuleError(name, f"its {what} in graph mode", "count",
                            f"TensorFlow: {count.group(1)} gradients for the op "
                            f"{count.group(2)} of {count.group(3)} inputs") from error
        raise _eager_only(name, what, error) from error
    except Exception as error:  # noqa: BLE001  (the eager paths report fn's own errors)
        raise _eager_only(name, what, error) from error


def _eager_only(name: str, what: str, error: BaseException) -> GraphModeUnsupported:
    return GraphModeUnsupported(
        f"TensorFlow cannot build the {what} of {name} in graph mode, so it has no graph-mode "
        f"double-VJP: {type(error).__name__}: {_first_line(error)}")


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else ""
