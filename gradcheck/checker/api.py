"""``gradcheck.check`` and ``gradcheck.assert_gradients``: one target, every path.

A check draws examples per dtype from Hypothesis (seeded), runs every requested comparison
on each (:func:`~gradcheck.checker.examine.examine`), re-samples examples that overflow or sit
on a kink, shrinks each distinct failure to a minimal counterexample, and returns a
:class:`~gradcheck.checker.report.Report`.  A failed check is a result; only
:func:`assert_gradients` raises.
"""

from __future__ import annotations

import math
import time
import traceback
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from gradcheck.checker.assemble import SHRINKABLE, Collector, finding, sort_findings
from gradcheck.checker.checks import SEARCH
from gradcheck.checker.complex import DTYPE_NAMES
from gradcheck.checker.convergence import measured_convergence
from gradcheck.checker.evaluation import normalise_error_text
from gradcheck.checker.examine import ExampleResult, examine, plan
from gradcheck.checker.explore import (
    draw_examples,
    draw_one,
    shrink,
    stream_seed,
    stream_start,
)
from gradcheck.checker.gaps import (
    RESAMPLE_LIMIT,
    complex_unchecked,
    nondifferentiable,
    nothing_compared,
    only_empty,
    unchecked_choices,
    unsupported_paths,
    unusable,
)
from gradcheck.checker.heap import heap_kept
from gradcheck.checker.paths import PATHS
from gradcheck.checker.references import INTERNAL, Reference, get_reference, known_references
from gradcheck.checker.report import Cell, Finding, Report
from gradcheck.checker.sampling import Stratum, choice_key, param_choices
from gradcheck.checker.session import Options
from gradcheck.checker.specs import complex_inputs
from gradcheck.checker.targets import OpTarget, Target, as_target
from gradcheck.checker.threads import largest_input, one_blas_thread
from gradcheck.checker.timeout import CheckTimeout, time_limit
from gradcheck.checker.tolerances import Overrides, overridden
from gradcheck.engine import Registry

__all__ = ["check", "assert_gradients", "DEFAULT_EXAMPLES", "RESAMPLE_LIMIT", "SHRINK_BUDGET",
           "REFERENCE_SHRINK_BUDGET",
           "format_failure"]

#: Examples per dtype when ``examples`` is not given: all but the last are strata (fast
#: mode: one per magnitude class, 1e-3 to 1e3), the last is a random draw.
DEFAULT_EXAMPLES = {"fast": 9, "full": 4}
#: Predicate calls Hypothesis may spend shrinking one finding, and one check in all.
SHRINK_BUDGET = (40, 160)
#: The same for findings a reference's own checks make about its framework: each predicate
#: call runs that framework (TensorFlow's forward mode costs ~1 ms per op), and one wrong
#: rule there shows on several paths, so a smaller budget still shrinks the root finding.
REFERENCE_SHRINK_BUDGET = (12, 36)
#: Of ``examples``, how many are random draws on top of the strata (see
#: :class:`~.sampling.Stratum`); overflowing or kinked ones are re-sampled at random too.
RANDOM_EXTRA = 1
#: Usable examples per check on which each external reference runs (its framework is much
#: slower than the engine; the examples are the check's first, so the same every run).
REFERENCE_EXAMPLES = 3


def _names(value: Any, known: Sequence[str], what: str, default: Sequence[str]) -> tuple[str, ...]:
    if value is None:
        return tuple(default)
    names = (value,) if isinstance(value, str) else tuple(value)
    for n in names:
        if n not in known:
            raise ValueError(f"gradcheck.check: unknown {what} {n!r}; known: {', '.join(known)}")
    return names


def _options(paths: Any, references: Any, mode: str) -> Options:
    if mode not in ("fast", "full"):
        raise ValueError(f"gradcheck.check: mode must be 'fast' or 'full', got {mode!r}")
    chosen = _names(paths, PATHS, "path", PATHS)
    given = None if references is None else \
        (references,) if isinstance(references, str) else tuple(references)
    refs = _names(given, known_references(given or ()), "reference", INTERNAL)
    if not any(r in INTERNAL for r in refs):
        # frameworks named alone come on top of the numeric reference and the identities,
        # as on the command line: a check against autograd alone would pass a wrong rule
        # that autograd cannot run
        refs = (*INTERNAL, *refs)
    return Options(tuple(p for p in PATHS if p in chosen), refs, mode)


