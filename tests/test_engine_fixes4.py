"""Engine fixes, round 4: each test failed before its fix."""

import numpy as np
import pytest

import gradcheck as gc
import gradcheck.numpy as gnp


# -- 2. a forward returning a tuple for a one-output op ------------------------------------
def test_a_tuple_from_a_one_output_forward_is_refused_naming_nout():
    sincos = gc.define_op("sincos", lambda x: (np.sin(x), np.cos(x)),
                          vjp=lambda g, out, x: g * gnp.cos(x), register=False)
    with pytest.raises(ValueError, match=r"op 'sincos' declares nout=1.*tuple of 2 values"):
        sincos(gc.tensor([0.5, 1.0]))


def test_a_list_from_a_one_output_forward_is_refused():
    listed = gc.define_op("listed", lambda x: [np.sin(x)],
                          vjp=lambda g, out, x: g * gnp.cos(x), register=False)
    with pytest.raises(ValueError, match=r"op 'listed' declares nout=1.*list of 1 values"):
        listed(gc.tensor(0.5))

