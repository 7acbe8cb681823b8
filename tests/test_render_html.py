"""The HTML report, its convergence plots and the atomic writer (gradcheck/render/)."""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path

import matplotlib as mpl
import pytest

from gradcheck.checker.report import Cell, Finding, Report, Results
from gradcheck.render import atomic_write_text, render_html, write_html
from gradcheck.render.plots import convergence_svg

EVIL = "<script>alert(1)</script>"
STEPS = [10.0**-k for k in range(1, 9)]


def truncation_and_rounding(scale: float, order: float) -> list[float]:
    """A central-difference error curve: truncation ``h**order`` plus rounding ``eps/h``."""
    return [scale * h**order + 1e-16 / h for h in STEPS]


def make_results() -> Results:
    """Five ops over four families covering every cell status and finding severity."""
    sin = Report(
        op="sin",
        family="elementwise",
        dtypes=["float64"],
        cells=[
            Cell("vjp", "numeric", "pass", 1e-9, 1e-6, 8),
            Cell("jvp", "numeric", "pass", 2e-9, 1e-6, 8),
            Cell("vjp", "autograd", "pass", 0.0, 1e-12, 8),
            Cell("vjp", "tensorflow", "unavailable", note="install gradcheck[tensorflow]"),
            Cell("adjoint(vjp,jvp)", "self", "pass", 1e-16, 1e-13, 8),
        ],
        convergence={
            "steps": STEPS,
            "series": {
                "vjp": truncation_and_rounding(1.0, 2),
                "jvp": truncation_and_rounding(2.0, 2),
            },
            "expected_slope": 2.0,
        },
    )
    elu = Report(
        op="elu",
        family="nn",
        findings=[
            Finding(
                "elu",
                "double_vjp",
                "numeric",
                "value_leak",
                "JVP changes with the dummy cotangent for x < 0",
                max_abs_err=0.5,
                tolerance=1e-6,
                counterexample={"x": [[-1.0, 0.5], [2.0, -3.0]], "seed": 3},
                worst_index=[0, 0],
                details={"analytic": -0.79, "numeric": 0.79},
            )
        ],
        cells=[
            Cell("vjp", "numeric", "pass", 1e-9, 1e-6, 8),
            Cell("double_vjp", "numeric", "fail", 0.5, 1e-6, 8, "leak"),
            Cell("leak(double_vjp)", "self", "fail", 0.5, 1e-6, 8),
        ],
        convergence={
            "steps": STEPS,
            "series": {"vjp": truncation_and_rounding(1.0, 2), "double_vjp": [0.5] * 8},
            "expected_slope": 2.0,
        },
    )
    cholesky = Report(
        op="cholesky",
        family="linalg",
        tolerance_reason="scaled by the condition number 1e3",
        findings=[
            Finding("cholesky", "double_vjp", "self", "dependence_leak", "the dummy must be fed")
        ],
        cells=[
            Cell("vjp", "numeric", "pass", 1e-8, 1e-6, 4),
            Cell("double_vjp", "self", "warn", note="dependence leak"),
            Cell("hvp_rev_rev", "numeric", "skipped", note="first-order only"),
        ],
    )
    evil = Report(
        op=EVIL,
        family="nn",
        findings=[
            Finding(
                EVIL,
                "vjp",
                "numeric",
                "error",
                "raised <b>ValueError</b>",
                traceback='Traceback (most recent call last):\n  File "x.py"\nValueError: <bad>',
            )
        ],
        cells=[Cell("vjp", "numeric", "error", note="<i>boom</i>")],
        convergence={"steps": [0.1, 0.01], "series": {EVIL: [1e-3, 1e-5]}},
    )
    floor = Report(
        op="floor",
        family="piecewise",
        findings=[Finding("floor", "vjp", "numeric", "nondifferentiable", "piecewise constant")],
        cells=[
            Cell("vjp", "numeric", "unsupported"),
            Cell("tf.double_vjp", "tensorflow", "pass", 1e-10, 1e-6, 3),
        ],
    )
    return Results(
        reports=[sin, elu, cholesky, evil, floor],
        config={"seed": 7, "mode": "fast"},
        environment={"python": "3.11", "versions": {"numpy": "2.1", "tensorflow": "2.17"}},
    )