def _dtype_names(dtypes: Any) -> list[str]:
    """The names of ``dtypes`` as given (one or several; numpy dtypes and types accepted; a
    name numpy does not know is kept as it is, for the error that names it)."""
    given = (dtypes,) if isinstance(dtypes, (str, type, np.dtype)) else tuple(dtypes)
    names = []
    for d in given:
        try:
            names.append(np.dtype(d).name)
        except TypeError:
            names.append(str(d))
    return names


def _complex_asked(dtypes: Any) -> bool:
    """Whether ``dtypes`` names a complex dtype."""
    return dtypes is not None and any(n.startswith("complex") for n in _dtype_names(dtypes))


def _dtypes(dtypes: Any, target: Target) -> tuple[str, ...]:
    """Dtype names (numpy dtypes and types accepted), float64 and float32 only; complex128 and
    complex64 name the same precisions (complex inputs are checked as real pairs)."""
    if dtypes is None:
        return tuple(target.default_dtypes())
    names = _dtype_names(dtypes)
    if not names:
        raise ValueError("gradcheck.check: dtypes= is empty: give float64 and/or float32 "
                         "(complex128 / complex64), or leave it out for the target's default")
    for name in names:
        if name not in DTYPE_NAMES:
            raise ValueError(f"gradcheck.check: dtype {name!r} is not supported; use float64 "
                             "or float32 (complex128 or complex64)")
    return tuple(dict.fromkeys(DTYPE_NAMES[name] for name in names))


