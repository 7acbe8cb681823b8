"""Input specs: inputs (arrays, domains, domain names), params, wrt, outputs, shapes."""

from __future__ import annotations

import numpy as np
import pytest

import gradcheck as gc
import gradcheck.numpy as gnp
from gradcheck.engine import Registry, define_op
from gradcheck.extend import unbroadcast

X = np.random.default_rng(0).standard_normal((3, 4))


def test_domain_names_draw_each_input() -> None:
    from gradcheck.engine.tensor import value_of

    seen: list[float] = []

    def f(x, y):  # type: ignore[no-untyped-def]
        seen.append(float(np.min(value_of(y), initial=np.inf)))
        return gnp.sum(x * gnp.log(y))

    report = gc.check(f, inputs=["real", "positive"], seed=0, dtypes=["float64"])
    assert report.passed and report.stats["examples"]["float64"] == 9
    assert seen and all(y > 0 for y in seen)


def test_an_unknown_domain_name_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match=r"input 1: unknown domain 'postive'; did you mean "
                                         r"'positive'\?"):
        gc.check(lambda x, y: x * y, inputs=["real", "postive"])


def test_fixed_params_and_choices_to_explore() -> None:
    fixed = gc.check("sum", inputs=[X], params={"axis": 1}, seed=0)
    assert fixed.passed and fixed.stats["examples"]["float64"] == 9
    explored: set[int] = set()

    def summed(x, axis):  # type: ignore[no-untyped-def]
        explored.add(axis)
        return gnp.sum(x, axis=axis)

    report = gc.check(summed, inputs=["real"], shapes="(3,4)", params={"axis": [0, 1]}, seed=0)
    assert report.passed and explored == {0, 1}


def test_wrt_holds_the_other_inputs_fixed() -> None:
    calls: list[int] = []

    def f(a, b):  # type: ignore[no-untyped-def]
        calls.append(isinstance(a, gc.Tensor))
        return a * b

    report = gc.check(f, inputs=[X, "real"], wrt=[1], seed=0, paths=["vjp"])
    assert report.passed and not any(calls)  # input 0 is never a traced value
    with pytest.raises(ValueError, match="wrt: position 3 is out of range"):
        gc.check(f, inputs=[X, "real"], wrt=[3])
    with pytest.raises(ValueError, match=r"wrt: input 1 \(the given int64 array of shape "
                                         r"\(2,\)\) is not differentiable"):
        gc.check(lambda x, i: x[i], inputs=[X[0], np.array([0, 2])], wrt=[1])


def test_outputs_select_what_is_checked() -> None:
    local = Registry()
    # output 1's VJP is wrong, output 0's is right
    op = define_op("two", lambda x: (np.sin(x), np.cos(x)),
                   vjp=lambda g, out, x: g[0] * gnp.cos(x) + g[1] * gnp.sin(x),
                   nout=2, registry=local)
    assert not gc.check(op, seed=0, paths=["vjp"], dtypes=["float64"]).passed
    assert gc.check(op, outputs=[0], seed=0, paths=["vjp"], dtypes=["float64"]).passed
    eigh = gc.check("linalg.eigh", inputs=["distinct_eig"], outputs=[0], seed=0,
                    dtypes=["float64"], examples=3)
    assert eigh.passed  # keeps eigh's declared (..., n, n) shapes


def test_a_two_input_op_needs_no_shapes() -> None:
    local = Registry()
    op = define_op("mul", lambda a, b: a * b,
                   vjp=lambda g, out, a, b: (unbroadcast(g * b, a), unbroadcast(g * a, b)),
                   registry=local)
    report = gc.check(op, seed=0)
    assert report.passed, [f.message for f in report.failures]
    assert report.stats["examples"]["float64"] == 9


def test_drawn_inputs_see_fixed_params() -> None:
    """Segment ids drawn for a *fixed* num_segments (the domain reads the param by name)."""
    seen: list[tuple[int, int]] = []

    def segment_sum(x, ids, num_segments):
        seen.append((int(np.max(ids, initial=0)), num_segments))
        return gnp.sum(x) * 0.0 + gnp.sum(x * (ids < num_segments))

    report = gc.check(segment_sum, inputs=["real", {"domain": "unsorted_segment_ids",
                                                    "num_segments": "num_segments"}],
                      params={"num_segments": 2}, shapes="(n),(n)", examples=3,
                      references=["numeric"], paths=["vjp"])
    assert report.passed and report.cells
    assert seen and all(top < k == 2 for top, k in seen)
    with pytest.raises(ValueError, match="num_segments names the param 'segments', which is "
                                         "not among the params"):
        gc.check(segment_sum, inputs=["real", {"domain": "unsorted_segment_ids",
                                               "num_segments": "segments"}],
                 params={"num_segments": 2}, shapes="(n),(n)")
