"""Terminal output (gradcheck/cli/terminal.py, gradcheck/render/verdict.py): pure functions
of the results, readable at 80 columns and in CI logs."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest

from gradcheck.checker.policy import Allowance, VerdictPolicy
from gradcheck.checker.report import Cell, Finding, Report, Results
from gradcheck.cli.terminal import Terminal, elide, path_statuses
from gradcheck.render.verdict import (
    count_statuses,
    findings_by_op,
    interleave,
    op_status,
    values_text,
)

DEFAULT = VerdictPolicy()


def _results() -> Results:
    elu = Report(op="nn.elu", family="nn", cells=[
        Cell("vjp", "numeric", "pass", 1e-12, 1e-9, 3),
        Cell("double_vjp", "numeric", "fail", 0.3, 1e-8, 3),
        Cell("double_vjp", "tensorflow", "unavailable"),
    ], findings=[
        Finding("nn.elu", "double_vjp", "numeric", "value_leak", "changes with the dummy",
                0.3, 0.3, 1e-8),
    ])
    sin = Report(op="sin", family="elementwise", cells=[
        Cell("vjp", "numeric", "pass", 1e-13, 1e-9, 3),
        Cell("double_vjp", "tensorflow", "unavailable"),
    ], findings=[Finding("sin", "double_vjp", "self", "dependence_leak", "reads the dummy")])
    return Results(reports=[sin, elu])


def _mismatch(op: str, path: str, ratio: float, reference: str = "numeric") -> Finding:
    return Finding(op, path, reference, "mismatch", f"{path} disagrees", ratio * 1e-8,
                   ratio * 1e-8, 1e-8)


def _many() -> Results:
    """One op with ten findings far over tolerance, where its root cause (vjp) is not the
    worst ratio, and two ops with one finding each; an erroring op; passing ops."""
    loud = Report(op="linalg.solve_triangular", findings=[
        _mismatch("linalg.solve_triangular", p, r) for p, r in
        [("hvp_rev_rev", 1e9), ("hvp_fwd_rev", 1e8), ("double_vjp", 1e7), ("jvp", 1e6),
         ("vjp", 1e3), ("hvp_rev_fwd", 1e9), ("adjoint(vjp,jvp)", 1e9), ("tf.vjp", 1e9),
         ("hvp_rev_rev", 1e9, ), ("double_vjp", 1e9)]])
    quiet = Report(op="cos", findings=[_mismatch("cos", "jvp", 2.0)])
    other = Report(op="tan", findings=[_mismatch("tan", "vjp", 3.0)])
    broken = Report(op="boom", findings=[Finding("boom", "all", "all", "error", "raised")])
    passing = [Report(op=f"ok{i}", cells=[Cell("vjp", "numeric", "pass", 0.0, 1.0, 1)])
               for i in range(5)]
    return Results(reports=[loud, quiet, other, broken, *passing])


def test_path_status_takes_the_worst_reference() -> None:
    elu, sin = sorted(_results().reports, key=lambda r: r.op)
    assert path_statuses(elu) == {"vjp": "pass", "double_vjp": "fail"}
    assert path_statuses(sin) == {"vjp": "pass", "double_vjp": "warn"}


def test_statuses_partition_the_ops() -> None:
    results = _many()
    counts = count_statuses(results, DEFAULT)
    assert counts == {"fail": 3, "error": 1, "allowed": 0, "warn": 0, "pass": 5}
    assert sum(counts.values()) == len(results.reports)
    allow = VerdictPolicy(allow={"cos": Allowance(frozenset({"mismatch"}), "known")})
    assert op_status(results.reports[1], allow) == "allowed"


def test_findings_grouped_per_op_root_cause_first() -> None:
    groups = findings_by_op(_many().reports, DEFAULT)
    assert [g.report.op for g in groups] == ["linalg.solve_triangular", "tan", "cos", "boom"]
    paths = [f.path for f, _ in groups[0].findings]
    assert paths[:3] == ["vjp", "jvp", "double_vjp"]
    assert paths[-2:] == ["adjoint(vjp,jvp)", "tf.vjp"]


def test_every_failing_op_gets_a_line() -> None:
    shown = interleave(findings_by_op(_many().reports, DEFAULT), 6)
    assert [g.report.op for g in shown] == ["linalg.solve_triangular", "tan", "cos", "boom"]
    assert [len(g.findings) for g in shown] == [3, 1, 1, 1]
    out = io.StringIO()
    Terminal(file=out).findings(_many(), DEFAULT, limit=6)
    lines = out.getvalue().splitlines()
    assert lines[1] == "findings (root cause first):"
    assert lines[2].startswith("FAIL linalg.solve_triangular · vjp vs numeric · mismatch")
    assert sum("· cos ·" in line or " cos · " in line for line in lines) == 1
    assert lines[-1].startswith("... and 7 more findings: -v lists all")


def test_plain_summary_lists_each_op_once_with_the_paths_that_did_not_pass() -> None:
    plain = io.StringIO()
    terminal = Terminal(file=plain)  # a StringIO is not a terminal: plain
    with terminal.progress(2) as done:
        done(_results().reports[1])  # nn.elu finished first
    terminal.summary(_results())
    assert plain.getvalue().splitlines() == [
        "FAIL nn.elu double_vjp=fail",
        "WARN sin double_vjp=warn",
        "gradcheck: 2 ops: 1 fail, 1 warn",
        "  FAIL    a derivative is wrong or unusable",
        "  WARN    correct, but wasteful (the double-VJP needs its dummy fed)",
        "  checked vjp, double_vjp against numeric, tensorflow (5 comparisons)",
    ]


def test_rich_summary_shows_only_what_did_not_pass_and_fits_80_columns() -> None:
    out = io.StringIO()
    results = _many()
    Terminal(plain=False, file=out, width=80).summary(results)
    text = out.getvalue()
    assert "ops that did not pass" in text
    assert "ok0" not in text  # passing ops are counted, not listed
    lines = text.splitlines()
    assert all(len(line) <= 80 for line in lines)
    # one line per op: the long name is whole, never wrapped mid-word
    assert sum("linalg.solve_triangular" in line for line in lines) == 1
    assert "gradcheck: 9 ops: 3 fail, 1 error, 5 pass" in text
    verbose = io.StringIO()
    Terminal(plain=False, file=verbose, width=80, verbose=True).summary(results)
    assert "ok0" in verbose.getvalue()


def test_elide_keeps_both_ends() -> None:
    assert elide("sin", 10) == "sin"
    name = "losses.sparse_softmax_cross_entropy_with_logits"
    short = elide(name, 28)
    assert len(short) == 28 and short.startswith("losses.spars") and short.endswith("logits")


def test_finding_line_says_tag_values_side_and_reason_once() -> None:
    finding = Finding("nn.elu", "vjp", "tensorflow", "mismatch",
                      "disagrees: max abs err 1 vs tolerance 0.1 (ratio 10)", 1.0, 1.0, 0.1,
                      worst_index=[0, 1], details={"analytic": -0.79, "numeric": 0.7912345},
                      attributed_to="tensorflow")
    assert values_text(finding) == "got -0.79, expected 0.7912 at [0, 1]"
    scalar = Finding("a", "vjp", "numeric", "mismatch", "off", worst_index=[],
                     details={"analytic": "nan", "numeric": 1})
    assert values_text(scalar) == "got nan, expected 1"
    policy = VerdictPolicy(allow={"nn.elu": Allowance(frozenset({"tensorflow:mismatch"}),
                                                      "TF bug 123")})
    out = io.StringIO()
    Terminal(file=out).finding(finding, policy)
    line = out.getvalue().strip()
    assert line.startswith("ALLOWED nn.elu · vjp vs tensorflow · mismatch: disagrees")
    assert "tensorflow's derivative" in line and "got -0.79, expected 0.7912 at [0, 1]" in line
    assert "allowed: TF bug 123" in line
    assert line.count("ratio") + line.count("err/tol") == 1  # the ratio printed once
    out = io.StringIO()
    Terminal(file=out).finding(Finding("a", "vjp", "numeric", "mismatch", "off", 2.0, 2.0, 1.0))
    assert re.fullmatch(r"FAIL a · vjp vs numeric · mismatch: off \[err/tol 2\]\n",
                        out.getvalue())


def test_tables_fit_80_columns_without_splitting_words() -> None:
    """``gradcheck list``'s table at 80 columns: every line fits, no word is cut in two
    (``elementwis/e``), and the op names are whole."""
    rows = [[f"family.op_{i}", "elementwise", "real, positive", "0", "vjp, jvp native",
             "numeric, autograd, tensorflow"] for i in range(5)]
    out = io.StringIO()
    Terminal(plain=False, file=out, width=80).table(
        "5 registered ops", ["op", "family", "domain", "kinks", "rules", "references"], rows)
    lines = out.getvalue().splitlines()
    assert all(len(line) <= 80 for line in lines)
    words = {w for line in lines for w in line.split()}
    assert {"elementwise", "tensorflow", "autograd,", "family.op_4"} <= words
    assert not any(w.startswith("elementwi") and w != "elementwise" for w in words)


def test_where_a_finding_is_worded_once() -> None:
    from gradcheck.checker.compare import where

    assert where(1, [(2,)], "element") == ([1], "element [1]")  # not "element element [1]"
    assert where(1, [(2,)], "output") == ([1], "output element [1]")
    assert where(3, [(2,), (2,)], "output") == ([1, 1], "output 1 at [1]")
    assert where(0, [()], "output") == ([], "the output")  # not "output element []"
    assert where(0, [()], "element") == ([], "the value")


def test_a_file_that_is_not_results_is_said_once(tmp_path: Path) -> None:
    from gradcheck.cli.run import UsageError
    from gradcheck.cli.show import load_results

    path = tmp_path / "other.json"
    path.write_text('{"format": "something-else"}')
    with pytest.raises(UsageError) as error:
        load_results(path)
    assert str(error.value).count("not a gradcheck results file") == 1
    assert "format is 'something-else'" in str(error.value)


def test_list_lines_do_not_repeat_the_path() -> None:
    finding = Finding("a", "vjp", "numeric", "mismatch", "vjp disagrees with the numeric "
                      "derivative: max abs err 1 vs tolerance 0.1 (ratio 10) at element [0]",
                      1.0, 1.0, 0.1)
    out = io.StringIO()
    Terminal(file=out).finding(finding)
    assert out.getvalue() == ("FAIL a · vjp vs numeric · mismatch: max abs err 1 vs tolerance "
                              "0.1 (ratio 10) at element [0]\n")


def test_convergence_table_of_show_fits_and_explains_n_a() -> None:
    from gradcheck.cli.show import convergence_rows

    steps = [0.1 / 4.0**k for k in range(16)]
    headers, rows = convergence_rows({
        "steps": steps, "expected_slope": 2.0,
        "series": {"jvp": [1e-16 / h for h in steps], "vjp": [h * h + 1e-16 / h for h in steps]}})
    assert headers == ["step", "vjp", "jvp"]
    assert rows[-2] == ["fitted slope", "2.00", "n/a"]
    assert rows[-1] == ["expected slope", "2.00", "2.00"]


def test_plain_progress_lines_are_corrected_by_the_runs_policy() -> None:
    out = io.StringIO()
    terminal = Terminal(file=out)
    elu = _results().reports[1]
    with terminal.progress(1) as done:
        done(elu)  # judged by the default policy: FAIL
    allow = VerdictPolicy(allow={"nn.elu": Allowance(frozenset({"value_leak"}), "known")})
    terminal.summary(Results(reports=[elu]), allow)
    lines = out.getvalue().splitlines()
    assert lines[:2] == ["FAIL nn.elu double_vjp=fail", "ALLOWED nn.elu double_vjp=fail"]
    out.truncate(0)
    out.seek(0)
    terminal = Terminal(file=out)
    with terminal.progress(1, policy=allow) as done:
        done(elu)
    terminal.summary(Results(reports=[elu]), allow)
    assert out.getvalue().splitlines()[:2] == ["ALLOWED nn.elu double_vjp=fail",
                                               "gradcheck: 1 op: 1 allowed"]


def test_path_words_follow_the_policy() -> None:
    # a user's --fail-on turns a dependence leak into a failure: its path reads "fail", as
    # the op's status does; a value leak the policy does not fail on reads "warn"; a failure
    # the suite allows still reads "fail" (the op reads ALLOWED)
    elu, sin = sorted(_results().reports, key=lambda r: r.op)
    leaks = VerdictPolicy(fail_on=frozenset({"dependence_leak"}))
    assert path_statuses(sin, leaks) == {"vjp": "pass", "double_vjp": "fail"}
    assert op_status(sin, leaks) == "fail"
    values = VerdictPolicy(fail_on=frozenset({"dependence_leak"}))
    assert path_statuses(elu, values) == {"vjp": "pass", "double_vjp": "warn"}
    allow = VerdictPolicy(allow={"nn.elu": Allowance(frozenset({"value_leak"}), "known")})
    assert path_statuses(elu, allow) == {"vjp": "pass", "double_vjp": "fail"}
    assert op_status(elu, allow) == "allowed"
