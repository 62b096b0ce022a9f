"""A readable terminal rendering of annotated segments (East Asian wide characters aware)."""

from __future__ import annotations

import unicodedata

from ..schema import FIELDS, SegmentRecord


def _width(text: str) -> int:
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


_NO_LINE_START = set("，。、；：！？）」』》”’…,.;:!?)")


def _wrap(text: str, width: int) -> list[str]:
    """Wrap at spaces for spaced scripts and anywhere for CJK, by display width."""
    lines, line, w = [], "", 0
    for token in text.replace("\n", " ").split(" ") if " " in text else list(text):
        sep = " " if (" " in text and line) else ""
        tw = _width(sep + token)
        # Never start a line with closing punctuation (CJK line-breaking rule).
        if w + tw > width and line and token not in _NO_LINE_START:
            lines.append(line)
            line, w = token, _width(token)
        else:
            line, w = line + sep + token, w + tw
    if line:
        lines.append(line)
    return lines or [""]


def _clock(ms: int) -> str:
    s = ms / 1000
    return f"{int(s // 60):02d}:{s % 60:05.2f}"


def render(records: list[SegmentRecord], *, title: str = "", width: int = 100) -> str:
    out = []
    if title:
        out.append(title)
        out.append("=" * min(width, max(10, _width(title))))
    label_w = max(len(f) for f in FIELDS) + 2
    for i, r in enumerate(records):
        head = (
            f"[{i}] {_clock(r.start_time)}-{_clock(r.end_time)}  {r.speaker_id} ({r.speaker_name})  lang={r.language}"
        )
        out.append(head)
        for j, line in enumerate(_wrap(r.text_and_paralanguage, width - 4)):
            out.append(("  » " if j == 0 else "    ") + line)
        for f in FIELDS:
            value = str(getattr(r, f))
            wrapped = _wrap(value, width - label_w - 4)
            out.append(f"    {f:<{label_w}}{wrapped[0]}")
            out.extend(" " * (4 + label_w) + w for w in wrapped[1:])
        out.append("")
    return "\n".join(out)
