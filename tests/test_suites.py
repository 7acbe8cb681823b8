"""Suite files: the shipped suites load, and bad ones fail with messages naming the problem."""

from __future__ import annotations

from pathlib import Path

import pytest

from gradcheck import default_registry
from gradcheck.cli.suites import (
    PATHS,
    REFERENCES,
    SuiteError,
    find_suite,
    load_suite,
    suite_names,
)

SUITES = Path(__file__).resolve().parents[1] / "gradcheck" / "suites"


def write(tmp_path: Path, text: str, name: str = "mine.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("name", ["smoke", "full", "tensorflow_audit"])
def test_shipped_suites_load(name: str) -> None:
    suite = load_suite(SUITES / f"{name}.toml")
    checked, _ = suite.plan()
    assert suite.name == name
    assert checked


def test_smoke_covers_every_family_in_fast_mode() -> None:
    suite = load_suite(SUITES / "smoke.toml")
    checked, _ = suite.plan()
    families = {default_registry.get(p.name).family for p in checked}
    assert families == {op.family for op in default_registry}
    assert all(p.settings["mode"] == "fast" and p.settings["examples"] <= 5 for p in checked)


def test_full_checks_every_op_on_every_path_against_every_reference() -> None:
    suite = load_suite(SUITES / "full.toml")
    checked, skipped = suite.plan()
    assert {p.name for p in checked} | {p.name for p in skipped} == set(default_registry.names())
    base = [p for p in checked if not p.reason]
    assert base and all(set(p.settings["paths"]) == set(PATHS) for p in base)
    assert all({"numeric", "autograd", "tensorflow"} <= set(p.settings["references"])
               for p in base)
    assert set(REFERENCES) >= {"numeric", "autograd", "tensorflow"}
    assert all(p.reason for p in skipped)


def test_tensorflow_audit_rows() -> None:
    suite = load_suite(SUITES / "tensorflow_audit.toml")
    targets = {row.target for row in suite.functions}
    # The seed thread's cases must be in the audit.
    assert {"tf.math.sin", "tf.math.cos", "tf.math.log", "tf.math.square", "tf.math.tanh",
            "tf.math.sigmoid", "tf.nn.elu", "tf.nn.softsign"} <= targets
    checked, _ = suite.plan()
    assert "nn.elu" in {p.name for p in checked}
    assert all("tensorflow" in p.settings["references"] for p in checked
               if "function" not in p.settings)


def test_bare_name_is_found_from_the_suites_folder(monkeypatch: pytest.MonkeyPatch,
                                                    tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)  # not in the repository: the shipped folder is used
    assert find_suite("smoke").resolve() == (SUITES / "smoke.toml").resolve()
    assert "smoke" in suite_names()


def test_unknown_suite_lists_the_known_ones() -> None:
    with pytest.raises(SuiteError, match=r"suite 'smok' not found \(known suites: .*smoke"):
        find_suite("smok")


def test_plan_applies_rows_in_order(tmp_path: Path) -> None:
    path = write(tmp_path, """
[suite]
ops = ["sin", "cos", "exp"]
examples = 4
paths = ["vjp", "jvp", "double_vjp"]

[[op]]
name = "cos"
examples = 9
skip_paths = ["double_vjp"]
allow = ["dependence_leak"]
reason = "a test reason"

[[op]]
name = "exp"
skip = true
reason = "not today"

[[op]]
name = "tanh"
""")
    suite = load_suite(path)
    checked, skipped = suite.plan()
    by_name = {p.name: p for p in checked}
    assert sorted(by_name) == ["cos", "sin", "tanh"]
    assert by_name["sin"].settings == {"examples": 4, "paths": ["vjp", "jvp", "double_vjp"]}
    assert by_name["cos"].settings == {"examples": 9, "paths": ["vjp", "jvp"]}
    assert by_name["cos"].allow == {"dependence_leak"} and by_name["cos"].reason == "a test reason"
    assert [(p.name, p.reason) for p in skipped] == [("exp", "not today")]
    # Command-line settings replace the suite's defaults; a row's own settings still win.
    checked, _ = suite.plan(base={"examples": 2, "paths": ["vjp", "double_vjp"]})
    by_name = {p.name: p for p in checked}
    assert by_name["sin"].settings == {"examples": 2, "paths": ["vjp", "double_vjp"]}
    assert by_name["cos"].settings == {"examples": 9, "paths": ["vjp"]}


def test_allow_takes_kinds_and_side_kinds(tmp_path: Path) -> None:
    path = write(tmp_path, '[[op]]\nname = "sin"\nallow = ["tensorflow:mismatch", "value_leak"]\n'
                           'reason = "TensorFlow\'s own derivative is wrong"\n')
    (planned,), _ = load_suite(path).plan()
    assert planned.allow == {"tensorflow:mismatch", "value_leak"}


def test_patterns_and_families(tmp_path: Path) -> None:
    suite = load_suite(write(tmp_path, '[suite]\nops = ["linalg.*", "special"]\n'))
    names = {p.name for p in suite.plan()[0]}
    assert "linalg.cholesky" in names and "special.erf" in names and "sin" not in names


@pytest.mark.parametrize(("text", "message"), [
    ('[suite]\nops = ["sinn"]\n', r"\[suite\] ops: unknown op 'sinn'; did you mean sin"),
    ('[[op]]\nname = "cholesky_x"\n', r"\[\[op\]\] row 1 \('cholesky_x'\): unknown op"),
    ('[suite]\nops = ["sin"]\nexamplez = 3\n',
     r"\[suite\]: unknown key\(s\) 'examplez'; allowed keys: .*examples"),
    ('[[op]]\nname = "sin"\nexamples = 3\n', r"row 1 \('sin'\): .* needs a 'reason'"),
    ('[[op]]\nname = "sin"\nfoo = 1\nreason = "x"\n', r"row 1: unknown key\(s\) 'foo'"),
    ('[suite]\nops = ["sin"]\nmode = "fastest"\n', r"mode must be one of fast, full"),
    ('[suite]\nops = ["sin"]\nexamples = "3"\n', r"examples must be of type integer"),
    ('[suite]\nops = ["sin"]\nexamples = 0\n', r"examples must be positive"),
    ('[suite]\nops = ["sin"]\npaths = ["vjp", "hvp"]\n', r"paths has unknown value\(s\) 'hvp'"),
    ('[suite]\nops = ["sin"]\nreferences = ["mxnet"]\n', r"references has unknown .*'mxnet'"),
    ('[[op]]\nname = "sin"\nallow = ["oops"]\nreason = "r"\n',
     r"\[\[op\]\] row 1 \('sin'\): allow: unknown finding kind 'oops' in 'oops'"),
    ('[[op]]\nname = "sin"\nallow = ["tensorflow:mismatc"]\nreason = "r"\n',
     r"row 1 \('sin'\): allow: unknown finding kind 'mismatc' in 'tensorflow:mismatc'"),
    ('[[op]]\nname = "sin"\nallow = "mismatch"\nreason = "r"\n',
     r"row 1 \('sin'\): allow must be a list of strings"),
    ('[suite]\nops = ["sin"]\n[extra]\n', r"top level: unknown key\(s\) 'extra'"),
    ('[[op]]\nname = "sum"\ninputs = ["postive"]\nreason = "r"\n',
     r"row 1 \('sum'\), input 0: unknown domain 'postive'; did you mean 'positive'"),
    ('[[op]]\nname = "sum"\ninputs = ["real"]\nwrt = [2]\nreason = "r"\n',
     r"row 1 \('sum'\), wrt: position 2 is out of range for 1 inputs"),
    ('[[op]]\nname = "sum"\nparams = 3\nreason = "r"\n', r"params must be a table"),
    ('[[op]]\nname = "sum"\nshapes = "(3,"\nreason = "r"\n', r"bad shape signature"),
    ('[suite]\ndescription = "empty"\n', r"the suite checks nothing"),
    ('[suite\n', r"not valid TOML"),
    ('[[tf_function]]\nname = "sin"\n', r"name must be a TensorFlow function"),
    ('[[function]]\ninputs = ["real"]\n', r"\[\[function\]\] row 1: needs a 'target'"),
    ('[[function]]\ntarget = "np.sin"\n', r"row 1 \('np.sin'\): needs 'inputs'"),
    ('[[function]]\ntarget = "np.sin"\ninputs = ["real"]\nallow = ["mismatch"]\n',
     r"allows findings or skips something needs a 'reason'"),
    ('[[function]]\ntarget = "np.sin"\ninputs = [{low = 1}]\n',
     r"input 0: a table input needs domain"),
    ('[[function]]\ntarget = "np.sin"\ninputs = [{domain = "interval", lo = 1}]\n',
     r"domain 'interval' cannot take \{'lo': 1\}.*its arguments: low, high"),
    ('[[function]]\ntarget = "np.sin"\ninputs = ["real"]\ncolour = 1\n',
     r"unknown key\(s\) 'colour'"),
    ('[[function]]\ntarget = "np.sin"\ninputs = ["real"]\n[[function]]\ntarget = "np.sin"\n'
     'inputs = ["positive"]\n', r"two rows check 'np.sin': give each \[\[function\]\] row"),
    ('[suite]\nops = ["sin"]\n[[function]]\ntarget = "np.cos"\nname = "sin"\n'
     'inputs = ["real"]\n', r"two rows check 'sin'"),
    ('[[tf_function]]\nname = "tf.math.sin"\ndomain = "complx"\n', r"unknown domain 'complx'"),
    ('[[tf_function]]\nname = "tf.math.atanh"\ndomain = "interval"\n', r"'bounds = \[low, high\]'"),
    ('[[tf_function]]\nname = "tf.math.atanh"\ndomain = "interval"\nbounds = [1, -1]\n',
     r"bounds must be \[low, high\] with low < high"),
    ('[[tf_function]]\nname = "tf.math.sin"\nshapes = "(..."\n', r"shapes: bad shape signature"),
    ('[[tf_function]]\nname = "tf.math.add"\nnin = 2\nshapes = "(...)"\n',
     r"shapes must be a signature with one group per input \(2\)"),
])
def test_bad_suites_say_what_is_wrong(tmp_path: Path, text: str, message: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(SuiteError, match=message) as info:
        load_suite(path)
    assert str(path) in str(info.value)  # every message names the file


def test_op_rows_take_the_input_spec_of_check(tmp_path: Path) -> None:
    from gradcheck.checker.runner import run_sweep

    path = write(tmp_path, '[suite]\nops = ["sum"]\ndtypes = ["float64"]\nexamples = 2\n'
                 '[[op]]\nname = "sum"\ninputs = ["positive"]\nshapes = "(3,4)"\n'
                 'params = {axis = 7}\nreason = "an axis sum cannot take"\n')
    suite = load_suite(path)
    (planned,), _ = suite.plan(default_registry)
    assert planned.settings["params"] == {"axis": 7} and planned.settings["inputs"] == [
        "positive"]
    (report,) = run_sweep(["sum"], jobs=1, **planned.settings).reports
    # axis 7 fits no (3, 4) example: every one is skipped, and the error says how to fix it
    assert any("every example drawn was skipped" in f.message and "axis" in f.message
               and "give shapes= that fit it" in f.message for f in report.failures)