def check(target: Any, *, paths: Iterable[str] | str | None = None,
          references: Iterable[str] | str | None = None, mode: str = "fast", seed: int = 0,
          examples: int | None = None, dtypes: Iterable[str] | str | None = None,
          timeout: float | None = None, inputs: Any = None, params: Any = None,
          wrt: Any = None, outputs: Any = None, shapes: Any = None,
          registry: Registry | None = None, name: str | None = None,
          atol: float | None = None, rtol: float | None = None,
          eps: float | None = None, framework: str | None = None,
          accuracy: str | None = None) -> Report:
    """Check ``target`` (an op name, an ``Op``, a :class:`Target`, or a function written with
    ``gradcheck.numpy``, TensorFlow or autograd) along ``paths`` against ``references``;
    ``examples`` per dtype (default :data:`DEFAULT_EXAMPLES`).  ``references`` that name
    frameworks only (``["autograd"]``) come on top of the numeric reference and the
    identities between paths (``"numeric"``, ``"self"``); a list naming either of those is
    taken as it is.

    What to check (see :mod:`gradcheck.checker.specs`): ``inputs``, one entry per positional
    input (an example array, a ``Domain`` or a domain name such as ``"positive"``);
    ``params``, keyword arguments (a fixed value, or a list of choices to explore); ``wrt``,
    the differentiated inputs (default: every floating one); ``outputs``, the outputs checked;
    ``shapes``, a signature for drawn inputs (``"(...,n,n),(...,n)"``; default: they
    broadcast together, given arrays keep their shape); ``name``, what reports call a
    function (default: its qualified name).
    ``atol``, ``rtol``, ``eps`` override gradcheck's tolerances for this call (``rtol``
    replaces the relative rounding allowance, ``atol`` is added to every tolerance, ``eps`` is
    the numeric reference's initial step; see :class:`~gradcheck.checker.tolerances.Overrides`);
    the report shows them.  ``framework`` (``"torch"``, ``"jax"``, ``"tensorflow"`` or
    ``"autograd"``) says which framework a function is written in when gradcheck cannot
    tell from its code, its class or its inputs' arrays.  ``accuracy="normwise"`` says a
    function is accurate relative to each output's largest entry, not entry by entry (scipy's
    ``expm``): the numeric reference's rounding model follows (an op declares it with
    ``define_op(accuracy=...)``).
    The same arguments give byte-identical ``Report.to_json()``."""
    overrides = Overrides(atol, rtol, eps)
    spec = dict(params=params, wrt=wrt, outputs=outputs, shapes=shapes, name=name,
                framework=framework, accuracy=accuracy)
    t = as_target(target, inputs, registry, **spec)
    asked = _dtype_names(dtypes) if dtypes is not None else []
    complex_asked = [n for n in asked if n.startswith("complex")]
    if complex_asked and isinstance(t, OpTarget) and t.spec.domains is None:
        # complex dtypes: the op's complex domains, where it declares them
        drawn = complex_inputs(t.op.meta.get("inputs"), t.op.meta.get("complex_inputs"))
        if drawn is not None:
            _dtypes(dtypes, t)  # unknown names first
            _not_mixed(t.name, asked, complex_asked)
            t = as_target(target, drawn, registry, **spec)
    options = _options(paths, references, mode)
    if examples is not None and (isinstance(examples, bool) or not isinstance(examples, int)
                                 or examples < 1):
        raise ValueError(f"gradcheck.check: examples must be a positive integer, got {examples!r}")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise TypeError(f"gradcheck.check: seed must be an integer, got "
                        f"{type(seed).__name__} {seed!r}")
    if seed < 0:  # as the CLI's --seed and the plugin's --gradcheck-seed: reproducible there
        raise ValueError(f"gradcheck.check: seed must be a non-negative integer, got {seed}")
    if timeout is not None and not timeout > 0:
        raise ValueError(f"gradcheck.check: timeout must be positive, got {timeout!r}")
    count = examples or DEFAULT_EXAMPLES[mode]
    wanted = _dtypes(dtypes, t)
    refused = {d: why for d in wanted if (why := _refused_dtype(t, d))}
    if len(refused) == len(wanted):
        raise ValueError(refused[wanted[0]])
    report = Report(op=t.name, family=t.family, seed=int(seed), mode=mode,
                    dtypes=[d for d in wanted if d not in refused],
                    tolerance_reason=t.tolerance.reason if t.tolerance is not None else "",
                    tolerance_overrides=overrides.given)
    start, largest = time.monotonic(), largest_input(inputs)
    try:
        with time_limit(timeout), overridden(overrides), one_blas_thread(largest), \
                heap_kept(largest):
            plotted = _run(report, t, options, count)
        if plotted is not None:  # what is left of the time limit is the plot's
            left = None if timeout is None else max(timeout - (time.monotonic() - start), 1e-3)
            example, active = plotted
            report.defer_convergence(lambda: _convergence(
                t, example, active, report.stats, overrides, left, largest))
    except CheckTimeout as e:
        _fail(report, f"{t.name}: check {e} (per-op timeout)", None, {"timed_out": True})
    except Exception as e:  # noqa: BLE001 - e.g. the op's metadata cannot draw examples
        _fail(report, f"{t.name}: the check could not run: {type(e).__name__}: {e}",
              traceback.format_exc(), {})
    if complex_asked and "examples" in report.stats and \
            not report.stats.get("complex_examples"):
        report.findings = sort_findings(report.findings + complex_unchecked(
            t.name, complex_asked, _no_complex_why(t), len(complex_asked) == len(asked)))
    if refused:  # checked in the others; said, never silently dropped
        report.findings = sort_findings(report.findings + [
            Finding(t.name, "all", "all", "unsupported", why,
                    details={"dtype": d, "reason": why}) for d, why in refused.items()])
    return report


def _not_mixed(name: str, asked: list[str], complex_asked: list[str]) -> None:
    """An op that draws complex values from its own ``complex_inputs`` is checked at those
    for a complex dtype, at its real inputs for a real one: both in one call would check one
    of them under the other's name."""
    real = [n for n in asked if n not in complex_asked]
    if real:
        raise ValueError(
            f"gradcheck.check: {name}: dtypes= mixes real ({', '.join(real)}) and complex "
            f"({', '.join(complex_asked)}) dtypes; {name} draws complex inputs (its "
            "complex_inputs) for a complex dtype and real ones otherwise: check each in its "
            f"own call, dtypes={real!r} and dtypes={complex_asked!r}")


def _no_complex_why(t: Target) -> str:
    """Why a check asked for complex values met none (see ``complex_unchecked``)."""
    if isinstance(t, OpTarget) and t.spec.domains is None:
        return (f"{t.name} declares no complex_inputs= saying where to draw complex values, "
                "its inputs are real and so are its outputs")
    return ("the inputs given or drawn are real and so are the outputs; give complex "
            "inputs, such as inputs=['complex'] or a complex array")


