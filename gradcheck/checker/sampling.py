"""Inputs for an op, drawn from its declared metadata as Hypothesis strategies.

Shapes, parameters and the magnitude are drawn by Hypothesis (so a failure
shrinks toward small shapes, the first parameter choice and scale 1); values
come from each input's domain, seeded by a drawn integer, so a counterexample
is reproducible from its seed.  See ``gradcheck.domains`` for the metadata.
"""

from __future__ import annotations

import inspect
import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from hypothesis import strategies as st

from gradcheck.domains import REAL, Domain, Real
from gradcheck.engine.op import Op
from gradcheck.ops.forms import LONG, formed_shape

__all__ = ["Example", "examples", "parse_signature", "SCALES", "FAMILIES", "Stratum",
           "avoid_kinks", "formed_shape"]

#: Magnitudes explored, in shrink order: typical first, then small and large.
SCALES = (1.0, 3.0, 0.1, 10.0, 1e-3, 30.0, 100.0, 1e3)
#: Shape families every check covers: batched arrays, 0-d scalars, inputs broadcasting
#: against each other, and zero-size arrays.
FAMILIES = ("batched", "scalar", "broadcast", "empty")
#: The strata, in the order a check visits them: (magnitude, shape family).  Every magnitude
#: once, every family at least once, and the extremes early: a check of three examples sees
#: 1, 1e3 and 1e-3, all three on arrays with several entries, so both signs (every region
#: between kinks) appear at each.  The two 0-d strata, numbers 3 and 4, fall in different
#: regions whether an op has two of them or three (see :meth:`Stratum.number`), and in
#: different phase sectors (see :attr:`Stratum.phase`).  The empty family takes 3, the
#: magnitude nearest the typical one, so that every other magnitude reaches real values.
STRATA = ((1.0, "batched"), (1e3, "batched"), (1e-3, "broadcast"), (10.0, "scalar"),
          (30.0, "scalar"), (3.0, "empty"), (100.0, "broadcast"), (0.1, "batched"))
STRATUM_SCALES = tuple(scale for scale, _ in STRATA)
#: The strata whose shapes take a form of their own, by number, so that a check meets each
#: form at every seed (the other strata draw their family's usual shapes, at most 3 batch
#: dimensions of at most 4 entries): ``"long"``, one axis of :data:`LONG` entries (the last;
#: with core dimensions, the first input's last named one) beside short ones; ``"vector"``,
#: a plain 1-d array of 2 or more entries (with core dimensions, the core alone, no size
#: 1); ``"deep"``, 4 dimensions.  Full mode's three strata reach the first two, fast mode's
#: eight all three.  An op's own shapes callable meets them if it takes a ``form`` keyword
#: (see :func:`takes_form`; :func:`formed_shape` draws one); one of the draw alone is
#: called with the draw alone, as before.
FORMS = {0: "long", 2: "vector", 7: "deep"}


@dataclass(frozen=True)
class Stratum:
    """A deterministic part of the exploration: a magnitude, a shape family, and which
    region between an op's kinks a 0-d input falls in."""

    scale: float
    family: str
    region: int
    #: Which choice of each explored parameter to take (see :attr:`choice`); None: the
    #: region's.
    turn: int | None = None
    #: ``((name, value), ...)``: parameter values this stratum takes whatever its turn,
    #: where the drawn shapes offer them (a stratum added for a choice no other reached).
    force: tuple[tuple[str, Any], ...] = ()
    #: The shape form (see :data:`FORMS`); None: the family's usual shapes.
    form: str | None = None
    #: The input shapes to take instead of drawing them (a forced choice that depends on
    #: the shapes, taken at shapes that offered it); None: drawn.
    shapes: tuple[tuple[int, ...], ...] | None = None

    @property
    def phase(self) -> int:
        """The phase sector the stratum's complex entries start from: consecutive over the
        strata that have entries (the empty family has none), so the seven of them start at
        seven different sectors and the last, an array, reaches the eighth."""
        cycle, k = divmod(self.region, len(STRATA))
        filled = sum(1 for _, family in STRATA if family != "empty")
        return cycle * filled + sum(1 for _, family in STRATA[:k] if family != "empty")

    @property
    def choice(self) -> int:
        """Which choice of each explored parameter the stratum takes (see
        :func:`_draw_params`): the strata cycle through them, so none is left to chance."""
        return self.region if self.turn is None else self.turn

    @classmethod
    def number(cls, k: int) -> Stratum:
        """The k-th stratum (see :data:`STRATA`; the regions of 0-d inputs alternate)."""
        scale, family = STRATA[k % len(STRATA)]
        return cls(scale, family, k, form=FORMS.get(k % len(STRATA)))