# -- a tiny DOM, enough to query the page without a third-party parser ---------------

VOID = {"meta", "input", "br", "img", "link", "hr", "col", "wbr", "source"}


class Node:
    """One element: tag, attributes, children (nodes and text)."""

    def __init__(self, tag: str, attrs: dict[str, str]) -> None:
        self.tag = tag
        self.attrs = attrs
        self.children: list[Node | str] = []

    @property
    def classes(self) -> set[str]:
        return set(self.attrs.get("class", "").split())

    def text(self) -> str:
        return "".join(c if isinstance(c, str) else c.text() for c in self.children)

    def iter(self) -> Iterator[Node]:
        yield self
        for child in self.children:
            if isinstance(child, Node):
                yield from child.iter()

    def find_all(self, tag: str, cls: str | None = None, **attrs: str) -> list[Node]:
        attrs = {k.replace("_", "-"): v for k, v in attrs.items()}
        return [
            n
            for n in self.iter()
            if n.tag == tag
            and (cls is None or cls in n.classes)
            and all(n.attrs.get(k) == v for k, v in attrs.items())
        ]

    def find(self, tag: str, cls: str | None = None, **attrs: str) -> Node:
        found = self.find_all(tag, cls, **attrs)
        assert len(found) == 1, f"expected one <{tag} class={cls} {attrs}>, found {len(found)}"
        return found[0]


class TreeBuilder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Node("#document", {})
        self.stack = [self.root]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        node = Node(tag, {k: v or "" for k, v in attrs})
        self.stack[-1].children.append(node)
        if tag not in VOID:
            self.stack.append(node)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.stack[-1].children.append(Node(tag, {k: v or "" for k, v in attrs}))

    def handle_endtag(self, tag: str) -> None:
        while len(self.stack) > 1:
            if self.stack.pop().tag == tag:
                return

    def handle_data(self, data: str) -> None:
        self.stack[-1].children.append(data)


def parse(text: str) -> Node:
    builder = TreeBuilder()
    builder.feed(text)
    builder.close()
    return builder.root


@pytest.fixture(scope="module")
def page_text() -> str:
    return render_html(make_results())


@pytest.fixture(scope="module")
def page(page_text: str) -> Node:
    return parse(page_text)


def row(page: Node, op: str) -> Node:
    return page.find("tr", data_op=op)


# -- content --------------------------------------------------------------------------


def test_summary_counts(page: Node) -> None:
    counts = {
        li.attrs["data-summary"]: int(li.find("span", "n").text())
        for li in page.find_all("li")
        if "data-summary" in li.attrs
    }
    # One status per op, so the counts add up: elu fails, the evil op errors (its check
    # could not run), cholesky only warns; floor's info finding leaves it passing.
    assert counts == {"ops": 5, "fail": 1, "error": 1, "allowed": 0, "warn": 1, "pass": 2}


def test_header_shows_run_config_and_environment(page: Node) -> None:
    header = page.find_all("header")[0]
    pairs = dict(
        zip(
            [dt.text() for dt in header.find_all("dt")],
            [dd.text() for dd in header.find_all("dd")],
            strict=True,
        )
    )
    assert pairs["seed"] == "7"
    assert pairs["mode"] == "fast"
    assert pairs["dtypes"] == "float64"
    assert pairs["versions.numpy"] == "2.1"
    assert pairs["versions.tensorflow"] == "2.17"
    # Versions the results do not hold are named, never looked up at render time.
    assert pairs["gradcheck"] == "not recorded" and pairs["autograd"] == "not recorded"