def _refused_dtype(t: Target, dtype: str) -> str | None:
    """Why ``t`` cannot be checked in ``dtype`` (a framework's function runs in float64)."""
    why = getattr(t, "unsupported_dtype", None)
    return why(dtype) if why is not None else None


def _fail(report: Report, message: str, tb: str | None, stats: dict[str, Any]) -> None:
    """Replace whatever was found so far by one ``error`` finding (partial results would
    depend on how far the check got, which is not reproducible; so would a framework's
    process counters in its text)."""
    report.findings = [Finding(report.op, "all", "all", "error", normalise_error_text(message),
                               traceback=None if tb is None else normalise_error_text(tb))]
    report.cells, report.stats, report.convergence = [], stats, {}


def _external(t: Target, options: Options) -> tuple[list[Reference], list[Cell]]:
    """The external references that can check ``t``, and cells for those that cannot
    (``unavailable`` with the install hint, ``unsupported`` with the reason)."""
    usable, cells = [], []
    for name in options.references:
        if name in INTERNAL:
            continue
        ref = get_reference(name)
        if getattr(t, "framework", None) == name:
            note = f"the target is itself written with {name}: its paths are {name}'s own"
            cells += [Cell(p, name, "skipped", note=note) for p in options.paths]
            continue
        status, why = ref.status(), None
        if status is None:
            why = ref.supports(t)
        if status is None and why is None:
            usable.append(ref)
            continue
        state = "unavailable" if status else "unsupported"
        cells += [Cell(p, name, state, note=status or why or "") for p in options.paths]
    return usable, cells


def _noted(cells: list[Cell], t: Target, references: list[Reference]) -> list[Cell]:
    """What a reference says about its equivalent (e.g. a formula, not the framework's API)
    added to its cells' notes."""
    for ref in references:
        note = getattr(ref, "note", lambda target: "")(t)
        for c in cells:
            if note and c.reference == ref.name:
                c.note = "; ".join(filter(None, [c.note, note]))
    return cells


def _convergence(t: Target, example: Any, options: Options, stats: dict[str, Any],
                 overrides: Overrides, seconds: float | None, largest: int) -> dict[str, Any]:
    """The report's convergence data, computed when it is first read (it takes no part in a
    verdict, and a check in a test never shows it): under the check's own tolerance
    overrides and BLAS threads, in what was left of its time limit.  Its evaluations join
    the check's."""
    try:
        with time_limit(seconds), overridden(overrides), one_blas_thread(largest), \
                heap_kept(largest):
            data, spent = measured_convergence(t, example, options)
    except (Exception, CheckTimeout) as e:  # noqa: BLE001 - a plot never takes a verdict
        stats["convergence_error"] = f"{type(e).__name__}: {e}"
        return {}
    stats["evaluations"]["convergence"] = spent
    return data


def _run(report: Report, t: Target, options: Options, count: int) -> tuple[Any, Options] | None:
    """The check itself; returns the example the convergence plot differentiates (and the
    options it plots), or None when there is nothing to plot."""
    unsupported = {p: why for p, why in t.unsupported(options.paths).items()
                   if p in options.paths}
    active = Options(tuple(p for p in options.paths if p not in unsupported),
                     options.references, options.mode)
    references, ref_cells = _external(t, options)
    sides = tuple(r.name for r in references)
    pairs = [(p, r) for p, r, _ in plan(options)] + [(p, r) for r in sides for p in
                                                      options.paths]
    collector = Collector(pairs, sides)
    stats: dict[str, Any] = {"examples": {}, "skipped": {"nonfinite": 0, "kink": 0},
                             "cleared_by_full_mode": 0, "evaluations": {}, "shrink_calls": 0}
    kinks: list[tuple[ExampleResult, Any]] = []
    used: dict[str, list[Any]] = {}
    empty: list[str] = []  # dtypes whose usable examples all had nothing to compare
    ref_dtype = "float64" if "float64" in report.dtypes else report.dtypes[0]
    for dtype in report.dtypes:
        seed = stream_seed(report.seed, t.name, dtype)
        refs = references if dtype == ref_dtype else []
        results = _explore(t, active, dtype, count, seed, stats, refs)
        used[dtype] = [r.example for r in results if r.skipped is None]
        if used[dtype] and all(r.empty for r in results if r.skipped is None):
            empty.append(dtype)
        for r in results:
            collector.add(r)
            if r.skipped == "kink":
                kinks.append((r, dtype))
    by_side = {r.name: r for r in references}
    findings = _findings(t, active, report, collector, stats, _draws(count), by_side)
    # a path the target says it cannot compute is said once, not again by each check that
    # tried to use it (the double-VJP's identity with the JVP, say)
    findings = [f for f in findings if not (f.kind == "unsupported" and f.path in unsupported)]
    findings += unsupported_paths(t.name, unsupported)
    given = t.given_point
    findings += nondifferentiable(t.name, kinks, given)
    findings += unusable(t.name, report.dtypes, stats, given) if active.paths else []
    findings += unchecked_choices(t.name, stats) if active.paths else []
    findings += only_empty(t.name, empty) if active.paths else []
    report.cells = _noted(collector.build_cells(unsupported), t, references) + ref_cells
    findings += nothing_compared(t.name, report.cells, options, sides, findings)
    report.findings = sort_findings(findings)
    report.stats = stats
    # the convergence plot needs something to differentiate: the first non-empty example
    candidates = [e for d in ("float64", *report.dtypes) for e in used.get(d, [])]
    first = next((e for e in candidates if all(np.size(a) for a in e.args)),
                 candidates[0] if candidates else None)
    return (first, active) if first is not None and active.paths else None