@dataclass
class Example:
    """One input of an op: positional arrays, keyword parameters, and how they were drawn."""

    args: list[Any]
    params: dict[str, Any]
    dtype: str
    scale: float
    seed: int
    shapes: list[tuple[int, ...]] = field(default_factory=list)

    def describe(self) -> dict[str, Any]:
        """JSON-friendly description (the counterexample of a finding)."""
        return {
            "inputs": [np.asarray(a).tolist() for a in self.args],
            "shapes": [list(s) for s in self.shapes],
            "params": {k: _jsonable(v) for k, v in sorted(self.params.items())},
            "dtype": self.dtype,
            "scale": self.scale,
            "seed": self.seed,
        }


def _jsonable(v: Any) -> Any:
    if isinstance(v, np.ndarray):
        return v.tolist()
    if isinstance(v, slice):
        return f"slice({v.start}, {v.stop}, {v.step})"
    if v is Ellipsis:
        return "..."
    if isinstance(v, (tuple, list)):
        return [_jsonable(x) for x in v]
    if isinstance(v, type):
        return v.__name__
    if isinstance(v, (np.generic,)):
        return v.item()
    if isinstance(v, np.dtype):
        return str(v)
    return v if isinstance(v, (int, float, str, bool, type(None))) else repr(v)


_GROUP = re.compile(r"\(([^()]*)\)")


def parse_signature(signature: str) -> list[list[str]]:
    """``"(...,m,k),(...,k,n)"`` -> ``[["...", "m", "k"], ["...", "k", "n"]]``.  Spaces
    around names are allowed; a space between two names (``"(m n)"``) is a missing comma,
    never one name ``mn``."""
    if re.search(r"[\w.]\s+[\w.]", signature):
        raise ValueError(f"bad shape signature {signature!r}: dimension names are separated "
                         "by commas, as in '(m,n)'")
    groups = _GROUP.findall(signature.replace(" ", ""))
    if not groups or ",".join(f"({g})" for g in groups) != signature.replace(" ", ""):
        raise ValueError(f"bad shape signature {signature!r}: expected groups like "
                         "'(...),(...,n,n)'")
    return [[t for t in g.split(",") if t] for g in groups]


@st.composite
def _batch(draw: Any, allow_zero: bool, allow_scalar: bool,
           family: str | None = None, has_core: bool = True) -> tuple[int, ...]:
    if family == "scalar":
        return ()
    if family in ("batched", "broadcast"):
        # a batched array without core dimensions has two or more: the batched strata
        # (magnitudes 1, 1e3, 0.1) then always meet a rule that mixes up its axes (a
        # softmax gradient summed over the wrong one); broadcast strata reach 1-d arrays
        least = 2 if family == "batched" and not has_core else 1
        return tuple(draw(st.integers(2, 4)) for _ in range(draw(st.integers(least, 3))))
    if family == "empty" and allow_zero:
        dims = [draw(st.integers(1, 3)) for _ in range(draw(st.integers(1, 2)))]
        dims[draw(st.integers(0, len(dims) - 1))] = 0
        return tuple(dims)
    ndim = draw(st.integers(0 if allow_scalar else 1, 3))
    low = 0 if allow_zero else 1
    dims = [draw(st.integers(1, 4)) for _ in range(ndim)]
    if allow_zero and ndim and draw(st.integers(0, 9)) == 0:  # occasionally a zero-size dim
        dims[draw(st.integers(0, ndim - 1))] = low
    return tuple(dims)


