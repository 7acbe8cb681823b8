"""Which framework a callable is written in (:func:`gradcheck.oracles.targets.framework_of`).

The rows use stand-in classes whose module is a framework's, so detection is tested without
importing any framework (it must not import one); the torch and JAX rows at the end run the
real thing.
"""

from __future__ import annotations

import functools
import subprocess
import sys
from typing import Any

import numpy as np
import pytest

import gradcheck.numpy as gnp
from gradcheck.checker.api import check
from gradcheck.oracles.targets import (
    framework_of,
    framework_target,
    input_framework,
    is_framework_function,
)


def _stand_in(module: str, name: str) -> type:
    """A class that claims to live in ``module`` (a torch.Tensor, an nn.Module, ...)."""
    cls = type(name, (), {"__call__": lambda self, x: x})
    cls.__module__ = module
    return cls


Tensor = _stand_in("torch", "Tensor")
Module = _stand_in("torch.nn.modules.module", "Module")
JaxArray = _stand_in("jaxlib._jax", "ArrayImpl")
EagerTensor = _stand_in("tensorflow.python.framework.ops", "EagerTensor")


class UserModule(Module):  # type: ignore[misc,valid-type]
    """A subclassed nn.Module: its own module is the user's, a base class's is torch's."""

    def forward(self, x: Any) -> Any:
        return x


def torch_function(x: Any, scale: float = 1.0) -> Any:
    return x * scale


torch_function.__module__ = "torch.nn.functional"


class Holder:
    def method(self, x: Any) -> Any:
        return torch_function(x)


#: (callable, inputs, the framework it is written in, why)
ROWS = [
    (UserModule(), None, "torch", "an nn.Module subclass's instance, by its bases"),
    (functools.partial(torch_function, scale=0.2), None, "torch", "a partial of a torch "
     "function"),
    (Holder().method, None, "torch", "a bound method whose code calls a torch function"),
    (lambda x: x.sin().sum(-1), [Tensor()], "torch", "tensor methods only, torch inputs"),
    (lambda x: (x**2).sum(), [JaxArray()], "jax", "array methods only, JAX inputs"),
    (lambda x: x * 2, [np.ones(2), EagerTensor()], "tensorflow", "a TensorFlow input beside "
     "a numpy one"),
    (lambda x: x.sin(), ["real"], None, "domains say nothing about a framework"),
    (lambda x: x.sin(), [np.ones(3)], None, "numpy arrays say nothing either"),
    (gnp.sin, [Tensor()], None, "a gradcheck function stays one, whatever it is given"),
    (np.sin, [Tensor()], None, "numpy's function too"),
    (lambda x: gnp.exp(x), [Tensor()], None, "code naming gradcheck.numpy"),
    (UserModule(), [JaxArray()], "torch", "the code's framework wins over the inputs'"),
    ("sin", [Tensor()], None, "an op name is not a function"),
]


@pytest.mark.parametrize(("fn", "inputs", "expected", "why"), ROWS, ids=[r[3] for r in ROWS])
def test_framework_of(fn: Any, inputs: Any, expected: str | None, why: str) -> None:
    assert framework_of(fn, inputs) == expected
    assert is_framework_function(fn, inputs) is (expected is not None)


def test_input_framework_reads_the_class_and_its_bases() -> None:
    parameter = type("Parameter", (Tensor,), {})
    parameter.__module__ = "my_models"
    assert input_framework(parameter()) == "torch"
    assert input_framework(np.ones(2)) is None
    assert input_framework("real") is None


def test_inputs_of_two_frameworks_are_a_clear_error() -> None:
    def f(x: Any, y: Any) -> Any:
        return x + y

    with pytest.raises(TypeError, match=r"the inputs of f mix frameworks \(input 0 is a torch "
                                        r"array, input 1 is a jax array\)"):
        framework_of(f, [Tensor(), JaxArray()])


def test_framework_given_explicitly_makes_any_callable_a_framework_function() -> None:
    assert is_framework_function(lambda x: x, ["real"], framework="torch")
    assert not is_framework_function(int, ["real"], framework="torch")
    with pytest.raises(TypeError, match=r"its code names none and no input is a torch, JAX or "
                                        r"TensorFlow array\); pass framework="):
        framework_target(lambda x: x, ["real"])


def test_detection_imports_no_framework() -> None:
    code = ("import sys, functools\n"
            "from gradcheck.oracles.targets import framework_of\n"
            "T = type('Tensor', (), {}); T.__module__ = 'torch'\n"
            "M = type('Module', (), {'__call__': lambda s, x: x}); M.__module__ = 'torch.nn'\n"
            "assert framework_of(lambda x: x.sin(), [T()]) == 'torch'\n"
            "assert framework_of(type('Net', (M,), {})()) == 'torch'\n"
            "assert framework_of(functools.partial(lambda x: x), [1.0]) is None\n"
            "print(sorted(m for m in ('torch', 'jax', 'tensorflow', 'autograd') "
            "if m in sys.modules))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "[]"


# -- the real frameworks ---------------------------------------------------------------------

@pytest.mark.torch
def test_torch_callables_are_checked_by_torch() -> None:
    from gradcheck.oracles import get_oracle

    torch: Any = get_oracle("torch").load()
    functional: Any = torch.nn.functional

    class Net(torch.nn.Module):  # type: ignore[misc,name-defined]
        def forward(self, x: Any) -> Any:
            return torch.tanh(x) * 2

    for fn in (Net(), functools.partial(functional.leaky_relu, negative_slope=0.2)):
        report = check(fn, inputs=["real"], examples=2)
        assert report.family == "torch" and report.passed, [f.message for f in report.findings]
    assert check(Net(), inputs=["real"], examples=1).op == "Net"
    x = torch.linspace(-1, 1, 4, dtype=torch.float64).reshape(2, 2)
    target = framework_target(lambda x: x.sin().sum(-1), [x], name="methods")
    report = check(target, examples=2)
    assert report.family == "torch" and report.passed, [f.message for f in report.findings]


@pytest.mark.jax
def test_a_lambda_of_jax_array_methods_is_checked_by_jax() -> None:
    from gradcheck.oracles import get_oracle

    jnp: Any = get_oracle("jax").load().numpy
    target = framework_target(lambda x: (x**2).sum(), [jnp.linspace(-1.0, 1.0, 3)],
                              name="square_sum")
    assert target.framework == "jax"
    report = check(target, examples=2)
    assert report.family == "jax" and report.passed, [f.message for f in report.findings]