def _explore(t: Target, options: Options, dtype: str, count: int, seed: int,
             stats: dict[str, Any], references: list[Reference]) -> list[ExampleResult]:
    """Examples until ``count`` are usable: overflowing or kinked ones are re-sampled.  The
    external ``references`` run on the first :data:`REFERENCE_EXAMPLES` usable ones."""
    results: list[ExampleResult] = []
    usable = 0
    base = max(1, count - RANDOM_EXTRA)
    strata = _strata(t, dtype, base, seed)
    count += len(strata) - base  # strata added for unmet choices
    drawn = iter(_drawn(t, dtype, count, seed, strata))

    def run(example: Any) -> ExampleResult:
        nonlocal usable
        r = examine(t, example, options,
                    references=references if usable < REFERENCE_EXAMPLES else [])
        results.append(r)
        stats["cleared_by_full_mode"] += r.cleared
        for k, n in r.counts.items():
            stats["evaluations"][k] = stats["evaluations"].get(k, 0) + n
        if r.skipped:
            stats["skipped"][r.skipped] = stats["skipped"].get(r.skipped, 0) + 1
        else:
            usable += 1
            if r.complex:  # said only when there are some (see _complex_unchecked)
                found = stats.setdefault("complex_examples", {})
                found[dtype] = found.get(dtype, 0) + 1
        return r

    for example in drawn:
        r = run(example)
        if usable >= count or (r.skipped and t.given_point):
            break  # before the next example is drawn (a given point would only repeat)
    if usable and all(r.empty for r in results if not r.skipped):
        # every usable example was zero-size (a parameter choice or shape that leaves
        # nothing to compare): draw on until one compares something
        for example in drawn:
            r = run(example)
            if not (r.skipped or r.empty):
                break
    unchecked = _choices_checked(t, dtype, seed, results, run)
    if unchecked:
        stats.setdefault("unchecked_choices", {})[dtype] = unchecked
    stats["examples"][dtype] = usable
    return results


def _ran(results: list[ExampleResult]) -> list[Any]:
    """The usable examples (a choice that empties the output, ``tile``'s ``reps=(0, 2)``,
    still ran every rule: it is checked)."""
    return [r.example for r in results if r.skipped is None]


def _choices_checked(t: Target, dtype: str, seed: int, results: list[ExampleResult],
                     run: Any) -> list[dict[str, Any]]:
    """Every parameter choice on a usable example with elements: a choice whose examples
    were all skipped (``axis=3`` on arrays of at most 3 dimensions) gets strata of its own;
    a fixed choice still without one is returned (name, value, why), for a finding (a choice
    never checked is never a pass).  A choice a callable of the shapes offers belongs to
    those shapes (``reshape``'s targets): its strata are tried, and nothing is claimed."""
    unchecked = []
    space = t.param_space()
    for n, (name, value) in enumerate(unmet_choices(space, _ran(results))):
        attempts = 0 if t.given_point else CHOICE_ATTEMPTS
        for attempt in range(attempts):
            k = UNCHECKED_STRATA + CHOICE_ATTEMPTS * n + attempt
            example = _forced(t, dtype, seed, k, attempt, name, value)
            if example is not None and run(example).skipped is None:
                break
        tried = [r for r in results if took(r.example, name, value, space)]
        if not callable(space[name]) and all(r.skipped for r in tried):
            why = sorted({r.skipped for r in tried if r.skipped})
            unchecked.append({"name": name, "value": _plain(value), "skipped": why})
    return unchecked


