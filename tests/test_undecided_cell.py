"""A failing identity the numeric reference cannot decide reads "undecided" in its path's
cell (JSON, terminal, HTML), not "fail" as if that path were known wrong; the op still
fails.  An identity whose both paths the numeric reference rejects still reads "fail"."""

from __future__ import annotations

import io
from typing import Any

import numpy as np
import pytest

import gradcheck as gc
from gradcheck.checker.assemble import CellStats, undecided
from gradcheck.checker.compare import Outcome
from gradcheck.checker.policy import VerdictPolicy
from gradcheck.checker.report import STATUSES, Cell, Finding, Report, Results
from gradcheck.checker.tolerances import Verdict
from gradcheck.cli.terminal import Terminal, op_line, path_statuses
from gradcheck.render.html import render_html
from gradcheck.render.verdict import op_status


def _identity(details: dict[str, Any], side: str = "") -> Outcome:
    return Outcome("jvp", "self", "mismatch", Verdict(3e-9, 3.0, 1e-9), "adjoint fails",
                   {"against": "vjp", **details}, side=side)


def _numeric(path: str, ratio: float, side: str = "", **details: Any) -> Outcome:
    return Outcome(path, "numeric", None if ratio <= 1 else "mismatch",
                   Verdict(ratio * 1e-9, ratio, 1e-9), details=details, side=side)


BOTH = {"suspects": ["jvp", "vjp"]}


@pytest.mark.parametrize("details, numeric", [
    (BOTH, []),  # the numeric reference did not judge
    (BOTH, [_numeric("jvp", 0.5), _numeric("vjp", 3.0, inconclusive=True)]),
    ({**BOTH, "numeric_ratios": {"jvp": 0.02, "vjp": 0.04}},
     [_numeric("jvp", 0.02), _numeric("vjp", 0.04)]),  # it passes both
    (BOTH, [_numeric("jvp", 3.0, side="tensorflow"), _numeric("vjp", 3.0, side="tensorflow")]),
], ids=["not judged", "inconclusive", "passes both", "another side's checks"])
def test_an_identity_with_suspects_is_undecided(details: dict[str, Any],
                                                numeric: list[Outcome]) -> None:
    o = _identity(details)
    note = undecided(o, [o, *numeric])
    assert note.startswith("undecided:") and "jvp and vjp" in note and "both are suspects" in note


def test_the_likelier_culprit_is_named() -> None:
    o = _identity({"suspects": ["vjp", "jvp"], "likelier": "vjp"})
    assert "vjp is the likelier culprit" in undecided(o, [o])


@pytest.mark.parametrize("outcome", [
    _identity(BOTH),  # with both paths rejected below
    _identity({"numeric_supports": "vjp", "numeric_rejects": "jvp"}),
    Outcome("jvp", "self", None, Verdict(1e-12, 0.1, 1e-11), "", {"against": "vjp"}),
    Outcome("jvp", "numeric", "mismatch", Verdict(3e-9, 3.0, 1e-9), "", BOTH),
], ids=["both rejected", "decided", "passed", "not an identity"])
def test_what_the_numeric_reference_decided_is_not_undecided(outcome: Outcome) -> None:
    rejected = [_numeric("jvp", 3.0), _numeric("vjp", 2.0)]
    assert undecided(outcome, [outcome, *rejected]) == ""


def test_a_cell_is_undecided_only_while_no_failure_there_is_decided() -> None:
    stats = CellStats()
    stats.add(_numeric("jvp", 0.1))
    assert stats.status() == "pass"
    stats.add(_identity(BOTH), "undecided: ...")
    assert stats.status() == "undecided" and stats.examples == 2
    stats.add(_identity({"numeric_rejects": "jvp"}))
    assert stats.status() == "fail"
    assert STATUSES.index("warn") < STATUSES.index("undecided") < STATUSES.index("fail")


@pytest.fixture(scope="module")
def report() -> Report:
    # the VJP is 1e-8 off, the JVP exact: at some examples the numeric reference passes
    # both, and the adjoint identity fails under jvp undecided (tests/test_identity_attribution)
    bad = gc.define_op("exp_vjp_1e8", np.exp, vjp=lambda g, o, x: g * o * (1.0 + 1e-8),
                       jvp=lambda ts, o, x: ts[0] * o, register=False)
    return gc.check(bad, seed=0)


def test_the_undecided_identity_reads_undecided_and_the_op_still_fails(report: Report) -> None:
    cell = report.cell("jvp", "self")
    assert cell is not None and cell.status == "undecided", cell
    assert "jvp and vjp" in cell.note and "cannot tell" in cell.note
    assert report.cell("jvp", "numeric").status == "pass"  # type: ignore[union-attr]
    assert not report.passed and op_status(report, VerdictPolicy()) == "fail"
    (jvp,) = [f for f in report.failures if f.path == "jvp"]
    assert jvp.reference == "self" and "vjp" in jvp.details["suspects"]
    # an identity whose both paths the numeric reference rejects is known wrong: "fail"
    for c in report.cells:
        if c.reference == "self" and c.status == "fail":
            assert not c.note.startswith("undecided"), c


def test_the_json_keeps_the_undecided_cell(report: Report) -> None:
    back = Report.from_json(report.to_json())
    cell = back.cell("jvp", "self")
    assert cell is not None and cell.status == "undecided" and cell.note == \
        report.cell("jvp", "self").note  # type: ignore[union-attr]
    assert not back.passed


def test_the_terminal_says_undecided(report: Report) -> None:
    assert path_statuses(report)["jvp"] == "undecided"
    assert "jvp=undecided" in op_line(report) and op_line(report).startswith("FAIL ")
    out = io.StringIO()
    term = Terminal(plain=True, file=out, width=200)
    term.cells(report)
    term.totals(Results(reports=[report]))
    text = out.getvalue()
    (row,) = [line for line in text.splitlines() if line.split()[:2] == ["jvp", "self"]]
    assert row.split()[2] == "undecided"
    assert "undecided cell: an identity between two paths fails" in text


def test_the_html_marks_and_explains_undecided(report: Report) -> None:
    page = render_html(Results(reports=[report]))
    assert 'class="cell s-undecided"' in page and "--undecided-bg" in page
    assert "≟ undecided</b>: an identity between two paths fails" in page
    assert 'title="an identity between two paths fails' in page  # the legend's tooltip


def test_a_policy_that_does_not_fail_the_mismatch_reads_warn() -> None:
    r = Report(op="f", cells=[Cell("jvp", "numeric", "pass", 0.0, 1.0, 3),
                              Cell("jvp", "self", "undecided", 3.0, 1.0, 3, "undecided: ...")],
               findings=[Finding("f", "jvp", "self", "mismatch", "adjoint fails", 3.0, 3.0, 1.0,
                                 details={"against": "vjp", **BOTH})])
    assert path_statuses(r) == {"jvp": "undecided"}
    assert path_statuses(r, VerdictPolicy(fail_on=frozenset({"error"}))) == {"jvp": "warn"}
    assert "jvp=undecided" in op_line(r)


def test_an_undecided_cell_counts_as_compared() -> None:
    """A check whose only compared cells are undecided identities compared something: its
    failure is the identity's, not a second 'nothing was compared' error."""
    from gradcheck.checker.gaps import nothing_compared
    from gradcheck.checker.session import Options

    cells = [Cell("jvp", "self", "undecided", 1.0, 0.1, 1),
             Cell("jvp", "numeric", "unsupported", note="no numeric")]
    assert nothing_compared("op", cells, Options(("jvp",), ("numeric", "self"), "fast"),
                            (), []) == []
