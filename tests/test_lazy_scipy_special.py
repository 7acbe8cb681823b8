"""scipy.special is imported when a special function first runs, not by ``import gradcheck``
or the CLI (it was a third of their import time), and the ops built on it behave as before."""

from __future__ import annotations

import copy
import pickle
import subprocess
import sys

import numpy as np
import scipy.special

import gradcheck.nn as gnn
import gradcheck.special as gsp
from gradcheck.engine.tensor import value_of
from gradcheck.ops.lazy import LazyModule, special


def _imported_after(code: str) -> list[str]:
    probe = (f"{code}\nimport sys\n"
             "print(' '.join(m for m in ('scipy.special', 'torch', 'jax', 'tensorflow') "
             "if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          check=True)
    return done.stdout.split()


def test_import_gradcheck_and_its_cli_leave_scipy_special_unimported() -> None:
    assert _imported_after("import gradcheck, gradcheck.cli, gradcheck.numpy") == []


def test_a_special_function_imports_it_when_it_runs() -> None:
    code = "import numpy as np, gradcheck.special as gsp\ngsp.lgamma(np.array([2.5]))"
    assert _imported_after(code) == ["scipy.special"]


def test_the_lazy_module_hands_out_scipy_specials_own_functions() -> None:
    assert special.xlogy is scipy.special.xlogy
    assert "xlogy" in vars(special)  # kept: the next lookup does not come back here
    fresh = LazyModule("scipy.special")
    assert fresh.gammaln is scipy.special.gammaln
    assert repr(fresh) == "<lazily imported module 'scipy.special'>"
    # dunder probes (copy, pickle) are not forwarded to the module
    assert not hasattr(fresh, "__deepcopy__")
    copy.deepcopy(fresh)
    pickle.loads(pickle.dumps(fresh))


def test_ops_on_scipy_special_give_its_values() -> None:
    x, y = np.array([0.0, 0.5, 2.0]), np.array([0.3, 1.5, 4.0])
    np.testing.assert_array_equal(value_of(gsp.xlogy(x, y)), scipy.special.xlogy(x, y))
    np.testing.assert_array_equal(value_of(gsp.lgamma(y)), scipy.special.gammaln(y))
    np.testing.assert_array_equal(value_of(gnn.sigmoid(x)), scipy.special.expit(x))
