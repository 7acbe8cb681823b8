"""Suite files: which ops a sweep checks and how, as data (TOML read with ``tomllib``).

A suite is a ``[suite]`` table of defaults plus one ``[[op]]`` row per op (or pattern)
that needs something different, each exception stating its ``reason``::

    [suite]
    description = "every op, every path, both references"
    ops = ["*"]                       # names, globs ('linalg.*') or families
    mode = "full"
    examples = 20
    paths = ["vjp", "jvp"]            # optional: default every path
    references = ["numeric", "autograd", "tensorflow"]
    dtypes = ["float64"]

    [[op]]
    name = "linalg.eigh"
    examples = 5
    reason = "each example solves a batch of eigenproblems: slow"

Rows may also ``skip = true`` an op, drop some paths or references for it
(``skip_paths``, ``skip_references``) or ``allow`` finding kinds that then do not
fail the run (they are still reported).  Every row that changes anything needs a
``reason``, which is shown in the results.

``[[function]]`` rows check any function by its dotted path, with the keys
``gradcheck.check`` takes (see :mod:`gradcheck.checker.specs`)::

    [[function]]
    target = "tf.math.unsorted_segment_sum"   # or "torch.nn.functional.elu", "mymod:fn"
    name = "segment_sum, unsorted"           # optional (default: target); unique in a suite
    inputs = ["real", {domain = "indices", high = 4}]
    params = {num_segments = 4}              # a list explores choices: {axis = [0, -1]}
    wrt = [0]
    outputs = [0]
    shapes = "(n,k),(n)"
    dtypes = ["float32"]                     # and any setting an [[op]] row takes

They take ``allow``, ``skip``, ``skip_paths`` and ``skip_references`` (with a ``reason``)
like ``[[op]]`` rows.  The framework is told from the function (TensorFlow, PyTorch, JAX,
autograd, or gradcheck's own); a framework that is not installed makes the row's cells
``unavailable``.  ``[[tf_function]]`` rows (``name = "tf.math.sin"``, one ``domain`` with
``bounds`` for ``"interval"``, ``nin`` inputs, ``shapes``) are the older spelling of the
same thing.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields
from difflib import get_close_matches
from pathlib import Path
from typing import Any

import tomllib

from gradcheck.checker.paths import PATHS
from gradcheck.checker.policy import parse_allow
from gradcheck.checker.references import known_references
from gradcheck.checker.sampling import parse_signature
from gradcheck.engine import Op, Registry, UnknownOpError, default_registry

__all__ = [
    "PATHS",
    "REFERENCES",
    "MODES",
    "DTYPES",
    "DOMAIN_NAMES",
    "SuiteError",
    "OpRow",
    "TfFunctionRow",
    "FunctionRow",
    "PlannedOp",
    "Suite",
    "load_suite",
    "find_suite",
    "suite_names",
    "suite_dirs",
]

#: What a path can be compared with: the checker's own references (``numeric``, and ``self``:
#: the paths against each other) and the external oracles.  The checker's own are always
#: used; naming them is allowed and changes nothing.
REFERENCES = known_references()
MODES = ("fast", "full")
DTYPES = ("float64", "float32")
#: Domains a ``[[tf_function]]`` row may name (``interval`` also needs ``bounds``).
DOMAIN_NAMES = ("real", "positive", "nonzero", "unit", "interval", "spd",
                "well_conditioned", "probabilities")

# Settings shared by [suite] and [[op]] rows, with the type each must have.
_SETTINGS: dict[str, type | tuple[type, ...]] = {
    "mode": str, "seed": int, "examples": int, "timeout": (int, float),
    "paths": list, "references": list, "dtypes": list,
}
_SUITE_KEYS = {"description", "ops", "seeds", *_SETTINGS}
#: What to check, as ``gradcheck.check`` takes it (see ``gradcheck.checker.specs``).
_SPEC_KEYS: dict[str, type | tuple[type, ...]] = {
    "inputs": list, "params": dict, "wrt": list, "outputs": list, "shapes": str}
_OP_KEYS = {"name", "reason", "skip", "allow", "skip_paths", "skip_references",
            "mode", "seed", "examples", "timeout", "dtypes", *_SPEC_KEYS}
_TF_KEYS = {"name", "domain", "bounds", "shapes", "nin", "reason"}
_FUNCTION_KEYS = {"target", "paths", "references", *_OP_KEYS}
_TOP_KEYS = {"suite", "op", "function", "tf_function"}


class SuiteError(ValueError):
    """A suite file is missing, unreadable or wrong; the message names file, row and key."""


@dataclass(frozen=True)
class OpRow:
    """One ``[[op]]`` row: a name or pattern and its exceptions (with the reason)."""

    name: str
    reason: str = ""
    skip: bool = False
    allow: frozenset[str] = frozenset()
    skip_paths: tuple[str, ...] = ()
    skip_references: tuple[str, ...] = ()
    settings: Mapping[str, Any] = field(default_factory=dict)

    @property
    def changes_anything(self) -> bool:
        return bool(self.skip or self.allow or self.skip_paths or self.skip_references
                    or self.settings)


@dataclass(frozen=True)
class TfFunctionRow:
    """One ``[[tf_function]]`` row: a TensorFlow function audited on sampled inputs."""

    name: str
    domain: str
    bounds: tuple[float, float] | None = None
    nin: int = 1
    shapes: str = "(...)"
    reason: str = ""


@dataclass(frozen=True)
class FunctionRow(OpRow):
    """One ``[[function]]`` row: an ``[[op]]`` row's settings and exceptions for a function
    by dotted path (``target``), checked under ``name``."""

    target: str = ""

    def planned(self, base: Mapping[str, Any]) -> PlannedOp:
        """The row as a sweep task: ``base`` settings, the row's own, and the target."""
        settings = dict(base)
        _override(settings, self.settings)
        settings["function"] = self.target
        for key, removed in (("paths", self.skip_paths), ("references", self.skip_references)):
            if removed:
                settings[key] = [x for x in settings.get(key) or _ALL[key] if x not in removed]
        return PlannedOp(self.name, settings, self.allow, self.reason)


