"""Ops of the shape, indexing, linalg, nn, conv and loss families declare their equivalents.

Each op carries its equivalents (and sign gauges) in its own declaration; a formula stands
only where the framework has no API for the op, and says why.  The rows below are the data:
adding a formula or losing an equivalent shows up here.
"""

from __future__ import annotations

import numpy as np
import pytest

import gradcheck
from gradcheck.ops.refs import formula_reason

#: Ops whose TensorFlow equivalent is declared with the op.
TENSORFLOW = (
    "reshape", "transpose", "moveaxis", "squeeze", "expand_dims", "broadcast_to",
    "concatenate", "stack", "flip", "roll", "tile", "repeat", "pad", "scatter_index",
    "getitem", "take", "scatter_add", "triu", "tril", "diagonal", "trace", "einsum",
    "matmul", "dot", "outer", "linalg.inv", "linalg.det", "linalg.slogdet", "linalg.solve",
    "linalg.solve_triangular", "linalg.pinv", "linalg.cholesky", "linalg.cholesky_grad",
    "linalg.eigh", "linalg.expm", "linalg.expm_frechet", "linalg.qr", "linalg.svd",
    "linalg.svdvals", "nn.softmax", "nn.log_softmax", "nn.softmax_grad",
    "nn.log_softmax_grad", "nn.layer_norm", "nn.batch_norm", "nn.embedding", "nn.dropout",
    "nn.conv2d", "nn.conv2d_backprop_input", "nn.conv2d_backprop_filter", "nn.conv1d",
    "nn.avg_pool2d", "nn.avg_pool2d_grad", "nn.max_pool2d", "nn.max_pool2d_grad",
    "nn.max_pool2d_grad_grad", "nn.softmax_cross_entropy_with_logits",
    "nn.sparse_softmax_cross_entropy_with_logits", "nn.sigmoid_cross_entropy_with_logits",
    "nn.l2_loss", "nn.mean_squared_error", "nn.huber",
)
#: The TensorFlow entries written as formulas: TensorFlow has no API for these ops.
TENSORFLOW_FORMULAS = ("nn.softmax_grad", "nn.log_softmax_grad", "nn.dropout",
                       "linalg.expm_frechet", "nn.mean_squared_error", "nn.huber")
#: Ops with no autograd equivalent (TensorFlow's own layouts and gradient ops, expm, qr).
NOT_AUTOGRAD = ("linalg.cholesky_grad", "linalg.expm", "linalg.expm_frechet", "linalg.qr",
                "nn.conv2d", "nn.conv2d_backprop_input", "nn.conv2d_backprop_filter",
                "nn.conv1d", "nn.avg_pool2d", "nn.avg_pool2d_grad", "nn.max_pool2d",
                "nn.max_pool2d_grad", "nn.max_pool2d_grad_grad")
AUTOGRAD = tuple(name for name in TENSORFLOW if name not in NOT_AUTOGRAD)
GAUGES = {"linalg.eigh": ((1, -1),), "linalg.svd": ((0, -1), (2, -2)),
          "linalg.qr": ((0, -1), (1, -2))}


def _declared(name: str) -> dict:
    return gradcheck.default_registry.get(name).meta.get("equivalents") or {}


@pytest.mark.parametrize("name", TENSORFLOW)
def test_tensorflow_equivalent_is_declared(name: str) -> None:
    entry = _declared(name).get("tensorflow")
    assert entry is not None
    reason = formula_reason(entry)
    assert (reason is not None) == (name in TENSORFLOW_FORMULAS), (name, reason)
    assert reason is None or reason.strip()


@pytest.mark.parametrize("name", AUTOGRAD)
def test_autograd_equivalent_is_declared(name: str) -> None:
    declared = _declared(name)
    assert "numpy" in declared or "autograd" in declared


@pytest.mark.parametrize("name", NOT_AUTOGRAD)
def test_no_numpy_equivalent(name: str) -> None:
    assert not {"numpy", "autograd"} & set(_declared(name))


@pytest.mark.parametrize(("name", "gauge"), GAUGES.items())
def test_sign_gauge_is_op_metadata(name: str, gauge: tuple) -> None:
    assert tuple(gradcheck.default_registry.get(name).meta["gauge"]) == gauge


@pytest.mark.autograd
def test_a_declared_no_equivalent_reaches_the_oracles_as_theirs() -> None:
    # ops.refs.NoEquivalent (the ops layer's) arrives as the oracles' NoEquivalent, which is
    # an Unsupported, so the checker reports "cannot compute" instead of an error
    from gradcheck.oracles import NoEquivalent, Unsupported, equivalence, get_oracle

    entry = equivalence("autograd", "tile")
    assert entry is not None
    anp = get_oracle("autograd").load().numpy  # type: ignore[attr-defined]
    with pytest.raises(NoEquivalent, match="empty tiles") as caught:
        entry.fn(anp, np.zeros((0, 3)), reps=2)
    assert isinstance(caught.value, Unsupported)
