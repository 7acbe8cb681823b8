"""The convolution and pooling drawers meet the strata's shape forms (``FORMS``).

Before, their drawers ignored the form and drew spatial sizes of 1 to 5 only, so a rule
right only on spatial axes of up to 4 entries (a kernel loop unrolled 4 wide) was missed at
some seeds (planted below, seeds 0-7: conv1d at 2, conv2d_backprop_input at 3; conv2d and
avg_pool2d were found at all 8, 5 being on the list).  They now take ``form=``: a long
spatial axis (batch 1, one or two channels), a single-channel image with one spatial axis,
batch and channels of 2 or more; with no form they draw as before.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
import pytest

import gradcheck as gc
import gradcheck.nn as gnn
from gradcheck.checker.api import _stratum_seed
from gradcheck.checker.explore import draw_one
from gradcheck.checker.sampling import FORMS, LONG, Stratum, examples, takes_form
from gradcheck.ops import conv
from gradcheck.ops.rules import shape_of, unbroadcast

SEEDS = range(8)
#: The planted rules are right up to this many entries on a spatial axis.
WIDEST = 4


def _long(x: Any, axes: tuple[int, ...] = (1, 2)) -> float:
    """A kernel loop unrolled 4 wide: wrong when a spatial axis has more than 4 entries."""
    return 1.01 if any(np.shape(x)[a] > WIDEST for a in axes) else 1.0


def _planted(name: str, like: gc.Op, forward: Any, vjp: Any, jvp: Any) -> gc.Op:
    """An op declared as the registry's ``like`` (its drawers), with the rules given."""
    return gc.define_op(name, forward, vjp=vjp, jvp=jvp, family="nn", inputs=like.meta["inputs"],
                        shapes=like.meta["shapes"], params=like.meta["params"], register=False)


PLANTED = {
    "conv2d": _planted(
        "conv2d_long", gnn.conv2d, conv._conv2d,
        vjp=(lambda g, out, x, f, **p: conv._input_ct(f, g, x, p) * _long(x),
             lambda g, out, x, f, **p: conv._filter_ct(x, g, f, p)),
        jvp=(lambda t, out, x, f, **p: gnn.conv2d(t, f, **p),
             lambda t, out, x, f, **p: gnn.conv2d(x, t, **p))),
    "conv2d_backprop_input": _planted(
        "backprop_input_long", gnn.conv2d_backprop_input, conv._backprop_input,
        vjp=(lambda w, out, f, dy, **p: conv._filter_ct(w, dy, f, p),
             lambda w, out, f, dy, **p: unbroadcast(gnn.conv2d(w, f, **conv._geo(p)), dy)
             * _long(dy)),
        jvp=(lambda t, out, f, dy, **p: gnn.conv2d_backprop_input(t, dy, **p),
             lambda t, out, f, dy, **p: gnn.conv2d_backprop_input(f, t, **p))),
    "conv1d": _planted(
        "conv1d_long", gnn.conv1d, conv._conv1d,
        vjp=(lambda g, out, x, f, **p: conv._conv1d_vjp_x(g, out, x, f, **p) * _long(x, (1,)),
             conv._conv1d_vjp_f),
        jvp=(lambda t, out, x, f, **p: gnn.conv1d(t, f, **p),
             lambda t, out, x, f, **p: gnn.conv1d(x, t, **p))),
    "avg_pool2d": _planted(
        "avg_pool2d_long", gnn.avg_pool2d, conv._avg_pool2d,
        vjp=lambda g, out, x, **p: conv.avg_pool2d_grad(g, shape_of(x), **p) * _long(x),
        jvp=lambda ts, out, x, **p: gnn.avg_pool2d(ts[0], **p)),
}


