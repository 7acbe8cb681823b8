"""Convergence plot: numeric error against finite-difference step, as inline SVG.

On log-log axes a central difference of order ``p`` shows a straight line of
slope ``p`` while truncation error dominates (large steps) and a rising line of
slope -1 once rounding error takes over (small steps).  A path whose line has the
wrong slope, or no straight part at all, has a wrong derivative rule even when
its error at the default step happened to pass the tolerance.  The legend's slopes
come from the one fitter, :func:`gradcheck.checker.convergence.slope`.

The figure is built on a bare ``matplotlib.figure.Figure`` (never pyplot, so no
global figure manager or backend is touched) inside ``rc_context``, which puts
every rcParam back afterwards.  The SVG text is deterministic: the id salt is
fixed per plot, the metadata carries no date and no version, and matplotlib's
auto-numbered group ids (the same in every plot, so duplicates once several
plots share one HTML page) are dropped.
"""

from __future__ import annotations

import html
import io
import math
import re
from collections.abc import Mapping
from typing import Any

from gradcheck.checker.convergence import slopes

__all__ = ["convergence_svg"]

# Fixed colours for the paths every report has, so a path looks the same in every
# plot; other series take the remaining colours in order.
_PATH_COLORS = {
    "vjp": "#1f77b4",
    "jvp": "#ff7f0e",
    "double_vjp": "#2ca02c",
    "hvp_fwd_rev": "#9467bd",
    "hvp_rev_rev": "#8c564b",
    "hvp_rev_fwd": "#e377c2",
}
_OTHER_COLORS = ("#17becf", "#bcbd22", "#d62728", "#7f7f7f", "#393b79", "#637939")

_RC: dict[str, Any] = {
    "svg.fonttype": "none",  # real <text>: small, searchable, escaped by matplotlib
    "font.size": 9.0,
    # One short family name: matplotlib writes the whole fallback list into every <text>.
    "font.family": "sans-serif",
    "font.sans-serif": ["DejaVu Sans"],
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.35,
    "legend.fontsize": 8.0,
    "legend.frameon": False,
}
_METADATA = {"Creator": "gradcheck", "Date": None}

_AUTO_GROUP_ID = re.compile(r'<g id="[^"]*">')
_COMMENT = re.compile(r"<!--.*?-->\n?", re.DOTALL)
_METADATA_BLOCK = re.compile(r"<metadata>.*?</metadata>\s*", re.DOTALL)


def _floats(values: Any, what: str, key: str) -> list[float]:
    """Floats from JSON values (``"nan"``/``"inf"`` strings included)."""
    if not isinstance(values, (list, tuple)):
        raise ValueError(
            f"convergence data of {key!r}: {what} must be a list of numbers, "
            f"got {type(values).__name__}"
        )
    out = []
    for value in values:
        try:
            out.append(float(value))
        except (TypeError, ValueError):
            raise ValueError(
                f"convergence data of {key!r}: {what} holds {value!r}, which is not a number"
            ) from None
    return out


def _positive_points(steps: list[float], errors: list[float]) -> tuple[list[float], list[float]]:
    """The (step, error) pairs a log-log plot can show."""
    pairs = [
        (h, e)
        for h, e in zip(steps, errors, strict=True)
        if h > 0 and e > 0 and math.isfinite(h) and math.isfinite(e)
    ]
    return [h for h, _ in pairs], [e for _, e in pairs]


def _label(name: str, slope: float) -> str:
    # "$" would start mathtext and a leading "_" hides a legend entry.
    text = name.replace("$", r"\$")
    if text.startswith("_"):
        text = " " + text
    return text if math.isnan(slope) else f"{text} (slope {slope:.2f})"


def convergence_svg(convergence: Mapping[str, Any], key: str) -> str:
    """Inline ``<svg>`` text of one op's convergence plot, or ``""`` if nothing to plot.

    ``convergence`` is ``Report.convergence``: ``{"steps": [...], "series":
    {path: [abs error per step]}, "expected_slope": p}``.  ``key`` names the
    plot (the op name): it appears in error messages and salts the SVG ids,
    so plots of different ops can share one page.  Non-positive or
    non-finite errors are left out of the plot (a log axis cannot show them).
    """
    if not convergence:
        return ""
    if "steps" not in convergence or "series" not in convergence:
        raise ValueError(
            f"convergence data of {key!r} needs 'steps' and 'series', "
            f"got keys {sorted(convergence)}"
        )
    steps = _floats(convergence["steps"], "'steps'", key)
    raw_series = convergence["series"]
    if not isinstance(raw_series, Mapping):
        raise ValueError(f"convergence data of {key!r}: 'series' must map path names to lists")
    series: dict[str, list[float]] = {}
    for name, values in raw_series.items():
        errors = _floats(values, f"series {name!r}", key)
        if len(errors) != len(steps):
            raise ValueError(
                f"convergence data of {key!r}: series {name!r} has {len(errors)} values "
                f"but 'steps' has {len(steps)}"
            )
        series[str(name)] = errors
    # Known paths first, in their usual order, so legends read the same in every plot.
    known = list(_PATH_COLORS)
    names = sorted(series, key=lambda n: (known.index(n) if n in known else len(known), n))
    plottable = {n: _positive_points(steps, series[n]) for n in names}
    plottable = {n: pts for n, pts in plottable.items() if pts[0]}
    if not plottable:
        return ""
    slope = convergence.get("expected_slope")
    expected = float(slope) if isinstance(slope, (int, float)) else math.nan
    fitted = slopes(convergence)
    return _draw(key, fitted, plottable, expected)


