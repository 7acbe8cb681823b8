"""gradcheck: verify derivative rules along every path, and find the bugs others miss.

The engine (``GradientTape``, ``ForwardAccumulator``, ``custom_gradient``,
``define_op``) and its numpy namespace ``gradcheck.numpy`` are for writing and
differentiating ops; ``check`` and ``assert_gradients`` verify them.
"""

from typing import TYPE_CHECKING, Any

from gradcheck import nn, numpy, special  # noqa: F401 - the public op namespaces
from gradcheck import ops as _ops  # noqa: F401 - registers the op library
from gradcheck.engine import (
    ForwardAccumulator,
    GradientTape,
    Op,
    Registry,
    RuleError,
    Tensor,
    UnknownOpError,
    custom_gradient,
    default_registry,
    define_op,
    double_vjp,
    grad,
    hvp,
    jacobian,
    jvp,
    tensor,
    vjp,
)

__version__ = "0.1.0"


def _plug_in() -> None:
    """The composition root: the references and target kinds the checker offers, named
    lazily (no framework, and not even the checker, is imported here)."""
    from gradcheck.checker.references import register_reference, register_target_kind

    register_reference("autograd", "gradcheck.oracles.autograd:AutogradReference")
    register_reference("tensorflow", "gradcheck.oracles.tensorflow:TensorFlowReference")
    register_reference("tf_function",
                       "gradcheck.oracles.tensorflow:TensorFlowFunctionReference")
    register_reference("torch", "gradcheck.oracles.torch:TorchReference")
    register_reference("jax", "gradcheck.oracles.jax:JaxReference")
    register_target_kind("gradcheck.oracles.targets:is_framework_function",
                         "gradcheck.oracles.targets:framework_target")


_plug_in()

if TYPE_CHECKING:
    from gradcheck.checker.api import assert_gradients, check
    from gradcheck.checker.report import Finding, Report, Results

__all__ = [
    "Tensor", "tensor", "Op", "RuleError", "define_op", "Registry", "UnknownOpError",
    "default_registry", "GradientTape", "ForwardAccumulator", "custom_gradient",
    "vjp", "jvp", "double_vjp", "grad", "hvp", "jacobian", "numpy", "nn", "special",
    "check", "assert_gradients", "Report", "Finding", "Results",
]


def __getattr__(name: str) -> Any:
    # The checker (and Hypothesis with it) loads on first use, so that importing gradcheck
    # stays light: pytest imports it in every run through the plugin's entry point.
    if name in ("check", "assert_gradients"):
        from gradcheck.checker import api

        return getattr(api, name)
    if name in ("Report", "Finding", "Results"):
        from gradcheck.checker import report

        return getattr(report, name)
    raise AttributeError(f"module 'gradcheck' has no attribute {name!r}")
