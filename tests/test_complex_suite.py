"""The complex suite: every op declaring complex_inputs= has a row checking it on complex
values, under its own name, against the op's framework equivalents."""

import numpy as np
import pytest

import gradcheck as gc
from gradcheck.cli.suites import load_suite


def test_every_complex_op_has_a_row():
    suite = load_suite("complex")
    complex_ops = {op.name for op in gc.default_registry if op.meta.get("complex_inputs")}
    rows = {row.name.removesuffix(", complex") for row in suite.functions}
    assert rows == complex_ops


@pytest.mark.tensorflow
def test_a_renamed_op_keeps_its_equivalents_and_tensorflows_complex_det_is_wrong():
    det = gc.default_registry.get("linalg.det")
    report = gc.check(det, name="linalg.det, complex", inputs=["complex_well_conditioned"],
                      references=["tensorflow"], examples=2, dtypes=["float64"])
    wrong = {f.path for f in report.failures if f.attributed_to == "tensorflow"}
    assert "vjp" in wrong
    assert not [f for f in report.failures if not f.attributed_to]  # gradcheck's own is right


@pytest.mark.tensorflow
def test_tensorflows_complex_det_gradient_misses_a_conjugate():
    # the finding above, in TensorFlow alone: d det / dz of a 1x1 matrix is 1
    import tensorflow as tf

    z = tf.constant(np.array([[1.5 - 2.0j]]))
    with tf.GradientTape() as tape:
        tape.watch(z)
        d = tf.linalg.det(z)
    grad, value = tape.gradient(d, z).numpy()[0, 0], z.numpy()[0, 0]
    assert not np.isclose(grad, 1.0) and np.isclose(grad, value / np.conj(value))


@pytest.mark.tensorflow
@pytest.mark.parametrize("name, domain", [("linalg.eigh", "hermitian"),
                                          ("linalg.slogdet", "complex_well_conditioned")])
def test_the_equivalents_compute_the_ops_complex_forward(name, domain):
    # eigh: the Hermitian part and the op's phase gauge; slogdet: TensorFlow's log|det| real
    report = gc.check(name, inputs=[domain], references=["autograd", "tensorflow"],
                      examples=2, dtypes=["float64"], paths=["vjp"])
    assert not [f for f in report.findings if f.path == "forward"]