def _plain(value: Any) -> Any:
    """A parameter value as JSON holds it (tuples as lists)."""
    return [_plain(v) for v in value] if isinstance(value, (tuple, list)) else value


def _drawn(t: Target, dtype: str, count: int, seed: int, strata: list[Any]) -> Iterator[Any]:
    """The examples a check tries, in order: the strata, then the random stream.  The stream
    is drawn in full (:func:`_draws`) only when overflowing or kinked examples used up its
    first :data:`RANDOM_EXTRA` ones: a stream's first examples are the same whatever its
    length, and drawing the rest cost a third of a small check."""
    yield from strata
    first = stream_start(t.strategy(dtype), RANDOM_EXTRA, seed)
    yield from first
    yield from draw_examples(t.strategy(dtype), _draws(count), seed)[len(first):]


def _strata(t: Target, dtype: str, count: int, seed: int) -> list[Any]:
    """One example from each of the first ``count`` strata (every magnitude, shape family and
    kink region, deterministically at every seed), then one from a stratum added for each
    parameter choice none of them took on an example with elements (see
    :func:`unmet_choices`); random draws come on top.  The seed turns which choices the
    first strata take, so sweeps over seeds meet other combinations."""
    drawn = [draw_one(t.strategy(dtype, _stratum(k, seed)), _stratum_seed(seed, k))
             for k in range(count)]
    found = [example for example in drawn if example is not None]
    space = t.param_space()
    k, added, tried = count, 0, set()
    # an added stratum's shapes may offer choices the first ones did not: again until none
    while added < MAX_ADDED_STRATA:
        unmet = [(name, value) for name, value in unmet_choices(space, found)
                 if (name, choice_key(value)) not in tried]
        if not unmet:
            break
        for name, value in unmet:
            tried.add((name, choice_key(value)))
            if any(took(e, name, value, space) for e in found):
                continue  # an added stratum took it on the way
            offering = _offering(space, found, name, value)
            for attempt in range(CHOICE_ATTEMPTS):  # drawn shapes of too few dimensions
                # lack it: each attempt takes the next magnitude and shape family; after
                # RANDOM_ATTEMPTS, the shapes of an example that offered it
                at = offering if attempt >= RANDOM_ATTEMPTS else None
                example = _forced(t, dtype, seed, k, added + attempt, name, value, at)
                k += 1
                if example is not None:
                    found.append(example)  # (drawing is cheap: only a taker is examined)
                    added += 1
                    break
            if added >= MAX_ADDED_STRATA:
                break
    return found


def _offering(space: Any, found: list[Any], name: str,
              value: Any) -> tuple[tuple[int, ...], ...] | None:
    """The shapes of the first example in ``found`` (one with elements first) at which
    parameter ``name``'s choices include ``value``; None when its choices do not depend on
    the shapes, or none does."""
    entry = space.get(name) if isinstance(space, dict) else None
    if not callable(entry):
        return None
    key = choice_key(value)
    for example in sorted(found, key=lambda e: not _has_elements(e)):
        if any(choice_key(v) == key for v in param_choices(entry, example.shapes)):
            return tuple(tuple(s) for s in example.shapes)
    return None


def _forced(t: Target, dtype: str, seed: int, k: int, n: int, name: str, value: Any,
            shapes: tuple[tuple[int, ...], ...] | None = None) -> Any:
    """An example of stratum ``k`` made to take ``value`` for parameter ``name`` (magnitude
    and shape family the ``n``-th of :data:`ADDED_STRATA`; at ``shapes`` when given), or None
    when its shapes do not offer it."""
    scale, family = ADDED_STRATA[n % len(ADDED_STRATA)]
    stratum = Stratum(scale, family, k, turn=k + seed, force=((name, value),), shapes=shapes)
    example = draw_one(t.strategy(dtype, stratum), _stratum_seed(seed, k))
    return example if example is not None and \
        took(example, name, value, t.param_space()) else None