@dataclass(frozen=True)
class PlannedOp:
    """An op as a suite asks to check it: its settings after every override."""

    name: str
    settings: Mapping[str, Any]
    allow: frozenset[str] = frozenset()
    reason: str = ""


@dataclass(frozen=True)
class Suite:
    """A parsed, validated suite file."""

    name: str
    path: Path
    description: str = ""
    ops: tuple[str, ...] = ()
    defaults: Mapping[str, Any] = field(default_factory=dict)
    rows: tuple[OpRow, ...] = ()
    functions: tuple[FunctionRow, ...] = ()

    def plan(self, registry: Registry | None = None,
             base: Mapping[str, Any] | None = None) -> tuple[list[PlannedOp], list[PlannedOp]]:
        """``(checked, skipped)``: every op of the suite with its effective settings.

        ``base`` (the command line's explicit options) replaces the suite's defaults;
        a row's own settings then win for its ops (a row's ``seed`` over ``seeds`` too: its
        ops run at that one seed), and its ``skip_paths`` and
        ``skip_references`` are removed from whatever paths and references remain.
        Ops named only by rows are included too.  Rows apply in file order.
        """
        registry = default_registry if registry is None else registry
        settings = {**self.defaults, **(base or {})}
        chosen: dict[str, dict[str, Any]] = {}
        allow: dict[str, set[str]] = {}
        reasons: dict[str, list[str]] = {}
        skipped: set[str] = set()
        for op in _select(registry, self.ops, self.path, "[suite] ops"):
            chosen[op] = dict(settings)
        for index, row in enumerate(self.rows):
            where = f"[[op]] row {index + 1} ({row.name!r})"
            for op in _select(registry, [row.name], self.path, where):
                entry = chosen.setdefault(op, dict(settings))
                _override(entry, row.settings)
                for key, removed in (("paths", row.skip_paths),
                                     ("references", row.skip_references)):
                    if removed:
                        current = entry.get(key) or _ALL[key]
                        entry[key] = [x for x in current if x not in removed]
                allow.setdefault(op, set()).update(row.allow)
                if row.reason:
                    reasons.setdefault(op, []).append(row.reason)
                if row.skip:
                    skipped.add(op)
        planned = [PlannedOp(name, chosen[name], frozenset(allow.get(name, ())),
                             "; ".join(reasons.get(name, []))) for name in sorted(chosen)]
        planned += [row.planned(settings) for row in self.functions]
        skipped |= {row.name for row in self.functions if row.skip}
        return ([p for p in planned if p.name not in skipped],
                [p for p in planned if p.name in skipped])


