"""A given array beside drawn inputs fixes the dimensions its ``shapes=`` group names."""

import numpy as np
import pytest

import gradcheck as gc
import gradcheck.numpy as gnp
from gradcheck.checker.specs import bind_given
from gradcheck.domains import Fixed, domain_named


def matmul(a, b):
    return gnp.matmul(a, b)


def test_a_name_bound_by_a_given_array_sizes_the_drawn_input():
    x = np.random.default_rng(0).standard_normal((3, 4))
    seen = set()

    def f(a, b):
        seen.add(np.shape(b)[0])
        return gnp.matmul(a, b)

    report = gc.check(f, inputs=[x, "real"], shapes="(m,n),(n,k)", examples=3, seed=1)
    assert report.passed, [f.message for f in report.findings]
    assert seen == {4}


def test_the_given_batch_is_the_drawn_inputs_batch():
    x = np.ones((2, 3))
    assert bind_given("(...),(...)", [Fixed(x), domain_named("real", "t")]) == "(2,3),(2,3)"
    assert bind_given("(...,n),(n,k)", [Fixed(x), domain_named("real", "t")]) == "(2,3),(3,k)"


@pytest.mark.parametrize("shapes, why", [
    ("(m,n,p),(n,k)", "input 0 is the given float64 array of shape (3, 4), which does not "
                      "fit its group (m,n,p): it has 2 dimension(s), the group 3"),
    ("(...,m,5),(n,k)", "its dimension '5' is 4"),
    ("(m,n),(n,k)", None),
])
def test_a_given_array_that_does_not_fit_its_group_is_named(shapes, why):
    x, y = np.ones((3, 4)), np.ones((5, 2))
    if why is None:  # two given arrays that disagree on n
        with pytest.raises(ValueError, match=r"input 1 is the given float64 array of shape "
                                             r"\(5, 2\).*'n' is 5, but 4 in an earlier"):
            gc.check(matmul, inputs=[x, y], shapes=shapes)
        return
    with pytest.raises(ValueError, match=r"shapes: .*" + why.replace("(", r"\(")
                       .replace(")", r"\)").replace(".", r"\.")):
        gc.check(matmul, inputs=[x, "real"], shapes=shapes)


def test_given_batches_that_do_not_broadcast_are_named():
    with pytest.raises(ValueError, match=r"batch dimensions \(2,\), \(3,\) do not broadcast"):
        gc.check(lambda a, b: a * b, inputs=[np.ones(2), np.ones(3)], shapes="(...),(...)")
