"""TensorFlow as a reference: ``fn`` is written with TensorFlow ops and runs in float64.

Paths: reverse mode with an eager ``tf.GradientTape``; forward mode with
``tf.autodiff.ForwardAccumulator``; the double-VJP in graph mode, built exactly as in the
forward-mode thread (see :mod:`gradcheck.oracles.tf_graph`); the HVP back-over-back with two
nested tapes.  ``fn`` may be a ``tf.custom_gradient`` function.

TensorFlow's forward mode is not an independent reference.  Apart from a few special cases
(``Identity``, ``ReadVariableOp``), ``ForwardAccumulator`` computes an op's JVP by
transposing its VJP on a tape with a dummy cotangent of ones (``_jvp_helper`` in
``tensorflow/python/eager/forwardprop.py``): it is the double-VJP trick run op by op.  So
its JVP agrees with its VJP by construction, inherits any dummy leak of the op's
second-order rule, and fails for ops whose gradient has no gradient (``tf.nn.softsign`` in
TensorFlow 2.21).  Hence ``jvp_is_independent = False``.  It also differentiates the ops a
``tf.custom_gradient`` function runs forward, not its custom gradient.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np

from gradcheck.oracles.base import EquivalentReference, Oracle
from gradcheck.oracles.inputs import Call, Output, pack_output, per_output
from gradcheck.oracles.tf_graph import build_double_vjp_graph
from gradcheck.oracles.tf_support import (
    as_tensor_args,
    dense,
    import_tensorflow,
    missing_gradient,
    outputs_of,
)

__all__ = ["TensorFlowOracle", "TensorFlowReference"]


class TensorFlowOracle(Oracle):
    """The ``tensorflow`` reference (install with ``pip install gradcheck[tensorflow]``)."""

    name = "tensorflow"
    extra = "tensorflow"
    #: ForwardAccumulator transposes the VJP for most ops; see the module docstring.
    jvp_is_independent = False

    def _import(self) -> ModuleType:
        return import_tensorflow()

    def _constants(self, call: Call) -> list[Any]:
        tf = self.load()
        return [tf.constant(p) for p in call.primals]

    def _forward_value(self, call: Call) -> Output:
        tf = self.load()
        outs, is_tuple = outputs_of(tf, call, call.fn(*as_tensor_args(tf, call,
                                                                       self._constants(call))))
        return pack_output([np.asarray(o) for o in outs], is_tuple)

    def _vjp(self, call: Call, cotangent: Any) -> list[np.ndarray]:
        tf = self.load()
        primals = self._constants(call)
        with tf.GradientTape() as tape:
            tape.watch(primals)
            outs, is_tuple = outputs_of(tf, call, call.fn(*as_tensor_args(tf, call, primals)))
        cts = per_output(call, "cotangent", cotangent, [tuple(o.shape) for o in outs], is_tuple)
        with missing_gradient(call, "the VJP"):
            grads = tape.gradient(outs, primals, output_gradients=[tf.constant(c) for c in cts],
                                  unconnected_gradients=tf.UnconnectedGradients.ZERO)
        return [np.asarray(g, dtype=np.float64) for g in dense(tf, grads)]

    def _jvp(self, call: Call, tangents: list[np.ndarray]) -> Output:
        tf = self.load()
        primals = self._constants(call)
        # ForwardAccumulator transposes each op's VJP, so a missing 2nd gradient shows here.
        with missing_gradient(call, "the VJP again (TF forward mode transposes it)"):
            with tf.autodiff.ForwardAccumulator(primals, [tf.constant(t) for t in tangents]) as acc:
                outs, is_tuple = outputs_of(tf, call, call.fn(*as_tensor_args(tf, call, primals)))
        jvps = acc.jvp(outs, unconnected_gradients=tf.UnconnectedGradients.ZERO)
        return pack_output([np.asarray(j) for j in jvps], is_tuple)

    def _double_vjp(self, call: Call, tangents: list[np.ndarray], dummy: Any) -> Output:
        tf = self.load()
        built = build_double_vjp_graph(tf, call)
        dummies = per_output(call, "dummy", dummy, built.out_shapes, built.is_tuple)
        with tf.compat.v1.Session(graph=built.graph) as session:
            jvps = built.run(session, built.jvp, built.out_shapes,
                             built.feed(call, tangents, dummies))
        return pack_output(jvps, built.is_tuple)

    def _hvp(self, call: Call, tangents: list[np.ndarray], cotangent: Any) -> list[np.ndarray]:
        tf = self.load()
        primals = self._constants(call)
        zero = tf.UnconnectedGradients.ZERO
        with missing_gradient(call, "the VJP again (second order)"):
            with tf.GradientTape() as outer:
                outer.watch(primals)
                with tf.GradientTape() as inner:
                    inner.watch(primals)
                    outs, is_tuple = outputs_of(
                        tf, call, call.fn(*as_tensor_args(tf, call, primals)))
                cts = per_output(call, "cotangent", cotangent,
                                 [tuple(o.shape) for o in outs], is_tuple)
                grads = dense(tf, inner.gradient(outs, primals,
                                                 output_gradients=[tf.constant(c) for c in cts],
                                                 unconnected_gradients=zero))
            hvp = outer.gradient(grads, primals,
                                 output_gradients=[tf.constant(t) for t in tangents],
                                 unconnected_gradients=zero)
        return [np.asarray(h, dtype=np.float64) for h in dense(tf, hvp)]


class TensorFlowReference(EquivalentReference):
    """TensorFlow as a reference of the checker: the op's ``"tensorflow"`` equivalent, run by
    :class:`~gradcheck.oracles.tf_problem.TensorFlowProblem` in float64 (its double-VJP in
    graph mode with a placeholder dummy, so its dummy leaks are found by the same checks)."""

    name = "tensorflow"
    #: Measured: for each entry the engine and autograd (LAPACK) agree to within 1/10 of the
    #: allowance where TensorFlow does not.
    accuracy = {
        "linalg.svd": (32.0, "TensorFlow's SVD kernel (Eigen) is accurate to ~1e-13 relative "
                             "in float64, about 1000 ulps; its derivatives inherit that"),
        "linalg.svdvals": (32.0, "TensorFlow's SVD kernel (Eigen) is accurate to ~1e-13 "
                                 "relative in float64; second derivatives inherit that"),
        "linalg.expm": (32.0, "TensorFlow's expm (Pade 13, scaling and squaring) differs from "
                              "scipy's by ~3e-13 relative"),
    }

    def oracle(self) -> Oracle:
        return TensorFlowOracle()

    def problem(self, fn: Callable[..., Any], args: Any, positions: Any, name: str) -> Any:
        from gradcheck.oracles.tf_problem import TensorFlowProblem

        return TensorFlowProblem(fn, args, positions, name)