_ALL: dict[str, tuple[str, ...]] = {"paths": PATHS, "references": REFERENCES}


def _override(settings: dict[str, Any], row: Mapping[str, Any]) -> None:
    """A row's own settings over ``settings``: its ``seed`` replaces the suite's (or the
    command line's) ``seeds``, so its ops run at that one seed."""
    settings.update(row)
    if "seed" in row:
        settings.pop("seeds", None)


def _select(registry: Registry, patterns: Iterable[str], path: Path, where: str) -> list[str]:
    try:
        return [op.name for op in registry.select(list(patterns))]
    except UnknownOpError as error:
        raise SuiteError(f"{path}: {where}: {error}") from None


def suite_dirs() -> list[Path]:
    """Where a bare suite name is looked up: the suites shipped inside the package."""
    return [Path(__file__).resolve().parents[1] / "suites"]


def suite_names() -> list[str]:
    """Names of the suites found in :func:`suite_dirs`."""
    names = {p.stem for d in suite_dirs() if d.is_dir() for p in d.glob("*.toml")}
    return sorted(names)


def find_suite(name_or_path: str | Path) -> Path:
    """The file of a suite given by path (``my/suite.toml``) or bare name (``smoke``)."""
    given = Path(name_or_path)
    if given.is_file():
        return given
    is_bare = given.suffix == "" and len(given.parts) == 1
    if is_bare:
        for directory in suite_dirs():
            candidate = directory / f"{given.name}.toml"
            if candidate.is_file():
                return candidate
    known = ", ".join(suite_names()) or "none found"
    raise SuiteError(f"suite {str(name_or_path)!r} not found (known suites: {known})")


