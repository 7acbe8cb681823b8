"""What the checker needs to know about an op's inputs, declared with the op.

An op declares, as ``define_op`` keywords:

``inputs``
    One :class:`Domain` per positional input: where its values come from.
    Non-differentiable inputs (labels, indices, masks) use domains whose
    ``differentiable`` is False, and their positions go in ``nondiff_argnums``.
``shapes``
    A gufunc-like signature, one group per input: ``"(...)"`` any shape, all
    ``...`` groups broadcast together (``"(...),(...)"`` draws broadcasting
    pairs); letters are core dimensions shared by name (``"(...,m,k),(...,k,n)"``);
    digits are fixed sizes; ``"()"`` is a 0-d scalar.  Or a callable
    ``shapes(draw) -> list of shapes`` drawing with Hypothesis' ``draw``.
``params``
    Keyword parameters: ``{name: [choices]}``, a choice list may be a
    callable ``(shapes) -> [choices]`` (an axis depends on the rank); or a
    callable ``params(draw, shapes) -> dict`` for anything else.
``kinks``
    Where the op is not differentiable, so the checker samples away from it:
    a tuple of points of the input (``(0.0,)`` for relu), ``"ties"`` (equal
    values, as for max), a callable ``(params) -> points`` (clip's bounds), or
    ``()``.
``tolerance``
    A :class:`Tolerance` widening the checker's tolerance for this op, with
    the ``reason`` it is needed; it is shown in every report.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = [
    "Domain", "Real", "Positive", "Interval", "Unit", "NonZero", "SPD", "WellConditioned",
    "DistinctEig", "FullRank", "Probabilities", "IntLabels", "BoolMask", "Indices",
    "Tolerance", "REAL", "POSITIVE", "UNIT", "Fixed", "NAMED", "domain_named",
    "domain_from_table", "as_domain", "SegmentIds", "Symmetric", "Triangular", "Banded",
    "Orthogonal", "RealWithZeros", "TANGENTS", "project_tangent",
]


class Domain:
    """Where an input's values come from.  ``sample`` is deterministic in ``rng``.

    ``scale`` is the magnitude the checker explores (1 is typical; 1e-3 to 1e3
    probe small and large inputs); each domain interprets it in its own terms.
    """

    differentiable = True
    #: The shapes an input drawn from this domain takes when no ``shapes=`` signature says
    #: otherwise: ``"(...)"`` broadcasts with the other inputs, ``"(...,n,n)"`` is a batch of
    #: square matrices.
    signature = "(...)"
    #: The tangent space the checker draws its directions in (see :data:`TANGENTS`):
    #: ``"full"`` (every entry moves independently), ``"symmetric"`` for a function of
    #: symmetric matrices that reads one triangle only (cholesky, eigvalsh), ...
    tangent = "full"
    #: Whether the matrices are square: a ``shapes=`` group for it must end in two equal
    #: dimensions (``"(...,n,n)"``), not only two dimensions.
    square = False

    def project(self, direction: np.ndarray) -> np.ndarray:
        """``direction`` projected on this domain's tangent space (a copy)."""
        return project_tangent(self.tangent, direction, self)

    def sample(self, rng: np.random.Generator, shape: tuple[int, ...], dtype: Any,
               scale: float = 1.0, context: dict[str, Any] | None = None) -> np.ndarray:
        raise NotImplementedError

    def describe(self) -> str:
        return type(self).__name__

    def __repr__(self) -> str:
        return self.describe()


# -- argument checks: a domain with arguments it cannot sample fails when it is made, so a bad
# table in inputs= or a suite row is an error up front (naming the key), not a clamp, a pass
# on constant values, or an error finding half-way through a check.
_NUMBERS = (int, float, np.integer, np.floating)


def _is_number(value: Any) -> bool:
    return isinstance(value, _NUMBERS) and not isinstance(value, (bool, np.bool_))


