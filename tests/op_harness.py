"""The harness shared by the op-family tests (tests/test_ops_*.py).

A family's test module declares a table of cases (:class:`OpCase` for a registered op with
parameters, :class:`ModuleCase` for a function written once for any numpy-like module).
Forward values are compared here, against numpy/scipy or a direct formula
(:func:`check_forward`).  Every derivative is checked by :func:`gradcheck.check` at the case's
point: the VJP, the native, transposed and double-VJP JVPs, the double-VJP's dummy, the three
HVP nestings and float32 against the numeric reference and each other (``self``), with
tolerances derived from the numeric error estimate, and against autograd through the op's
declared equivalent.  :class:`PathChecks` and its mixins turn this into pytest tests over a
family's table: a test module subclasses them with its ``cases``.
"""

from __future__ import annotations

import dataclasses
import os
import warnings
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pytest

import gradcheck as gc
import gradcheck.numpy as gnp
from gradcheck import default_registry
from gradcheck.checker import format_failure
from gradcheck.checker.report import Report
from gradcheck.domains import Domain
from gradcheck.engine.tensor import value_of

HVP_MODES = ("fwd_over_rev", "rev_over_rev", "rev_over_fwd")
JVP_METHODS = ("native", "transpose", "double_vjp")
#: Examples (directions at the case's point) per dtype of a check.  Each example runs every
#: path against the numeric reference, each other and any external reference; the comparison
#: code this replaced drew one set of directions per test.  (A check also spends about a
#: third of its time on convergence data for report plots, which tests do not read.)
EXAMPLES = 1
#: The dtypes every case is checked in (float32 inputs: every path must stay float32).
DTYPES = ("float64", "float32")
#: Forward tolerances (rtol, atol): the default one rounds like a few float64 operations;
#: shape and indexing ops move or add numbers without rounding.
DEFAULT = (1e-12, None)
EXACT = (1e-13, 1e-13)


# ---------------------------------------------------------------------------------------
# Values, draws and functions
# ---------------------------------------------------------------------------------------
def assert_close(actual: Any, expected: Any, rtol: float, what: str,
                 atol: float | None = None) -> None:
    """Equal shapes and values within ``rtol``; an ``atol`` of None is ``rtol`` times the
    largest ``|expected|`` (at least 1), so entries near zero are judged on the scale of the
    others.  For values (forwards, closed forms), not for comparing derivatives with a
    numeric reference: that is :func:`gradcheck.check`'s."""
    a, e = np.asarray(value_of(actual)), np.asarray(value_of(expected))
    assert a.shape == e.shape, f"{what}: shape {a.shape} != {e.shape}"
    if atol is None:
        atol = rtol * max(1.0, float(np.max(np.abs(e), initial=0.0)))
    np.testing.assert_allclose(a, e, rtol=rtol, atol=atol, err_msg=what)


def rng_for(label: str, salt: str) -> np.random.Generator:
    """A generator fixed by a case's label and the use: the same case draws the same values
    whatever else runs, in whatever order."""
    return np.random.default_rng(seed_for(label, salt))


def seed_for(label: str, salt: str) -> int:
    """A seed fixed by a case's label and the use (for :func:`gradcheck.check`)."""
    return zlib.crc32(f"{label}/{salt}".encode())


def normal_data(seed: int) -> Callable[..., np.ndarray]:
    """``r(*shape)``: standard normal float64 data from a generator of the calling module's own
    (so one module's table does not shift another's)."""
    rng = np.random.default_rng(seed)

    def r(*shape: int) -> np.ndarray:
        return rng.standard_normal(shape)

    return r


def like(rng: np.random.Generator, a: Any) -> np.ndarray:
    """Standard normal values in ``a``'s shape and dtype."""
    v = np.asarray(value_of(a))
    return rng.standard_normal(v.shape).astype(v.dtype)


def as_tuple(out: Any) -> tuple[Any, ...]:
    return out if isinstance(out, tuple) else (out,)


def engine_vjp(f: Callable[..., Any], xs: Sequence[Any], v: Any) -> list[np.ndarray]:
    """J^T v by the engine, one array per input (for closed-form and shape tests)."""
    _, vjp_fn = gc.vjp(f, *xs)
    return [np.asarray(value_of(c)) for c in vjp_fn(v)]


