"""The op library, one module per family.  Importing it registers every op.

``composed`` holds numpy functions written with the ops (sort, diff, ...): no ops of its own.

Each module lists the names it exports to the public namespaces: ``NUMPY``
(``gradcheck.numpy``), ``LINALG`` (``gradcheck.numpy.linalg``), ``NN``
(``gradcheck.nn``) and ``SPECIAL`` (``gradcheck.special``).
"""

from types import ModuleType

from gradcheck.ops import (
    activations,
    binary,
    complex,
    composed,
    conv,
    cumulative,
    elementwise,
    fft,
    indexing,
    linalg,
    linalg_decomp,
    losses,
    nn,
    reduce,
    shape,
    special,
)

FAMILY_MODULES: tuple[ModuleType, ...] = (
    elementwise, special, activations, binary, reduce, cumulative, shape, indexing, linalg,
    linalg_decomp, nn, conv, losses, complex, fft, composed,
)


def exports(listname: str) -> dict[str, object]:
    """Every public name a family module lists under ``listname``, with its object."""
    out: dict[str, object] = {}
    for module in FAMILY_MODULES:
        for name in getattr(module, listname, ()):
            if name in out:
                raise ImportError(f"gradcheck.ops: {name!r} is exported by two modules")
            out[name] = getattr(module, name)
    return out
