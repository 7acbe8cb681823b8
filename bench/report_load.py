"""How big the HTML report of a registry-sized run is, and how long Chromium takes to load it.

Run: ``python bench/report_load.py`` (``--ops N``, ``--loads N``).  Three pages, each loaded
``--loads`` times in headless Chromium at 1280 px (a fresh browser each time), interleaved:

* **empty**: a page with nothing but the probe -- the floor, Chromium's own start of a page;
* **6 ops**: a small run's report (the shape of ``make smoke-report``);
* **N ops** (default 155, the registry): every op with a cell per path and reference,
  identity cells, convergence data and stats; one op in ten fails with counterexamples,
  some warn, one finding is allowed by the suite.

Load time is ``performance.now()`` at the load event (ms since navigation start), as the page
measures it itself.  Printed: size, best and median load, and each page's best load as a
ratio to the empty page's.  A busy machine only ever makes a load slower, so the best is the
figure to quote; run it on an idle machine.  Needs ``/usr/bin/chromium`` (Debian package
``chromium``) or ``GRADCHECK_CHROMIUM``.  The browser tests use ``large_results`` and
``probe_page`` from here for the page's size and width; the load time is measured only here.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from html.parser import HTMLParser
from pathlib import Path

from gradcheck.checker.report import Cell, Finding, Report, Results
from gradcheck.render import write_html

FAMILIES = ("elementwise", "binary", "reduce", "shape", "linalg", "nn", "losses", "indexing")
PATHS = ("vjp", "jvp", "double_vjp", "hvp_fwd_rev", "hvp_rev_rev", "hvp_rev_fwd")
STEPS = [0.1 / 3.98**k for k in range(16)]
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--hide-scrollbars"]

#: What the page records of itself at its load event, as attributes of ``<html>``.
PROBE = """<script>
window.addEventListener("load", function () {
  const root = document.documentElement;
  root.dataset.loadMs = String(Math.round(performance.now()));
  root.dataset.scrollWidth = String(root.scrollWidth);
  root.dataset.innerWidth = String(window.innerWidth);
});
</script>
</body>"""


def _report(i: int) -> Report:
    op = f"{FAMILIES[i % len(FAMILIES)]}.op_with_a_long_name_{i:03d}"
    cells = [Cell(p, ref, "pass", 1e-10 * (1 + i % 7), 1e-7, 8)
             for p in PATHS for ref in ("numeric", "self")]
    cells += [Cell(f"adjoint({a},{b})", "self", "pass", 1e-16, 1e-13, 8)
              for a, b in (("vjp", "jvp"), ("double_vjp", "jvp"))]
    cells += [Cell(p, "linearity", "pass", 0.0, 1e-12, 8) for p in ("vjp", "jvp")]
    cells.append(Cell("double_vjp", "dummy", "pass", 0.0, 1e-12, 8))
    findings = []
    if i % 10 == 3:
        x = [[round(0.37 * k - 1.1 * j, 6) for k in range(4)] for j in range(3)]
        findings.append(Finding(op, "vjp", "numeric", "mismatch",
                                f"vjp disagrees with the numeric derivative at element "
                                f"[{i % 3}, 1]", 0.4, 0.5, 1e-7, worst_index=[i % 3, 1],
                                counterexample={"inputs": [x], "cotangent": x,
                                                "dtype": "float64", "seed": i},
                                details={"analytic": -0.79, "numeric": 0.79}))
        findings += [Finding(op, p, "numeric", "mismatch", f"{p} disagrees", 0.3, 0.3, 1e-7)
                     for p in PATHS[1:]]
        cells = [Cell(c.path, c.reference, "fail", 0.4, 1e-7, 8)
                 if c.reference == "numeric" else c for c in cells]
    elif i % 10 == 6:
        findings.append(Finding(op, "double_vjp", "self", "dependence_leak",
                                "the double-VJP needs its dummy fed"))
    elif i == 9:
        findings.append(Finding(op, "tf.double_vjp", "tensorflow", "value_leak",
                                "TensorFlow's double-VJP is nan at a zero dummy",
                                attributed_to="tensorflow"))
    series = {p: [(1 + k) * h * h + 1e-16 / h for h in STEPS] for k, p in enumerate(PATHS)}
    return Report(
        op=op, family=FAMILIES[i % len(FAMILIES)], seed=0, dtypes=["float64", "float32"],
        findings=findings, cells=cells,
        stats={"evaluations": {p: 40 + k for k, p in enumerate(PATHS)},
               "examples": {"float64": 8, "float32": 8}, "shrink_calls": 0},
        convergence={"steps": STEPS, "series": series,
                     "rounding": {p: [1e-16 / h for h in STEPS] for p in PATHS},
                     "expected_slope": 2.0})


def large_results(n_ops: int = 155) -> Results:
    """A run shaped like ``gradcheck run --all`` over ``n_ops`` ops (see the module's text)."""
    reports = [_report(i) for i in range(n_ops)]
    allowed = {reports[9].op: {"allow": ["tensorflow:value_leak"],
                               "reason": "TensorFlow's own bug", "settings": {}}} \
        if n_ops > 9 else {}
    config = {"seed": 0, "mode": "fast", "dtypes": ["float64", "float32"],
              "references": ["numeric"], "ops": [r.op for r in reports], "exceptions": allowed}
    return Results(reports=reports, config=config,
                   environment={"python": "3.11.2", "numpy": "2.1.3", "platform": "Linux"})


def probe_page(results: Results | None, folder: Path, name: str) -> tuple[Path, int]:
    """The report of ``results`` (an empty page for ``None``) with the probe added, and the
    report's own size in bytes."""
    if results is None:
        html = "<!doctype html><html><head><meta charset='utf-8'></head><body></body></html>"
    else:
        html = write_html(results, folder / f"{name}.html").read_text(encoding="utf-8")
    probed = folder / f"{name}-probed.html"
    probed.write_text(html.replace("</body>", PROBE, 1), encoding="utf-8")
    return probed, len(html.encode("utf-8"))


class RootAttributes(HTMLParser):
    """The attributes of a dumped DOM's ``<html>`` element."""

    def __init__(self) -> None:
        super().__init__()
        self.root: dict[str, str | None] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "html" and not self.root:
            self.root = dict(attrs)


def find_chromium() -> tuple[str | None, str]:
    """The Chromium binary (``GRADCHECK_CHROMIUM``, else ``/usr/bin/chromium``, else
    ``chromium`` on the PATH), None when it is not an executable file; and where it looked."""
    path = os.environ.get("GRADCHECK_CHROMIUM") or (
        "/usr/bin/chromium" if os.path.exists("/usr/bin/chromium") else shutil.which("chromium"))
    found = path is not None and os.path.isfile(path) and os.access(path, os.X_OK)
    return (path if found else None), path or "/usr/bin/chromium"


def chromium() -> str:
    """Path of the Chromium binary; exits saying how to install it when there is none."""
    path, looked = find_chromium()
    if path is None:
        sys.exit(f"Chromium not found (looked for {looked}): install the Debian package "
                 "'chromium' or set GRADCHECK_CHROMIUM")
    return path


def load(page: Path, profile: Path) -> dict[str, str | None]:
    """What ``page`` recorded of itself in a fresh headless Chromium at 1280 px."""
    command = [chromium(), *FLAGS, f"--user-data-dir={profile}", "--dump-dom",
               "--window-size=1280,900", page.resolve().as_uri()]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=True)
    parser = RootAttributes()
    parser.feed(done.stdout)
    if parser.root.get("data-load-ms") is None:
        sys.exit(f"{page.name}: the load probe did not run")
    return parser.root


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--ops", type=int, default=155, help="ops in the large page")
    parser.add_argument("--loads", type=int, default=5, help="loads of each page")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        pages = {"empty": probe_page(None, folder, "empty"),
                 "6 ops": probe_page(large_results(6), folder, "small"),
                 f"{args.ops} ops": probe_page(large_results(args.ops), folder, "large")}
        times: dict[str, list[int]] = {name: [] for name in pages}
        width: dict[str, str | None] = {}
        for k in range(args.loads):
            for name, (page, _) in pages.items():
                root = load(page, folder / f"profile-{k}")
                times[name].append(int(root["data-load-ms"] or 0))
                width[name] = root.get("data-scroll-width")
    floor = min(times["empty"]) or 1
    print(f"report load in headless Chromium at 1280 px, best and median of {args.loads}")
    print(f"{'page':>10} {'size MB':>8} {'best ms':>8} {'median ms':>10} {'÷ empty':>8} "
          f"{'scroll px':>10}")
    for name, (_, size) in pages.items():
        best, median = min(times[name]), statistics.median(times[name])
        print(f"{name:>10} {size / 1e6:8.2f} {best:8d} {median:10.0f} {best / floor:7.1f}× "
              f"{width[name] or '-':>10}")


if __name__ == "__main__":
    main()