def test_matrix_columns_follow_path_then_reference_order(page: Node) -> None:
    head_rows = page.find("table", id="matrix").find_all("tr")[:2]
    groups = [(th.text(), th.attrs["colspan"]) for th in head_rows[0].find_all("th", "group")]
    assert groups == [
        ("vjp", "3"),
        ("jvp", "1"),
        ("double_vjp", "2"),
        ("hvp_rev_rev", "1"),
        ("adjoint(vjp,jvp)", "1"),
        ("leak(double_vjp)", "1"),
        ("tf.double_vjp", "1"),
    ]
    references = [th.text() for th in head_rows[1].find_all("th")]
    assert references == [
        "numeric", "autograd", "tensorflow", "numeric", "numeric", "self", "numeric",
        "self", "self", "tensorflow",
    ]  # fmt: skip


def test_cells_carry_status_ratio_and_hover_details(page: Node) -> None:
    cells = row(page, "elu").find_all("td", "cell")
    failing = [c for c in cells if "s-fail" in c.classes]
    assert len(failing) == 2
    assert "5.0e+05" in failing[0].text()
    title = failing[0].attrs["title"]
    assert title.splitlines() == [
        "double_vjp vs numeric: fail",
        "max_abs_err = 5.00e-01",
        "tolerance = 1.00e-06",
        "error/tolerance = 5.0e+05",
        "examples = 8",
        "note: leak",
    ]
    # Cells without a numeric comparison show their status instead of a ratio.
    sin_cells = row(page, "sin").find_all("td", "cell")
    assert any("s-unavailable" in c.classes and "n/a" in c.text() for c in sin_cells)
    # Ten columns: every row has ten cells, absent pairs included.
    for tr in page.find("table", id="matrix").find_all("tbody")[0].find_all("tr"):
        assert len(tr.find_all("td", "cell")) + len(tr.find_all("td", "absent")) == 10


def test_rows_carry_what_filters_and_sorting_read(page: Node) -> None:
    attrs = {
        op: {k: row(page, op).attrs[k] for k in ("data-family", "data-failed", "data-leak")}
        for op in ("sin", "elu", "cholesky", EVIL, "floor")
    }
    assert attrs["sin"] == {"data-family": "elementwise", "data-failed": "0", "data-leak": "0"}
    assert attrs["elu"] == {"data-family": "nn", "data-failed": "1", "data-leak": "1"}
    assert attrs["cholesky"] == {"data-family": "linalg", "data-failed": "0", "data-leak": "1"}
    assert attrs[EVIL] == {"data-family": "nn", "data-failed": "1", "data-leak": "0"}
    assert row(page, "elu").attrs["data-ratio"] == "500000.0"
    assert row(page, EVIL).attrs["data-ratio"] == ""  # no numeric comparison: sorts last
    options = [o.attrs["value"] for o in page.find("select", id="family-filter").find_all("option")]
    assert options == ["*", "elementwise", "linalg", "nn", "piecewise"]
    sort_keys = [b.attrs["data-sort"] for b in page.find_all("button", "sort")]
    assert sort_keys == ["op", "family", "ratio"]


def test_row_status_is_the_most_telling_cell_or_finding(page: Node) -> None:
    statuses = {op: row(page, op).attrs["data-status"] for op in ("sin", "elu", "cholesky", EVIL)}
    assert statuses == {"sin": "pass", "elu": "fail", "cholesky": "warn", EVIL: "error"}
    # Info findings do not colour the row (the cells still say what did not run).
    only_info = Report(
        op="sign",
        cells=[Cell("vjp", "numeric", "unsupported")],
        findings=[Finding("sign", "vjp", "numeric", "nondifferentiable", "zero almost everywhere")],
    )
    mixed = Report(op="abs", cells=[Cell("vjp", "numeric", "pass", 0.0, 1e-6, 2)])
    mixed.cells.append(Cell("vjp", "tensorflow", "unavailable"))
    other = parse(render_html(Results(reports=[only_info, mixed])))
    assert row(other, "sign").attrs["data-status"] == "pass"
    assert row(other, "abs").attrs["data-status"] == "pass"