def import_tensorflow() -> Any:
    """TensorFlow, quietly (its tests are marked ``tensorflow``: deselect them, do not skip)."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # TensorFlow's own import-time deprecations
        import tensorflow as tf
    return tf


def case_id(case: Any) -> str:
    """The pytest id of a table row."""
    return str(case.id)


def registered_in(module: Any) -> set[str]:
    """Names of the registered ops a module defines."""
    return {op.name for op in default_registry
            if getattr(op.forward, "__module__", None) == module.__name__}


# ---------------------------------------------------------------------------------------
# gradcheck.check at a point
# ---------------------------------------------------------------------------------------
def assert_passed(report: Report, examples: int | None = None) -> Report:
    """The report passed; with ``examples``, every dtype ran that many usable examples (a
    point on a kink or overflowing must not pass by checking nothing)."""
    assert report.passed, format_failure(report)
    if examples is not None:
        used = report.stats.get("examples", {})
        assert all(used.get(d) == examples for d in report.dtypes), (report.op, used)
    return report


def assert_compared(report: Report, reference: str) -> None:
    """``reference`` computed and passed at least one path (a reference that could compute
    nothing, unsupported or unavailable, passes no check)."""
    compared = [c.path for c in report.cells if c.reference == reference and c.status == "pass"]
    assert compared, [(c.path, c.reference, c.status, c.note) for c in report.cells]


def check_at(target: Any, inputs: Sequence[Any], *, seed: int,
             dtypes: Sequence[str] = ("float64",), params: dict[str, Any] | None = None,
             examples: int = EXAMPLES, references: Sequence[str] = ("numeric", "self"),
             paths: Sequence[str] | None = None, empty: bool = False) -> Report:
    """:func:`gradcheck.check` of ``target`` (an op name, checked with its declared metadata
    and equivalents, or a function) at ``inputs`` with ``params`` in ``dtypes``; asserts that
    it passed on every example.  External references run in float64.  ``empty``: the point
    has nothing to compare (zero-size differentiated inputs or outputs): every path must
    still run cleanly, and the only failure is the checker saying so, once per dtype."""
    report = gc.check(target, inputs=list(inputs), params=params or None,
                      references=list(references), paths=paths, dtypes=list(dtypes),
                      examples=examples, seed=seed)
    if empty:
        reasons = [f.details.get("reason") for f in report.failures]
        assert reasons == ["only empty examples"] * len(report.dtypes), format_failure(report)
        assert not [f for f in report.findings if f not in report.failures], report.findings
        return report
    return assert_passed(report, examples)


# ---------------------------------------------------------------------------------------
# Cases
# ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class OpCase:
    """A registered op at fixed parameters and input shapes, with its forward reference.

    ``reference`` is numpy/scipy (or a direct formula) on raw arrays, called with
    ``params``.  ``shapes`` default to (2, 3) for every input, ``inputs`` (domains) to the
    op's declared ones.  ``cotangent_arg`` is the upstream-gradient input of a gradient op.
    The op's declared autograd equivalent is the autograd reference; ``no_autograd`` says
    why a row is not compared with it (empty: it is).
    """

    name: str
    reference: Callable[..., Any] | None = None
    params: dict[str, Any] = dataclasses.field(default_factory=dict)
    shapes: tuple[tuple[int, ...], ...] | None = None
    inputs: tuple[Domain, ...] | None = None
    label: str = ""
    cotangent_arg: int | None = None
    no_autograd: str = ""

    @property
    def id(self) -> str:
        if self.label:
            return self.label
        shapes = "x".join(str(s).replace(" ", "") for s in self.shapes or ())
        params = ",".join(f"{k}={v}".replace(" ", "") for k, v in self.params.items())
        return f"{self.name}{shapes}{'[' + params + ']' if params else ''}"

    @property
    def op(self) -> gc.Op:
        return default_registry.get(self.name)

    def domains(self) -> tuple[Domain, ...]:
        return tuple(self.inputs or self.op.meta["inputs"])

    def sample(self, dtype: Any = np.float64, shapes: Sequence[tuple[int, ...]] | None = None,
               salt: str = "inputs") -> list[np.ndarray]:
        """Inputs drawn from the domains, deterministic per case and ``salt``."""
        domains = self.domains()
        shapes = shapes or self.shapes or ((2, 3),) * len(domains)
        rng = rng_for(self.id, salt)
        return [d.sample(rng, s, dtype) for d, s in zip(domains, shapes, strict=True)]

    def __call__(self, *args: Any) -> Any:
        return self.op(*args, **self.params)

    @property
    def diff(self) -> list[int]:
        """Positions the op differentiates (as declared)."""
        return [i for i in range(len(self.domains())) if i not in self.op.nondiff_argnums]

    def point(self) -> list[np.ndarray]:
        """The case's inputs (float64)."""
        return self.sample()

    def check(self, dtypes: Sequence[str] = DTYPES,
              references: Sequence[str] = ("numeric", "self"),
              raw: Sequence[Any] | None = None, salt: str = "point") -> Report:
        """:func:`gradcheck.check` of the op by name at the case's point (or ``raw``) with its
        parameters; asserts it passed."""
        return check_at(self.name, self.point() if raw is None else raw, dtypes=dtypes,
                        seed=seed_for(self.id, salt), params=self.params,
                        references=references)

    def expected(self, args: Sequence[Any]) -> Any:
        """The reference's outputs at ``args``."""
        assert self.reference is not None, f"{self.id}: no reference"
        return self.reference(*args, **self.params)


