"""One example of one target: evaluating paths safely, with the directions that probe them.

A :class:`Session` binds the target to the example, evaluates the forward and each path's
*primary* value once per example (twice, in fact: the two calls must agree bit for bit),
turns rule errors, in-place writes and crashes into outcomes, and hands out random
directions.  Directions are drawn per name from the example's seed, so a check run alone
(while shrinking) sees exactly the directions it saw in the full run.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from gradcheck.checker.compare import Linearization, Outcome
from gradcheck.checker.complex import Realified, realified, split
from gradcheck.checker.directions import Directions, tangent_domains
from gradcheck.checker.evaluation import STRUCTURE, Guarded, Stop, leaves
from gradcheck.checker.sampling import Example
from gradcheck.checker.table import FLAG, row
from gradcheck.checker.targets import Problem, Target, with_dtype
from gradcheck.checker.tolerances import Tolerances, conditioning, natural_scale

__all__ = ["Options", "Session", "Stop", "Skip", "STRUCTURE", "FLAG"]

@dataclass(frozen=True)
class Options:
    """What to check: paths, references (internal ones: ``numeric``, ``self``) and the mode."""

    paths: tuple[str, ...]
    references: tuple[str, ...]
    mode: str = "fast"


class Skip(Exception):
    """The example cannot be used (non-finite values, a kink): re-sample."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class Session(Guarded):
    """The target at one example, in the example's dtype (and in float64 for references).

    With ``problem`` and ``side``, the session is a reference framework's own problem for the
    target at this (float64) example: every check runs on it the same way, and its outcomes
    are stamped with ``side``."""

    def __init__(self, target: Target, example: Example, options: Options,
                 problem: Problem | None = None, side: str = "",
                 rebind: Callable[[Example], Problem] | None = None) -> None:
        super().__init__()
        self.target, self.example, self.options = target, example, options
        self.dtype = example.dtype
        self.side = side
        #: How this side binds another example (the perturbed one), for a reference's session.
        self.rebind = rebind
        # complex primals and outputs are real pairs from here on (see .complex)
        self.problem: Problem = realified(target.bind(example) if problem is None else problem)
        self.reference_problem: Problem = self.problem if self.dtype == "float64" else \
            realified(target.bind(with_dtype(example, "float64")))
        self.x = [np.asarray(p) for p in self.problem.primals]
        self.x64 = [p.astype(np.float64) for p in self.x]
        self.outs: list[np.ndarray] = []
        self.cleared = 0  # fast-mode failures that the full-mode recheck cleared
        self._primary: dict[str, Any] = {}
        self._lins: dict[str, Linearization] = {}
        self._perturbed: Session | None = None
        self._memo: dict[Any, Any] = {}
        self._natural: dict[str, float] = {}
        self.directions = Directions(example.seed, self.dtype,
                                     tangent_domains(target, example))
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
        return self.directions.draw(name, self.x if like == "primals" else self.outs, like,
                                    scale)

    # -- outcomes ---------------------------------------------------------------------------
    def record(self, outcome: Outcome) -> Outcome:
        note = self.problem.pairs() if isinstance(self.problem, Realified) else ""
        if note and outcome.kind is not None:  # how to read its indices and directions
            outcome.details.setdefault("complex", note)
        if self.side:
            outcome.side = self.side
            if outcome.message and not outcome.message.startswith(self.side):
                outcome.message = f"{self.side}'s {self.target.name}: {outcome.message}"
        return super().record(outcome)

    def memo(self, key: Any, compute: Callable[[], Any]) -> Any:
        """``compute()`` once per session and ``key``: an evaluation two checks both need
        (paths are deterministic: their primary values are checked to be, bit for bit)."""
        if key not in self._memo:
            self._memo[key] = compute()
        return self._memo[key]

    def first_time(self, key: Any) -> bool:
        """True the first time ``key`` is asked about in this session (a check that another
        check may run early, run once)."""
        if key in self._memo:
            return False
        self._memo[key] = True
        return True

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
        """Evaluate the outputs; :class:`Skip` when they are not finite (overflow), when an
        axis (a parameter's, or the function's own) does not fit the drawn shapes (``axis=0``
        of a 0-d input is no example of the function, see :func:`_axis_misfit`), when a drawn
        input has too few dimensions for it (``x[..., 0]`` of a 0-d input, see
        :func:`_rank_misfit`), or when the function does not take the example's empty arrays
        (``max`` of a zero-size array)."""
        misfit: list[str] = []

        def call() -> Any:
            try:
                return self.problem.forward(self.x)
            except Exception as error:
                misfit.extend(filter(None, [self._misfit(error)]))
                raise

        try:
            self.outs = leaves(self.evaluate("forward", call, primary=True))
        except Stop:
            if misfit:  # recorded as the forward's error: no finding, another example
                self.outcomes.pop()
                raise Skip(misfit[0]) from None
            raise
        for k, o in enumerate(self.outs):
            if o.dtype.kind not in "fcbiu":  # None, a string, an arbitrary object
                what = "None" if o.shape == () and o.item() is None else \
                    f"a {type(o.item() if o.shape == () else o).__name__} ({o.dtype})"
                self.structural("forward", "error", f"{self.target.name}: output {k} is {what}, "
                                "not an array or a number: there is nothing to differentiate")
                raise Stop("forward")
        self._natural.clear()  # it is a function of the outputs
        self._coarsest()
        if all(np.all(np.isfinite(o)) for o in self.outs if o.dtype.kind in "fc"):
            return
        self._overflow_check()
        raise Skip("nonfinite")

    def _misfit(self, error: Exception) -> str | None:
        """Why the forward's ``error`` means the drawn example is none of the function's (a
        :data:`~.gaps.SKIPPED` reason), or None when it is the function's own failure.  Only
        the forward is read so: a derivative path that raises on an example whose forward
        works is a finding."""
        if _axis_misfit(error):
            return "axis"
        drawn = not self.side and not self.target.given_point  # a given point is reported
        if drawn and _rank_misfit(error, self.example.args):
            return "axis"  # an axis or index the drawn shape lacks: the same advice
        if not self.side and any(_zero_size(a) for a in self.example.args):
            return "empty"  # the function's own (a reference's crash is attributed to it)
        return None

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
            t = split(t).astype(np.float64)
            bad = ~np.isfinite(o) & np.isfinite(t) & (np.abs(t) < limit)
            if o.shape == t.shape and bad.any():
                idx = [int(i) for i in np.argwhere(bad)[0]]
                self.record(Outcome(
                    "forward", name, "mismatch", worst_index=idx,
                    message=f"forward gives {o[tuple(idx)]} at output {k} {idx} where the "
                            f"{name} gives {t[tuple(idx)]:.6g}: an intermediate overflowed "
                            "(unstable formula?)"))
                return

    def _reference_output_dtypes(self) -> list[np.dtype[Any]] | None:
        """The dtypes of the forward's outputs at the float64 example, once its numeric
        linearization has evaluated them (None before)."""
        f = self._lins.get("f")
        outputs = f.outputs_at_point if f is not None else None
        return None if outputs is None else [o.dtype for o in outputs]

    def linearization(self, name: str) -> Linearization:
        """``f``, ``G(x, v) = J^T v`` or ``K(x, u) = J u`` in float64, at this example."""
        if name not in self._lins:
            ref, nx = self.reference_problem, len(self.x)
            # the rules of a normwise-accurate function are computed as it is: G and K too
            accuracy = self.target.accuracy
            if name == "f":
                lin = Linearization("f", lambda a: ref.forward(a), self.x64,
                                    [o.shape for o in self.outs], accuracy)
            # the numeric reference of a second-order path calls the first-order rule: what
            # goes wrong there (an in-place write, a crash) is that rule's outcome
            elif name == "G":
                v = [a.astype(np.float64) for a in self.direction("v", "outputs")]
                lin = Linearization("G", lambda a: self.evaluate(
                    "vjp", lambda: ref.vjp(a[:nx], a[nx:])), self.x64 + v,
                    [a.shape for a in self.x], accuracy)
                # the VJP casts its cotangent to the forward's output dtypes (known once
                # the forward's own linearization has been evaluated)
                lin.rounds_inputs_to = self._reference_output_dtypes
            else:
                s = [a.astype(np.float64) for a in self.direction("s")]
                lin = Linearization("K", lambda a: self.evaluate(
                    "jvp", lambda: ref.jvp(a[:nx], a[nx:])), self.x64 + s,
                    [o.shape for o in self.outs], accuracy)
            if self.directions.projects:  # full mode compares J on the tangent spaces
                lin.project = self.directions.project
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
                if a.dtype.kind in "fc":
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
        """The problem's natural derivative scale for linearization ``lin`` (see
        :func:`~gradcheck.checker.tolerances.natural_scale`), worked out once per example:
        the outputs, the primals and the directions it reads are fixed."""
        if lin not in self._natural:
            linear_in = self.direction("v", "outputs") if lin == "G" else \
                self.direction("s") if lin == "K" else None
            self._natural[lin] = natural_scale(self.outs, self.x, linear_in)
        return self._natural[lin]

    def close(self) -> None:
        """Drop what this example's checks kept: path values, linearizations with their
        probes, the perturbed session, directions.  A linearization's function calls back
        into its session, so without this each finished example stayed in memory as a
        reference cycle until Python's cycle collector ran, which counts objects, not bytes
        (a 2-example check of a 10^6-element input left 464 MB behind).  Outcomes and counts
        stay."""
        if self._perturbed is not None:
            self._perturbed.close()
        self._perturbed = None
        for kept in (self._lins, self._memo, self._primary, self._natural):
            kept.clear()
        self.directions = Directions(self.example.seed, self.dtype, self.directions.spaces)

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


