"""One example of one target: evaluating paths safely, with the directions that probe them.

A :class:`Session` binds the target to the example, evaluates the forward and each path's
*primary* value once per example (twice, in fact: the two calls must agree bit for bit),
turns rule errors, in-place writes and crashes into outcomes, and hands out random
directions.  Directions are drawn per name from the example's seed, so a check run alone
(while shrinking) sees exactly the directions it saw in the full run.
"""

from __future__ import annotations

import traceback
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from gradcheck.checker.compare import Linearization, Outcome, top
from gradcheck.checker.paths import InputMutated
from gradcheck.checker.references import Unsupported
from gradcheck.checker.sampling import Example
from gradcheck.checker.table import FLAG, row
from gradcheck.checker.targets import Problem, Target, with_dtype
from gradcheck.checker.tolerances import Tolerances, conditioning
from gradcheck.engine import RuleError
from gradcheck.ops.refs import NoEquivalent

__all__ = ["Options", "Session", "Stop", "Skip", "STRUCTURE", "FLAG"]

#: Reference name of structural findings (shape, dtype, input_mutated, nondeterministic, error).
STRUCTURE = "structure"


@dataclass(frozen=True)
class Options:
    """What to check: paths, references (internal ones: ``numeric``, ``self``) and the mode."""

    paths: tuple[str, ...]
    references: tuple[str, ...]
    mode: str = "fast"


class Stop(Exception):
    """A path could not be evaluated (its outcome is recorded): skip what needs it."""