@dataclass(frozen=True)
class ModuleCase:
    """``fn(np_module, *args)``, written once for numpy and gradcheck.numpy; ``args[i]`` is
    differentiated unless ``i in nondiff`` (or it is not floating).  ``reference`` replaces
    ``fn(numpy, ...)`` where numpy lacks the op.  A function has no declared autograd
    equivalent: the ops it calls are compared with autograd by the sampled-metadata checks."""

    id: str
    fn: Callable[..., Any]
    args: tuple[Any, ...]
    nondiff: tuple[int, ...] = ()
    reference: Callable[..., Any] | None = None

    def __call__(self, *args: Any) -> Any:
        return self.fn(gnp, *args)

    @property
    def diff(self) -> list[int]:
        return [i for i in range(len(self.args)) if i not in self.nondiff]

    def point(self) -> list[Any]:
        return [a if i in self.nondiff else np.asarray(a) for i, a in enumerate(self.args)]

    def check(self, dtypes: Sequence[str] = DTYPES,
              references: Sequence[str] = ("numeric", "self"), salt: str = "point") -> Report:
        """:func:`gradcheck.check` of the function of the differentiated arguments (the
        others closed over) at the case's point; asserts it passed."""
        args, diff = self.point(), self.diff

        def f(*xs: Any) -> Any:
            full = list(args)
            for i, x in zip(diff, xs, strict=True):
                full[i] = x
            return self.fn(gnp, *full)

        f.__qualname__ = self.id
        outs = self.expected(args)
        outs = outs if isinstance(outs, (tuple, list)) else (outs,)
        empty = not any(np.size(args[i]) for i in diff) or not any(np.size(o) for o in outs)
        return check_at(f, [args[i] for i in diff], seed=seed_for(self.id, salt),
                        dtypes=dtypes, references=references, empty=empty)

    def expected(self, args: Sequence[Any]) -> Any:
        """The reference's (or numpy's) outputs at ``args``."""
        return (self.reference or (lambda *a: self.fn(np, *a)))(*args)


# ---------------------------------------------------------------------------------------
# Checks that are not derivative comparisons
# ---------------------------------------------------------------------------------------
def check_forward(case: Any, rtol: float, atol: float | None = None) -> None:
    """Outputs against the case's reference: count, shapes, dtypes and values; tensors in
    give tensors out."""
    args = case.point()
    want = as_tuple(case.expected(args))
    traced = as_tuple(case(*[gc.tensor(a) if i in case.diff else a
                             for i, a in enumerate(args)]))
    assert all(isinstance(t, gc.Tensor) for t in traced), f"{case.id}: tensors in, arrays out"
    for how, got in (("on tensors", traced), ("on arrays", as_tuple(case(*args)))):
        assert len(got) == len(want), (case.id, how, len(got), len(want))
        for k, (g, w) in enumerate(zip(got, want, strict=True)):
            g, w = np.asarray(value_of(g)), np.asarray(w)
            assert g.dtype == w.dtype, (case.id, how, k, g.dtype, w.dtype)
            assert_close(g, w, rtol, f"{case.id} forward output {k} {how}", atol)