def _draw(
    key: str,
    fitted: dict[str, float],
    plottable: dict[str, tuple[list[float], list[float]]],
    expected: float,
) -> str:
    # Imported here: rendering a report without plots must not pay for matplotlib.
    import matplotlib as mpl
    from matplotlib.figure import Figure
    from matplotlib.ticker import FuncFormatter, NullFormatter

    rc: Any = {**_RC, "svg.hashsalt": f"gradcheck-convergence:{key}"}
    with mpl.rc_context(rc):
        # Fixed margins rather than a layout engine: a second full draw per plot
        # doubled the time of a report with hundreds of ops.
        fig = Figure(figsize=(5.6, 3.4))
        fig.subplots_adjust(left=0.14, right=0.98, top=0.97, bottom=0.15)
        ax = fig.add_subplot()
        others = iter(_OTHER_COLORS * (1 + len(plottable) // len(_OTHER_COLORS)))
        for name, (xs, ys) in plottable.items():
            color = _PATH_COLORS.get(name) or next(others)
            label = _label(name, fitted.get(name, math.nan))
            ax.plot(xs, ys, linewidth=1.5, color=color, label=label)
        ax.set_xscale("log")
        ax.set_yscale("log")
        for axis in (ax.xaxis, ax.yaxis):
            axis.set_major_formatter(FuncFormatter(_power_of_ten))
            axis.set_minor_formatter(NullFormatter())
        if math.isfinite(expected):
            _draw_reference(ax, plottable, expected)
        ax.set_xlabel("finite-difference step h")
        ax.set_ylabel("max |analytic − numeric|")
        ax.legend(loc="best")
        buffer = io.StringIO()
        fig.savefig(buffer, format="svg", metadata=_METADATA)
    return _inline(buffer.getvalue(), key, list(plottable), expected)


_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def _power_of_ten(value: float, _position: object = None) -> str:
    """Tick label ``10⁻³`` as plain text (mathtext labels cost most of a plot's time)."""
    if value <= 0:
        return ""
    exponent = round(math.log10(value))
    if math.isclose(value, 10.0**exponent, rel_tol=1e-9):
        return "10" + str(exponent).translate(_SUPERSCRIPT)
    return f"{value:.1g}"


def _draw_reference(
    ax: Any, plottable: dict[str, tuple[list[float], list[float]]], expected: float
) -> None:
    """A dashed line of the expected slope, just below the data at the largest step."""
    h_max = max(max(xs) for xs, _ in plottable.values())
    h_min = min(min(xs) for xs, _ in plottable.values())
    at_largest = [ys[xs.index(max(xs))] for xs, ys in plottable.values()]
    # Below the lowest line, so it reads as a guide and never hides a series.
    anchor = min(at_largest) / 3.0
    # Freeze the limits on the data so a steep reference line cannot squash it.
    ax.autoscale_view()
    ax.set_autoscale_on(False)
    hs = [h_min, h_max]
    ax.plot(
        hs,
        [anchor * (h / h_max) ** expected for h in hs],
        linestyle="--",
        linewidth=1.2,
        color="#555555",
        label=f"expected slope {expected:g}",
    )


def _inline(svg: str, key: str, names: list[str], expected: float) -> str:
    """Make matplotlib's standalone SVG document fit inside an HTML page."""
    svg = svg[svg.index("<svg") :]  # no XML declaration or DOCTYPE inside HTML
    svg = _COMMENT.sub("", svg)
    svg = _METADATA_BLOCK.sub("", svg)  # RDF about the file: meaningless inside a page
    svg = _AUTO_GROUP_ID.sub("<g>", svg)
    description = f"Convergence of {key}: error against step for {', '.join(names)}"
    if math.isfinite(expected):
        description += f"; expected slope {expected:g}"
    label = html.escape(description, quote=True)
    return svg.replace("<svg ", f'<svg class="convergence" role="img" aria-label="{label}" ', 1)