@st.composite
def _formed(draw: Any, form: str, batched: bool, core: int, long_last: bool) -> tuple[int, ...]:
    """Batch dimensions of a stratum's ``form`` (see :data:`FORMS`) before ``core`` more of
    the first input; with ``long_last`` the last batch dimension is the long axis (no named
    core dimension is).  The other entries are few and short, so that the whole array is
    no larger than a usual one (full mode's Jacobian grows with it)."""
    if form == "vector":
        return () if core else (draw(st.integers(2, LONG[1])),)
    if form == "deep":
        ndim = max(1, 4 - core)
    else:  # long: one more dimension, two without core dimensions in a batched stratum
        ndim = 2 if batched and not core else 1
    dims = [draw(st.integers(2, 3)) for _ in range(ndim)]
    if form == "long" and long_last:
        dims[-1] = draw(st.integers(*LONG))
    return tuple(dims)


@st.composite
def _broadcast_variant(draw: Any, batch: tuple[int, ...], force: bool = False) -> tuple[int, ...]:
    """A shape that broadcasts to ``batch``: leading dims dropped, some dims set to 1 (with
    ``force``, at least one of the two)."""
    drop = draw(st.integers(0, len(batch)))
    kept = list(batch[drop:])
    for i in range(len(kept)):
        if draw(st.integers(0, 3)) == 0:
            kept[i] = 1
    if force and tuple(kept) == tuple(batch) and kept:
        kept[draw(st.integers(0, len(kept) - 1))] = 1
    return tuple(kept)


@st.composite
def draw_shapes(draw: Any, signature: str, family: str | None = None,
                form: str | None = None) -> list[tuple[int, ...]]:
    """Shapes for a signature; ``family`` (see :data:`FAMILIES`) fixes their kind, and a
    batched or broadcast one's ``form`` (see :data:`FORMS`) their dimensions."""
    groups = parse_signature(signature)
    has_core = any(t != "..." for g in groups for t in g)
    form = form if family in ("batched", "broadcast") else None
    named = [t for t in groups[0] if t != "..." and not t.isdigit()]
    long_name = named[-1] if form == "long" and named else None
    if form is not None:
        core = next((len(g) - 1 for g in groups if "..." in g), 0)
        batch = draw(_formed(form, family == "batched", core, long_last=long_name is None))
    else:
        batch = draw(_batch(allow_zero=not has_core, allow_scalar=True, family=family,
                            has_core=has_core))
    force = family == "broadcast"
    sizes: dict[str, int] = {}
    shapes = []
    first_batched = True
    for g in groups:
        dims: list[int] = []
        for t in g:
            if t == "...":
                if first_batched:
                    dims.extend(batch)
                    first_batched = False
                else:
                    dims.extend(draw(_broadcast_variant(batch, force)))
            elif t.isdigit():
                dims.append(int(t))
            else:
                if t not in sizes:  # the vector form's plain core: 2 or more entries too
                    sizes[t] = draw(st.integers(*LONG) if t == long_name else
                                    st.integers(2 if form == "vector" else 1, 4))
                dims.append(sizes[t])
        shapes.append(tuple(dims))
    return shapes


def _draw_params(draw: Any, spec: Any, shapes: list[tuple[int, ...]],
                 stratum: Stratum | None = None) -> dict[str, Any]:
    """Keyword parameters: each explored one's choice drawn, or, in a stratum, taken in turn
    (mixed radix over the parameters in name order: the k-th stratum takes choice
    ``k % n`` of the first, ``(k // n) % m`` of the second, ...), so every choice of every
    parameter is checked when there are at least as many strata as choices.  Raises
    :class:`NoChoice` when a callable of the shapes offers none at ``shapes``."""
    if spec is None:
        return {}
    if callable(spec):
        return dict(spec(draw, shapes))
    params = {}
    turn = stratum.choice if stratum is not None else 0
    forced = dict(stratum.force) if stratum is not None else {}
    for name in sorted(spec):
        choices = param_choices(spec[name], shapes)
        if not choices:
            error = NoChoice if callable(spec[name]) else ValueError
            raise error(f"param {name!r}: no choices for shapes {shapes}")
        keys = [choice_key(c) for c in choices]
        # one choice is a fixed value: nothing to draw (and the draws of the rest unchanged)
        if len(choices) == 1:
            params[name] = choices[0]
        elif name in forced and choice_key(forced[name]) in keys:
            params[name] = choices[keys.index(choice_key(forced[name]))]
            turn //= len(choices)
        elif stratum is not None:
            params[name] = choices[turn % len(choices)]
            turn //= len(choices)
        else:
            params[name] = choices[draw(st.integers(0, len(choices) - 1))]
    return params