#: torch's and JAX's words for an axis out of range (numpy's is its own type, AxisError).
_TORCH_AXIS = re.compile(r"Dimension out of range \(expected to be in range of "
                         r"\[-?\d+, -?\d+\], but got -?\d+\)"
                         r"|Dimension specified as -?\d+ but tensor has no dimensions")
_JAX_AXIS = re.compile(r"axis -?\d+ is out of bounds for array of dimension \d+")
#: TensorFlow's, searched in its kernels' InvalidArgumentError messages (prefixed with the
#: node's name) and in the ValueError its Python code raises (tf.unstack).
_TF_AXIS = re.compile(
    r"Invalid reduction dimension \(-?\d+ for input with \d+ dimension"
    r"|[Ee]xpected (?:scan axis|concatenating dimensions|dimension) in the range "
    r"\[-?\d+, -?\d+\), but got -?\d+"
    r"|`dim` must be in the range \[-?\d+, -?\d+\)"
    r"|Tried to (?:expand|squeeze) dim index -?\d+ for tensor with \d+ dimensions"
    r"|Argument `axis` = -?\d+ not in range \[-?\d+, -?\d+\)")


def _axis_misfit(error: BaseException) -> bool:
    """Whether ``error`` says that an axis does not fit the input's shape: numpy's
    ``AxisError``, torch's ``IndexError: Dimension out of range (...)`` (raised in its C++
    code, so known by its type and words), TensorFlow's ``InvalidArgumentError`` with the
    words of its kernels (``Invalid reduction dimension (1 for input with 1 dimension(s)``),
    or JAX's ``ValueError: axis -1 is out of bounds for array of dimension 0`` raised in
    JAX's own code (the same words from the user's code are the user's error)."""
    if isinstance(error, np.exceptions.AxisError):
        return True
    if isinstance(error, IndexError):
        return _TORCH_AXIS.fullmatch(str(error)) is not None
    if type(error).__name__ == "InvalidArgumentError" and \
            type(error).__module__.split(".")[0] == "tensorflow":
        return _TF_AXIS.search(str(error)) is not None
    if not isinstance(error, ValueError):
        return False
    if _JAX_AXIS.fullmatch(str(error)) is not None:
        return _raised_in(error, ("jax", "jaxlib"))
    return _TF_AXIS.fullmatch(str(error)) is not None and _raised_in(error, ("tensorflow",))