def _finite(domain: Domain, key: str, value: Any, at_least: float | None = None) -> None:
    """A ValueError naming ``key`` unless ``value`` is a finite number (``>= at_least``)."""
    if not _is_number(value) or not np.isfinite(value) or \
            (at_least is not None and value < at_least):
        bound = "" if at_least is None else f" >= {at_least:g}"
        raise ValueError(f"{type(domain).__name__}: {key} must be a finite number{bound}, "
                         f"got {value!r}")


def _in_range(domain: Domain, key: str, value: Any, low: float, high: float,
              closed: bool) -> None:
    """A ValueError naming ``key`` unless ``value`` is a number in [low, high] (``closed``)
    or [low, high)."""
    inside = _is_number(value) and (low <= value <= high if closed else low <= value < high)
    if not inside:
        text = f"[{low:g}, {high:g}{']' if closed else ')'}"
        raise ValueError(f"{type(domain).__name__}: {key} must be in {text}, got {value!r}")


def _positive_int(value: Any) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)) \
        and bool(value >= 1)


def _flag(domain: Domain, key: str, value: Any) -> None:
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{type(domain).__name__}: {key} must be true or false, got "
                         f"{value!r}")


def _integer(domain: Domain, key: str, value: Any, at_least: int | None = None) -> None:
    if not isinstance(value, (int, np.integer)) or isinstance(value, (bool, np.bool_)) or \
            (at_least is not None and value < at_least):
        kind = "an integer" if at_least is None else "a non-negative integer"
        raise ValueError(f"{type(domain).__name__}: {key} must be {kind}, got {value!r}")


@dataclass(frozen=True, repr=False)
class Real(Domain):
    """The real line; values ~ N(0, scale)."""

    def sample(self, rng, shape, dtype, scale=1.0, context=None):
        return (rng.standard_normal(shape) * scale).astype(dtype)

    def describe(self) -> str:
        return "real"


@dataclass(frozen=True, repr=False)
class NonZero(Domain):
    """Real values bounded away from zero (divisors): |x| in [0.5, 2] * scale."""

    def sample(self, rng, shape, dtype, scale=1.0, context=None):
        mag = rng.uniform(0.5, 2.0, shape) * max(scale, 1e-3)
        return (mag * rng.choice([-1.0, 1.0], shape)).astype(dtype)

    def describe(self) -> str:
        return "nonzero"


@dataclass(frozen=True, repr=False)
class Positive(Domain):
    """Positive values, log-uniform around ``scale``; at least ``low``."""

    low: float = 0.0

    def __post_init__(self) -> None:
        _finite(self, "low", self.low, at_least=0.0)

    def sample(self, rng, shape, dtype, scale=1.0, context=None):
        base = max(scale, 1e-3)
        x = base * np.exp(rng.uniform(-1.0, 1.0, shape))
        return (self.low + x).astype(dtype)

    def describe(self) -> str:
        return "positive" if self.low == 0 else f"greater than {self.low:g}"


@dataclass(frozen=True, repr=False)
class Interval(Domain):
    """The open interval (low, high); a large ``scale`` pushes values to the edges."""

    low: float
    high: float
    margin: float = 1e-2

    def __post_init__(self) -> None:
        _finite(self, "low", self.low)
        _finite(self, "high", self.high)
        if not self.low < self.high:  # an empty interval, or one value: nothing to explore
            raise ValueError(f"{type(self).__name__}: low={self.low:g} must be below "
                             f"high={self.high:g}")
        # a margin of half the width or more leaves no room between the margins
        _in_range(self, "margin", self.margin, 0.0, 0.5, closed=False)

    def sample(self, rng, shape, dtype, scale=1.0, context=None):
        width = self.high - self.low
        m = self.margin * width
        if scale > 1.0:  # near the edges, where stable-branch bugs hide
            u = rng.uniform(0.0, 0.1, shape)
            side = rng.integers(0, 2, shape)
            x = np.where(side == 1, self.high - m - u * width, self.low + m + u * width)
        else:
            x = rng.uniform(self.low + m, self.high - m, shape)
        return x.astype(dtype)

    def describe(self) -> str:
        return f"({self.low:g}, {self.high:g})"


