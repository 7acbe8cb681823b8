"""gradcheck.extend: the public module for op authors."""

import doctest

import numpy as np
import pytest

import gradcheck as gc
import gradcheck.extend as ext
import gradcheck.numpy as gnp
from gradcheck.domains import REAL


def test_public_names_exist_and_the_docstring_runs():
    assert {"define_op", "define_linear", "zero_vjp", "zero_jvp", "unbroadcast", "fit",
            "custom_gradient", "api", "formula", "NoEquivalent"} <= set(ext.__all__)
    assert all(hasattr(ext, name) for name in ext.__all__)
    assert ext.custom_gradient is gc.custom_gradient and ext.define_op is gc.define_op
    assert doctest.testmod(ext).failed == 0


def test_zero_rules_give_zeros_of_the_right_shape_and_dtype():
    step = ext.define_op("t_step", lambda x: np.floor(x), ext.zero_vjp, ext.zero_jvp,
                         register=False)
    x = gc.tensor(np.array([0.3, 1.7], dtype=np.float32))
    with gc.GradientTape() as tape:
        tape.watch(x)
        y = step(x)
    g = tape.gradient(y, x)
    assert g.dtype == np.float32 and np.array_equal(g.numpy(), [0.0, 0.0])
    _, t = gc.jvp(step, (x,), (np.ones(2, np.float32),))
    assert np.array_equal(t.numpy(), [0.0, 0.0])


def test_define_linear_derives_the_jvp_and_checks_clean():
    double = ext.define_linear("t_double", lambda x: 2.0 * x,
                               vjp=lambda g, out, x: 2.0 * g, inputs=(REAL,),
                               registry=gc.Registry("extend"))
    assert double.linear and double.has_native_jvp
    _, t = gc.jvp(double, (np.array([1.0, 2.0]),), (np.array([1.0, -1.0]),))
    assert np.array_equal(t.numpy(), [2.0, -2.0])
    assert gc.check(double, seed=0, dtypes=["float64"]).passed
    with pytest.raises(TypeError, match="linear op's JVP is the op itself"):
        ext.define_linear("t_bad", np.negative, vjp=lambda g, out, x: -g,
                          jvp=lambda ts, out, x: -ts[0], register=False)


def test_unbroadcast_and_fit_move_between_shapes():
    g = np.ones((3, 2))
    assert ext.unbroadcast(g, np.zeros(2)).tolist() == [3.0, 3.0]
    assert ext.unbroadcast(g, np.zeros((3, 1))).shape == (3, 1)
    assert ext.unbroadcast(g, g) is g  # nothing to do: the same object back
    assert ext.fit(np.ones(2), np.zeros((3, 2))).shape == (3, 2)
    assert ext.fit(np.ones(2, np.float32), np.zeros(2)).dtype == np.float64


def test_rules_written_with_the_helpers_differentiate_again():
    scale = ext.define_op("t_scale", lambda x, y: x * y,
                          vjp=(lambda g, out, x, y: ext.unbroadcast(g * y, x),
                               lambda g, out, x, y: ext.unbroadcast(g * x, y)),
                          register=False)
    x, y = gc.tensor(np.array([1.0, 2.0])), gc.tensor(3.0)
    with gc.GradientTape() as outer:
        outer.watch(y)
        with gc.GradientTape() as inner:
            inner.watch(x)
            z = gnp.sum(scale(x, y))
        gx = inner.gradient(z, x)
    assert np.array_equal(gx.numpy(), [3.0, 3.0])
    assert float(outer.gradient(gx, y)) == 2.0


def test_equivalent_helpers():
    sin = ext.api("sin")
    assert sin(np, np.array(0.0)) == 0.0
    cube = ext.formula(lambda ns, x: x ** 3, "no cube in the API")
    assert cube.formula == "no cube in the API"
    assert issubclass(ext.NoEquivalent, Exception)
    op = ext.define_op("t_eq", np.sin, vjp=lambda g, out, x: g * gnp.cos(x), register=False,
                       equivalents={"numpy": "sin", "tensorflow": sin})
    assert op.meta["equivalents"]["numpy"] == "sin"


def test_define_op_takes_domains_by_name_or_table_like_check():
    reg = gc.Registry()
    op = gc.define_op("t.scaled_log", lambda x, y: np.log(x) * y,
                      vjp=lambda g, out, x, y: (ext.unbroadcast(g * y / x, x),
                                               ext.unbroadcast(g * gnp.log(x), y)),
                      inputs=({"domain": "interval", "low": 0.5, "high": 2.0}, "real"),
                      registry=reg)
    assert [d.describe() for d in op.meta["inputs"]] == ["(0.5, 2)", "real"]
    report = gc.check(op, examples=2, references=["numeric"], paths=["vjp"])
    assert report.passed and report.cells
    with pytest.raises(ValueError, match=r"op 't.bad': inputs\[0\]: unknown domain 'reall'; "
                                         r"did you mean 'real'"):
        gc.define_op("t.bad", np.sin, vjp=None, inputs=("reall",), registry=reg)