def test_detail_section_shows_findings_in_full(page: Node) -> None:
    elu = page.find("article", "op-detail", data_op="elu")
    finding = elu.find("article", "finding")
    assert "value_leak" in finding.text() and "double_vjp" in finding.text()
    assert "5.00e-01" in finding.text() and "1.00e-06" in finding.text()
    assert "[0, 0]" in finding.text()  # the worst index as an index, [] for a 0-d value
    # Arrays print one row per line, so a counterexample reads as a matrix.
    assert "[-1.0, 0.5],\n" in finding.find("pre", "counterexample").text()
    assert elu.find_all("svg", "convergence")

    cholesky = page.find("article", "op-detail", data_op="cholesky")
    assert "scaled by the condition number 1e3" in cholesky.text()
    assert not cholesky.find_all("svg")  # no convergence data, no plot

    evil = page.find("article", "op-detail", data_op=EVIL)
    assert evil.find("pre", "traceback").text().endswith("ValueError: <bad>")


def test_html_in_names_and_messages_is_escaped(page_text: str, page: Node) -> None:
    assert "<script>alert" not in page_text
    assert "<b>ValueError" not in page_text
    assert "<i>boom" not in page_text
    assert "<bad>" not in page_text
    assert page_text.count("<script") == 1  # the page's own script, nothing injected
    # Escaped once, not twice: the parsed text is the original string.
    assert page.find("article", "op-detail", data_op=EVIL).find("h3").text() == EVIL
    # A series named like a script is escaped inside the SVG too.
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in evil_svg(page_text)
    evil = page.find("article", "op-detail", data_op=EVIL)
    assert evil.find("p", "message").text() == "raised <b>ValueError</b>"
    assert row(page, EVIL).find("td", "cell").attrs["title"].endswith("note: <i>boom</i>")
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page_text


def evil_svg(page_text: str) -> str:
    start = page_text.index('id="op-0-script-alert-1-script"')
    return page_text[page_text.index("<svg", start) : page_text.index("</svg>", start)]


def test_page_is_self_contained(page_text: str) -> None:
    assert "<link" not in page_text and "@import" not in page_text
    assert not re.search(r"\ssrc\s*=", page_text)
    hrefs = re.findall(r'href="([^"]*)"', page_text)
    assert hrefs and all(h.startswith("#") for h in hrefs)


def test_rendering_is_deterministic() -> None:
    results = make_results()
    first = render_html(results)
    assert render_html(results) == first
    assert render_html(Results.from_json(results.to_json())) == first
    shuffled = Results(list(reversed(results.reports)), results.config, results.environment)
    assert render_html(shuffled) == first


def test_empty_results_render() -> None:
    text = render_html(Results())
    assert "The results hold no ops." in text
    summary = {li.attrs["data-summary"]: li.text() for li in parse(text).find_all("li")
               if "data-summary" in li.attrs}  # fmt: skip
    assert summary["ops"].startswith("0")


def test_bad_input_is_named() -> None:
    results = Results(reports=[Report(op="tanh", cells=[Cell("vjp", "numeric", "bogus")])])
    with pytest.raises(ValueError, match=r"op 'tanh'.*vjp vs numeric.*'bogus'"):
        render_html(results)
    with pytest.raises(TypeError, match="render_html: results must be a Results"):
        render_html({"reports": []})  # type: ignore[arg-type]


# -- convergence plot -----------------------------------------------------------------


def convergence() -> dict[str, object]:
    return {
        "steps": STEPS,
        "series": {"jvp": truncation_and_rounding(2.0, 2), "vjp": truncation_and_rounding(1, 2)},
        "expected_slope": 2.0,
    }


def test_convergence_svg_is_deterministic_and_leaves_rcparams_alone() -> None:
    before = dict(mpl.rcParams)
    svg = convergence_svg(convergence(), key="sin")
    assert dict(mpl.rcParams) == before
    assert svg == convergence_svg(convergence(), key="sin")
    assert svg.startswith("<svg ") and svg.rstrip().endswith("</svg>")
    # Legend entries carry the fitted slope, which is 2 up to the rounding part.
    slopes = dict(re.findall(r">(\w+) \(slope ([-\d.]+)\)<", svg))
    assert slopes.keys() == {"vjp", "jvp"}
    assert all(abs(float(v) - 2.0) < 0.05 for v in slopes.values())
    assert "expected slope 2" in svg
    assert "<g id=" not in svg and "<?xml" not in svg and "<metadata" not in svg
    # The salt depends on the op, so two plots on one page never share an id.
    ids = set(re.findall(r'id="([^"]+)"', svg))
    other = set(re.findall(r'id="([^"]+)"', convergence_svg(convergence(), key="cos")))
    assert ids and not ids & other


