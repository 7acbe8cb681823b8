"""Renderers of check results: the self-contained HTML report and atomic file writes.

Every renderer is a pure function of ``Results`` (which round-trip through JSON),
so an old run can be re-rendered from its results file alone.
"""

from gradcheck.render.atomic import atomic_write_text, writes_in_place
from gradcheck.render.html import render_html, write_html

__all__ = ["render_html", "write_html", "atomic_write_text", "writes_in_place"]
