"""TensorFlow as a reference: ``fn`` is written with TensorFlow ops and runs in float64.

One adapter: :class:`TensorFlowProblem` computes the checker's paths with TensorFlow itself;
:class:`TensorFlowOracle` (the lazy import, its status, and the functional
``vjp``/``jvp``/``double_vjp``/``hvp`` on ``fn, args, argnums``) and
:class:`TensorFlowReference` (an op's declared ``"tensorflow"`` equivalent as a reference of
the checker) both run it.  ``fn`` may be a ``tf.custom_gradient`` function.

``vjp``          ``tf.GradientTape`` with ``output_gradients``
``jvp``          ``tf.autodiff.ForwardAccumulator``
``double_vjp``   the graph-mode construction with a placeholder dummy (:mod:`.tf_graph`),
                 built once per example and fed each dummy the checker tries
``hvp_fwd_rev``  an accumulator (tangents on x and on the cotangent) around a tape
``hvp_rev_rev``  a tape (watching x and the cotangent) around a tape
``hvp_rev_fwd``  a tape (watching x and the tangent) around an accumulator

``double_vjp`` also says whether the result was computed from the dummy: whether the graph
of the JVP reaches the dummy's placeholder at all.  The checker's leak check turns that into
a ``dependence_leak`` warning, explained by :meth:`TensorFlowProblem.dependence_details`
(a control, shape or data dependence, its path through the graph, and TensorFlow's own
refusal to run without a value for the dummy).

TensorFlow's forward mode is not an independent reference.  Apart from a few special cases
(``Identity``, ``ReadVariableOp``), ``ForwardAccumulator`` computes an op's JVP by
transposing its VJP on a tape with a dummy cotangent of ones (``_jvp_helper`` in
``tensorflow/python/eager/forwardprop.py``): it is the double-VJP trick run op by op.  So
its JVP agrees with its VJP by construction, inherits any dummy leak of the op's
second-order rule, and fails for ops whose gradient has no gradient (``tf.nn.softsign`` in
TensorFlow 2.21).  Hence ``jvp_is_independent = False``.  It also differentiates the ops a
``tf.custom_gradient`` function runs forward, not its custom gradient.  Its per-op JVP
functions are traced for exact shapes from gradcheck's own cache (:mod:`.tf_forward`), so
their bits do not depend on what the process ran before.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import replace
from types import ModuleType
from typing import Any

import numpy as np

from gradcheck.checker.evaluation import normalise_error_text
from gradcheck.oracles.base import EquivalentReference, Oracle, Unsupported
from gradcheck.oracles.conventions import convention_of, upcast
from gradcheck.oracles.inputs import Call, make_call, no_floating_output
from gradcheck.oracles.tf_dependence import trace_dependence
from gradcheck.oracles.tf_forward import exact_shapes
from gradcheck.oracles.tf_graph import DoubleVjpGraph, build_double_vjp_graph
from gradcheck.oracles.tf_support import (
    MissingGradient,
    as_tensor_args,
    call_fn,
    import_tensorflow,
    inexact,
    missing_gradient,
    outputs_of,
)

__all__ = ["TensorFlowOracle", "TensorFlowProblem", "TensorFlowReference",
           "TensorFlowFunctionReference", "FORWARD_MODES"]

Arrays = list[np.ndarray]
#: How ``jvp`` runs ForwardAccumulator: eagerly, or traced inside a ``tf.function``.
FORWARD_MODES = ("eager", "function")

#: What each kind of dependence on the dummy means, for the leak finding's message.
MEANING = {"control": "only through control dependencies: any value of the right shape "
                      "would do",
           "shape": "only its shape is read: any value of the right shape would do",
           "data": "its values are read (they cancel out of the result)"}


class TensorFlowProblem:
    """``fn(*args)`` written with TensorFlow; ``positions`` are the differentiated arguments.

    Floating arguments are float64 (TensorFlow's most accurate), complex ones complex128;
    ``fn`` must return float64 or complex128, or float32 for an op with a float32 kernel only
    (the checker's tolerances then follow the float32 output)."""

    #: TensorFlow's VJP of holomorphic f is ``c·conj(f'(z))`` (see :mod:`.conventions`).
    cotangent_convention = convention_of("tensorflow")

    def __init__(self, fn: Callable[..., Any], args: Sequence[Any], positions: Sequence[int],
                 name: str, forward_mode: str = "eager") -> None:
        if forward_mode not in FORWARD_MODES:
            raise ValueError(f"{name}: forward_mode must be one of {', '.join(FORWARD_MODES)}, "
                             f"got {forward_mode!r}")
        #: "eager": ``jvp`` is an eager ForwardAccumulator; "function": the same accumulator
        #: traced inside a ``tf.function`` (once per problem: its shapes are fixed).
        self.forward_mode = forward_mode
        self._traced_jvp: Any = None
        self._out_dtypes: list[Any] = []
        self.tf = import_tensorflow()
        self.call: Call = _call(fn, list(args), tuple(positions), name)
        self.name = name
        self.primals: Arrays = self.call.primals
        self.counts: Counter[str] = Counter()
        #: Whether ``fn`` returned a tuple (known after its first call).
        self.returns_tuple = False
        self._graph: DoubleVjpGraph | None = None
        self._no_vjp: bool | None = None
        self._dependence: Any = None
        self._fed: tuple[Arrays, Arrays, Arrays] | None = None
        self._feed_error: str | None = None

    # -- helpers ------------------------------------------------------------------------------
    def _constants(self, values: Sequence[Any]) -> list[Any]:
        return [self.tf.constant(upcast(v)) for v in values]

    def _outputs(self, primals: Sequence[Any]) -> list[Any]:
        tf, call = self.tf, self.call
        outs, self.returns_tuple = outputs_of(tf, call, call_fn(call, as_tensor_args(tf, call,
                                                                                  primals)))
        if not any(inexact(o) for o in outs):  # tf.argmax, a comparison: nothing to compare
            raise no_floating_output(self.name, [o.dtype.name for o in outs])
        # an integer output's cotangent stays float64: it is never used
        self._out_dtypes = [o.dtype if inexact(o) else tf.float64 for o in outs]
        return outs

    def _cotangents(self, values: Sequence[Any]) -> list[Any]:
        """Constants in the outputs' dtypes (float32 for a float32-only kernel)."""
        consts = self._constants(values)
        dtypes = self._out_dtypes or [c.dtype for c in consts]
        return [c if c.dtype == d else self.tf.cast(c, d)
                for c, d in zip(consts, dtypes, strict=True)]

    def _dense(self, values: Sequence[Any], like: Sequence[Any]) -> Arrays:
        """numpy arrays; an unconnected (None) or ``IndexedSlices`` gradient made dense."""
        return [np.zeros(np.shape(ref)) if v is None else np.asarray(self.tf.convert_to_tensor(v))
                for v, ref in zip(values, like, strict=True)]

    def _grads(self, tape: Any, targets: Any, sources: Any, weights: Any) -> list[Any]:
        # densified: tf.gather's IndexedSlices cannot be differentiated again as they are
        # a float32 output (a float32-only kernel) takes its cotangent in float32
        # integer outputs (top_k's indices) are not differentiated
        pairs = [(t, w if w.dtype == t.dtype else self.tf.cast(w, t.dtype))
                 for w, t in zip(weights, targets, strict=True) if inexact(t)]
        if not pairs:
            return [self.tf.zeros_like(s) for s in sources]
        grads = tape.gradient([t for t, _ in pairs], sources,
                              output_gradients=[w for _, w in pairs],
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
        with missing_gradient(self.name, 1):
            return self._dense(self._grads(tape, outs, xs, self._cotangents(cotangents)), xs)

    def jvp(self, primals: Sequence[Any], tangents: Sequence[Any]) -> Arrays:
        self.counts["jvp"] += 1
        xs, us = self._constants(primals), self._constants(tangents)
        # ForwardAccumulator transposes each op's VJP, so a missing 2nd gradient shows here.
        with missing_gradient(self.name, 2, self._vjp_missing), exact_shapes():
            if self.forward_mode == "eager":
                outs, jvps = self._accumulate(xs, us)
            else:
                if self._traced_jvp is None:
                    self._traced_jvp = self.tf.function(self._accumulate, autograph=False)
                try:
                    outs, jvps = self._traced_jvp(xs, us)
                except (TypeError, ValueError) as error:  # TensorFlow could not trace it
                    # generated function names carry a process-wide counter: drop it, so
                    # the same seed gives the same message
                    why = normalise_error_text(str(error))
                    raise Unsupported(f"TensorFlow cannot trace ForwardAccumulator in a "
                                      f"tf.function for {self.name}: {type(error).__name__}: "
                                      f"{why}") from error
        return self._dense(jvps, outs)

    def _accumulate(self, xs: list[Any], us: list[Any]) -> tuple[list[Any], list[Any]]:
        """The outputs and their JVPs by one ForwardAccumulator (eager, or traced)."""
        with self.tf.autodiff.ForwardAccumulator(xs, us) as acc:
            outs = self._outputs(xs)
        return outs, self._tangents_out(acc, outs)

    def _tangents_out(self, acc: Any, outs: list[Any]) -> list[Any]:
        """The outputs' JVPs from ``acc``: zero where unconnected, and float64 zeros for an
        integer output (not differentiated)."""
        tf = self.tf
        jvps = acc.jvp(outs, unconnected_gradients=tf.UnconnectedGradients.ZERO)
        return [tf.convert_to_tensor(j) if inexact(o) and j is not None
                else tf.zeros(tf.shape(o), o.dtype if inexact(o) else tf.float64)
                for o, j in zip(outs, jvps, strict=True)]

    def _vjp_missing(self) -> bool:
        """Whether TensorFlow lacks the VJP itself (an op of fn has no gradient): asked
        when a nested derivative finds a gradient missing, to say which one (once)."""
        if self._no_vjp is None:
            xs = self._constants(self.primals)
            try:
                with missing_gradient(self.name, 1):
                    with self.tf.GradientTape() as tape:
                        tape.watch(xs)
                        outs = self._outputs(xs)
                    self._grads(tape, outs, xs, [self.tf.ones_like(o, self.tf.float64)
                                                 for o in outs])
                self._no_vjp = False
            except MissingGradient:
                self._no_vjp = True
            except Exception:  # noqa: BLE001  (the VJP path reports its own errors)
                self._no_vjp = False
        return self._no_vjp

    def double_vjp(self, primals: Sequence[Any], tangents: Sequence[Any],
                   dummies: Sequence[Any]) -> tuple[Arrays, bool]:
        self.counts["double_vjp"] += 1
        if self._graph is None:
            self._graph = build_double_vjp_graph(self.tf, self.call)
            self.returns_tuple = self._graph.is_tuple
            self._dependence = trace_dependence(
                [d.op for d in self._graph.dummies],
                [t for t in self._graph.jvp if t is not None])
        built = self._graph
        xs, us, ds = ([upcast(a) for a in values] for values in (primals, tangents, dummies))
        self._fed = (xs, us, ds)
        result = built.evaluate(self.tf, xs, us, ds)
        return result, self._dependence.kind != "none"

    def dependence_details(self) -> dict[str, Any]:
        """How the double-VJP graph reads the dummy (for a dependence-leak finding): the kind
        of the strongest path from its placeholder (control < shape < data), that path, and
        TensorFlow's message when it refuses to run the graph without a value for the dummy."""
        dep, built = self._dependence, self._graph
        if dep is None or dep.kind == "none" or built is None or self._fed is None:
            return {}
        if self._feed_error is None:
            self._feed_error = built.unfed_error(self.tf, *self._fed) or ""
        details = {"dependence": dep.kind, "dependence_path": list(dep.path),
                   "meaning": MEANING[dep.kind], "tf_version": str(self.tf.__version__)}
        if self._feed_error:
            details["feed_error"] = self._feed_error
        return details

    def hvp_fwd_rev(self, primals: Sequence[Any], cotangents: Sequence[Any],
                    tangents: Sequence[Any], cotangent_tangents: Sequence[Any]) -> Arrays:
        self.counts["hvp_fwd_rev"] += 1
        xs, vs = self._constants(primals), self._cotangents(cotangents)
        tf = self.tf
        with missing_gradient(self.name, 2, self._vjp_missing), exact_shapes():
            with tf.autodiff.ForwardAccumulator(
                    [*xs, *vs], [*self._constants(tangents),
                                 *self._cotangents(cotangent_tangents)]) as acc:
                with tf.GradientTape() as tape:
                    tape.watch(xs)
                    outs = self._outputs(xs)
                g = self._grads(tape, outs, xs, vs)
            return self._dense(acc.jvp(g, unconnected_gradients=tf.UnconnectedGradients.ZERO),
                               xs)

    def hvp_rev_rev(self, primals: Sequence[Any], cotangents: Sequence[Any],
                    second: Sequence[Any]) -> tuple[Arrays, Arrays]:
        self.counts["hvp_rev_rev"] += 1
        xs, vs = self._constants(primals), self._cotangents(cotangents)
        tf = self.tf
        with missing_gradient(self.name, 2, self._vjp_missing):
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
        with missing_gradient(self.name, 2, self._vjp_missing), exact_shapes():
            with tf.GradientTape() as outer:
                outer.watch([*xs, *us])
                with tf.autodiff.ForwardAccumulator(xs, us) as acc:
                    outs = self._outputs(xs)
                t_out = self._tangents_out(acc, outs)
            res = self._dense(self._grads(outer, t_out, [*xs, *us], self._cotangents(cotangents)),
                              [*xs, *us])
        return res[:len(xs)], res[len(xs):]


def _call(fn: Callable[..., Any], args: list[Any], positions: tuple[int, ...],
          name: str) -> Call:
    """The checked call.  With no differentiable argument (integer inputs only) it is still
    made, so the checker says "nothing to differentiate" as for every other framework."""
    if positions:
        return replace(make_call(fn, args, positions), name=name)
    return Call(fn=fn, name=name, args=tuple(np.asarray(a, np.float64)
                                             if isinstance(a, np.ndarray) and a.dtype.kind == "f"
                                             else a for a in args), argnums=())


class TensorFlowOracle(Oracle):
    """The ``tensorflow`` reference (install with ``pip install gradcheck[tensorflow]``)."""

    name = "tensorflow"
    extra = "tensorflow"
    #: ForwardAccumulator transposes the VJP for most ops; see the module docstring.
    jvp_is_independent = False

    def _import(self) -> ModuleType:
        return import_tensorflow()

    def problem(self, call: Call) -> TensorFlowProblem:
        return TensorFlowProblem(call.fn, call.args, call.argnums, call.name)


class TensorFlowReference(EquivalentReference):
    """TensorFlow as a reference of the checker: the op's ``"tensorflow"`` equivalent, run by
    :class:`TensorFlowProblem` in float64 (its double-VJP in graph mode with a placeholder
    dummy, so its dummy leaks are found by the same checks)."""

    name = "tensorflow"
    distributions = ("tensorflow", "tensorflow-cpu")
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


class TensorFlowFunctionReference:
    """TensorFlow's forward mode inside ``tf.function``, as a reference side of a TensorFlow
    target: the target's own function at the same example, its ``jvp`` by a
    ``ForwardAccumulator`` traced in a ``tf.function`` (the target's own ``jvp`` is the eager
    accumulator, its ``double_vjp`` the graph-mode double-VJP).  Only ``jvp`` is checked on
    this side (:attr:`paths`): the other paths would repeat the eager side's.  Its findings
    carry ``side="tf_function"``, and its ``jvp`` is compared with the eager one."""

    name = "tf_function"
    #: The paths this side computes differently from the target (see ``examine_reference``).
    paths = ("jvp",)

    def status(self) -> str | None:
        return TensorFlowOracle().status()

    def supports(self, target: Any) -> str | None:
        if getattr(target, "framework", None) != "tensorflow":
            return "tf_function audits TensorFlow functions only (the target is not one)"
        return None

    def bind(self, target: Any, example: Any) -> TensorFlowProblem:
        problem = target.bind(example)
        if not isinstance(problem, TensorFlowProblem):
            raise TypeError(f"tf_function: {target.name} is not bound to a TensorFlow problem")
        call = problem.call
        return TensorFlowProblem(call.fn, call.args, call.argnums, call.name,
                                 forward_mode="function")
