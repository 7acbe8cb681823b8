"""The double-VJP JVP built in a TensorFlow graph, exactly as in the forward-mode thread.

The construction (renmengye/tensorflow-forward-ad issue 2): with placeholders ``x`` for the
primals, ``u`` for the tangents and ``v`` for a dummy cotangent,
``g = tf.gradients(f(x), x, grad_ys=v)`` is linear in ``v``, so
``tf.gradients(g, v, grad_ys=u)`` is ``J u``.  The whole graph is built before it runs, so
a caller can first run it without feeding ``v`` (does TensorFlow need the dummy?) and then
with several dummy values (does the answer change with it?).

The graph is a ``FuncGraph`` (``tf.function``'s graph class), not a plain ``tf.compat.v1``
Graph, so ``fn`` and its gradients keep the TensorFlow 2 semantics they have eagerly:
``tensor == c`` and ``!=`` are elementwise (in a plain Graph they are Python identity, so
``tf.where(dy == 0, ...)`` would never select), a Python ``if`` on a tensor is refused (a
plain Graph took the False branch), and eager tensors read from outside (a ``tf.Variable``,
a Keras layer's weights) are captured.  The graph is run in a session.  A function that
captures eager tensors, which a session cannot be fed, is traced again in a ``tf.function``
whose arguments include the dummies, and called; TensorFlow then cannot be asked to run it
without them, and a ``tf.Variable`` made at each call is refused, as ``tf.function`` refuses
it (a plain Graph never initialised it).

Building can fail in three ways, each said in TensorFlow's words: an op without a gradient
(:class:`~.tf_support.MissingGradient`); a gradient of the wrong shape or count (a
``tf.custom_gradient`` bug: :class:`~gradcheck.engine.RuleError`, a finding on the path);
and anything else, a function that runs eagerly only (``x.numpy()``, ``tf.py_function``):
:class:`GraphModeUnsupported`, which makes the double-VJP alone unsupported.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
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

__all__ = ["DoubleVjpGraph", "GraphModeUnsupported", "build_double_vjp_graph"]


class GraphModeUnsupported(Unsupported):
    """TensorFlow cannot build the graph-mode double-VJP of a function that runs eagerly
    only; the other paths (eager) are unaffected."""


@dataclass(eq=False)
class DoubleVjpGraph:
    """The placeholders and JVP tensors of the double-VJP in its function ``graph`` (a JVP
    is None when it does not depend on its dummy: it is zero).

    The graph is run in a session, fed the placeholders; when ``fn`` captures eager tensors
    (which a session cannot be fed) it is run by calling ``concrete``, the ``tf.function``
    of the primals, the tangents and the dummies whose graph it is.
    """

    graph: Any
    primals: list[Any]
    tangents: list[Any]
    dummies: list[Any]
    is_tuple: bool
    jvp: list[Any | None]
    concrete: Any = None
    #: One session per graph, made on first use.
    _session: Any = field(default=None, init=False, repr=False)

    def evaluate(self, tf: ModuleType, primals: Sequence[np.ndarray],
                 tangents: Sequence[np.ndarray], dummies: Sequence[np.ndarray]) -> list[np.ndarray]:
        """The double-VJP JVP at these values, one array per output."""
        if self.concrete is not None:
            ds = [tf.constant(d, dtype=p.dtype)
                  for d, p in zip(dummies, self.dummies, strict=True)]
            found = self.concrete(list(primals), list(tangents), ds)
        else:
            if self._session is None:
                self._session = tf.compat.v1.Session(graph=self.graph)
            found = self._run(self._session, self._feed(primals, tangents, dummies))
        values = iter(found)
        return [np.zeros(np.shape(d)) if t is None else np.asarray(next(values))
                for t, d in zip(self.jvp, dummies, strict=True)]

    def unfed_error(self, tf: ModuleType, primals: Sequence[np.ndarray],
                    tangents: Sequence[np.ndarray],
                    dummies: Sequence[np.ndarray]) -> str | None:
        """TensorFlow's message when it refuses to run the JVP without a value for a dummy
        (in a fresh session), else None; None too when ``fn`` captures eager tensors (the
        graph cannot be run in a session).

        The dummies are left out one at a time, in order, the others fed ``dummies``: with
        all of them unfed, TensorFlow names the first placeholder its executor happens to
        reach, and that varied between runs (``linalg.svd``'s three dummies: 'v0' in one
        sweep, 'v2' in another, so the same seed gave different JSON)."""
        if self.concrete is not None:
            return None
        fed = self._feed(primals, tangents, dummies)
        with tf.compat.v1.Session(graph=self.graph) as session:
            for dummy in self.dummies:
                try:
                    self._run(session, {k: v for k, v in fed.items() if k != dummy.name})
                except tf.errors.InvalidArgumentError as error:
                    if error.op is None or error.op.name != dummy.op.name:
                        raise
                    lines = [line for line in error.message.splitlines() if "must feed" in line]
                    return lines[0].strip() if lines else str(error.message)
        return None

    def _feed(self, primals: Sequence[np.ndarray], tangents: Sequence[np.ndarray],
              dummies: Sequence[np.ndarray]) -> dict[str, np.ndarray]:
        """Feed dict by tensor name (a tensor of a function graph is not hashable)."""
        fed = [*zip(self.primals, primals, strict=True), *zip(self.tangents, tangents, strict=True),
               *zip(self.dummies, dummies, strict=True)]
        return {t.name: value for t, value in fed}

    def _run(self, session: Any, feed: dict[str, np.ndarray]) -> list[Any]:
        live = [t.name for t in self.jvp if t is not None]
        return session.run(live, feed) if live else []


def build_double_vjp_graph(tf: ModuleType, call: Call) -> DoubleVjpGraph:
    """Build the double-VJP of ``call`` in a function graph, run in a session; when ``fn``
    captures eager tensors, trace it again in a ``tf.function`` whose arguments include the
    dummies, to be called.  Raises MissingGradient, GraphModeUnsupported or RuleError (see
    the module docstring)."""
    # tf.function's graph class (exported for Keras, which builds its graphs in it), filled
    # as a plain Graph would be: tracing with tf.function itself costs ~11 ms more per build
    # (automatic control dependencies, the function's creation), once per example
    graph = tf.__internal__.FuncGraph("double_vjp")
    with graph.as_default():
        built = _build(tf, call, graph, _placeholders(tf, call, "x"),
                       _placeholders(tf, call, "u"), None)
    if not graph.external_captures:
        return built
    traced: list[DoubleVjpGraph] = []

    def body(xs: list[Any], us: list[Any], vs: list[Any]) -> list[Any]:
        traced.append(_build(tf, call, None, xs, us, vs))
        return [t for t in traced[-1].jvp if t is not None]

    concrete = tf.function(body, autograph=False).get_concrete_function(
        _arg_specs(tf, call, "x"), _arg_specs(tf, call, "u"),
        [tf.TensorSpec(d.shape, d.dtype, name=f"v{k}") for k, d in enumerate(built.dummies)])
    return replace(traced[-1], graph=concrete.graph, concrete=concrete)


def _build(tf: ModuleType, call: Call, graph: Any, primals: list[Any], tangents: list[Any],
           dummies: list[Any] | None) -> DoubleVjpGraph:
    """The construction in the current graph; ``dummies=None`` makes each a placeholder
    ``v<k>`` of its output's shape."""
    with _graph_mode(call.name):
        outs, is_tuple = outputs_of(tf, call, call_fn(call, as_tensor_args(tf, call, primals)))
    if dummies is None:
        # an output whose shape depends on values (segment_sum, boolean_mask) gets a dummy of
        # that partial shape; the values fed give it its size
        dummies = [tf.compat.v1.placeholder(_dummy_dtype(tf, out), out.shape, name=f"v{k}")
                   for k, out in enumerate(outs)]
    return DoubleVjpGraph(graph=graph, primals=list(primals), tangents=list(tangents),
                          dummies=list(dummies), is_tuple=is_tuple,
                          jvp=_construct(tf, call, outs, primals, tangents, dummies))


