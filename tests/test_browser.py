"""The HTML report in a real browser: headless Chromium applies the URL-hash filters.

Needs ``/usr/bin/chromium`` (Debian package ``chromium``:
``apt-get install -y chromium``).  Without it these tests fail -- they are never
skipped, so CI cannot silently stop checking the page.  Set ``GRADCHECK_CHROMIUM``
to use a Chromium elsewhere.
"""

from __future__ import annotations

import struct
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import bench_scripts
import pytest

from gradcheck.checker.report import Cell, Finding, Report, Results
from gradcheck.render import write_html

pytestmark = pytest.mark.browser

#: The bench script that measures the report's load time: its Chromium, its flags, the
#: registry-sized results and the page probe are the ones these tests use.
REPORT_LOAD = bench_scripts.load("report_load")
WINDOW = (1280, 1600)


def chromium() -> str:
    """Path of the Chromium binary, or a failed test saying how to install it."""
    path, looked = REPORT_LOAD.find_chromium()
    if path is None:
        pytest.fail(
            f"Chromium not found (looked for {looked}): the browser tests "
            "need it. Install it with `apt-get update && apt-get install -y chromium` (Debian "
            "package 'chromium'), or set GRADCHECK_CHROMIUM to a Chromium binary.",
            pytrace=False,
        )
    return path


def run_chromium(tmp_path: Path, url: str, *args: str) -> subprocess.CompletedProcess[str]:
    profile = tmp_path / "chromium-profile"
    profile.mkdir(exist_ok=True)
    command = [chromium(), *REPORT_LOAD.FLAGS, f"--user-data-dir={profile}", *args, url]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    if done.returncode != 0:
        pytest.fail(f"chromium exited with {done.returncode}:\n{done.stderr[-3000:]}")
    return done


def results() -> Results:
    """Two passing ops, a failing leaky one, an erroring one and a wasteful-leak one."""
    ok = [Cell("vjp", "numeric", "pass", 1e-9, 1e-6, 4), Cell("jvp", "numeric", "pass", 3e-9, 1e-6)]
    steps = [1e-1, 1e-2, 1e-3, 1e-4]
    return Results(
        reports=[
            Report(op="sin", family="elementwise", cells=ok),
            Report(
                op="exp",
                family="elementwise",
                cells=[Cell("vjp", "numeric", "pass", 5e-7, 1e-6, 4)],
                convergence={
                    "steps": steps,
                    "series": {"vjp": [h**2 for h in steps], "jvp": [2 * h**2 for h in steps]},
                    "expected_slope": 2.0,
                },
            ),
            Report(
                op="elu",
                family="nn",
                findings=[
                    Finding("elu", "double_vjp", "numeric", "value_leak", "x < 0", 0.5, 0.5, 1e-6)
                ],
                cells=[*ok, Cell("double_vjp", "numeric", "fail", 0.5, 1e-6, 4)],
            ),
            Report(
                op="solve",
                family="linalg",
                findings=[Finding("solve", "vjp", "numeric", "error", "boom", traceback="Tb")],
                cells=[Cell("vjp", "numeric", "error")],
            ),
            Report(
                op="cholesky",
                family="linalg",
                findings=[Finding("cholesky", "double_vjp", "self", "dependence_leak", "fed")],
                cells=[*ok, Cell("double_vjp", "self", "warn")],
            ),
        ],
        config={"seed": 0, "mode": "fast"},
    )


@pytest.fixture
def report_url(tmp_path: Path) -> str:
    return write_html(results(), tmp_path / "report.html").resolve().as_uri()


