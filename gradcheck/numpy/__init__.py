"""A numpy-compatible namespace of registered ops: ``import gradcheck.numpy as gnp``.

Functions keep numpy's names and signatures (``axis=``, ``keepdims=``,
broadcasting; parameters may be passed positionally as in numpy), so numpy
code runs on the engine by swapping the import.  Constants and dtypes are
numpy's own.  ``gnp.array`` makes a plain (constant) array; use
``gradcheck.tensor`` for values to differentiate.
"""

from numpy import (  # noqa: F401 - numpy's own: constants, dtypes, array creation
    arange,
    array,
    e,
    empty,
    eye,
    float32,
    float64,
    full,
    full_like,
    inf,
    int64,
    linspace,
    nan,
    newaxis,
    ones,
    ones_like,
    pi,
    zeros,
    zeros_like,
)

from gradcheck.numpy import fft, linalg  # noqa: F401
from gradcheck.ops import exports as _exports

globals().update(_exports("NUMPY"))

__all__ = sorted(_exports("NUMPY")) + [
    "fft", "linalg", "array", "e", "pi", "inf", "nan", "newaxis", "float32", "float64", "int64",
    "arange", "empty", "eye", "full", "full_like", "linspace", "ones", "ones_like", "zeros",
    "zeros_like",
]