def _batched(rng: np.random.Generator, shape: tuple[int, ...], make: Any) -> np.ndarray:
    *batch, m, n = shape
    out = np.empty(shape)
    for idx in np.ndindex(*batch):
        out[idx] = make(rng, m, n)
    return out


@dataclass(frozen=True, repr=False)
class SPD(Domain):
    """Symmetric positive definite (..., n, n) matrices with condition number below ~50;
    ``tangent="symmetric"`` checks a function that reads one triangle as a function of
    symmetric matrices."""

    signature = "(...,n,n)"
    square = True
    tangent: str = "full"

    def __post_init__(self) -> None:
        _check_tangent(self)

    def sample(self, rng, shape, dtype, scale=1.0, context=None):
        def make(rng: np.random.Generator, m: int, n: int) -> np.ndarray:
            q, _ = np.linalg.qr(rng.standard_normal((n, n)))
            eig = rng.uniform(1.0, 5.0, n)
            return (q * eig) @ q.T * max(scale, 1e-2)
        return _batched(rng, shape, make).astype(dtype)

    def describe(self) -> str:
        return "symmetric positive definite"


@dataclass(frozen=True, repr=False)
class WellConditioned(Domain):
    """Square or rectangular (..., m, n) matrices with singular values in [1, 3]."""

    signature = "(...,n,n)"

    def sample(self, rng, shape, dtype, scale=1.0, context=None):
        def make(rng: np.random.Generator, m: int, n: int) -> np.ndarray:
            k = min(m, n)
            u, _ = np.linalg.qr(rng.standard_normal((m, k)))
            v, _ = np.linalg.qr(rng.standard_normal((n, k)))
            s = np.sort(rng.uniform(1.0, 3.0, k))[::-1]
            return (u * s) @ v.T * max(scale, 1e-2)
        return _batched(rng, shape, make).astype(dtype)

    def describe(self) -> str:
        return "well-conditioned matrix"


@dataclass(frozen=True, repr=False)
class FullRank(WellConditioned):
    """Full-rank matrices with well-separated singular values (svd vectors, qr); a wide one
    also has a well-conditioned leading square block (its smallest singular value at least a
    tenth of the matrix's largest), which reduced QR's derivative divides by."""

    def sample(self, rng, shape, dtype, scale=1.0, context=None):
        def make(rng: np.random.Generator, m: int, n: int) -> np.ndarray:
            k = min(m, n)
            for _ in range(50):  # rejection, deterministic in rng
                u, _ = np.linalg.qr(rng.standard_normal((m, k)))
                v, _ = np.linalg.qr(rng.standard_normal((n, k)))
                s = 1.0 + np.arange(k)[::-1] * 0.7 + rng.uniform(0.0, 0.2, k)
                a = (u * s) @ v.T
                lead = np.linalg.svd(a[:, :m], compute_uv=False) if m < n else None
                if lead is None or lead[-1] >= 0.1 * s[0]:
                    break
            return a * max(scale, 1e-2)
        return _batched(rng, shape, make).astype(dtype)

    def describe(self) -> str:
        return "full rank, distinct singular values"


@dataclass(frozen=True, repr=False)
class DistinctEig(Domain):
    """Symmetric (..., n, n) matrices whose eigenvalues are at least 0.5 apart (``tangent``
    as for :class:`SPD`)."""

    signature = "(...,n,n)"
    square = True
    tangent: str = "full"

    def __post_init__(self) -> None:
        _check_tangent(self)

    def sample(self, rng, shape, dtype, scale=1.0, context=None):
        def make(rng: np.random.Generator, m: int, n: int) -> np.ndarray:
            q, _ = np.linalg.qr(rng.standard_normal((n, n)))
            eig = np.arange(n) * 1.0 - n / 2 + rng.uniform(0.0, 0.5, n)
            return (q * eig) @ q.T * max(scale, 1e-2)
        return _batched(rng, shape, make).astype(dtype)

    def describe(self) -> str:
        return "symmetric, distinct eigenvalues"


