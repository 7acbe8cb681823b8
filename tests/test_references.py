"""External references inside the one checker: plugged in by name, checked by the same code,
their wrong derivatives attributed to them, path by path."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import gradcheck.numpy as gnp
from gradcheck import check
from gradcheck.checker.paths import EngineProblem
from gradcheck.checker.references import Unsupported, known_references, register_reference
from gradcheck.engine import Registry, define_op

_LOCAL = Registry()
# sin whose VJP is wrong for x < 0 only (a framework bug in one region)
_bad_sin = define_op("bad_sin", np.sin,
                     vjp=lambda g, out, x: g * gnp.cos(x) * gnp.sign(gnp.cos(x) * 0 + x + 1e-300)
                     , jvp=lambda ts, out, x: ts[0] * gnp.cos(x), registry=_LOCAL)


class _Fake:
    """A reference whose 'framework' computes sin with ``op``'s rules."""

    def __init__(self, name: str, op: Any, status: str | None = None,
                 refuse: tuple[str, ...] = ()) -> None:
        self.name, self.op, self._status, self.refuse = name, op, status, refuse

    def status(self) -> str | None:
        return self._status

    def supports(self, target: Any) -> str | None:
        return None if target.name == "sin" else f"no equivalent in {self.name}"

    def bind(self, target: Any, example: Any) -> Any:
        problem = EngineProblem(self.op, example.args, example.params,
                                target.positions(example), name=self.name)
        for path in self.refuse:
            def refused(*args: Any, path: str = path) -> Any:
                raise Unsupported(f"{self.name} has no rule for {path}")
            setattr(problem, path, refused)
        return problem


def _register(name: str, **kw: Any) -> None:
    register_reference(name, lambda: _Fake(name, kw.pop("op", gnp.sin), **kw))


def test_a_registered_reference_is_known_and_agrees_when_right() -> None:
    _register("fake_right")
    assert "fake_right" in known_references()
    report = check("sin", references=["numeric", "self", "fake_right"], seed=0)
    cells = [c for c in report.cells if c.reference == "fake_right"]
    assert len(cells) == 6 and all(c.status == "pass" for c in cells)
    assert report.passed


def test_a_wrong_reference_is_a_failing_finding_attributed_to_it() -> None:
    _register("fake_wrong", op=_bad_sin)
    report = check("sin", inputs=[np.array([-1.2, 0.4, -0.3])],
                   references=["numeric", "self", "fake_wrong"], seed=0)
    mine = [f for f in report.failures if f.attributed_to == "fake_wrong"]
    assert mine and any(f.path == "vjp" and f.reference == "numeric" for f in mine)
    # sin itself is right: every failure is fake_wrong's (second-order disagreements are
    # traced back to the VJP it gets wrong)
    assert all(f.attributed_to == "fake_wrong" for f in report.failures)
    assert report.cell("vjp", "fake_wrong").status == "fail"
    assert report.cell("vjp", "numeric").status == "pass"


def test_unavailable_and_unsupported_references_say_why() -> None:
    _register("fake_missing", status="unavailable: fake cannot be imported; install with: x")
    report = check("sin", references=["numeric", "fake_missing"], examples=1, paths=["vjp"])
    assert report.cell("vjp", "fake_missing").status == "unavailable"
    assert "install" in report.cell("vjp", "fake_missing").note
    _register("fake_partial")
    report = check("cos", references=["numeric", "fake_partial"], examples=1, paths=["vjp"])
    assert report.cell("vjp", "fake_partial").status == "unsupported"
    assert report.cell("vjp", "fake_partial").note == "no equivalent in fake_partial"


def test_an_unsupported_path_keeps_the_other_paths_verdicts() -> None:
    _register("fake_first_order", refuse=("hvp_fwd_rev", "hvp_rev_rev", "hvp_rev_fwd"))
    report = check("sin", references=["numeric", "self", "fake_first_order"], seed=0)
    status = {c.path: c.status for c in report.cells if c.reference == "fake_first_order"}
    assert status["vjp"] == status["jvp"] == status["double_vjp"] == "pass"
    assert status["hvp_fwd_rev"] == status["hvp_rev_rev"] == "unsupported"
    assert report.passed
    why = [f for f in report.findings if f.kind == "unsupported"]
    assert why and "no rule for hvp" in why[0].message


def test_an_unknown_reference_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="unknown reference 'nope'"):
        check("sin", references=["nope"])