#: Words for "the array has too few dimensions for this operation" (numpy, gradcheck.numpy,
#: torch, JAX, TensorFlow's kernels and graph-mode shape functions), each with the rank it
#: needs unless a group says it: ``need``, the rank needed; ``has``, the failing array's
#: rank; ``dim``, an axis it lacks; ``core`` and ``got``, a core signature and the shape given.
_RANK = [(re.compile(words), need) for words, need in [
    # numpy, gradcheck.numpy, JAX
    (r"[Tt]oo many indices(?: for array)?: array is (?P<has>\d+)-dimensional, "
     r"but (?P<need>\d+) were indexed", 1),
    (r"[Ii]nput operand \d+ does not have enough dimensions \(has (?P<has>\d+), gufunc core "
     r"with signature \S+ requires (?P<need>\d+)\)", 1),
    (r"matmul input operand \d+ must have ndim at least (?P<need>\d+), but it has ndim "
     r"(?P<has>\d+)", 1),
    (r"(?P<has>\d+)-dimensional array given\. Array must be at least two-dimensional", 2),
    (r"diag(?:onal)? requires an array of at least two dimensions", 2),
    (r"requires input that is at least one dimensional|inputs? must have at least one "
     r"dimension|At least one array has zero dimension|zero-dimensional arrays cannot be "
     r"concatenated", 1),
    (r"must have shape [\[(]\.\.\.(?P<core>(?:, [a-z])+)[\])], got \((?P<got>[^)]*)\)", 1),
    # torch
    (r"too many indices for tensor of dimension (?P<has>\d+)", 1),
    (r"invalid index of a 0-dim tensor|both arguments to matmul need to be at least 1D"
     r"|diff expects input to be at least one-dimensional", 1),
    (r"(?:self|mat2) must be a matrix", 2),
    (r"must have at least (?P<need>\d+) dimensions", 1),
    (r"only supported on matrices or batches of matrices\. Got (?P<has>\d+)-D", 2),
    # TensorFlow
    (r"Attempting to slice scalar input|slice index -?\d+ of dimension 0 out of bounds", 1),
    (r"logits must have >= (?P<need>\d+) dimension", 1),
    (r"input must be (?P<need>\d+)-D or higher", 1),
    (r"input must be >= (?P<need>\d+)-D", 1),
    (r"input must be at least (?P<need>\d+)-dim", 1),
    (r"params must be at least (?P<need>\d+) dimensional", 1),
    (r"ndims must be == (?P<need>\d+): (?P<has>\d+)", 1),
    (r"Input tensor \d+ must have rank >= (?P<need>\d+), got (?P<has>\d+)", 1),
    (r"Shape must be (?:at least )?rank (?P<need>\d+) but is rank (?P<has>\d+)", 1),
    (r"transpose expects a vector of size (?P<has>\d+)\. But input\(1\) is a vector of "
     r"size (?P<need>\d+)", 1),
    (r"Index out of range using input dim (?P<dim>\d+); input has only (?P<has>\d+) dims", 1),
    (r"should be a \(batch\) matrix with rank >= (?P<need>\d+)", 2),
]]


