"""TensorFlow functions as users write them: a ``tf.function`` (TensorFlow itself cannot
take reverse over forward mode through it: unsupported, in its words, never an error that
fails a correct function), and nested tuple outputs (flattened leaf by leaf, never stacked
by ``tf.convert_to_tensor``)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from gradcheck.checker.api import check
from gradcheck.oracles import get_oracle

pytestmark = pytest.mark.tensorflow


@pytest.mark.parametrize("autograph", [True, False])
def test_a_correct_tf_function_passes_with_reverse_over_forward_unsupported(
        autograph: bool) -> None:
    tf = get_oracle("tensorflow").load()

    @tf.function(autograph=autograph)
    def f(x: Any) -> Any:
        return tf.sin(x) * x

    report = check(f, inputs=["real"], seed=0, examples=2)
    assert report.passed, [f.message for f in report.findings]
    (finding,) = [f for f in report.findings if f.kind != "dependence_leak"]  # (sin's)
    assert (finding.kind, finding.path) == ("unsupported", "hvp_rev_fwd")
    assert "returned too few gradients" in finding.message


def test_other_internal_errors_stay_errors() -> None:
    tf = get_oracle("tensorflow").load()

    def f(x: Any) -> Any:
        raise tf.errors.InternalError(None, None, "something else broke")

    report = check(f, inputs=[np.array([0.5, 1.0])], seed=0, framework="tensorflow")
    assert not report.passed
    assert all(f.kind != "unsupported" for f in report.findings)


@pytest.mark.parametrize("seed", [0, 1])
def test_nested_tuple_outputs_are_flattened_not_stacked(seed: int) -> None:
    tf = get_oracle("tensorflow").load()

    def f(x: Any) -> Any:  # inner outputs of different shapes could not even be stacked
        return tf.sin(x), (tf.cos(x), tf.reduce_sum(x * x))

    report = check(f, inputs=["real"], seed=seed, examples=2, framework="tensorflow")
    assert report.passed, [f.message for f in report.findings]
    # only the warning TensorFlow's graph double-VJP earns with sin and cos (it reads the
    # dummy cotangent); a stacked inner tuple was a mismatch or an error
    assert {f.kind for f in report.findings} <= {"dependence_leak"}