def _stratum(k: int, seed: int) -> Stratum:
    return replace(Stratum.number(k), turn=k + seed)


def _stratum_seed(seed: int, k: int) -> int:
    return seed + 7919 * (k + 1)


#: Magnitudes and shape families of the strata added for unmet parameter choices: arrays
#: (a choice that depends on the shapes needs dimensions), ordinary magnitudes first.
ADDED_STRATA = ((1.0, "batched"), (0.1, "broadcast"), (3.0, "batched"), (10.0, "broadcast"))
#: Draws per unmet choice (a drawn shape of too few dimensions may not offer it).
CHOICE_ATTEMPTS = 8
#: Of those, the draws with shapes drawn at random; the rest take the shapes of an example
#: that offered the choice, when it depends on the shapes (reshape's target shapes are
#: offered by one input shape each: 16 random draws often found none).
RANDOM_ATTEMPTS = 2
#: At most this many strata are added per dtype for unmet choices.
MAX_ADDED_STRATA = 16
#: Strata numbers from here on: those drawn for a choice whose examples were all skipped.
UNCHECKED_STRATA = 10_000


def unmet_choices(space: Any, found: list[Any]) -> list[tuple[str, Any]]:
    """``(name, value)`` of each explored parameter choice that no example in ``found`` with
    elements took, in name and choice order.  A choice given as a callable of the shapes is
    counted at every shape drawn (``axis=1`` exists for 2-d inputs only)."""
    if not isinstance(space, dict):
        return []  # a callable draws every parameter: its choices are its own
    full = [e for e in found if _has_elements(e)]
    unmet = []
    for name in sorted(space):
        offered: dict[str, Any] = {}
        for example in full or found:
            for value in param_choices(space[name], example.shapes):
                offered.setdefault(choice_key(value), value)
        if len(offered) < 2:
            continue  # a fixed value
        taken = {choice_key(e.params.get(name)) for e in full
                 if name in e.params and _counts(e, space[name])}
        unmet += [(name, v) for key, v in offered.items() if key not in taken]
    return unmet


def took(example: Any, name: str, value: Any, space: Any) -> bool:
    """Whether ``example`` checked ``value`` for parameter ``name`` of ``space``: it took
    it, has elements, and (a value from a fixed list) an ordinary magnitude."""
    return name in example.params and _has_elements(example) and \
        choice_key(example.params[name]) == choice_key(value) and \
        _counts(example, space.get(name) if isinstance(space, dict) else None)


#: The magnitudes at which a choice from a fixed list counts as checked: at 1e3 elu's alpha
#: scales e^-1000 = 0 and gelu's approximate form and the exact one both saturate, so a
#: derivative that ignores them passes there.  (Choices a callable offers for the drawn
#: shapes, such as axes, show at any magnitude.)
TELLING_SCALES = (0.1, 10.0)


def _counts(example: Any, entry: Any) -> bool:
    """Whether a choice of parameter ``entry`` (its choices, or a callable offering them for
    the shapes) taken by ``example``, which has elements, was checked there."""
    low, high = TELLING_SCALES
    return callable(entry) or low <= example.scale <= high


def _has_elements(example: Any) -> bool:
    """Whether every input of ``example`` has elements (a choice taken on an empty or
    input-less example compared nothing)."""
    return bool(example.args) and all(np.size(a) for a in example.args)


def _draws(count: int) -> int:
    """Examples drawn per dtype: room to re-sample overflowing and kinked ones."""
    return 2 * count + RESAMPLE_LIMIT


