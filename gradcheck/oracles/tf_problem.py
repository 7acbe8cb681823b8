"""A TensorFlow function as the checker's :class:`~gradcheck.checker.targets.Problem`.

Each path is computed by TensorFlow itself, in float64:

``vjp``          ``tf.GradientTape`` with ``output_gradients``
``jvp``          ``tf.autodiff.ForwardAccumulator`` (itself a double-VJP for most ops; for a
                 ``tf.custom_gradient`` function it differentiates the forward ops)
``double_vjp``   the graph-mode construction with a placeholder dummy (:mod:`.tf_graph`),
                 built once per example and fed each dummy the checker tries
``hvp_fwd_rev``  an accumulator (tangents on x and on the cotangent) around a tape
``hvp_rev_rev``  a tape (watching x and the cotangent) around a tape
``hvp_rev_fwd``  a tape (watching x and the tangent) around an accumulator

``double_vjp`` also says whether the result was computed from the dummy: whether the graph
of the JVP reaches the dummy's placeholder at all (the checker turns that into a
``dependence_leak`` warning).  TensorFlow's own leak audit, which tells a control from a
shape from a data dependence and quotes the feed error, is a separate cell
(``tf.double_vjp``, with the ``tensorflow`` reference; see :mod:`.cells`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from gradcheck.oracles.inputs import Call, make_call
from gradcheck.oracles.tf_dependence import trace_dependence
from gradcheck.oracles.tf_graph import DoubleVjpGraph, build_double_vjp_graph
from gradcheck.oracles.tf_support import import_tensorflow, missing_gradient

__all__ = ["TensorFlowProblem"]

Arrays = list[np.ndarray]


class TensorFlowProblem:
    """``fn(*args)`` written with TensorFlow; ``positions`` are the differentiated arguments."""

    def __init__(self, fn: Callable[..., Any], args: Sequence[Any], positions: Sequence[int],
                 name: str) -> None:
        self.tf = import_tensorflow()
        self.fn, self.name = fn, name
        self.args = [np.asarray(a) for a in args]
        self.positions = tuple(positions)
        self.primals: Arrays = [self.args[i] for i in self.positions]
        self.counts: Counter[str] = Counter()
        self._graph: DoubleVjpGraph | None = None
        self._reads_dummy = False
        self._dependence: Any = None
        self._call: Call | None = None

    # -- helpers ------------------------------------------------------------------------------
    def _constants(self, values: Sequence[Any]) -> list[Any]:
        return [self.tf.constant(np.asarray(v, dtype=np.float64)) for v in values]

    def _outputs(self, primals: Sequence[Any]) -> list[Any]:
        full: list[Any] = [self.tf.constant(a) if a.dtype.kind == "f" else a for a in self.args]
        for i, p in zip(self.positions, primals, strict=True):
            full[i] = p
        out = self.fn(*full)
        outs = list(out) if isinstance(out, (tuple, list)) else [out]
        return [self.tf.convert_to_tensor(o) for o in outs]

    def _dense(self, values: Sequence[Any], like: Sequence[Any]) -> Arrays:
        return [np.zeros(np.shape(ref)) if v is None else np.asarray(self.tf.convert_to_tensor(v))
                for v, ref in zip(values, like, strict=True)]

    def _grads(self, tape: Any, targets: Any, sources: Any, weights: Any) -> list[Any]:
        grads = tape.gradient(targets, sources, output_gradients=weights,
                              unconnected_gradients=self.tf.UnconnectedGradients.ZERO)
        return [self.tf.convert_to_tensor(g) for g in grads]

    # -- the paths ------------------------------------------------------------------------------
    def forward(self, primals: Sequence[Any]) -> Arrays:
        """The outputs as numpy arrays (eager)."""
        self.counts["forward"] += 1
        return [np.asarray(o) for o in self._outputs(self._constants(primals))]

    def vjp(self, primals: Sequence[Any], cotangents: Sequence[Any]) -> Arrays:
        self.counts["vjp"] += 1
        xs = self._constants(primals)
        with self.tf.GradientTape() as tape:
            tape.watch(xs)
            outs = self._outputs(xs)
        with missing_gradient(self._checked(), "the VJP"):
            return self._dense(self._grads(tape, outs, xs, self._constants(cotangents)), xs)

    def jvp(self, primals: Sequence[Any], tangents: Sequence[Any]) -> Arrays:
        self.counts["jvp"] += 1
        xs = self._constants(primals)
        with missing_gradient(self._checked(), "the VJP again (TF forward mode transposes it)"):
            with self.tf.autodiff.ForwardAccumulator(xs, self._constants(tangents)) as acc:
                outs = self._outputs(xs)
            jvps = acc.jvp(outs, unconnected_gradients=self.tf.UnconnectedGradients.ZERO)
        return self._dense(jvps, outs)

    def double_vjp(self, primals: Sequence[Any], tangents: Sequence[Any],
                   dummies: Sequence[Any]) -> tuple[Arrays, bool]:
        self.counts["double_vjp"] += 1
        call = self._checked(primals)
        if self._graph is None:
            self._graph = build_double_vjp_graph(self.tf, call)
            self._dependence = trace_dependence(
                [d.op for d in self._graph.dummies],
                [t for t in self._graph.jvp if t is not None])
            self._reads_dummy = self._dependence.kind != "none"
        built = self._graph
        feed = built.feed(call, [np.asarray(t, dtype=np.float64) for t in tangents],
                          [np.asarray(d, dtype=np.float64) for d in dummies])
        with self.tf.compat.v1.Session(graph=built.graph) as session:
            return built.run(session, built.jvp, built.out_shapes, feed), self._reads_dummy

    def dependence_details(self) -> dict[str, Any]:
        """How the double-VJP graph reads the dummy (for a dependence-leak finding): the kind
        of the strongest path from its placeholder (control < shape < data), and that path."""
        dep = self._dependence
        if dep is None or dep.kind == "none":
            return {}
        meaning = {"control": "only through control dependencies: any value of the right "
                              "shape would do",
                   "shape": "only its shape is read: any value of the right shape would do",
                   "data": "its values are read (they cancel out of the result)"}[dep.kind]
        return {"dependence": dep.kind, "dependence_path": list(dep.path),
                "meaning": meaning, "tf_version": str(self.tf.__version__)}

    def hvp_fwd_rev(self, primals: Sequence[Any], cotangents: Sequence[Any],
                    tangents: Sequence[Any], cotangent_tangents: Sequence[Any]) -> Arrays:
        self.counts["hvp_fwd_rev"] += 1
        xs, vs = self._constants(primals), self._constants(cotangents)
        tf = self.tf
        with missing_gradient(self._checked(), "the VJP again (second order)"):
            with tf.autodiff.ForwardAccumulator(
                    [*xs, *vs], self._constants([*tangents, *cotangent_tangents])) as acc:
                with tf.GradientTape() as tape:
                    tape.watch(xs)
                    outs = self._outputs(xs)
                g = self._grads(tape, outs, xs, vs)
            return self._dense(acc.jvp(g, unconnected_gradients=tf.UnconnectedGradients.ZERO),
                               xs)

    def hvp_rev_rev(self, primals: Sequence[Any], cotangents: Sequence[Any],
                    second: Sequence[Any]) -> tuple[Arrays, Arrays]:
        self.counts["hvp_rev_rev"] += 1
        xs, vs = self._constants(primals), self._constants(cotangents)
        tf = self.tf
        with missing_gradient(self._checked(), "the VJP again (second order)"):
            with tf.GradientTape() as outer:
                outer.watch([*xs, *vs])
                with tf.GradientTape() as inner:
                    inner.watch(xs)
                    outs = self._outputs(xs)
                g = self._grads(inner, outs, xs, vs)
            res = self._dense(self._grads(outer, g, [*xs, *vs], self._constants(second)),
                              [*xs, *vs])
        return res[:len(xs)], res[len(xs):]

    def hvp_rev_fwd(self, primals: Sequence[Any], tangents: Sequence[Any],
                    cotangents: Sequence[Any]) -> tuple[Arrays, Arrays]:
        self.counts["hvp_rev_fwd"] += 1
        xs, us = self._constants(primals), self._constants(tangents)
        tf = self.tf
        with missing_gradient(self._checked(), "the VJP again (second order)"):
            with tf.GradientTape() as outer:
                outer.watch([*xs, *us])
                with tf.autodiff.ForwardAccumulator(xs, us) as acc:
                    outs = self._outputs(xs)
                t_out = [tf.convert_to_tensor(t) for t in
                         acc.jvp(outs, unconnected_gradients=tf.UnconnectedGradients.ZERO)]
            res = self._dense(self._grads(outer, t_out, [*xs, *us], self._constants(cotangents)),
                              [*xs, *us])
        return res[:len(xs)], res[len(xs):]

    def _checked(self, primals: Sequence[Any] | None = None) -> Call:
        """The oracle's checked call at ``primals`` (for error messages and the graph)."""
        args = list(self.args)
        for i, p in zip(self.positions, primals or self.primals, strict=True):
            args[i] = np.asarray(p)
        return make_call(self.fn, args, self.positions)