@dataclass(frozen=True, repr=False)
class Probabilities(Domain):
    """Rows on the probability simplex along ``axis`` (soft labels)."""

    axis: int = -1

    def __post_init__(self) -> None:
        _integer(self, "axis", self.axis)

    def sample(self, rng, shape, dtype, scale=1.0, context=None):
        x = rng.uniform(0.1, 1.0, shape)
        total = np.sum(x, axis=self.axis, keepdims=True) if x.size else 1.0
        return (x / total).astype(dtype)

    def describe(self) -> str:
        return "probabilities"


@dataclass(frozen=True, repr=False)
class IntLabels(Domain):
    """Integer class labels in [0, high); ``high`` may be ``"last_dim_of_0"`` (logits' classes)."""

    high: int | str = 3
    differentiable = False

    def __post_init__(self) -> None:
        if self.high != "last_dim_of_0" and not _positive_int(self.high):
            raise ValueError(f"{type(self).__name__}: high must be a positive integer or "
                             f"'last_dim_of_0', got {self.high!r}")

    def sample(self, rng, shape, dtype, scale=1.0, context=None):
        high = self.high
        if isinstance(high, str):
            shapes = (context or {}).get("shapes", [])
            high = shapes[0][-1] if shapes and shapes[0] else 1
        return rng.integers(0, max(int(high), 1), shape).astype(np.int64)

    def describe(self) -> str:
        return f"integer labels < {self.high}"


@dataclass(frozen=True, repr=False)
class Indices(IntLabels):
    """Integer indices into an axis of input 0 (``axis`` names its param or is an int)."""

    axis: int | str = 0

    def __post_init__(self) -> None:
        super().__post_init__()
        if not (isinstance(self.axis, str) and self.axis.isidentifier()):
            _integer(self, "axis (an integer or a param's name)", self.axis)

    def sample(self, rng, shape, dtype, scale=1.0, context=None):
        ctx = context or {}
        axis = ctx.get("params", {}).get(self.axis, 0) if isinstance(self.axis, str) \
            else self.axis
        base = ctx.get("shapes", [()])[0]
        high = base[axis] if base else 1
        return rng.integers(0, max(int(high), 1), shape).astype(np.int64)

    def describe(self) -> str:
        return "indices"


@dataclass(frozen=True, repr=False)
class BoolMask(Domain):
    """Boolean masks, True with probability ``p``."""

    p: float = 0.5
    differentiable = False

    def __post_init__(self) -> None:
        _in_range(self, "p", self.p, 0.0, 1.0, closed=True)

    def sample(self, rng, shape, dtype, scale=1.0, context=None):
        return rng.uniform(0.0, 1.0, shape) < self.p

    def describe(self) -> str:
        return "boolean mask"


@dataclass(frozen=True)
class Tolerance:
    """A wider tolerance for one op: ``factor`` times the checker's, and why."""

    factor: float
    reason: str

    def __post_init__(self) -> None:
        if not self.reason:
            raise ValueError("Tolerance: a wider tolerance needs a reason")
        if not self.factor >= 1:
            raise ValueError(f"Tolerance: factor must be at least 1, got {self.factor}")


REAL = Real()
POSITIVE = Positive()
UNIT = Interval(-1.0, 1.0)
Unit = UNIT


@dataclass(frozen=True, repr=False, eq=False)
class Fixed(Domain):
    """One given array: every example uses it (a floating one cast to the example's dtype, a
    complex one to the complex dtype of that precision).

    It is how an example array stands among drawn inputs; its shape is fixed."""

    value: np.ndarray

    @property
    def differentiable(self) -> bool:  # type: ignore[override]
        return np.asarray(self.value).dtype.kind in "fc"

    def sample(self, rng, shape, dtype, scale=1.0, context=None):
        v = np.array(self.value)
        if v.dtype.kind == "c":  # complex: the complex dtype of the example's precision
            return v.astype(np.result_type(dtype, np.complex64))
        return v.astype(dtype) if v.dtype.kind == "f" else v

    def describe(self) -> str:
        v = np.asarray(self.value)
        return f"the given {v.dtype.name} array of shape {v.shape}"