class RowCollector(HTMLParser):
    """The matrix rows and detail sections of a dumped DOM, in document order."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[tuple[str, bool]] = []
        self.details: dict[str, bool] = {}
        self.root: dict[str, str | None] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "html":
            self.root = a
        elif tag == "tr" and "data-op" in a:
            self.rows.append((a["data-op"] or "", "hidden" in a))
        elif tag == "article" and "op-detail" in (a.get("class") or "").split():
            self.details[a["data-op"] or ""] = "hidden" in a


def dump(tmp_path: Path, url: str) -> RowCollector:
    collector = RowCollector()
    collector.feed(run_chromium(tmp_path, url, "--dump-dom").stdout)
    assert collector.rows, "the dumped DOM has no matrix rows"
    return collector


def shown(collector: RowCollector) -> list[str]:
    return [op for op, hidden in collector.rows if not hidden]


def test_failures_filter_from_hash_hides_passing_rows(tmp_path: Path, report_url: str) -> None:
    dom = dump(tmp_path, report_url + "#filter=failures")
    assert dom.root.get("data-filter") == "failures"  # the script ran and read the hash
    assert shown(dom) == ["elu", "solve"]
    assert {op for op, hidden in dom.details.items() if not hidden} == {"elu", "solve"}


def test_without_hash_every_row_shows(tmp_path: Path, report_url: str) -> None:
    dom = dump(tmp_path, report_url)
    assert shown(dom) == ["cholesky", "elu", "exp", "sin", "solve"]
    assert not any(dom.details.values())


def test_leaks_filter_keeps_value_and_dependence_leaks(tmp_path: Path, report_url: str) -> None:
    assert shown(dump(tmp_path, report_url + "#filter=leaks")) == ["cholesky", "elu"]


def test_family_filter_and_sort_from_hash(tmp_path: Path, report_url: str) -> None:
    dom = dump(tmp_path, report_url + "#family=elementwise&sort=ratio&dir=desc")
    # exp's worst ratio is 0.5, sin's 0.003: worst first.
    assert shown(dom) == ["exp", "sin"]
    dom = dump(tmp_path, report_url + "#sort=ratio&dir=desc")
    # Equal ratios (sin, cholesky) fall back to the op name; solve has no numeric
    # comparison, so it sorts last in either direction.
    assert [op for op, _ in dom.rows] == ["elu", "exp", "cholesky", "sin", "solve"]
    dom = dump(tmp_path, report_url + "#sort=ratio&dir=asc")
    assert [op for op, _ in dom.rows] == ["cholesky", "sin", "exp", "elu", "solve"]


def test_screenshot_renders(tmp_path: Path, report_url: str) -> None:
    png = tmp_path / "report.png"
    run_chromium(
        tmp_path, report_url, f"--screenshot={png}", f"--window-size={WINDOW[0]},{WINDOW[1]}"
    )
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    width, height = struct.unpack(">II", data[16:24])  # the IHDR chunk comes first
    assert (width, height) == WINDOW
    from PIL import Image  # Pillow comes with matplotlib

    with Image.open(png) as image:
        colours = image.convert("RGB").getcolors(maxcolors=1 << 20)
    assert colours is not None
    # A blank or unstyled page has a handful of colours; the report has status colours,
    # anti-aliased text and plot lines.
    assert len(colours) > 200
    background = max(colours)[0] / (width * height)
    assert background < 0.9, "the page is almost one flat colour"


# -- the full-registry report: size and width ------------------------------------------
# Its load time is a figure, not an assertion: ``bench/report_load.py`` measures it.

MAX_BYTES = 2_000_000


def test_full_registry_report_is_small_and_fits_1280px(tmp_path: Path) -> None:
    page, size = REPORT_LOAD.probe_page(REPORT_LOAD.large_results(155), tmp_path, "full")
    collector = RowCollector()
    collector.feed(run_chromium(tmp_path, page.resolve().as_uri(), "--dump-dom",
                                "--window-size=1280,900").stdout)
    root = collector.root
    print(f"\n155-op report: {size / 1e6:.2f} MB, scroll width {root.get('data-scroll-width')} px")
    assert root.get("data-load-ms") is not None, "the probe did not run"
    assert size <= MAX_BYTES, f"{size / 1e6:.2f} MB"
    assert len(collector.rows) == 155, "a row per op"
    # No sideways scrolling: the matrix scrolls inside its own box, the page does not.
    assert root.get("data-inner-width") == "1280"
    assert int(root["data-scroll-width"] or 0) <= 1280