def _findings(t: Target, options: Options, report: Report, collector: Collector,
              stats: dict[str, Any], draws: int,
              references: dict[str, Reference]) -> list[Finding]:
    out, spent = [], {False: 0, True: 0}
    searching = _searching(options)
    for key in sorted(collector.first):
        outcome, example = collector.first[key]
        kind, path, ref, side = key
        theirs = side in references  # a finding about a reference's framework
        per, total = REFERENCE_SHRINK_BUDGET if theirs else SHRINK_BUDGET
        if kind == "dependence_leak" and ("value_leak", path, ref, side) in collector.first:
            continue  # reading the dummy is implied by a value leak
        shrunk = False
        # a disagreement between two sides is judged by both sides' numeric checks at the
        # example where it was seen: it is not shrunk (each side's own findings are)
        if kind in SHRINKABLE and spent[theirs] < total and ref not in references:
            refs = [references[n] for n in (side, ref) if n in references]

            def shows(ex: Any, key: tuple[str, str, str, str] = key,
                      refs: list[Reference] = refs, opts: Options = searching) -> Any:
                r = examine(t, ex, opts, only=[key[1:]], references=refs)
                match = [o for o in r.outcomes if o.key == key]
                return (match[0], ex) if match else None
            seed = stream_seed(report.seed, t.name, example.dtype)
            try:
                found, calls = shrink(t.strategy(example.dtype), draws, seed, shows,
                                      min(per, total - spent[theirs]))
                if found is not None:
                    calls += 1  # the smallest example, confirmed in the check's own mode
                    found = shows(found[1], opts=options)
            except Exception:  # noqa: BLE001 - the finding stands unshrunk
                found, calls = None, min(per, total - spent[theirs])
            spent[theirs] += calls
            if found is not None:
                outcome, example = found
                shrunk = True
        f = finding(t.name, outcome, example, shrunk=shrunk,
                    failing_dtypes=collector.failing_dtypes.get(key, []))
        if collector.silent(key):
            f.kind = "silently_zero"
            f.message = (f"{path} is identically zero at every example where the numeric "
                         f"derivative is not (a rule returned nothing: None turned into "
                         f"zeros? or the computation left the framework's graph: .item(), "
                         f".detach(), .numpy(), stop_gradient?); first: {f.message}")
        out.append(f)
    stats["shrink_calls"] = spent[False] + spent[True]
    return out


def _searching(options: Options) -> Options:
    """The options a shrinking search judges its candidates with: fast mode, without the
    whole Jacobians that confirm a fast-mode failure (:data:`~.checks.SEARCH`).  Most
    candidates cost random projections only; the smallest example the search finds is then
    confirmed in the check's own mode, and only a confirmed one replaces the finding's
    example."""
    return Options(options.paths, options.references, SEARCH)


def format_failure(report: Report, limit: int = 5) -> str:
    """A readable multi-line account of a report's failures (used by assert_gradients)."""
    fails = report.failures
    lines = [f"gradcheck: {report.op!r} fails {len(fails)} check(s) "
             f"(seed {report.seed}, mode {report.mode}, dtypes {', '.join(report.dtypes)})"]
    if report.overrides_text:
        lines.append(f"  {report.overrides_text}")
    for f in fails[:limit]:
        lines.append(f"- [{f.kind}] {f.path} vs {f.reference}: {f.message}")
        if not math.isnan(f.max_abs_err):
            lines.append(f"    error {f.max_abs_err:.3g}, tolerance {f.tolerance:.3g}, "
                         f"ratio {f.ratio:.3g}, worst index {f.worst_index}")
        if f.counterexample:
            lines.append(f"    counterexample: {_short(f.counterexample)}")
    if len(fails) > limit:
        lines.append(f"... and {len(fails) - limit} more")
    return "\n".join(lines)


#: Counterexample fields said first: how to reproduce it (the arrays, long, come after).
_SAID_FIRST = ("shapes", "params", "dtype", "scale", "seed")


def _short(value: Any, width: int = 600) -> str:
    """The counterexample in one line: its shapes, parameters, dtype and seed in full, then
    the arrays, each cut to its share of ``width``."""
    first = [f"{k}={value[k]}" for k in _SAID_FIRST if k in value]
    rest = [(k, str(v)) for k, v in value.items() if k not in _SAID_FIRST]
    share = max(80, width // max(1, len(rest)))
    cut = [f"{k}={v if len(v) <= share else v[:share] + ' ...'}" for k, v in rest]
    return ", ".join(first + cut)


def assert_gradients(target: Any, **options: Any) -> Report:
    """:func:`check` ``target`` and raise ``AssertionError`` if any finding is a failure
    (message: op, path and reference, error vs tolerance, worst index, counterexample).
    Returns the report otherwise."""
    report = check(target, **options)
    if not report.passed:
        raise AssertionError(format_failure(report))
    return report
