"""Equivalents declared with the ops of elementwise, special, activations, binary, reduce and
cumulative (``equivalents=``, see gradcheck/ops/refs.py).

Which ops declare which framework is data: an op without an entry is a row of
:data:`WITHOUT` with the reason.  The entries' forward values are checked for every op by
tests/test_oracle_tables.py; here, the choices made in the entries themselves.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

import numpy as np
import pytest

import gradcheck
from gradcheck.engine.op import Op
from gradcheck.ops import activations, binary, cumulative, elementwise, reduce, special
from gradcheck.ops.refs import formula_reason
from gradcheck.oracles import NoEquivalent, equivalence, get_oracle

MODULES: list[ModuleType] = [elementwise, special, activations, binary, reduce, cumulative]
OPS = sorted({value.name for module in MODULES for value in vars(module).values()
              if isinstance(value, Op) and value.name in gradcheck.default_registry})

#: (namespace, op) -> why the op declares no equivalent there.
WITHOUT = {
    ("numpy", "fmod"): "autograd has no fmod rule (the table had no entry)",
    ("numpy", "cumprod"): "autograd has no cumprod rule (the table had no entry)",
    ("numpy", "cumlogsumexp"): "numpy has no cumulative logsumexp function",
    ("numpy", "special.spherical_jn"): "autograd.scipy.special has no spherical_jn",
    ("tensorflow", "special.spherical_jn"): "TensorFlow has spherical Bessel functions of "
                                            "orders 0 and 1 only",
    ("numpy", "linear_recurrence"): "the scan under the cumulative rules: no framework has it",
    ("tensorflow", "linear_recurrence"): "the scan under the cumulative rules: no framework "
                                         "has it",
}

#: Ops whose TensorFlow equivalent is a formula, because TensorFlow has no API for them.
TENSORFLOW_FORMULAS = {"nn.celu", "nn.mish"}


def _declared(name: str) -> dict[str, Any]:
    return dict(gradcheck.default_registry.get(name).meta.get("equivalents") or {})


@pytest.mark.parametrize("namespace", ["numpy", "tensorflow"])
def test_every_op_declares_its_equivalent_or_says_why_not(namespace: str) -> None:
    missing = [name for name in OPS if namespace not in _declared(name)
               and (namespace, name) not in WITHOUT]
    assert not missing, f"ops without a {namespace} equivalent or a reason: {missing}"
    stale = [name for ns, name in WITHOUT if ns == namespace and namespace in _declared(name)]
    assert not stale, f"ops listed in WITHOUT that declare {namespace}: {stale}"


def test_tensorflow_entries_call_the_api_except_where_tensorflow_has_none() -> None:
    formulas = {name for name in OPS
                if "tensorflow" in _declared(name)
                and formula_reason(_declared(name)["tensorflow"]) is not None}
    assert formulas == TENSORFLOW_FORMULAS


def test_the_declared_entry_is_the_one_looked_up() -> None:
    for name in OPS:
        for reference in ("tensorflow", "autograd"):
            declared = _declared(name)
            if reference in declared or (reference == "autograd" and "numpy" in declared):
                assert equivalence(reference, name) is not None, (reference, name)


def _tensorflow() -> Any:
    return get_oracle("tensorflow").load()


def _tf_value(name: str, *args: np.ndarray, **params: Any) -> np.ndarray:
    tf = _tensorflow()
    equiv = equivalence("tensorflow", name)
    assert equiv is not None
    return np.asarray(equiv.fn(tf, *(tf.constant(a) for a in args), **params))


@pytest.mark.tensorflow
@pytest.mark.parametrize("name", ["nn.leaky_relu", "nn.leaky_relu_grad"])
def test_leaky_relu_needs_an_alpha_tensorflow_keeps_exactly(name: str) -> None:
    # LeakyRelu's alpha is a float32 attribute: 0.2 would become 0.2000000030
    args = [np.array([-1.5, 2.0])] * (2 if name.endswith("_grad") else 1)
    with pytest.raises(NoEquivalent, match="float32"):
        _tf_value(name, *args, alpha=0.2)
    op = gradcheck.default_registry.get(name)
    np.testing.assert_allclose(_tf_value(name, *args, alpha=0.25),
                               op.forward(*args, alpha=0.25), rtol=1e-15)


@pytest.mark.tensorflow
def test_elu_grad_has_tensorflows_alpha_only() -> None:
    with pytest.raises(NoEquivalent, match="alpha = 1"):
        _tf_value("nn.elu_grad", np.ones(2), -np.ones(2) / 2, alpha=0.5)


@pytest.mark.tensorflow
@pytest.mark.parametrize("name", ["tanh_grad", "sqrt_grad", "nn.relu_grad", "nn.selu_grad"])
def test_raw_gradient_ops_get_broadcast_inputs(name: str) -> None:
    rng = np.random.default_rng(0)
    a, b = rng.uniform(0.1, 0.9, (3,)), rng.standard_normal((2, 3))
    op = gradcheck.default_registry.get(name)
    np.testing.assert_allclose(_tf_value(name, a, b), op.forward(a, b), rtol=1e-14)


@pytest.mark.autograd
def test_logsumexp_of_a_scalar_is_a_scalar_under_autograd() -> None:
    anp = get_oracle("autograd").load().numpy
    equiv = equivalence("autograd", "special.logsumexp")
    assert equiv is not None
    out = equiv.fn(anp, np.array(0.7))
    assert np.shape(out) == () and float(out) == pytest.approx(0.7)