# -- structured inputs and tangent spaces ------------------------------------------------------
def _symmetric(a: np.ndarray) -> np.ndarray:
    return (a + np.swapaxes(a, -1, -2)) / 2


def _band(a: np.ndarray, lower: int, upper: int) -> np.ndarray:
    m, n = a.shape[-2:]
    i, j = np.indices((m, n))
    keep = (j - i <= upper) & (i - j <= lower)
    return np.where(keep, a, 0)


def _banded_tangent(a: np.ndarray, domain: Domain | None) -> np.ndarray:
    lower, upper = (getattr(domain, "lower", 0), getattr(domain, "upper", 0))
    return _band(a, int(lower), int(upper))


#: Tangent spaces by name: each projects a direction (..., m, n) onto it.  The checker draws
#: its tangents there, and a gradient is then checked only on that space: a function of
#: symmetric matrices that reads one triangle (tf.linalg.cholesky) is checked as a function
#: of symmetric matrices, not of all n*n entries.
TANGENTS: dict[str, Any] = {
    "full": lambda a, d: np.array(a, copy=True),
    "symmetric": lambda a, d: _symmetric(a),
    "lower_triangular": lambda a, d: np.tril(a),
    "upper_triangular": lambda a, d: np.triu(a),
    "banded": _banded_tangent,
}


def project_tangent(name: str, direction: np.ndarray, domain: Domain | None = None
                    ) -> np.ndarray:
    """``direction`` projected on the tangent space ``name`` (of ``domain``, for "banded")."""
    if name not in TANGENTS:
        raise ValueError(f"unknown tangent space {name!r} (known: {', '.join(TANGENTS)})")
    a = np.asarray(direction)
    if name != "full" and a.ndim < 2:
        raise ValueError(f"tangent space {name!r} needs (..., m, n) matrices, got an array "
                         f"of shape {a.shape}")
    return np.asarray(TANGENTS[name](a, domain)).astype(a.dtype)


def _check_tangent(domain: Domain) -> None:
    if domain.tangent not in TANGENTS:
        raise ValueError(f"{type(domain).__name__}: unknown tangent {domain.tangent!r} "
                         f"(known: {', '.join(TANGENTS)})")


def _count(value: int | str, context: dict[str, Any] | None, what: str) -> int:
    """An int, or the value of the param it names (``"num_segments"``)."""
    if isinstance(value, str):
        params = (context or {}).get("params", {})
        if value not in params:
            raise ValueError(f"{what}: names param {value!r}, which is not among the "
                             f"params {sorted(params)}: give it in params= (a fixed value or "
                             "choices), or give the number here")
        name, value = value, params[value]
        if not _positive_int(value):
            raise ValueError(f"{what}: param {name!r} is {value!r}; it must be a positive "
                             "integer")
    return int(value)


@dataclass(frozen=True, repr=False)
class SegmentIds(Domain):
    """Segment ids in [0, ``num_segments``) (an int, or the name of the param holding it):
    ``sorted`` (non-decreasing, every segment used when there are enough ids, as
    ``tf.math.segment_*`` require) or unsorted (``tf.math.unsorted_segment_*``)."""

    num_segments: int | str = 3
    sorted: bool = True
    differentiable = False

    def __post_init__(self) -> None:
        named = isinstance(self.num_segments, str) and self.num_segments.isidentifier()
        if not named and not _positive_int(self.num_segments):
            raise ValueError(f"{type(self).__name__}: num_segments must be a positive integer "
                             f"or a param's name, got {self.num_segments!r}")
        _flag(self, "sorted", self.sorted)

    def sample(self, rng, shape, dtype, scale=1.0, context=None):
        k = _count(self.num_segments, context, "segment_ids: num_segments")
        size = int(np.prod(shape))
        if self.sorted:
            # every segment at least once when possible, the rest at random, then sorted
            ids = np.concatenate([np.arange(min(k, size)),
                                  rng.integers(0, k, max(size - k, 0))])
            return np.sort(ids).reshape(shape).astype(np.int64)
        return rng.integers(0, k, shape).astype(np.int64)

    def describe(self) -> str:
        return f"{'sorted' if self.sorted else 'unsorted'} segment ids < {self.num_segments}"