def test_convergence_svg_handles_empty_and_unplottable_data() -> None:
    assert convergence_svg({}, key="sin") == ""
    zeros = {"steps": [0.1, 0.01], "series": {"vjp": [0.0, "nan"]}, "expected_slope": 2.0}
    assert convergence_svg(zeros, key="sin") == ""


def test_convergence_svg_names_bad_data() -> None:
    short = {"steps": [0.1, 0.01], "series": {"vjp": [1e-3]}}
    with pytest.raises(ValueError, match=r"'sin'.*series 'vjp' has 1 values but 'steps' has 2"):
        convergence_svg(short, key="sin")
    with pytest.raises(ValueError, match=r"'sin'.*'steps' and 'series'"):
        convergence_svg({"series": {}}, key="sin")
    with pytest.raises(ValueError, match=r"'sin'.*'oops'.*not a number"):
        convergence_svg({"steps": [0.1], "series": {"vjp": ["oops"]}}, key="sin")


# -- atomic write ---------------------------------------------------------------------


def test_atomic_write_text_writes_exact_text(tmp_path: Path) -> None:
    target = tmp_path / "out.txt"
    text = "line one\r\nline two\nπ ≈ 3.14\n"
    assert atomic_write_text(target, text) == target
    assert target.read_bytes() == text.encode("utf-8")
    assert atomic_write_text(target, iter(["a", "b"])) == target
    assert target.read_text() == "ab"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.txt"]


def test_interrupted_write_keeps_the_old_file(tmp_path: Path) -> None:
    target = tmp_path / "report.html"
    target.write_text("old report")

    def chunks() -> Iterator[str]:
        yield "<html>half a new"
        raise KeyboardInterrupt  # the run is killed mid-write

    with pytest.raises(KeyboardInterrupt):
        atomic_write_text(target, chunks())
    assert target.read_text() == "old report"
    assert [p.name for p in tmp_path.iterdir()] == ["report.html"]


