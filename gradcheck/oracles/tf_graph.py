"""The double-VJP JVP built in a TensorFlow graph, exactly as in the forward-mode thread.

The construction (renmengye/tensorflow-forward-ad issue 2): with placeholders ``x`` for the
primals, ``u`` for the tangents and ``v`` for a dummy cotangent,
``g = tf.gradients(f(x), x, grad_ys=v)`` is linear in ``v``, so
``tf.gradients(g, v, grad_ys=u)`` is ``J u``.  The whole graph is built before any session
runs, so a caller can first run it without feeding ``v`` (does TensorFlow need the dummy?)
and then with several dummy values (does the answer change with it?).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import numpy as np

from gradcheck.oracles.inputs import Call
from gradcheck.oracles.tf_support import as_tensor_args, dense, missing_gradient, outputs_of

__all__ = ["DoubleVjpGraph", "build_double_vjp_graph"]


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


def build_double_vjp_graph(tf: ModuleType, call: Call) -> DoubleVjpGraph:
    """Build the double-VJP graph for ``call``; Unsupported if an op lacks a (2nd) gradient."""
    graph = tf.Graph()
    with graph.as_default():
        # float64, or complex128 for a complex argument (make_call's dtypes)
        primals = [tf.compat.v1.placeholder(call.args[i].dtype, call.args[i].shape,
                                            name=f"x{i}") for i in call.argnums]
        tangents = [tf.compat.v1.placeholder(call.args[i].dtype, call.args[i].shape,
                                             name=f"u{i}") for i in call.argnums]
        outs, is_tuple = outputs_of(tf, call, call.fn(*as_tensor_args(tf, call, primals)))
        # an output whose shape depends on values (segment_sum, boolean_mask) gets a dummy
        # placeholder of that partial shape; the values fed give it its size
        dummies = [tf.compat.v1.placeholder(out.dtype, out.shape, name=f"v{k}")
                   for k, out in enumerate(outs)]
        with missing_gradient(call.name, "the VJP"):
            vjp = dense(tf, tf.compat.v1.gradients(outs, primals, grad_ys=dummies))
        linked = [(g, u) for g, u in zip(vjp, tangents, strict=True) if g is not None]
        jvp: list[Any | None] = [None] * len(dummies)
        if linked:
            with missing_gradient(call.name, "the VJP again (second order)"):
                jvp = dense(tf, tf.compat.v1.gradients([g for g, _ in linked], dummies,
                                                       grad_ys=[u for _, u in linked]))
    return DoubleVjpGraph(graph=graph, primals=primals, tangents=tangents, dummies=dummies,
                          out_shapes=[tuple(0 if n is None else n for n in o.shape.as_list())
                                      for o in outs],
                          is_tuple=is_tuple, vjp=list(vjp), jvp=list(jvp))