class NoChoice(ValueError):
    """A callable of the drawn shapes offered a parameter no choice (every axis of a 0-d
    array): those shapes are a misfit, drawn again."""


def param_choices(choices: Any, shapes: list[tuple[int, ...]]) -> list[Any]:
    """A parameter's choices at ``shapes`` (a callable of the shapes gives them)."""
    return list(choices(shapes) if callable(choices) else choices)


def choice_key(value: Any) -> str:
    """A parameter value as a key: choices compare by what they say (``(0, 2)``, ``None``,
    ``'reflect'``), whatever their type's equality does (arrays)."""
    return f"{type(value).__name__}:{value!r}"


def avoid_kinks(x: np.ndarray, kinks: Any, params: dict[str, Any], scale: float) -> np.ndarray:
    """Move values away from the op's points of non-differentiability."""
    if not kinks or x.size == 0:
        return x
    margin = 0.02 * max(1.0, scale)
    if kinks == "integers" or kinks == "half_integers":
        shift = 0.5 if kinks == "half_integers" else 0.0
        frac = x + shift - np.round(x + shift)
        return np.where(np.abs(frac) < 0.05, x + np.where(frac < 0, -0.1, 0.1), x)
    if kinks == "ties":
        return x  # handled across inputs by _separate
    points = kinks(params) if callable(kinks) else kinks
    for p in points:
        d = x - p
        x = np.where(np.abs(d) < margin, p + np.where(d < 0, -margin, margin), x)
    return x


def _separate(arrays: list[np.ndarray], scale: float) -> list[np.ndarray]:
    """Make all values distinct by at least a small gap (no ties), keeping their order."""
    sizes = [a.size for a in arrays]
    flat = np.concatenate([a.ravel().astype(np.float64) for a in arrays]) if arrays else None
    if flat is None or flat.size < 2:
        return arrays
    gap = 0.02 * max(1.0, scale)
    order = np.argsort(flat, kind="stable")
    v = flat[order]
    for i in range(1, v.size):
        if v[i] < v[i - 1] + gap:
            v[i] = v[i - 1] + gap
    flat[order] = v
    out, start = [], 0
    for a, n in zip(arrays, sizes, strict=False):
        out.append(flat[start:start + n].reshape(a.shape).astype(a.dtype))
        start += n
    return out


#: The outer regions' values sit this many magnitudes from the kinks: off the round numbers
#: (1e-3) that thresholds in rules sit at (``|x| < 1e-3``), where a rule that jumps would
#: have its jump measured as rounding noise between neighbouring samples.
OFF_ROUND = 1.1


def _regions(x: np.ndarray, points: Any, scale: float, which: int) -> np.ndarray:
    """Put one value in every region between the kink ``points`` (the first elements of
    ``x``), or, for a 0-d ``x``, the value of region ``which``: a region is never left to
    chance."""
    pts = sorted(float(p) for p in points)
    reps = [pts[0] - OFF_ROUND * scale] + \
        [(a + b) / 2 for a, b in zip(pts, pts[1:], strict=False)] + [pts[-1] + OFF_ROUND * scale]
    out = np.array(x, copy=True)
    if out.ndim == 0:
        return np.asarray(reps[which % len(reps)], dtype=x.dtype)
    flat = out.reshape(-1)
    n = min(len(reps), flat.size)
    flat[:n] = reps[:n]
    return out


#: Decades below a small stratum's magnitude that its arrays reach (see :func:`_decades`).
DECADES = 6