def check_edge_shapes(case: OpCase) -> None:
    """0-d, zero-size and size-1 inputs: the output, cotangents and every JVP keep the
    shapes."""
    for shape in ((), (0,), (2, 0, 3), (1,)):
        args = case.sample(shapes=[shape] * len(case.domains()), salt=str(shape))
        diff = [i for i in range(len(args)) if i not in case.op.nondiff_argnums]

        def f(*xs: Any, args: list[np.ndarray] = args, diff: list[int] = diff) -> Any:
            full = list(args)
            for i, x in zip(diff, xs, strict=True):
                full[i] = x
            return case(*full)

        xs = [args[i] for i in diff]
        out = np.asarray(value_of(f(*xs)))
        assert out.shape == shape, (case.id, shape)
        v = like(rng_for(case.id, str(shape)), out)
        for ct, x in zip(engine_vjp(f, xs, v), xs, strict=True):
            assert ct.shape == np.shape(x), (case.id, shape)
        for method in JVP_METHODS:
            _, t = gc.jvp(f, xs, [np.ones_like(x) for x in xs], method=method)
            assert np.shape(value_of(t)) == shape, (case.id, shape, method)


def check_linear_in_cotangent(case: OpCase, rtol: float = 1e-12) -> None:
    """A gradient op's output is linear in its upstream gradient dy (a forward-value
    identity); that its partial in dy is free of dy is the double-VJP's dummy check of the
    op it is the gradient of (see :func:`check_grad_of`)."""
    k = case.cotangent_arg
    assert k is not None, f"{case.id}: not a gradient op"
    raw = case.sample()
    rng = rng_for(case.id, "lin")
    dy1, dy2 = like(rng, raw[k]), like(rng, raw[k])
    outs = []
    for dy in (dy1, dy2, 2.0 * dy1 - 3.0 * dy2):
        args = list(raw)
        args[k] = dy
        outs.append(np.asarray(value_of(case(*args))))
    assert_close(outs[2], 2.0 * outs[0] - 3.0 * outs[1], rtol, f"{case.id} linear in dy")


def check_grad_of(case: OpCase) -> None:
    """A gradient op's partial in its upstream gradient dy is free of dy: the double-VJP of
    the op it is the gradient of (which transposes that partial in a dummy dy) must neither
    change with the dummy nor read it.  Checked by :func:`gradcheck.check` at a point of
    that op, with the case's parameters."""
    fwd = default_registry.get(case.op.meta["grad_of"])
    rng = rng_for(case.id, "grad_of")
    args = [d.sample(rng, (2, 3), np.float64) for d in fwd.meta["inputs"]]
    check_at(fwd.name, args, params=case.params, seed=seed_for(case.id, "grad_of"),
             paths=["vjp", "double_vjp"])


def check_against_tensorflow(case: OpCase, tf_op: Callable[..., Any], rtol: float = 1e-12
                             ) -> Report:
    """The forward against ``tf_op`` (TensorFlow's argument order), and every path against
    TensorFlow's through the op's declared equivalent (a path TensorFlow cannot compute is
    ``unsupported``, with TensorFlow's reason)."""
    tf = import_tensorflow()
    args = case.point()
    expected = tf_op(*[tf.constant(a) for a in args]).numpy()
    assert_close(case(*args), expected, rtol, f"{case.id} vs TensorFlow")
    return case.check(("float64",), references=("self", "tensorflow"), salt="tensorflow")


# ---------------------------------------------------------------------------------------
# The checks as pytest tests over a family's table
# ---------------------------------------------------------------------------------------
def on_rows(keep: Callable[[Any], bool]) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """Run a table test only on the rows ``keep`` accepts."""
    def mark(test: Callable[..., None]) -> Callable[..., None]:
        test.keep_row = keep  # type: ignore[attr-defined]
        return test
    return mark