@pytest.mark.parametrize("bug", sorted(PLANTED))
def test_a_rule_wrong_only_on_long_spatial_axes_is_found(bug: str) -> None:
    missed = [s for s in SEEDS if gc.check(PLANTED[bug], seed=s, dtypes=["float64"],
                                           paths=["vjp"]).passed]
    assert len(missed) <= 1, missed


NAMES = sorted(op.name for op in gc.default_registry
               if getattr(op.meta.get("shapes"), "__module__", "") == conv.__name__)
#: Which input is the filter (not an image), by op.
FILTER = {"nn.conv2d": 1, "nn.conv1d": 1, "nn.conv2d_backprop_input": 0}


def _shapes_at(op: gc.Op, k: int, seed: int) -> list[tuple[int, ...]]:
    example = draw_one(examples(op, stratum=replace(Stratum.number(k), turn=k + seed)),
                       _stratum_seed(seed, k))
    assert example is not None
    return example.shapes


def test_every_conv_and_pool_op_takes_the_form() -> None:
    assert len(NAMES) == 9
    assert all(takes_form(gc.default_registry.get(n).meta["shapes"]) for n in NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_each_drawer_gives_the_forms(name: str) -> None:
    op = gc.default_registry.get(name)
    spatial = slice(1, 2 if name == "nn.conv1d" else 3)
    for k, form in FORMS.items():
        for seed in range(4):
            shapes = _shapes_at(op, k, seed)
            images = [s for i, s in enumerate(shapes) if i != FILTER.get(name)]
            if form == "long":  # a long spatial axis; batch 1, one or two channels
                assert max(images[0][spatial]) >= LONG[0], shapes
                assert all(s[0] == 1 and s[-1] <= 2 for s in images), shapes
            elif form == "vector":  # one image, one channel, one spatial axis
                assert all(sorted(s)[-2] == 1 for s in shapes), shapes
            else:  # batch and channels of 2 or more
                assert all(s[0] >= 2 and s[-1] >= 2 for s in images), shapes


@pytest.mark.parametrize(("name", "k", "seed", "shapes", "params"), [
    # drawn by the drawers before they took a form
    ("nn.conv2d", 1, 0, [(1, 1, 5, 3), (2, 3, 3, 2)],
     {"dilations": (2, 1), "padding": "SAME", "strides": 1}),
    ("nn.conv2d", 6, 0, [(1, 3, 4, 1), (1, 3, 1, 1)],
     {"dilations": 1, "padding": ((1, 0), (0, 2)), "strides": 1}),
    ("nn.conv2d_backprop_input", 3, 0, [(3, 2, 2, 1), (2, 2, 2, 1)],
     {"dilations": 1, "input_sizes": (2, 4, 4, 2), "padding": "VALID", "strides": (1, 2)}),
    ("nn.conv2d_backprop_input", 5, 1, [(1, 1, 2, 2), (1, 3, 2, 2)],
     {"dilations": 2, "input_sizes": (1, 3, 2, 2), "padding": "SAME", "strides": 1}),
    ("nn.conv1d", 3, 1, [(1, 4, 1), (2, 1, 2)],
     {"dilations": 1, "padding": "VALID", "stride": 1}),
    ("nn.avg_pool2d_grad", 1, 0, [(1, 2, 2, 3)],
     {"ksize": 2, "orig_input_shape": (1, 2, 2, 3), "padding": "SAME", "strides": 1}),
    ("nn.max_pool2d_grad", 4, 2, [(2, 1, 1, 1), (2, 1, 1, 1)],
     {"ksize": (2, 1), "padding": "SAME", "strides": 1}),
])
def test_no_form_draws_as_before(name: str, k: int, seed: int, shapes: Any,
                                 params: dict[str, Any]) -> None:
    stratum = replace(Stratum.number(k), turn=k + seed)
    assert stratum.form is None
    example = draw_one(examples(gc.default_registry.get(name), stratum=stratum),
                       _stratum_seed(seed, k))
    assert example is not None
    assert (example.shapes, example.params) == (shapes, params)
