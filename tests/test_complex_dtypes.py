"""dtypes= naming complex precisions draws an op's declared complex_inputs (it used to check
such an op on real values only, so a wrong complex rule passed)."""

import numpy as np

import gradcheck as gc
import gradcheck.numpy as gnp


def _exp(vjp):
    return gc.define_op("cexp_dtypes", lambda z: np.exp(z), vjp=vjp,
                        jvp=lambda ts, out, z: ts[0] * out, complex_inputs=("complex",),
                        register=False)


def test_complex_dtypes_draw_the_ops_complex_inputs():
    # torch's convention (a conjugate) in a rule of gradcheck's: wrong for complex inputs
    wrong = _exp(lambda g, out, z: g * gnp.conj(out))
    report = gc.check(wrong, dtypes=["complex128", "complex64"], examples=2)
    assert not report.passed
    assert "vjp" in {f.path for f in report.failures}
    right = _exp(lambda g, out, z: g * out)
    assert gc.check(right, dtypes=["complex128"], examples=2).passed


def test_the_forward_sees_complex_values_in_each_asked_precision():
    seen = set()

    def forward(z):
        seen.add(np.asarray(z).dtype.name)
        return np.exp(z)

    op = gc.define_op("cexp_seen", forward, vjp=lambda g, out, z: g * out,
                      jvp=lambda ts, out, z: ts[0] * out, complex_inputs=("complex",),
                      register=False)
    assert gc.check(op, dtypes=["complex128", "complex64"], examples=2).passed
    assert seen == {"complex128", "complex64"}
    assert gc.check("exp", dtypes=[np.complex128], examples=2).passed


def test_complex_inputs_given_keep_their_domains():
    report = gc.check(lambda z: gnp.exp(z) * gnp.conj(z), inputs=["complex"],
                      dtypes=["complex64"], examples=2)
    assert report.passed and report.dtypes == ["float32"]