def _decades(x: np.ndarray, scale: float, points: Any, shift: int = 0) -> np.ndarray:
    """A small magnitude's array with entries at ``scale·10^-(k+1/2)``, k < :data:`DECADES`,
    of alternating signs, each beside a kink point in turn: rules often switch to a series
    below a threshold (``|x| < 1e-4``), and a draw around ``scale`` rarely lands below one.
    They follow the regions' entries; without kinks, the first entry (``-1.1·scale``) only, so
    that an array of two entries has both signs and one of three reaches a decade down.
    Input number ``shift`` starts ``shift`` decades further down (cyclically): the inputs of
    an op never share a decade at the same position, so a multi-input op is not put at a
    common singular point by construction (hypot at x = y = 3e-6, its cone's apex), and
    each still reaches every decade when it has the room."""
    pts = sorted(float(p) for p in points)
    start = 1 if pts == [0.0] else len(pts) + 1
    out = np.array(x, copy=True)
    flat = out.reshape(-1)
    n = min(DECADES, max(0, flat.size - start))
    if not n:
        return out
    j = np.arange(n)
    k = (j + shift) % DECADES
    offsets = scale * 10.0 ** -(k + 0.5) * np.where(j % 2, -1.0, 1.0)
    flat[start:start + n] = np.asarray(pts)[k % len(pts)] + offsets
    return out


#: Phase sectors a stratum visits: complex entries are put at the centre of each sector.
PHASE_SECTORS = 8


def _phases(z: np.ndarray, margin: float, which: int) -> np.ndarray:
    """Complex values with their moduli kept and their phases moved to the centres of the
    :data:`PHASE_SECTORS` sectors of the arc ``|arg| <= pi - margin``: the first entries one
    sector each, from sector ``which`` on (so strata cover every sector even with two
    entries, or a 0-d value).  Every direction of the plane is probed, and none on the real
    axis or a branch cut the domain keeps ``margin`` away from."""
    low, high = -np.pi + margin, np.pi - margin
    centres = low + (np.arange(PHASE_SECTORS) + 0.5) * (high - low) / PHASE_SECTORS
    out = np.array(z, copy=True)
    flat = out.reshape(-1)
    n = min(PHASE_SECTORS, flat.size)
    sectors = (which + np.arange(n)) % PHASE_SECTORS
    flat[:n] = np.abs(flat[:n]) * np.exp(1j * centres[sectors])
    return out


def examples(op: Op, dtype: str = "float64", scales: tuple[float, ...] = SCALES,
             stratum: Stratum | None = None) -> Any:
    """A Hypothesis strategy of :class:`Example` inputs for ``op``; with ``stratum``, of that
    magnitude, shape family and kink region (values still drawn)."""
    meta = op.meta
    domains: tuple[Domain, ...] = tuple(meta.get("inputs") or (REAL,) * (op.nin or 1))
    # by default, one broadcasting group per input
    shapes_spec = meta.get("shapes") or ",".join(["(...)"] * len(domains))
    return _example(op, domains, shapes_spec, np.dtype(dtype), scales, stratum)


#: Shapes drawn for one example until every parameter has a choice at them.
SHAPE_ATTEMPTS = 4


def _fitted(draw: Any, op: Op, shapes_spec: Any, n: int,
            stratum: Stratum | None) -> tuple[list[tuple[int, ...]], dict[str, Any]] | None:
    """The shapes and parameters of one example, drawn again while a parameter has no choice
    at the shapes (an axis of a 0-d array: a misfit, like an axis out of range) and, in a
    stratum made to take a choice, while they do not offer it; None when nothing fits."""
    if stratum is not None and stratum.shapes is not None:
        shapes = [tuple(s) for s in stratum.shapes]
        try:
            return shapes, _draw_params(draw, op.meta.get("params"), shapes, stratum)
        except NoChoice:
            return None
    fit = None
    for family, form in _tries(stratum):
        shapes = _shapes(draw, op, shapes_spec, n, family, form)
        try:
            params = _draw_params(draw, op.meta.get("params"), shapes, stratum)
        except NoChoice:
            if _fixed(shapes_spec):
                raise  # the same shapes every time: no draw would fit
            continue
        fit = fit or (shapes, params)
        force = stratum.force if stratum is not None else ()
        if all(k not in params or choice_key(params[k]) == choice_key(v) for k, v in force):
            return shapes, params
    return fit


