"""Run every requested check on one example (or only those that produce given outcomes)."""

from __future__ import annotations

import traceback
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np

from gradcheck.checker.agreement import examine_reference
from gradcheck.checker.checks import (
    blamed_identities,
    linearity_check,
    numeric_check,
    self_check,
)
from gradcheck.checker.compare import Outcome
from gradcheck.checker.complex import Realified
from gradcheck.checker.evaluation import normalise_error_text
from gradcheck.checker.leaks import leak_check
from gradcheck.checker.references import Reference
from gradcheck.checker.sampling import Example
from gradcheck.checker.session import STRUCTURE, Options, Session, Skip, Stop
from gradcheck.checker.table import row
from gradcheck.checker.targets import Target

__all__ = ["ExampleResult", "examine", "plan", "quiet"]

Check = Callable[[Session, str], None]


@dataclass
class ExampleResult:
    """The outcomes of one example; ``skipped`` says why it does not count ("nonfinite",
    "kink") or is None."""

    example: Example
    outcomes: list[Outcome] = field(default_factory=list)
    skipped: str | None = None
    counts: dict[str, int] = field(default_factory=dict)
    cleared: int = 0
    #: Whether the differentiated inputs or the outputs had no element: the example ran (a
    #: rule must cope with zero-size arrays) but compared no derivative entry.
    empty: bool = False
    #: Whether a checked primal or output was complex (checked as real pairs).
    complex: bool = False

    def failures(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.kind is not None]


def plan(options: Options) -> list[tuple[str, str, Check]]:
    """(path, reference, check) in the order they run (first order before second order),
    as the path table says: every path against ``numeric``; its identities (``self``); the
    linearity of the first-order maps; the dummy leaks of the double-VJP."""
    steps: list[tuple[str, str, Check]] = []
    for path in options.paths:
        r = row(path)
        if "numeric" in options.references:
            steps.append((path, "numeric", numeric_check))
        if "self" in options.references and r.identities:
            steps.append((path, "self", self_check))
        if r.linear_in:
            steps.append((path, "linearity", linearity_check))
        if r.leaks:
            steps.append((path, "dummy", leak_check))
    return steps


def _structure_only(sess: Session, path: str) -> None:
    if path != "forward":
        sess.primary(path)


def examine(target: Target, example: Example, options: Options,
            only: Iterable[tuple[str, str, str]] | None = None,
            references: Sequence[Reference] = ()) -> ExampleResult:
    """Every check of ``options`` on ``example``, then the same checks on each of
    ``references``' problems for the target and their agreement with the target; with
    ``only``, just the checks producing those (path, reference, side) triples (used while
    shrinking a counterexample).

    Floating-point warnings of the op (overflow at large inputs) are silenced: non-finite
    values are judged explicitly, and a warning must not turn into an exception."""
    with quiet():
        result = _examine(target, example, options, only, references)
    return result


@contextmanager
def quiet() -> Iterator[None]:
    """No numpy floating-point warnings, no Python warnings, inside the block."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def _examine(target: Target, example: Example, options: Options,
             only: Iterable[tuple[str, str, str]] | None,
             references: Sequence[Reference]) -> ExampleResult:
    wanted = None if only is None else set(only)
    result = ExampleResult(example)
    try:
        sess = Session(target, example, options)
    except Exception as e:  # binding the example failed: the target's fault, reported
        result.outcomes.append(Outcome(
            "forward", STRUCTURE, "error",
            message=normalise_error_text(f"{target.name}: cannot bind the example: {e}"),
            traceback=normalise_error_text(traceback.format_exc())))
        return result
    if options.paths and not sess.x:
        result.outcomes.append(Outcome(
            "forward", STRUCTURE, "error",
            message=f"{target.name}: nothing to differentiate: {_inputs(example)}; none is "
                    "a floating or complex array that is differentiated (integer, boolean or "
                    "non-array inputs, or inputs declared not differentiable), so no "
                    "derivative was checked; give floating or complex inputs"))
        return result
    try:
        result.skipped = _run_checks(sess, options, _wanted(wanted, ""))
        outcomes = list(sess.outcomes)
        if result.skipped is None and not any(o.path == "forward" for o in outcomes):
            for ref in references:
                mine = _wanted(wanted, ref.name)
                if mine is None or mine:
                    outcomes += examine_reference(sess, ref, mine, _run_checks)
    finally:
        sess.close()
    for o in outcomes:
        if o.kind is None:  # a pass reproduces nothing: its directions (arrays the size of
            o.directions = {}  # the inputs and outputs) are not kept for the whole check
    result.outcomes = outcomes
    # (an example whose forward failed is an error of its own, not an empty one)
    ran = not any(o.path == "forward" and o.kind is not None for o in outcomes)
    result.empty = ran and not (any(a.size for a in sess.x) and any(o.size for o in sess.outs))
    result.counts = sess.counts()
    result.cleared = sess.cleared
    result.complex = isinstance(sess.problem, Realified) and bool(sess.problem.pairs())
    return result


def _inputs(example: Example) -> str:
    """``input 0 is int64 [3], input 1 is str``: what each positional input is."""
    said = []
    for k, a in enumerate(example.args):
        kind = f"{a.dtype.name} {list(a.shape)}" if isinstance(a, np.ndarray) else \
            type(a).__name__
        said.append(f"input {k} is {kind}")
    return ", ".join(said) or "there is no input"


def _wanted(wanted: set[tuple[str, str, str]] | None,
            side: str) -> set[tuple[str, str]] | None:
    """The (path, reference) checks to run on ``side``'s session (a reference's session also
    runs its agreement with the target, keyed (path, <reference>, ""))."""
    if wanted is None:
        return None
    return {(p, r) for p, r, s in wanted if s == side or (side and r == side and not s)}


def _run_checks(sess: Session, options: Options, wanted: set[tuple[str, str]] | None,
                ) -> str | None:
    """Every planned check on ``sess`` (or those producing ``wanted`` pairs); returns why the
    example is skipped, or None."""
    steps = plan(options)
    if wanted is not None:
        # a self finding is filed under the path the numeric reference rejects, which may
        # be the other path of the identity that produced it
        selves = {p for want, r in wanted if r == "self" for p in blamed_identities(want)}
        steps = [s for s in steps if (s[0], s[1]) in wanted or
                 (s[1] == "self" and s[0] in selves)]
        steps += [(p, r, _structure_only) for p, r in sorted(wanted) if r == STRUCTURE]
    try:
        sess.forward()
        for path, _, check in steps:
            try:
                check(sess, path)
            except Stop:
                continue
        if wanted is None:
            for path in options.paths:  # structure of paths no comparison evaluated
                try:
                    sess.primary(path)
                except Stop:
                    continue
    except Skip as skip:
        return skip.reason
    except Stop:
        pass  # the forward itself failed: recorded
    return None