def _construct(tf: ModuleType, call: Call, outs: list[Any], primals: list[Any],
               tangents: list[Any], dummies: list[Any]) -> list[Any | None]:
    """The double-VJP JVP of each of ``outs`` in the current graph.  Integer outputs get an
    (unread) dummy but are not differentiated."""
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
    return jvp


def _arg_specs(tf: ModuleType, call: Call, prefix: str) -> list[Any]:
    """The differentiated arguments' specs, named ``x0``, ``x2`` ... after their positions:
    float64, or complex128 for a complex argument (make_call's dtypes)."""
    return [tf.TensorSpec(call.args[i].shape, tf.as_dtype(call.args[i].dtype),
                          name=f"{prefix}{i}") for i in call.argnums]


def _placeholders(tf: ModuleType, call: Call, prefix: str) -> list[Any]:
    return [tf.compat.v1.placeholder(spec.dtype, spec.shape, name=spec.name)
            for spec in _arg_specs(tf, call, prefix)]


def _dummy_dtype(tf: ModuleType, out: Any) -> Any:
    """The dummy cotangent's dtype: the output's, float64 for an integer output (unread)."""
    return out.dtype if inexact(out) else tf.float64


@contextmanager
def _graph_mode(name: str) -> Iterator[None]:
    """Running ``fn`` in graph mode: a function that works eagerly only (``x.numpy()``, a
    Python ``if`` on a tensor) has no graph-mode double-VJP."""
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
