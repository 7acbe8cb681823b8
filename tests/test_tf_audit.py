"""The TensorFlow audit: its suite (200+ APIs, every target resolvable), both forward modes
(eager ForwardAccumulator and inside tf.function) with silently-zero JVPs, float32-only
kernels, symmetric tangents, and the README generator (bench/readme_tf.py)."""

from __future__ import annotations

from pathlib import Path

import bench_scripts
import numpy as np
import pytest
import tomllib

import gradcheck
from gradcheck.checker.dotted import load_function

tf = pytest.importorskip("tensorflow", reason="needs gradcheck[tensorflow]")

from gradcheck.oracles.tensorflow import TensorFlowProblem  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
SUITE = ROOT / "gradcheck" / "suites" / "tensorflow_audit.toml"


def _rows() -> list[dict]:
    with SUITE.open("rb") as f:
        return list(tomllib.load(f)["function"])


def _readme_tf():
    return bench_scripts.load("readme_tf")


def test_suite_covers_200_apis_and_every_target_resolves() -> None:
    rows = _rows()
    readme = _readme_tf()
    apis = {readme.api_of(r.get("name", r["target"])) for r in rows}
    assert len(apis) >= 200, len(apis)
    for family in ("tf.math.", "tf.nn.", "tf.linalg.", "tf.signal.", "tf.image.",
                   "tf.compat.v1.losses.", "tf.while_loop", "tf.scan", "tf.map_fn", "tf.cond"):
        assert any(a.startswith(family) for a in apis), family
    for r in rows:
        assert callable(load_function(r["target"])), r["target"]
    # activations per region: a row on each side of zero
    names = {r.get("name", "") for r in rows}
    assert {"tf.nn.elu, x < 0", "tf.nn.elu, x > 0"} <= names


def test_forward_mode_in_function_matches_eager_and_traces_once() -> None:
    x = np.linspace(-1.0, 1.0, 5)
    u = np.cos(x)
    eager = TensorFlowProblem(tf.math.sin, [x], [0], "sin")
    traced = TensorFlowProblem(tf.math.sin, [x], [0], "sin", forward_mode="function")
    (a,), (b,) = eager.jvp([x], [u]), traced.jvp([x], [u])
    np.testing.assert_allclose(a, np.cos(x) * u, rtol=1e-14)
    np.testing.assert_allclose(b, a, rtol=1e-14)
    traced.jvp([x + 0.1], [u])
    assert traced._traced_jvp.experimental_get_tracing_count() == 1
    with pytest.raises(ValueError, match="forward_mode must be one of eager, function"):
        TensorFlowProblem(tf.math.sin, [x], [0], "sin", forward_mode="lazy")


def _stopped(x):
    return tf.stop_gradient(tf.sin(x)) + 0.0 * x


def test_silently_zero_in_both_forward_modes() -> None:
    report = gradcheck.check(_stopped, inputs=["real"], shapes="(n)", examples=2,
                             paths=["vjp", "jvp", "double_vjp"],
                             references=["numeric", "tf_function"])
    found = {(f.path, f.attributed_to) for f in report.findings if f.kind == "silently_zero"}
    assert {("vjp", ""), ("jvp", ""), ("double_vjp", ""), ("jvp", "tf_function")} <= found


def test_tf_function_side_checks_only_jvp_and_only_tensorflow_targets() -> None:
    report = gradcheck.check(tf.math.tanh, inputs=["real"], shapes="(n)", examples=2,
                             paths=["vjp", "jvp"], references=["numeric", "tf_function"])
    cells = {(c.path, c.reference): c.status for c in report.cells}
    assert cells[("jvp", "tf_function")] == "pass"
    assert cells[("vjp", "tf_function")] == "skipped"
    op = gradcheck.check("sin", examples=1, paths=["jvp"], references=["numeric", "tf_function"])
    notes = [c.note for c in op.cells if c.reference == "tf_function"]
    assert notes and "TensorFlow functions only" in notes[0]


def test_float32_only_kernel_is_checked_in_float32() -> None:
    from gradcheck.suites.tf_wrappers import lrn_float32

    report = gradcheck.check(lrn_float32, inputs=["real"], shapes="(1,2,2,4)", examples=2,
                             paths=["vjp"])
    assert not report.findings, [f.message for f in report.findings]


def test_symmetric_tangents_make_cholesky_a_function_of_symmetric_matrices() -> None:
    """tf.linalg.cholesky reads the lower triangle and returns a symmetrized gradient: wrong
    for all n*n entries, right on symmetric matrices."""
    full = gradcheck.check(tf.linalg.cholesky, inputs=["spd"], examples=2, paths=["vjp"])
    sym = gradcheck.check(tf.linalg.cholesky, inputs=[{"domain": "spd", "tangent": "symmetric"}],
                          examples=2, paths=["vjp"])
    assert any(f.kind == "mismatch" for f in full.findings)
    assert not sym.findings, [f.message for f in sym.findings]


def test_full_mode_compares_jacobians_on_the_tangent_space() -> None:
    spd = {"domain": "spd", "tangent": "symmetric"}
    on_all = gradcheck.check(tf.linalg.cholesky, inputs=["spd"], shapes="(3,3)", examples=1,
                             mode="full", paths=["vjp", "jvp"])
    on_sym = gradcheck.check(tf.linalg.cholesky, inputs=[spd], shapes="(3,3)", examples=1,
                             mode="full", paths=["vjp", "jvp"])
    assert {f.path for f in on_all.findings if f.kind == "mismatch"} == {"vjp", "jvp"}
    assert not on_sym.findings, [f.message for f in on_sym.findings]


def test_gather_takes_indices_into_the_axis_it_gathers() -> None:
    report = gradcheck.check(tf.gather, inputs=["real", {"domain": "indices", "axis": "axis"}],
                             params={"axis": [0, 1]}, shapes="(3,4),(5)", examples=2,
                             paths=["vjp", "jvp"])
    assert not report.findings, [f.message for f in report.findings]


def test_readme_counts_categories_and_forward_modes() -> None:
    readme = _readme_tf()

    def f(kind, path, reference="numeric", side="", **details):
        return {"kind": kind, "path": path, "reference": reference, "attributed_to": side,
                "details": details, "max_abs_err": 2.0, "tolerance": 1.0}
    data = {"config": {"seed": 0, "examples": 3, "mode": "fast"}, "reports": [
        {"op": "tf.math.sin", "findings": [f("dependence_leak", "double_vjp", "dummy",
                                             dependence="control")]},
        {"op": "tf.nn.elu, x < 0", "findings": [f("mismatch", "jvp", side="tf_function")]},
        {"op": "tf.nn.elu, x > 0", "findings": [f("silently_zero", "jvp")]},
        {"op": "sin", "findings": [f("mismatch", "vjp")]},  # an [[op]] row: not counted
    ]}
    text = readme.render(data, 12.0, "2.21.0")
    assert "2 APIs in 3 rows" in text and "12 s wall time" in text
    assert "| dependence leak, control | 1 |" in text
    assert "| wrong JVP, ForwardAccumulator in tf.function | 1 |" in text
    assert "| silently zero | 1 |" in text
    assert "ForwardAccumulator in tf.function: `mismatch` 1" in text
    assert "`tf.nn.elu, x < 0` (ratio 2)" in text
