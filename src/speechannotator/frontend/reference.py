"""Reference timelines for the fixed-timeline setting (`--timeline REF`).

Read by the package's one timeline reader (speechannotator/timelines.py): the output JSON,
meeteval SegLST, RTTM and STM. A file holding several sessions is filtered by the recording's
name; here the turns are checked against the audio and become the recording's segments.
"""

from __future__ import annotations

from pathlib import Path

from ..records import Segment, segment_key
from ..timelines import TimelineError, Turn, read_timeline


class ReferenceError(ValueError):
    pass


def recording_names(rec: str) -> list[str]:
    """The session names a reference may give recording `rec`, longest first: its corpus id and
    each shorter tail of it (`audio/a/x` -> `audio/a/x`, `a/x`, `x`)."""
    parts = rec.split("/")
    return ["/".join(parts[i:]) for i in range(len(parts))]


def _of_recording(turns: list[Turn], stem: str) -> list[Turn]:
    """The turns of recording `stem`: a file naming one other session is refused, a file naming
    several keeps the session that is the recording's name (turns without a session stay)."""
    found = {t.session_id for t in turns if t.session_id is not None}
    names = recording_names(stem)
    if len(found) == 1:
        (other,) = found
        if other not in names:
            raise ReferenceError(
                f"holds only session {other!r}, not this recording {stem!r}; pass the reference for "
                f"{stem!r} (or a folder holding {stem}.<ext>)"
            )
        return turns
    if len(found) > 1:
        keep = next((n for n in names if n in found), stem)
        return [t for t in turns if t.session_id in (None, keep)]
    return turns


def load_reference_timeline(path: str | Path, stem: str, duration: float | None = None) -> list[Segment]:
    """Segments of the reference for recording `stem`, in time order.

    With `duration` (the audio's length in seconds), a segment starting after the audio ends
    is an error (the timeline belongs to another recording) and ends past it are clipped.
    Every error names the file and the item (JSON index) or line (RTTM, STM) at fault.
    """
    p = Path(path)
    try:
        turns = _of_recording(read_timeline(p), stem)
    except TimelineError as exc:  # its message opens with the item or line at fault
        raise ReferenceError(f"timeline {p.name} {exc}") from None
    except ReferenceError as exc:
        raise ReferenceError(f"timeline {p.name}: {exc}") from None
    if not turns:
        raise ReferenceError(f"timeline {p.name} has no segments for {stem!r}")
    rows = [(float(t.start_time), float(t.end_time), t.speaker, t.words, t.where) for t in turns]
    for a, b, _, _, where in rows:
        if a < 0:
            raise ReferenceError(f"timeline {p.name} {where}: invalid time ({a}, {b})")
        if b <= a:
            raise ReferenceError(f"timeline {p.name} {where}: the segment ends before it starts ({a} >= {b})")
        if duration is not None and a >= duration:
            raise ReferenceError(
                f"timeline {p.name} {where}: a segment starting after the audio ends "
                f"({a:.2f} s >= {duration:.2f} s); is it the timeline of another recording?"
            )
    rows.sort(key=lambda r: r[:4])
    if duration is not None:
        rows = [(a, min(b, duration), spk, t, w) for a, b, spk, t, w in rows]
    spans = [(a, b, spk) for a, b, spk, _, _ in rows]
    return [
        Segment(
            segment_key(i),
            round(a, 3),
            round(b, 3),
            spk,
            text=text.strip(),
            source="reference",
            overlap_s=_overlap_with_others(spans, i),
        )
        for i, (a, b, spk, text, _) in enumerate(rows)
    ]


def _overlap_with_others(spans: list[tuple[float, float, str]], i: int) -> float:
    """Seconds of span i that another speaker's reference turns cover (spans sorted by start).

    >>> _overlap_with_others([(0.0, 2.0, "A"), (1.5, 3.0, "B"), (2.5, 4.0, "A")], 1)
    1.0
    """
    a, b, spk = spans[i]
    covered: list[tuple[float, float]] = []
    for c, d, other in spans:
        if c >= b:
            break
        if other != spk and d > a:
            covered.append((max(a, c), min(b, d)))
    total, end = 0.0, a
    for c, d in sorted(covered):  # union of the covered pieces
        if d > end:
            total += d - max(c, end)
            end = d
    return round(total, 3)