@dataclass(frozen=True, repr=False)
class Symmetric(Domain):
    """Symmetric (..., n, n) matrices, entries ~ N(0, scale), with symmetric tangents."""

    signature = "(...,n,n)"
    square = True
    tangent: str = "symmetric"

    def __post_init__(self) -> None:
        _check_tangent(self)

    def sample(self, rng, shape, dtype, scale=1.0, context=None):
        return (_symmetric(rng.standard_normal(shape)) * scale).astype(dtype)

    def describe(self) -> str:
        return "symmetric"


@dataclass(frozen=True, repr=False)
class Triangular(Domain):
    """Lower (or upper) triangular (..., n, n) matrices, well conditioned: a diagonal of
    magnitude in [1, 2] with random signs and small off-diagonal entries.  ``tangent`` is
    "full" by default (a function that reads the triangle only has zero derivative in the
    other entries, which the numeric reference sees too); "lower_triangular" or
    "upper_triangular" to stay on the triangle."""

    lower: bool = True
    tangent: str = "full"
    signature = "(...,n,n)"

    def __post_init__(self) -> None:
        _check_tangent(self)
        _flag(self, "lower", self.lower)

    def sample(self, rng, shape, dtype, scale=1.0, context=None):
        n = shape[-1] if shape else 1
        a = rng.standard_normal(shape) * (0.5 / max(n, 1) ** 0.5)
        diag = rng.uniform(1.0, 2.0, shape[:-1]) * rng.choice([-1.0, 1.0], shape[:-1])
        a = np.tril(a) if self.lower else np.triu(a)
        idx = np.arange(min(shape[-2:]) if len(shape) >= 2 else 0)
        a[..., idx, idx] = diag[..., idx]
        return (a * max(scale, 1e-2)).astype(dtype)

    def describe(self) -> str:
        return f"{'lower' if self.lower else 'upper'} triangular"


@dataclass(frozen=True, repr=False)
class Banded(Domain):
    """(..., n, n) matrices zero outside the band ``lower`` below and ``upper`` above the
    diagonal, diagonally dominant (well conditioned); ``tangent="banded"`` stays in the band."""

    lower: int = 1
    upper: int = 1
    tangent: str = "full"
    signature = "(...,n,n)"

    def __post_init__(self) -> None:
        _check_tangent(self)
        _integer(self, "lower", self.lower, at_least=0)
        _integer(self, "upper", self.upper, at_least=0)

    def sample(self, rng, shape, dtype, scale=1.0, context=None):
        a = _band(rng.uniform(-0.5, 0.5, shape), self.lower, self.upper)
        n = min(shape[-2:]) if len(shape) >= 2 else 0
        idx = np.arange(n)
        width = self.lower + self.upper
        a[..., idx, idx] = (width * 0.5 + rng.uniform(1.0, 2.0, (*shape[:-2], n))) * \
            rng.choice([-1.0, 1.0], (*shape[:-2], n))
        return (a * max(scale, 1e-2)).astype(dtype)

    def describe(self) -> str:
        return f"banded (lower {self.lower}, upper {self.upper})"


@dataclass(frozen=True, repr=False)
class Orthogonal(Domain):
    """Orthogonal (..., n, n) matrices (Haar-distributed: QR with the signs of R's diagonal)."""

    signature = "(...,n,n)"
    square = True

    def sample(self, rng, shape, dtype, scale=1.0, context=None):
        def make(rng: np.random.Generator, m: int, n: int) -> np.ndarray:
            q, r = np.linalg.qr(rng.standard_normal((m, n)))
            return q * np.sign(np.diag(r))
        return _batched(rng, shape, make).astype(dtype)

    def describe(self) -> str:
        return "orthogonal"