@pytest.mark.tensorflow
def test_tensorflow_cumprod_at_zero_is_a_finding_attributed_to_tensorflow() -> None:
    report = check("cumprod", inputs=[np.array([1.5, 0.0, 2.0, -0.7])],
                   references=["numeric", "self", "tensorflow"], seed=0)
    tf = [f for f in report.failures if f.attributed_to == "tensorflow"]
    assert {f.path for f in tf} >= {"vjp", "jvp", "double_vjp"}
    assert not [f for f in report.failures if f.attributed_to == ""]
    assert report.cell("vjp", "tensorflow").status == "fail"


@pytest.mark.autograd
def test_autograd_agrees_on_a_smooth_op() -> None:
    report = check("sin", references=["numeric", "self", "autograd"], seed=0)
    assert all(c.status == "pass" for c in report.cells if c.reference == "autograd")


@pytest.mark.autograd
def test_autograds_tanh_second_order_is_nan_at_large_inputs_at_every_seed() -> None:
    # autograd's tanh rule is g / cosh(x)**2: differentiated again, inf / inf for |x| > ~355;
    # the stratified exploration reaches 1e3 at every seed, so this is found every time
    for seed in (0, 1):
        report = check("tanh", references=["numeric", "self", "autograd"], seed=seed,
                       dtypes=["float64"])
        bad = [f for f in report.failures if f.attributed_to == "autograd"]
        assert bad and all(f.path.startswith("hvp") for f in bad), seed
        assert not [f for f in report.failures if f.attributed_to != "autograd"]


@pytest.mark.autograd
def test_autograds_tile_with_fewer_reps_than_axes_is_a_finding_attributed_to_autograd() -> None:
    # numpy pads reps with leading ones, so tile(x, 2) repeats x's last axis; autograd's rule
    # sums the cotangent's splits along the leading axes instead (autograd 1.9.1)
    x = np.random.default_rng(0).standard_normal((2, 3, 3))
    report = check("tile", inputs=[x], params={"reps": 2}, dtypes=["float64"],
                   references=["numeric", "self", "autograd"], seed=0, examples=1)
    bad = [f for f in report.failures if f.attributed_to == "autograd"]
    assert {f.path for f in bad} >= {"vjp", "double_vjp"}
    assert not [f for f in report.failures if f.attributed_to != "autograd"]
    # with as many reps as axes autograd's rule is right
    same = check("tile", inputs=[x], params={"reps": (1, 1, 2)}, dtypes=["float64"],
                 references=["numeric", "self", "autograd"], seed=0, examples=1)
    assert same.passed and same.cell("vjp", "autograd").status == "pass"


@pytest.mark.autograd
def test_autograds_solve_triangular_ignores_unit_diagonal_in_its_gradients() -> None:
    # its VJP in b solves with the matrix's own diagonal, and its VJP in a gives the
    # diagonal, which a unit-diagonal solve never reads, a gradient (autograd 1.9.1)
    rng = np.random.default_rng(0)
    a = np.tril(rng.standard_normal((4, 4))) + 3 * np.eye(4)
    b = rng.standard_normal((4, 2))
    for unit, wrong in ((True, True), (False, False)):
        report = check("linalg.solve_triangular", inputs=[a, b], dtypes=["float64"],
                       params={"lower": True, "trans": 0, "unit_diagonal": unit},
                       references=["numeric", "self", "autograd"], seed=0, examples=1)
        bad = {f.path for f in report.failures if f.attributed_to == "autograd"}
        assert ("vjp" in bad) == wrong, (unit, bad)
        assert not [f for f in report.failures if f.attributed_to != "autograd"]


def test_frameworks_named_alone_come_on_top_of_the_numeric_reference() -> None:
    # check(op, references=["autograd"]) must still compare with the numeric derivative: a
    # wrong rule that the framework cannot run is still found
    wrong = define_op("wrong_sin", np.sin, vjp=lambda g, out, x: g * gnp.cos(x) * 1.1,
                      jvp=lambda ts, out, x: ts[0] * gnp.cos(x) * 1.1, registry=_LOCAL)
    report = check(wrong, references=["autograd"], examples=2, seed=0)
    assert {"numeric", "self", "autograd"} <= {c.reference for c in report.cells}
    assert not report.passed
    assert any(f.kind == "mismatch" and f.reference == "numeric" for f in report.failures)
    # a list naming an internal reference is taken as it is
    only = check(wrong, references=["self"], examples=2, seed=0)
    assert "numeric" not in {c.reference for c in only.cells}
