"""An op refuses, before computing anything, a keyword its forward or its rules cannot take,
with an error naming the op and the keyword (not an internal function or a rule's crash)."""

from __future__ import annotations

import numpy as np
import pytest

import gradcheck as gc
import gradcheck.numpy as gnp
import gradcheck.special as gsp
from gradcheck.engine.op import define_op

X = np.array([1.0, -2.0, 3.0])
MASK = np.array([True, False, True])
UFUNC_KEYWORDS = [{"dtype": np.float32}, {"casting": "same_kind"}, {"where": MASK},
                  {"order": "C"}]


@pytest.mark.parametrize("op", [gnp.add, gnp.multiply, gnp.power, gnp.maximum, gnp.arctan2])
@pytest.mark.parametrize("kw", UFUNC_KEYWORDS, ids=lambda kw: next(iter(kw)))
def test_binary_ops_refuse_ufunc_keywords(op, kw):
    name = next(iter(kw))
    calls = [lambda: op(gc.tensor(X), 2.0, **kw), lambda: op(X, 2.0, **kw),
             lambda: gc.grad(lambda v: gnp.sum(op(v, 2.0, **kw)))(X),
             lambda: gc.jvp(lambda v: op(v, 2.0, **kw), [X], [np.ones(3)])]
    for call in calls:
        with pytest.raises(TypeError, match=f"op '{op.name}': keyword argument '{name}' is "
                                             "not supported"):
            call()


def test_binary_op_refuses_an_out_array():
    with pytest.raises(TypeError, match="op 'add': out= is not supported"):
        gnp.add(gc.tensor(X), 1.0, out=np.zeros(3))


@pytest.mark.parametrize("call, op, keyword", [
    (lambda t: gnp.sin(t, dtype=np.float32), "sin", "dtype"),
    (lambda t: gnp.reshape(t, (3, 2), order="F"), "reshape", "order"),
    (lambda t: gnp.var(t, correction=1), "var", "correction"),
    (lambda t: gnp.clip(t, min=0.0, max=2.0), "clip", "min"),
    (lambda t: gnp.trace(t, dtype=np.float32), "trace", "dtype"),
    (lambda t: gnp.pad(t, 1, mode="reflect", reflect_type="odd"), "pad", "reflect_type"),
    (lambda t: gsp.logsumexp(t, b=np.ones((2, 3))), "logsumexp", "b"),
    (lambda t: gnp.matmul(t, t.T, dtype=np.float32), "matmul", "dtype"),
])
def test_unsupported_keyword_names_the_op(call, op, keyword):
    t = gc.tensor(np.arange(1.0, 7.0).reshape(2, 3))
    with pytest.raises(TypeError, match=rf"\b{op}\(\) got an unexpected keyword argument "
                                        rf"'{keyword}'") as info:
        call(t)
    assert "lambda" not in str(info.value) and "_forward" not in str(info.value)


def test_keyword_a_rule_cannot_take_is_refused_before_the_forward():
    ran = []

    def forward(x, scale=1.0, shift=0.0):
        ran.append(1)
        return x * scale + shift

    op = define_op("kw_scale", forward, vjp=lambda g, out, x, scale=1.0: g * scale,
                   jvp=lambda ts, out, x, scale=1.0: ts[0] * scale, register=False)
    assert float(gc.grad(lambda v: op(v, scale=3.0))(2.0)) == 3.0
    with pytest.raises(TypeError, match="op 'kw_scale': keyword argument 'shift' is not "
                                        "supported; supported: scale"):
        op(gc.tensor(2.0), shift=1.0)
    assert len(ran) == 1


def test_forward_keeps_its_signature_and_the_rules_their_keywords():
    # the checker reads an op's parameters from its forward's signature
    assert gnp.var.param_names[:2] == ("axis", "dtype")
    assert float(gc.grad(lambda v: gnp.sum(gnp.var(v, ddof=1)))(X)[0]) == pytest.approx(
        2 * (X[0] - X.mean()) / 2)


def test_forward_and_rules_taking_any_keyword_take_them_all():
    op = define_op("kw_any", lambda x, **kw: x * kw.get("scale", 1.0),
                   vjp=lambda g, out, x, **kw: g * kw.get("scale", 1.0),
                   jvp=lambda ts, out, x, **kw: ts[0] * kw.get("scale", 1.0), register=False)
    assert float(gc.grad(lambda v: op(v, scale=3.0))(2.0)) == 3.0