def _rank_misfit(error: BaseException, args: list[Any]) -> bool:
    """Whether ``error`` says an array has fewer dimensions than the failing operation needs
    (``x[..., 0]`` of a 0-d array, ``softmax`` or ``inv`` of too low a rank) and an input of
    the example has fewer than that: a shape the function does not take.  When every input
    has the rank needed, the function failed at a shape it should take: a finding."""
    if not isinstance(error, (IndexError, ValueError, RuntimeError)) and \
            type(error).__name__ != "InvalidArgumentError":
        return False
    for words, need in _RANK:
        found = words.search(str(error))
        if found is None:
            continue
        said = {k: v for k, v in found.groupdict().items() if v is not None}
        has = int(said["has"]) if "has" in said else None
        if "core" in said:  # (..., n, n) needs as many dimensions as it names
            need, has = said["core"].count(","), len([d for d in said["got"].split(",") if d])
        need = int(said["dim"]) + 1 if "dim" in said else int(said.get("need", need))
        if has is not None and has >= need:
            return False  # the failing array had the rank: the words mean something else
        return any(np.ndim(a) < need for a in args if isinstance(a, (np.ndarray, np.generic)))
    return False


def _raised_in(error: BaseException, packages: tuple[str, ...]) -> bool:
    """Whether the innermost frame of ``error``'s traceback is in one of ``packages``."""
    tb = error.__traceback__
    if tb is None:
        return False
    while tb.tb_next is not None:
        tb = tb.tb_next
    return str(tb.tb_frame.f_globals.get("__name__", "")).split(".")[0] in packages


def _zero_size(value: Any) -> bool:
    """Whether an input is an array with no element (a number, a string or an object is not)."""
    return isinstance(value, np.ndarray) and value.size == 0

