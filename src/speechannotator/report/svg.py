"""Inline SVG charts (no scripts, no fonts to fetch): horizontal bars and histograms.

Every label is escaped: labels come from annotations and file names, which are data.
"""

from __future__ import annotations

import math
from html import escape

WIDTH = 520
BAR_H = 18
LABEL_W = 170
COLOR = "#4a7ab5"


def _fmt(v: float) -> str:
    if v == 0:
        return "0"
    if abs(v) >= 100:
        return f"{v:.0f}"
    if abs(v) >= 1:
        return f"{v:.2f}".rstrip("0").rstrip(".")
    return f"{v:.3g}"


def bars(items: list[tuple[str, float]], unit: str, title: str) -> str:
    """One horizontal bar per (label, value), largest first as given."""
    if not items:
        return f'<p class="empty">{escape(title)}: no values</p>'
    top = max(v for _, v in items) or 1.0
    height = BAR_H * len(items) + 8
    room = WIDTH - LABEL_W - 70
    parts = [
        f'<svg class="chart" role="img" aria-label="{escape(title)}" width="{WIDTH}" height="{height}" '
        f'viewBox="0 0 {WIDTH} {height}" xmlns="http://www.w3.org/2000/svg">'
    ]
    for i, (label, value) in enumerate(items):
        y = 4 + i * BAR_H
        w = max(1.0, room * value / top)
        short = label if len(label) <= 26 else label[:25] + "…"
        parts.append(
            f'<text x="{LABEL_W - 6}" y="{y + 13}" text-anchor="end" class="lbl"><title>{escape(label)}</title>'
            f"{escape(short)}</text>"
            f'<rect x="{LABEL_W}" y="{y + 2}" width="{w:.1f}" height="{BAR_H - 5}" fill="{COLOR}"/>'
            f'<text x="{LABEL_W + w + 4:.1f}" y="{y + 13}" class="val">{escape(_fmt(value))} {escape(unit)}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


def histogram(values: list[float], unit: str, title: str, bins: int = 20) -> str:
    """A histogram of `values` (segments) with its range and count on the axis."""
    values = [v for v in values if v is not None and math.isfinite(v)]
    if not values:
        return f'<p class="empty">{escape(title)}: no segment has this value</p>'
    lo, hi = min(values), max(values)
    if hi == lo:
        lo, hi = lo - 0.5, hi + 0.5
    counts = [0] * bins
    for v in values:
        counts[min(bins - 1, int((v - lo) / (hi - lo) * bins))] += 1
    height, plot_h, left = 150, 110, 40
    step = (WIDTH - left - 10) / bins
    top = max(counts)
    parts = [
        f'<svg class="chart" role="img" aria-label="{escape(title)}" width="{WIDTH}" height="{height}" '
        f'viewBox="0 0 {WIDTH} {height}" xmlns="http://www.w3.org/2000/svg">',
        f'<line x1="{left}" y1="{plot_h + 5}" x2="{WIDTH - 10}" y2="{plot_h + 5}" stroke="#888"/>',
        f'<text x="{left - 4}" y="15" text-anchor="end" class="val">{top}</text>',
    ]
    for i, c in enumerate(counts):
        h = plot_h * c / top
        x = left + i * step
        parts.append(
            f'<rect x="{x + 1:.1f}" y="{plot_h + 5 - h:.1f}" width="{step - 2:.1f}" height="{h:.1f}" fill="{COLOR}">'
            f"<title>{escape(_fmt(lo + i * (hi - lo) / bins))}-{escape(_fmt(lo + (i + 1) * (hi - lo) / bins))}"
            f" {escape(unit)}: {c}</title></rect>"
        )
    parts.append(f'<text x="{left}" y="{plot_h + 22}" class="val">{escape(_fmt(lo))} {escape(unit)}</text>')
    right = f'<text x="{WIDTH - 10}" y="{plot_h + 22}" text-anchor="end" class="val">'
    parts.append(f"{right}{escape(_fmt(hi))} {escape(unit)}</text>")
    parts.append(
        f'<text x="{WIDTH / 2:.0f}" y="{plot_h + 38}" text-anchor="middle" class="val">{len(values)} segments</text>'
    )
    parts.append("</svg>")
    return "".join(parts)