def _tries(stratum: Stratum | None) -> list[tuple[str | None, str | None]]:
    """The family and form of each draw of :func:`_fitted`: the stratum's own, then at
    random.  A stratum made to take a choice goes through every form, from one its number
    turns (a choice's attempts have consecutive numbers): the choice may exist or fit on one
    form's shapes only (``axis=3`` on the deep form's 4 dimensions)."""
    if stratum is None:
        return [(None, None)] * SHAPE_ATTEMPTS
    forms: tuple[str | None, ...] = (stratum.form,)
    if stratum.force:
        forms = (None, *FORMS.values())
        turn = stratum.region % len(forms)
        forms = forms[turn:] + forms[:turn]
    return [(stratum.family, form) for form in forms] + [(None, None)] * (SHAPE_ATTEMPTS - 1)


def takes_form(shapes_spec: Any) -> bool:
    """Whether a shapes callable takes a ``form`` keyword (see :data:`FORMS`): one that
    does draws the stratum's form itself; one of the draw alone is called as before."""
    try:
        params = inspect.signature(shapes_spec).parameters.values()
    except (TypeError, ValueError):  # no signature to read (a builtin): the draw alone
        return False
    return any(p.kind is p.VAR_KEYWORD or (p.name == "form" and p.kind is not p.POSITIONAL_ONLY)
               for p in params)


def _fixed(shapes_spec: Any) -> bool:
    """Whether a signature gives the same shapes at every draw (only fixed sizes)."""
    return isinstance(shapes_spec, str) and \
        all(t.isdigit() for g in parse_signature(shapes_spec) for t in g)


def _shapes(draw: Any, op: Op, shapes_spec: Any, n: int, family: str | None,
            form: str | None) -> list[tuple[int, ...]]:
    if callable(shapes_spec):
        # a drawer of its own takes the stratum's form if it says it can (``form=``)
        takes = form is not None and takes_form(shapes_spec)
        shapes = [tuple(s) for s in (shapes_spec(draw, form=form) if takes
                                     else shapes_spec(draw))]
    else:
        shapes = draw(draw_shapes(shapes_spec, family, form))
    if len(shapes) != n:
        raise ValueError(f"op {op.name!r}: {len(shapes)} shapes drawn for {n} declared inputs")
    return shapes


# Decorated once, here: Hypothesis reads a composite's source each time it decorates one
# (about 3 ms, more than drawing an example costs).
@st.composite
def _example(draw: Any, op: Op, domains: tuple[Domain, ...], shapes_spec: Any,
             np_dtype: np.dtype[Any], scales: tuple[float, ...],
             stratum: Stratum | None) -> Example:
    meta = op.meta
    kinks = meta.get("kinks", ())
    fitted = _fitted(draw, op, shapes_spec, len(domains), stratum)
    if fitted is None:
        return draw(st.nothing())  # rejected: none of the shapes drawn fit every parameter
    shapes, params = fitted
    scale = stratum.scale if stratum is not None else \
        scales[draw(st.integers(0, len(scales) - 1))]
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    context = {"shapes": shapes, "params": params}
    args = []
    for i, (dom, shape) in enumerate(zip(domains, shapes, strict=False)):
        x = dom.sample(rng, shape, np_dtype, scale, context)
        points = kinks(params) if callable(kinks) else kinks
        if stratum is not None and isinstance(dom, Real):
            # every region between declared kinks; without kinks, both signs
            regions = points if isinstance(points, (tuple, list)) and points else (0.0,)
            x = _regions(x, regions, scale, stratum.region).astype(np_dtype)
            if scale < 1:  # below its magnitude too, a decade at a time
                x = _decades(x, scale, regions, shift=i).astype(np_dtype)
        if stratum is not None and np.iscomplexobj(x) and dom.signature == "(...)":
            # every phase sector, off the branch cut a domain keeps away from
            x = _phases(x, float(getattr(dom, "margin", 0.0)), stratum.phase)
        if dom.differentiable and i not in op.nondiff_argnums and not np.iscomplexobj(x):
            x = avoid_kinks(x, kinks, params, scale).astype(np_dtype)
        args.append(x)
    if kinks == "ties":
        idx = [i for i, d in enumerate(domains)
               if d.differentiable and i not in op.nondiff_argnums]
        for i, a in zip(idx, _separate([args[i] for i in idx], scale), strict=False):
            args[i] = a
    return Example(args=args, params=params, dtype=str(np_dtype), scale=scale, seed=seed,
                   shapes=shapes)