def load_suite(name_or_path: str | Path, registry: Registry | None = None) -> Suite:
    """Read and validate a suite file; every op name is checked against ``registry``."""
    path = find_suite(name_or_path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as error:
        raise SuiteError(f"{path}: not valid TOML: {error}") from None
    except OSError as error:
        raise SuiteError(f"{path}: cannot read: {error}") from None
    except UnicodeDecodeError as error:  # TOML is UTF-8
        raise SuiteError(f"{path}: not a UTF-8 text file (TOML must be UTF-8): byte "
                         f"{error.object[error.start]:#04x} at offset {error.start}") from None
    _check_keys(data, _TOP_KEYS, path, "top level")
    head = data.get("suite", {})
    if not isinstance(head, dict):
        raise SuiteError(f"{path}: 'suite' must be a table ([suite])")
    _check_keys(head, _SUITE_KEYS, path, "[suite]")
    ops = head.get("ops", [])
    if not isinstance(ops, list) or not all(isinstance(o, str) for o in ops):
        raise SuiteError(f"{path}: [suite] ops must be a list of names or patterns")
    defaults = _settings(head, path, "[suite]")
    if "seeds" in head:  # every op at each seed: "0:20", "0,3,7" or a list of integers
        from gradcheck.checker.seeds import parse_seeds

        try:
            defaults["seeds"] = parse_seeds(head["seeds"], f"{path}: [suite] seeds")
        except ValueError as error:
            raise SuiteError(str(error)) from None
    rows = tuple(_op_row(r, path, i) for i, r in enumerate(_tables(data, "op", path)))
    functions = tuple(_function_row(r, path, f"[[function]] row {i + 1}")
                      for i, r in enumerate(_tables(data, "function", path)))
    functions += tuple(_tf_row(r, path, i)
                       for i, r in enumerate(_tables(data, "tf_function", path)))
    if not ops and not rows and not functions:
        raise SuiteError(f"{path}: the suite checks nothing (no [suite] ops and no rows)")
    suite = Suite(name=path.stem, path=path, description=str(head.get("description", "")),
                  ops=tuple(ops), defaults=defaults, rows=rows, functions=functions)
    checked, skipped = suite.plan(registry)  # every name must resolve now, not mid-sweep
    _unique([p.name for p in checked + skipped], functions, path)
    _check_op_params(suite, registry or default_registry)
    _check_op_specs(suite, registry or default_registry)
    return suite


def _check_op_specs(suite: Suite, registry: Registry) -> None:
    """Each ``[[op]]`` row's spec against each op it selects, as ``check`` would take it (the
    input count, ``wrt`` and ``outputs`` against the op's): a bad one fails at load."""
    from gradcheck.checker.targets import as_target

    keys = ("inputs", "params", "wrt", "outputs", "shapes")
    for index, row in enumerate(suite.rows):
        spec = {k: row.settings[k] for k in keys if k in row.settings}
        if not spec:
            continue
        for op in registry.select([row.name]):
            try:
                as_target(op, spec.get("inputs"), registry,
                          **{k: v for k, v in spec.items() if k != "inputs"})
            except (TypeError, ValueError) as error:
                text = str(error).replace("gradcheck.check: ", "")
                raise SuiteError(f"{suite.path}: [[op]] row {index + 1} ({row.name!r}): "
                                 f"{text}") from None


def _check_op_params(suite: Suite, registry: Registry) -> None:
    """Every ``params`` key of an ``[[op]]`` row names a parameter of each op the row
    selects: a misspelt one fails at load, not as an error finding blamed on the op."""
    for index, row in enumerate(suite.rows):
        given = dict(row.settings.get("params") or {})
        if not given:
            continue
        for op in registry.select([row.name]):
            accepted = _accepted_params(op)
            unknown = sorted(set(given) - accepted) if accepted is not None else []
            if unknown:
                known = ", ".join(sorted(accepted or ())) or "none"
                raise SuiteError(f"{suite.path}: [[op]] row {index + 1} ({row.name!r}): params: "
                                 f"op {op.name!r} has no parameter "
                                 f"{', '.join(map(repr, unknown))}{_close(unknown[0], accepted)}"
                                 f" (its parameters: {known})")


def _accepted_params(op: Op) -> set[str] | None:
    """The keyword parameters ``op``'s forward takes (None: any, or it cannot be told)."""
    try:
        parameters = inspect.signature(op.forward).parameters.values()
    except (TypeError, ValueError):
        return None
    if any(p.kind is p.VAR_KEYWORD for p in parameters):
        return None
    return {*op.param_names, *(p.name for p in parameters if p.kind is p.KEYWORD_ONLY)}


def _close(word: str, known: Iterable[str] | None) -> str:
    close = get_close_matches(word, list(known or ()), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _unique(names: list[str], functions: tuple[FunctionRow, ...], path: Path) -> None:
    """Every function row's name is its own: not another row's, not an op's."""
    seen: set[str] = set()
    for name in names:
        if name in seen and any(row.name == name for row in functions):
            raise SuiteError(f"{path}: two rows check {name!r}: give each [[function]] row a "
                             "distinct 'name' (for example with the region it covers)")
        seen.add(name)


def _tables(data: dict[str, Any], key: str, path: Path) -> list[dict[str, Any]]:
    rows = data.get(key, [])
    if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        raise SuiteError(f"{path}: '{key}' must be an array of tables ([[{key}]] rows)")
    return rows


def _check_keys(table: Mapping[str, Any], allowed: set[str], path: Path, where: str) -> None:
    unknown = sorted(set(table) - allowed)
    if unknown:
        raise SuiteError(f"{path}: {where}: unknown key(s) {', '.join(map(repr, unknown))}; "
                         f"allowed keys: {', '.join(sorted(allowed))}")


def _names(value: Any, allowed: tuple[str, ...], path: Path, where: str, key: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise SuiteError(f"{path}: {where}: {key} must be a list of strings, got {value!r}")
    bad = [v for v in value if v not in allowed]
    if bad:
        raise SuiteError(f"{path}: {where}: {key} has unknown value(s) "
                         f"{', '.join(map(repr, bad))}; expected some of {', '.join(allowed)}")
    return list(value)


def _settings(table: Mapping[str, Any], path: Path, where: str) -> dict[str, Any]:
    """The check settings of a [suite] table or [[op]] row, type- and value-checked."""
    out: dict[str, Any] = {}
    for key, kind in _SETTINGS.items():
        if key not in table:
            continue
        raw = table[key]
        if not isinstance(raw, kind) or isinstance(raw, bool):
            raise SuiteError(f"{path}: {where}: {key} must be of type "
                             f"{_type_name(kind)}, got {raw!r}")
        value: Any = raw
        if key == "mode" and value not in MODES:
            raise SuiteError(f"{path}: {where}: mode must be one of {', '.join(MODES)}, "
                             f"got {value!r}")
        if key == "examples" and value <= 0:
            raise SuiteError(f"{path}: {where}: examples must be positive, got {value!r}")
        if key == "timeout" and not value > 0:  # nan too; inf is no limit
            raise SuiteError(f"{path}: {where}: timeout must be a positive number of seconds "
                             f"(inf: no limit), got {value!r}")
        if key == "seed" and value < 0:
            raise SuiteError(f"{path}: {where}: seed must be non-negative, got {value!r}")
        if key == "paths":
            value = _names(value, PATHS, path, where, key)
        if key == "references":
            value = _names(value, REFERENCES, path, where, key)
        if key == "dtypes":
            value = _names(value, DTYPES, path, where, key)
        out[key] = value
    return out


def _type_name(kind: type | tuple[type, ...]) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    return " or ".join({"str": "string", "int": "integer", "float": "number",
                        "list": "list", "dict": "table"}[k.__name__] for k in kinds)


def _op_row(row: dict[str, Any], path: Path, index: int) -> OpRow:
    where = f"[[op]] row {index + 1}"
    _check_keys(row, _OP_KEYS, path, where)
    name = row.get("name")
    if not isinstance(name, str) or not name:
        raise SuiteError(f"{path}: {where}: needs a 'name' (an op name, glob or family)")
    return _row(row, name, path, f"{where} ({name!r})")


def _row(row: dict[str, Any], name: str, path: Path, where: str) -> OpRow:
    """The parts an [[op]] and a [[function]] row share, checked."""
    reason = row.get("reason", "")
    if not isinstance(reason, str):
        raise SuiteError(f"{path}: {where}: reason must be a string")
    skip = row.get("skip", False)
    if not isinstance(skip, bool):
        raise SuiteError(f"{path}: {where}: skip must be true or false, got {skip!r}")
    settings = {**_settings(row, path, where), **_spec(row, path, where)}
    op_row = OpRow(
        name=name,
        reason=reason.strip(),
        skip=skip,
        allow=_allow(row.get("allow", []), path, where),
        skip_paths=tuple(_names(row.get("skip_paths", []), PATHS, path, where, "skip_paths")),
        skip_references=tuple(_names(row.get("skip_references", []), REFERENCES, path, where,
                                     "skip_references")),
        settings=settings,
    )
    if op_row.changes_anything and not op_row.reason and "target" not in row:
        raise SuiteError(f"{path}: {where}: a row that changes how an op is checked needs a "
                         "'reason'")
    return op_row


def _function_row(row: dict[str, Any], path: Path, where: str) -> FunctionRow:
    """A ``[[function]]`` row: ``target`` (a dotted path), ``inputs`` and the rest of the
    spec; ``allow``, ``skip`` and skipped paths or references need a ``reason``."""
    _check_keys(row, _FUNCTION_KEYS, path, where)
    target = row.get("target")
    if not isinstance(target, str) or not target or " " in target:
        raise SuiteError(f"{path}: {where}: needs a 'target': the function's dotted path, such "
                         f"as 'tf.math.sin' or 'my_module:my_function', got {target!r}")
    name = row.get("name", target)
    if not isinstance(name, str) or not name:
        raise SuiteError(f"{path}: {where}: name must be a non-empty string, got {name!r}")
    where = f"{where} ({name!r})"
    if "inputs" not in row:
        raise SuiteError(f"{path}: {where}: needs 'inputs': one entry per positional input (a "
                         "domain name such as \"real\", or a table such as {domain = "
                         "\"interval\", low = -3, high = -0.1})")
    parsed = _row(row, name, path, where)
    if (parsed.allow or parsed.skip or parsed.skip_paths or parsed.skip_references) \
            and not parsed.reason:
        raise SuiteError(f"{path}: {where}: a row that allows findings or skips something "
                         "needs a 'reason'")
    return FunctionRow(**{f.name: getattr(parsed, f.name) for f in fields(OpRow)},
                       target=target)


def _spec(row: Mapping[str, Any], path: Path, where: str) -> dict[str, Any]:
    """A row's input spec (inputs, params, wrt, outputs, shapes), checked as ``check`` would:
    a bad one fails at load, naming the row, the input and the key."""
    from gradcheck.checker.specs import (
        check_shapes,
        resolve_inputs,
        resolve_positions,
        split_params,
    )

    out = {k: row[k] for k in _SPEC_KEYS if k in row}
    for key, kind in _SPEC_KEYS.items():
        if key in out and not isinstance(out[key], kind):
            raise SuiteError(f"{path}: {where}: {key} must be a {_type_name(kind)}, got "
                             f"{out[key]!r}")
    who = f"{path}: {where}"
    try:
        domains = resolve_inputs(out["inputs"], who) if "inputs" in out else None
        split_params(out.get("params"), who)
        n = len(out["inputs"]) if "inputs" in out else None
        resolve_positions(out.get("wrt"), n, who, "wrt")
        resolve_positions(out.get("outputs"), None, who, "outputs")
        if "shapes" in out:
            check_shapes(out["shapes"], domains, who)
    except (TypeError, ValueError) as error:
        text = str(error).replace("gradcheck.check: ", "")
        raise SuiteError(text if text.startswith(str(path)) else f"{who}: {text}") from None
    return out


def _allow(value: Any, path: Path, where: str) -> frozenset[str]:
    """A row's ``allow`` entries: finding kinds, or ``side:kind`` (see the verdict policy)."""
    if not isinstance(value, list):
        raise SuiteError(f"{path}: {where}: allow must be a list of strings, got {value!r}")
    try:
        return parse_allow(value, f"{path}: {where}: allow")
    except ValueError as error:
        raise SuiteError(str(error)) from None


def _tf_row(row: dict[str, Any], path: Path, index: int) -> FunctionRow:
    """A ``[[tf_function]]`` row, the older spelling, as the ``[[function]]`` row it means."""
    tf = _tf_fields(row, path, index)
    domain: Any = tf.domain if tf.bounds is None else \
        {"domain": "interval", "low": tf.bounds[0], "high": tf.bounds[1]}
    spec = {"target": tf.name, "inputs": [domain] * tf.nin, "shapes": tf.shapes}
    if tf.reason:
        spec["reason"] = tf.reason
    return _function_row(spec, path, f"[[tf_function]] row {index + 1}")


def _tf_fields(row: dict[str, Any], path: Path, index: int) -> TfFunctionRow:
    where = f"[[tf_function]] row {index + 1}"
    _check_keys(row, _TF_KEYS, path, where)
    name = row.get("name")
    if not isinstance(name, str) or not name.startswith("tf."):
        raise SuiteError(f"{path}: {where}: name must be a TensorFlow function such as "
                         f"'tf.math.sin', got {name!r}")
    where = f"{where} ({name!r})"
    domain = row.get("domain", "real")
    if domain not in DOMAIN_NAMES:
        raise SuiteError(f"{path}: {where}: unknown domain {domain!r}; expected one of "
                         f"{', '.join(DOMAIN_NAMES)}")
    bounds = row.get("bounds")
    if (domain == "interval") != (bounds is not None):
        raise SuiteError(f"{path}: {where}: 'bounds = [low, high]' goes with "
                         "domain = \"interval\" (and only with it)")
    if bounds is not None:
        ok = (isinstance(bounds, list) and len(bounds) == 2
              and all(isinstance(b, (int, float)) for b in bounds) and bounds[0] < bounds[1])
        if not ok:
            raise SuiteError(f"{path}: {where}: bounds must be [low, high] with low < high, "
                             f"got {bounds!r}")
    nin = row.get("nin", 1)
    if not isinstance(nin, int) or isinstance(nin, bool) or nin < 1:
        raise SuiteError(f"{path}: {where}: nin must be a positive integer, got {nin!r}")
    shapes = row.get("shapes", ",".join(["(...)"] * nin))
    try:
        groups = parse_signature(shapes) if isinstance(shapes, str) else None
    except ValueError as error:
        raise SuiteError(f"{path}: {where}: shapes: {error}") from None
    if groups is None or len(groups) != nin:
        raise SuiteError(f"{path}: {where}: shapes must be a signature with one group per "
                         f"input ({nin}), such as \"(...,n,n)\"; got {shapes!r}")
    reason = row.get("reason", "")
    if not isinstance(reason, str):
        raise SuiteError(f"{path}: {where}: reason must be a string")
    return TfFunctionRow(name=name, domain=domain,
                         bounds=None if bounds is None else (float(bounds[0]), float(bounds[1])),
                         nin=nin, shapes=shapes, reason=reason.strip())