class PathChecks:
    """Forward values and :func:`gradcheck.check` on every row of a family's case table.

    A test module subclasses this as ``Test<Family>`` with ``cases`` (rows of
    :class:`OpCase` or :class:`ModuleCase`) and the forward tolerance; the mixins below add
    the tests some families need.
    """

    cases: ClassVar[Sequence[Any]] = ()
    #: Forward values against the reference: ``rtol`` and ``atol`` (None: rtol times the
    #: largest value).
    forward_tolerance: ClassVar[tuple[float, float | None]] = DEFAULT
    # For SampledMetadataChecks: the ops swept, in which dtypes, with how many examples each.
    sampled_ops: ClassVar[Sequence[str]] = ()
    sampled_dtypes: ClassVar[Sequence[str]] = ("float64",)
    sampled_examples: ClassVar[int] = 3
    #: Examples of the autograd comparison (autograd runs on a check's first three).
    sampled_autograd_examples: ClassVar[int] = EXAMPLES
    #: Sampled ops not compared with autograd, and why.
    sampled_without_autograd: ClassVar[dict[str, str]] = {}

    def pytest_generate_tests(self, metafunc: pytest.Metafunc) -> None:
        if "case" in metafunc.fixturenames:
            keep = getattr(metafunc.function, "keep_row", lambda case: True)
            metafunc.parametrize("case", [c for c in self.cases if keep(c)], ids=case_id)
        if "op_name" in metafunc.fixturenames:
            metafunc.parametrize("op_name", self.sampled_ops)
        if "autograd_op" in metafunc.fixturenames:
            metafunc.parametrize("autograd_op", [
                name for name in self.sampled_ops if name not in self.sampled_without_autograd])

    def test_forward(self, case: Any) -> None:
        check_forward(case, *self.forward_tolerance)

    def test_derivatives(self, case: Any) -> None:
        """Every path against the numeric reference and each other, in float64 and in
        float32 (where every path must stay float32)."""
        case.check()


class AutogradChecks:
    """For tables of :class:`OpCase` (mix into a :class:`PathChecks` subclass): every row
    without a ``no_autograd`` reason is compared with autograd."""

    @pytest.mark.autograd
    @on_rows(lambda case: not case.no_autograd)
    def test_matches_autograd(self, case: Any) -> None:
        """Every path against autograd's (the op's declared equivalent), which must have
        compared something: a path it cannot compute is no pass."""
        report = case.check(("float64",), references=("self", "autograd"), salt="autograd")
        assert_compared(report, "autograd")


class ElementwiseChecks:
    """For ops applied elementwise (mix into a :class:`PathChecks` subclass): 0-d and
    zero-size inputs keep their shapes; gradient ops are linear in their upstream gradient
    and take broadcasting pairs."""

    def test_scalar_and_empty_inputs(self, case: OpCase) -> None:
        check_edge_shapes(case)

    @on_rows(lambda case: case.cotangent_arg is not None)
    def test_gradient_op_is_linear_in_its_upstream_gradient(self, case: OpCase) -> None:
        check_linear_in_cotangent(case)

    @on_rows(lambda case: case.cotangent_arg is not None)
    def test_gradient_op_partial_in_dy_is_free_of_dy(self, case: OpCase) -> None:
        check_grad_of(case)

    @on_rows(lambda case: case.cotangent_arg is not None)
    def test_gradient_op_broadcasts(self, case: OpCase) -> None:
        case.check(("float64",), raw=case.sample(shapes=[(2, 3), (3,)], salt="bcast"),
                   salt="bcast")


class SampledMetadataChecks:
    """:func:`gradcheck.check` of each of ``sampled_ops`` on inputs drawn from its declared
    metadata, in each of ``sampled_dtypes``, and against autograd (mix into a
    :class:`PathChecks` subclass)."""

    sampled_dtypes: ClassVar[Sequence[str]]
    sampled_examples: ClassVar[int]
    sampled_autograd_examples: ClassVar[int]

    def test_sampled_metadata(self, op_name: str) -> None:
        assert_passed(gc.check(op_name, dtypes=list(self.sampled_dtypes),
                               seed=seed_for(op_name, "sampled"),
                               examples=self.sampled_examples))

    @pytest.mark.autograd
    def test_sampled_matches_autograd(self, autograd_op: str) -> None:
        report = gc.check(autograd_op, dtypes=["float64"], references=["self", "autograd"],
                          seed=seed_for(autograd_op, "autograd"),
                          examples=self.sampled_autograd_examples)
        assert_compared(assert_passed(report), "autograd")