class Skip(Exception):
    """The example cannot be used (non-finite values, a kink): re-sample."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _same_bits(a: Any, b: Any) -> bool:
    la = a if isinstance(a, (list, tuple)) else [a]
    lb = b if isinstance(b, (list, tuple)) else [b]
    if len(la) != len(lb):
        return False
    for x, y in zip(la, lb, strict=True):
        if isinstance(x, (list, tuple)) or isinstance(y, (list, tuple)):
            if not _same_bits(x, y):
                return False
        elif isinstance(x, np.ndarray) or isinstance(y, np.ndarray):
            x, y = np.asarray(x), np.asarray(y)
            if x.shape != y.shape or x.dtype != y.dtype or x.tobytes() != y.tobytes():
                return False
        elif x != y:
            return False
    return True


class Session:
    """The target at one example, in the example's dtype (and in float64 for references).

    With ``problem`` and ``side``, the session is a reference framework's own problem for the
    target at this (float64) example: every check runs on it the same way, and its outcomes
    are stamped with ``side``."""

    def __init__(self, target: Target, example: Example, options: Options,
                 problem: Problem | None = None, side: str = "",
                 rebind: Callable[[Example], Problem] | None = None) -> None:
        self.target, self.example, self.options = target, example, options
        self.dtype = example.dtype
        self.side = side
        #: How this side binds another example (the perturbed one), for a reference's session.
        self.rebind = rebind
        self.problem: Problem = target.bind(example) if problem is None else problem
        self.reference_problem: Problem = self.problem if self.dtype == "float64" else \
            target.bind(with_dtype(example, "float64"))
        self.x = [np.asarray(p) for p in self.problem.primals]
        self.x64 = [p.astype(np.float64) for p in self.x]
        self.outcomes: list[Outcome] = []
        self.outs: list[np.ndarray] = []
        self.cleared = 0  # fast-mode failures that the full-mode recheck cleared
        self._primary: dict[str, Any] = {}
        self._failed: set[str] = set()
        self._lins: dict[str, Linearization] = {}
        self._perturbed: Session | None = None
        self._directions: dict[tuple[str, str, float], list[np.ndarray]] = {}
        self.tol = Tolerances(self.dtype, conditioning(self.x), self._factor())

    def _factor(self) -> float:
        factor = self.target.tolerance.factor if self.target.tolerance is not None else 1.0
        # a framework known to be less accurate than the allowance declares by how much
        accuracy = getattr(self.problem, "accuracy", None)
        return factor * (accuracy[0] if accuracy else 1.0)

    def _coarsest(self) -> None:
        """Tolerances in the least precise dtype among the primals and the outputs."""
        floats = [a.dtype for a in (*self.x, *self.outs) if a.dtype.kind == "f"]
        dtype = max(floats, key=lambda d: np.finfo(d).eps, default=np.dtype(self.dtype))
        self.tol = Tolerances(dtype.name, conditioning(self.x), self._factor())

    # -- directions -------------------------------------------------------------------------
    def direction(self, name: str, like: str = "primals", scale: float = 1.0) -> list[np.ndarray]:
        """Gaussian arrays shaped like the primals or the outputs, fixed by ``name``."""
        key = (name, like, scale)
        if key not in self._directions:
            self._directions[key] = self._draw(name, like, scale)
        return [a.copy() for a in self._directions[key]]

    def _draw(self, name: str, like: str, scale: float) -> list[np.ndarray]:
        rng = np.random.default_rng([self.example.seed, zlib.crc32(name.encode())])
        like_arrays = self.x if like == "primals" else self.outs
        # each in its array's dtype (an output may be float32 for float64 inputs: astype)
        return [(rng.standard_normal(a.shape) * scale).astype(
                    a.dtype if a.dtype.kind == "f" else self.dtype) for a in like_arrays]

    # -- outcomes ---------------------------------------------------------------------------
    def record(self, outcome: Outcome) -> Outcome:
        if self.side:
            outcome.side = self.side
            if outcome.message and not outcome.message.startswith(self.side):
                outcome.message = f"{self.side}'s {self.target.name}: {outcome.message}"
        self.outcomes.append(outcome)
        return outcome

    def structural(self, path: str, kind: str, message: str, tb: str | None = None,
                   **directions: Any) -> None:
        self.record(Outcome(path, STRUCTURE, kind, message=message, traceback=tb,
                            directions={k: v for k, v in directions.items()}))

    # -- evaluating -------------------------------------------------------------------------
    def evaluate(self, path: str, call: Callable[[], Any],
                 expect: Sequence[np.ndarray] | None = None, primary: bool = False,
                 **directions: Any) -> Any:
        """Call a path, turning every way it can go wrong into a recorded outcome (then
        :class:`Stop`).  ``expect`` are the arrays the result must match in shape and dtype;
        a primary evaluation is repeated and must agree bit for bit."""
        if path in self._failed:
            raise Stop(path)
        try:
            result = call()
            if primary and not _same_bits(result, call()):
                self.structural(path, "nondeterministic", f"{path}: two identical calls gave "
                                "different results", **directions)
        except RuleError as e:
            kind = e.kind if e.kind in ("shape", "dtype") else "error"
            self._fail(path, kind, f"{path}: {e}", traceback.format_exc(), directions)
        except (Unsupported, NoEquivalent) as e:  # it cannot compute this path: its reason
            self._fail(path, "unsupported", f"{path}: unsupported: {e}", None, directions)
        except InputMutated as e:
            self._fail(path, "input_mutated", f"{path} wrote into its inputs: {e}", None,
                       directions)
        except Exception as e:  # an op's crash is a finding, never the checker's crash
            if self.side:  # a framework that raises cannot compute this path: its own words
                self._fail(path, "unsupported", f"{path}: unsupported: {self.side} raised "
                           f"{type(e).__name__}: {_first_line(e)}", None, directions)
            self._fail(path, "error", f"{path} raised {type(e).__name__}: {e}",
                       traceback.format_exc(), directions)
        if expect is not None:
            self._check_structure(path, result, expect, directions)
        return result

    def _fail(self, path: str, kind: str, message: str, tb: str | None,
              directions: dict[str, Any]) -> None:
        self._failed.add(path)
        self.structural(path, kind, message, tb, **directions)
        raise Stop(path)

    def _check_structure(self, path: str, result: Any, expect: Sequence[np.ndarray],
                         directions: dict[str, Any]) -> None:
        got = _leaves(result)
        if len(got) != len(expect):
            self._fail(path, "error", f"{path} returned {len(got)} arrays, expected "
                       f"{len(expect)}", None, directions)
        for k, (g, e) in enumerate(zip(got, expect, strict=True)):
            if g.shape != e.shape:
                self._fail(path, "shape", f"{path}: result {k} has shape {g.shape}, expected "
                           f"{e.shape} (its input's)", None, directions)
            if e.dtype.kind == "f" and g.dtype != e.dtype:
                self._fail(path, "dtype", f"{path}: result {k} has dtype {g.dtype}, expected "
                           f"{e.dtype} (its input's)", None, directions)

    def primary(self, path: str) -> Any:
        """The path's main value at this example (cached), with the structural checks."""
        if path not in self._primary:
            self._primary[path] = self._compute(path)
        return self._primary[path]

    def _compute(self, path: str) -> Any:
        call, expect, directions = row(path).primary(self)
        return self.evaluate(path, call, expect, True, **directions)

    # -- the forward and its numeric linearizations -----------------------------------------
    def forward(self) -> None:
        """Evaluate the outputs; :class:`Skip` when they are not finite (overflow)."""
        self.outs = _leaves(self.evaluate("forward", lambda: self.problem.forward(self.x),
                                          primary=True))
        self._coarsest()
        if all(np.all(np.isfinite(o)) for o in self.outs if o.dtype.kind in "fc"):
            return
        self._overflow_check()
        raise Skip("nonfinite")

    def _overflow_check(self) -> None:
        """Non-finite outputs are fine when the true value overflows too; not when a trusted
        value (the op's declared reference, or float64 for a float32 run) is finite."""
        trusted, name = None, "reference"
        try:
            trusted = self.target.reference(self.example)
            if trusted is None and self.dtype != "float64":
                trusted, name = self.reference_problem.forward(self.x64), "float64"
        except Exception:  # the reference cannot say: treat as an honest overflow
            return
        limit = float(np.finfo(self.dtype).max) / 4
        if trusted is None or len(trusted) != len(self.outs):
            return
        for k, (o, t) in enumerate(zip(self.outs, trusted, strict=True)):
            t = np.asarray(t, dtype=np.float64)
            bad = ~np.isfinite(o) & np.isfinite(t) & (np.abs(t) < limit)
            if o.shape == t.shape and bad.any():
                idx = [int(i) for i in np.argwhere(bad)[0]]
                self.record(Outcome(
                    "forward", name, "mismatch", worst_index=idx,
                    message=f"forward gives {o[tuple(idx)]} at output {k} {idx} where the "
                            f"{name} gives {t[tuple(idx)]:.6g}: an intermediate overflowed "
                            "(unstable formula?)"))
                return

    def linearization(self, name: str) -> Linearization:
        """``f``, ``G(x, v) = J^T v`` or ``K(x, u) = J u`` in float64, at this example."""
        if name not in self._lins:
            ref, nx = self.reference_problem, len(self.x)
            if name == "f":
                lin = Linearization("f", lambda a: ref.forward(a), self.x64,
                                    [o.shape for o in self.outs])
            elif name == "G":
                v = [a.astype(np.float64) for a in self.direction("v", "outputs")]
                lin = Linearization("G", lambda a: ref.vjp(a[:nx], a[nx:]), self.x64 + v,
                                    [a.shape for a in self.x])
            else:
                s = [a.astype(np.float64) for a in self.direction("s")]
                lin = Linearization("K", lambda a: ref.jvp(a[:nx], a[nx:]), self.x64 + s,
                                    [o.shape for o in self.outs])
            self._lins[name] = lin
        return self._lins[name]

    def perturbed(self) -> Session | None:
        """The same example with every floating input moved by about two ulps (None when that
        sample cannot be used): re-evaluating a path there measures its rounding noise."""
        if self._perturbed is None:
            rng = np.random.default_rng([self.example.seed, zlib.crc32(b"perturb")])
            args = []
            for a in self.example.args:
                a = np.asarray(a)
                if a.dtype.kind == "f":
                    step = (2 * np.finfo(a.dtype).eps * rng.choice([-1.0, 1.0], a.shape))
                    a = (a * (1 + step.astype(a.dtype))).astype(a.dtype)
                args.append(a)
            moved = Example(args=args, params=self.example.params, dtype=self.dtype,
                            scale=self.example.scale, seed=self.example.seed,
                            shapes=self.example.shapes)
            try:
                problem = self.rebind(moved) if self.rebind is not None else None
                other = Session(self.target, moved, self.options, problem, self.side,
                                self.rebind)
                other.forward()
            except Exception:  # noqa: BLE001 - Skip, Stop, or the reference refused it
                return None
            self._perturbed = other
        return self._perturbed

    def natural(self, lin: str = "f") -> float:
        """The problem's natural derivative scale, ``max(|f| / |x|, 1 / max(1, |x|))`` (over
        ``|x|`` once more, when that is small, for the second-order maps G and K, times the
        size of the cotangent or tangent they are linear in).

        A rule computes its derivative from intermediate values on this scale: where the
        derivative itself is tiny (``1 - tanh(x)**2`` at saturation, ``softmax - onehot`` for
        a confident prediction) the rounding of those intermediates is what it loses, so
        tolerances are never smaller than that rounding."""
        out = max((float(np.max(np.abs(o), where=np.isfinite(o), initial=0.0))
                   for o in self.outs if o.dtype.kind == "f"), default=0.0)
        xi = max(top(self.x), float(np.finfo(np.float64).eps) ** 0.5)
        scale = max(out / xi, 1.0 / max(1.0, xi))
        if lin == "G":
            scale *= max(1.0, 1.0 / xi) * max(1.0, top(self.direction("v", "outputs")))
        elif lin == "K":
            scale *= max(1.0, 1.0 / xi) * max(1.0, top(self.direction("s")))
        return scale

    def counts(self) -> dict[str, int]:
        """Calls per path of the analytic problem and the float64 reference, plus the numeric
        reference's evaluations of f, G and K."""
        total: dict[str, int] = {}
        problems = {id(self.problem): self.problem, id(self.reference_problem):
                    self.reference_problem}
        for prob in problems.values():
            for k, n in dict(getattr(prob, "counts", {})).items():
                total[k] = total.get(k, 0) + int(n)
        return dict(sorted(total.items()))


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else ""


def _leaves(result: Any) -> list[np.ndarray]:
    if isinstance(result, tuple) and len(result) == 2 and isinstance(result[1], (bool, np.bool_)):
        return [*_leaves(result[0]), np.asarray(result[1])]  # double_vjp: (arrays, read flag)
    if isinstance(result, (list, tuple)):
        return [leaf for r in result for leaf in _leaves(r)]
    return [np.asarray(result)]