def test_failed_rename_keeps_the_old_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "results.json"
    target.write_text("{}")

    def refuse(src: object, dst: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(OSError, match="disk full"):
        atomic_write_text(target, '{"format": "new"}')
    monkeypatch.undo()
    assert target.read_text() == "{}"
    assert [p.name for p in tmp_path.iterdir()] == ["results.json"]


def test_atomic_write_permissions(tmp_path: Path) -> None:
    umask = os.umask(0o022)
    os.umask(umask)
    fresh = atomic_write_text(tmp_path / "fresh.txt", "x")
    assert stat.S_IMODE(fresh.stat().st_mode) == 0o666 & ~umask
    private = tmp_path / "private.txt"
    private.write_text("old")
    private.chmod(0o600)
    atomic_write_text(private, "new")
    assert stat.S_IMODE(private.stat().st_mode) == 0o600


def test_atomic_write_names_a_missing_directory(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="directory .*nowhere.* does not exist"):
        atomic_write_text(tmp_path / "nowhere" / "out.txt", "x")


def test_write_html_writes_the_rendered_page(tmp_path: Path) -> None:
    results = make_results()
    path = write_html(results, tmp_path / "report.html")
    assert path.read_text(encoding="utf-8") == render_html(results)


def test_kinds_a_suite_allows_do_not_count_as_failed() -> None:
    """The page's verdict follows the run's: a suite row's `allow` (with its reason) holds."""
    leak = Finding(op="cumlogsumexp", path="tf.double_vjp", reference="tensorflow",
                   kind="value_leak", message="TensorFlow's own double-VJP leaks")
    report = Report(op="cumlogsumexp", findings=[leak],
                    cells=[Cell(path="tf.double_vjp", reference="tensorflow", status="fail")])
    plain = render_html(Results(reports=[report]))
    assert "1 of 1 ops fail" in plain
    allowed = render_html(Results(reports=[report], config={"exceptions": {"cumlogsumexp": {
        "allow": ["value_leak"], "reason": "a TensorFlow finding"}}}))
    assert "all 1 ops pass" in allowed
    page = parse(allowed)
    # Never hidden: the finding shows, tagged allowed, with the suite's reason.
    finding = page.find("article", "finding")
    assert finding.attrs["data-tag"] == "allowed"
    assert "Allowed by the suite: a TensorFlow finding" in finding.text()
    assert row(page, "cumlogsumexp").attrs["data-status"] == "allowed"
    assert page.find("li", data_summary="allowed").find("span", "n").text() == "1"


def test_verdict_leads_the_page(page: Node) -> None:
    """Counts and the ops that did not pass come before the run's settings and the matrix;
    each with its root finding, the values at the worst index and whose derivative."""
    order = [n.attrs.get("id") or n.attrs.get("class") for n in page.iter()
             if n.attrs.get("id") in ("troubles", "run-heading", "matrix")
             or n.attrs.get("class") == "summary"]
    assert order == ["summary", "troubles", "run-heading", "matrix"]
    items = page.find("section", id="troubles").find_all("li")
    assert [li.attrs["data-op"] for li in items] == ["elu", EVIL, "cholesky"]
    assert "got -0.79, expected 0.79 at [0, 0]" in items[0].text()
    elu = page.find("article", "op-detail", data_op="elu")
    assert "got -0.79, expected 0.79 at [0, 0]" in elu.find("p", "values").text()


def test_attributed_findings_name_the_side() -> None:
    finding = Finding("sin", "vjp", "tensorflow", "mismatch", "TF's gradient is off", 1.0,
                      1.0, 1e-6, attributed_to="tensorflow")
    other = Finding("sin", "jvp", "numeric", "mismatch", "off", 1.0, 1.0, 1e-6,
                    details={"analytic": 1.0, "numeric": 2.0})
    page = parse(render_html(Results(reports=[Report(op="sin", findings=[finding, other])])))
    assert "tensorflow's derivative" in page.find_all("article", "finding")[0].find("h5").text()
    assert "got 1, expected 2" in page.find_all("article", "finding")[1].text()
    listed = " ".join(page.find("section", id="troubles").find("li").text().split())
    assert listed.endswith("vjp vs tensorflow · mismatch: TF's gradient is off "
                           "(tensorflow's derivative) (+1 more)")


def test_exceptions_are_a_table_not_run_settings() -> None:
    config = {"seed": 0, "ops": ["a", "b"], "references": ["numeric", "autograd"],
              "exceptions": {"a": {"allow": ["tensorflow:mismatch"], "reason": "TF bug",
                                   "settings": {"examples": 2}}},
              "skipped": {"b": "too slow", EVIL: EVIL}}
    text = render_html(Results(reports=[Report(op="a")], config=config))
    assert "<script>alert" not in text  # escaped in the exceptions table too
    page = parse(text)
    run = page.find("section", "card", aria_labelledby="run-heading")
    keys = [dt.text() for dt in run.find_all("dt")]
    assert not any(k.startswith(("exceptions", "skipped", "ops.")) for k in keys)
    assert dict(zip(keys, [dd.text() for dd in run.find_all("dd")], strict=True))[
        "references"] == "numeric, autograd"
    rows = [[td.text() for td in tr.find_all("td")]
            for tr in page.find("section", id="exceptions").find_all("tr")[1:]]
    assert rows == [["a", "tensorflow:mismatch (settings: examples=2)", "TF bug"],
                    [EVIL, "not checked", EVIL], ["b", "not checked", "too slow"]]


def test_plots_only_for_ops_that_did_not_pass(page: Node) -> None:
    sin = page.find("article", "op-detail", data_op="sin")
    assert not sin.find_all("svg")
    assert "vjp 2.00, jvp 2.00" in sin.find("p", "slopes").text()
    assert page.find("article", "op-detail", data_op="elu").find_all("svg", "convergence")