@dataclass(frozen=True, repr=False)
class RealWithZeros(Domain):
    """Real values ~ N(0, scale) with a share ``p`` of exact zeros (at least one when the
    array is not empty): where prod, norms and their kin divide by the input."""

    p: float = 0.3

    def __post_init__(self) -> None:
        if not 0 < self.p < 1:
            raise ValueError(f"real_with_zeros: p must be in (0, 1), got {self.p}")

    def sample(self, rng, shape, dtype, scale=1.0, context=None):
        x = rng.standard_normal(shape) * scale
        zero = rng.uniform(0.0, 1.0, shape) < self.p
        if x.size:
            zero.flat[rng.integers(0, x.size)] = True
        return np.where(zero, 0.0, x).astype(dtype)

    def describe(self) -> str:
        return f"real with exact zeros (share {self.p:g})"


#: Domains by the names inputs, suites and op metadata may use.
NAMED: dict[str, Domain] = {
    "real": REAL, "positive": POSITIVE, "nonzero": NonZero(), "unit": UNIT,
    "spd": SPD(), "well_conditioned": WellConditioned(), "full_rank": FullRank(),
    "distinct_eig": DistinctEig(), "probabilities": Probabilities(),
    "labels": IntLabels(), "indices": Indices(), "mask": BoolMask(),
    "segment_ids": SegmentIds(), "unsorted_segment_ids": SegmentIds(sorted=False),
    "symmetric": Symmetric(), "lower_triangular": Triangular(),
    "upper_triangular": Triangular(lower=False), "banded": Banded(),
    "orthogonal": Orthogonal(), "real_with_zeros": RealWithZeros(),
}
# complex domains live in their own module (it needs Domain, defined above)
from gradcheck.domains_complex import COMPLEX_NAMED  # noqa: E402

NAMED.update(COMPLEX_NAMED)


def domain_named(name: str, where: str = "input") -> Domain:
    """The domain called ``name``; a ValueError naming ``where`` and the known names (with
    the closest one) otherwise."""
    import difflib

    if name in NAMED:
        return NAMED[name]
    close = difflib.get_close_matches(name, list(NAMED), n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    raise ValueError(f"{where}: unknown domain {name!r}{hint} (known: {', '.join(NAMED)})")


def domain_from_table(table: dict[str, Any], where: str) -> Domain:
    """``{"domain": name, **arguments}`` as the domain: the domain called ``name`` with
    ``arguments`` replacing its own (``interval`` needs ``low`` and ``high``)."""
    given, table = table, dict(table)
    name = table.pop("domain", None)
    if not isinstance(name, str):
        raise ValueError(f"{where}: a table input needs domain = \"<name>\" (and the domain's "
                         f"arguments), got {given!r}")
    base = None if name == "interval" else domain_named(name, where)
    kind = Interval if base is None else type(base)
    if not table and base is not None:
        return base
    try:
        # the named domain with these arguments changed ("upper_triangular" stays upper)
        if base is not None and dataclasses.is_dataclass(base):
            return dataclasses.replace(base, **table)
        return kind(**table)
    except (TypeError, ValueError) as error:
        fields: list[str] = [f.name for f in dataclasses.fields(kind)] \
            if dataclasses.is_dataclass(kind) else []
        raise ValueError(f"{where}: domain {name!r} cannot take {table!r}: {error}"
                         + (f" (its arguments: {', '.join(fields)})" if fields else "")) from None


def as_domain(spec: Any, where: str = "input") -> Domain:
    """A domain as ``inputs=`` may give it: a Domain, a name, or a table with arguments."""
    if isinstance(spec, Domain):
        return spec
    if isinstance(spec, str):
        return domain_named(spec, where)
    if isinstance(spec, dict):
        return domain_from_table(spec, where)
    raise ValueError(f"{where}: not a Domain, a domain name or a table naming a domain: "
                     f"{spec!r}")
