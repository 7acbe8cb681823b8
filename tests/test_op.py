"""define_op validation, positional parameters, the registry's lookups and errors."""

import numpy as np
import pytest

import gradcheck as gc
import gradcheck.numpy as gnp


def test_registration_validates_rules():
    with pytest.raises(TypeError, match="needs a vjp rule"):
        gc.define_op("t_novjp", np.sin, None, register=False)
    with pytest.raises(TypeError, match="handles 1 inputs but the op has 2"):
        gc.define_op("t_count", np.add, vjp=(lambda g, o, x, y: g,), register=False, nin=2)
    with pytest.raises(TypeError, match="takes only 1 positional"):
        gc.define_op("t_sig", np.sin, vjp=lambda g: g, register=False)
    with pytest.raises(TypeError, match="forward must be callable"):
        gc.define_op("t_fwd", 3, vjp=lambda g, o, x: g, register=False)


def _sin(**meta):
    return gc.define_op("t_meta", np.sin, vjp=lambda g, o, x: g * gnp.cos(x), register=False,
                        **meta)


@pytest.mark.parametrize(("key", "hint"), [("kink", "kinks"), ("tolerence", "tolerance"),
                                           ("input", "inputs"), ("lineer", "linear")])
def test_unknown_metadata_key_fails_at_definition(key, hint):
    with pytest.raises(ValueError, match=f"op 't_meta': unknown metadata key '{key}'; "
                                         f"did you mean '{hint}'"):
        _sin(**{key: ()})


@pytest.mark.parametrize(("meta", "message"), [
    ({"inputs": (0.0,)}, r"inputs\[0\]: not a Domain, a domain name or a table"),
    ({"shapes": 3}, "shapes= must be a signature"),
    ({"params": {"axis": 0}}, r"params\['axis'\]= must be a list of choices"),
    ({"params": [0, 1]}, "params= must be"),
    ({"kinks": "ints"}, "kinks= must be a tuple of points, one of ties, integers"),
    ({"kinks": ("a",)}, "kinks= must be"),
    ({"tolerance": 2.0}, "tolerance= a gradcheck.domains.Tolerance"),
    ({"grad_op": gc.tensor}, "grad_op= the name"),
    ({"reference": "np.sin"}, "reference= a callable"),
    ({"equivalents": {"pytorch": "sin"}}, "equivalents has unknown namespace 'pytorch'"),
    ({"equivalents": {"numpy": 3}}, r"equivalents\['numpy'\] must be a dotted name"),
    ({"gauge": (0, 1)}, r"gauge= must be a tuple of \(output index, axis\) int pairs"),
    ({"gauge": ((0, 1.0),)}, "gauge= must be"),
])
def test_metadata_values_are_validated(meta, message):
    with pytest.raises(ValueError, match="op 't_meta': .*" + message):
        _sin(**meta)


def test_valid_metadata_is_stored_normalised():
    from gradcheck.domains import REAL, Tolerance

    tol = Tolerance(2.0, "reason")
    op = _sin(inputs=[REAL], shapes="(...)", params={"k": [1, 2]}, kinks=[0.0], tolerance=tol,
              grad_op="cos", reference=np.sin, equivalents={"numpy": "sin"}, gauge=[[1, -1]])
    assert op.meta["inputs"] == (REAL,) and op.meta["kinks"] == (0.0,)
    assert op.meta["gauge"] == ((1, -1),) and op.meta["tolerance"] is tol
    assert op.nin == 1


def test_wrong_cotangent_count_shape_dtype_are_named():
    two = gc.define_op("t_two", np.multiply, vjp=lambda g, o, x, y: (g * y,), register=False,
                       nin=2)
    x, y = gc.tensor(np.ones(2)), gc.tensor(np.ones(2))
    with gc.GradientTape() as t:
        t.watch([x, y])
        z = two(x, y)
    with pytest.raises(gc.RuleError, match="t_two.*returned 1 cotangents for 2 inputs"):
        t.gradient(z, [x, y])
    shp = gc.define_op("t_shape", np.sin, vjp=lambda g, o, x: gnp.sum(g), register=False)
    dty = gc.define_op("t_dtype", np.sin, vjp=lambda g, o, x: g.astype(np.float32),
                       register=False)
    for op, kind in ((shp, "shape"), (dty, "dtype")):
        x = gc.tensor(np.ones(3))
        with gc.GradientTape() as t:
            t.watch(x)
            z = op(x)
        with pytest.raises(gc.RuleError) as info:
            t.gradient(z, x)
        assert info.value.kind == kind and info.value.op == op.name
        assert "input 0" in str(info.value)


def test_numpy_style_positional_parameters():
    x = gc.tensor(np.arange(6.0).reshape(2, 3))
    assert gnp.sum(x, 0).shape == (3,)
    assert gnp.sum(x, 1, keepdims=True).shape == (2, 1)
    assert gnp.reshape(x, (3, 2)).shape == (3, 2)
    assert gnp.transpose(x, (1, 0)).shape == (3, 2)
    # numpy's third positional parameter of sum is dtype
    assert gnp.sum(x, 0, np.float32).dtype == np.float32


def test_plain_arrays_in_plain_arrays_out():
    out = gnp.sin(np.array([0.0, 1.0]))
    assert type(out) is np.ndarray
    assert isinstance(gnp.sin(gc.tensor([0.0])), gc.Tensor)


def test_registry_lookup_patterns_and_errors():
    reg = gc.default_registry
    assert reg.get("tanh").name == "tanh"
    assert {op.name for op in reg.select(["tanh*"])} >= {"tanh", "tanh_grad"}
    assert all(op.family == "binary" for op in reg.select(["binary"]))
    with pytest.raises(gc.UnknownOpError, match="unknown op 'tanhh'.*did you mean.*tanh"):
        reg.get("tanhh")
    own = gc.Registry("mine")
    op = gc.define_op("t_mine", np.sin, vjp=lambda g, o, x: g, registry=own)
    assert own.get("t_mine") is op and "t_mine" not in reg
    with pytest.raises(ValueError, match="already registered"):
        gc.define_op("t_mine", np.cos, vjp=lambda g, o, x: g, registry=own)


def test_tensor_basics():
    t = gc.tensor([[1.0, 2.0], [3.0, 4.0]])
    assert np.asarray(t).shape == (2, 2) and t.numpy().dtype == np.float64
    assert float((t @ t)[0, 1]) == 10.0
    assert float(2.0 ** gc.tensor(3.0)) == 8.0
    assert float((-t)[1, 1]) == -4.0
    np.testing.assert_array_equal(t > 2.0, [[False, False], [True, True]])
    assert t.T.shape == (2, 2) and t.reshape(4).shape == (4,)
    assert float(t.sum()) == 10.0 and t.mean(axis=0).shape == (2,)
    assert "tensor(" in repr(t)
    np.testing.assert_array_equal(np.ones(2) + gc.tensor([1.0, 1.0]), [2.0, 2.0])
