"""Reference timelines for the fixed-timeline setting (`--timeline REF`).

Accepted: the output JSON format (integer ms, speaker_id, text), meeteval SegLST (seconds,
speaker, words, session_id) and RTTM (speaker turns; the orthography column may carry text,
with '_' for spaces). A file holding several sessions is filtered by the recording's stem.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from ..records import Segment, segment_key


class ReferenceError(ValueError):
    pass


Row = tuple[float, float, str, str, str]  # start, end, speaker, text, where in the file ("item 3", "line 7")


def _number(d: dict, name: str, where: str) -> float:
    if name not in d:
        raise ReferenceError(f"{where}: missing {name}")
    try:
        value = float(d[name])
    except (TypeError, ValueError):
        raise ReferenceError(f"{where}: {name} {d[name]!r} is not a number") from None
    return value


def recording_names(rec: str) -> list[str]:
    """The session names a reference may give recording `rec`, longest first: its corpus id and
    each shorter tail of it (`audio/a/x` -> `audio/a/x`, `a/x`, `x`)."""
    parts = rec.split("/")
    return ["/".join(parts[i:]) for i in range(len(parts))]


def _session_filter(found: set, stem: str, what: str) -> str | None:
    """The session to keep rows of (None: all); a file for one other recording is refused."""
    names = recording_names(stem)
    if len(found) == 1:
        (other,) = found
        if other not in names:
            raise ReferenceError(
                f"holds only {what} {other!r}, not this recording {stem!r}; pass the reference for "
                f"{stem!r} (or a folder holding {stem}.<ext>)"
            )
        return None
    if len(found) > 1:
        return next((n for n in names if n in found), stem)
    return None


def _from_json(data: list, stem: str) -> list[Row]:
    rows = []
    if not isinstance(data, list):
        raise ReferenceError("expected a JSON array of segments")
    sessions = {str(d["session_id"]) for d in data if isinstance(d, dict) and d.get("session_id") is not None}
    keep = _session_filter(sessions, stem, "session")
    for i, d in enumerate(data):
        where = f"item {i}"
        if not isinstance(d, dict):
            raise ReferenceError(f"{where} is not an object")
        if "speaker_id" in d:  # output format, milliseconds
            rows.append(
                (
                    _number(d, "start_time", where) / 1000,
                    _number(d, "end_time", where) / 1000,
                    str(d["speaker_id"]),
                    str(d.get("text") or ""),
                    where,
                )
            )
        elif "speaker" in d:  # SegLST, seconds
            if keep is not None and str(d.get("session_id")) != keep:
                continue
            words = d.get("words", "")
            rows.append(
                (
                    _number(d, "start_time", where),
                    _number(d, "end_time", where),
                    str(d["speaker"]),
                    " ".join(map(str, words)) if isinstance(words, list) else str(words or ""),
                    where,
                )
            )
        else:
            raise ReferenceError(f"{where} has neither speaker_id nor speaker")
    return rows


def _from_rttm(text: str, stem: str) -> list[Row]:
    rows = []
    parsed = []
    for n, line in enumerate(text.splitlines(), 1):
        parts = line.split()
        if not parts or parts[0] != "SPEAKER":
            continue
        if len(parts) < 8:
            raise ReferenceError(f"line {n} has {len(parts)} fields, expected at least 8")
        parsed.append((n, parts))
    keep = _session_filter({parts[1] for _, parts in parsed}, stem, "file id")
    for n, parts in parsed:
        if keep is not None and parts[1] != keep:
            continue
        try:
            start, dur = float(parts[3]), float(parts[4])
        except ValueError:
            raise ReferenceError(f"line {n}: times {parts[3]!r} {parts[4]!r} are not numbers") from None
        words = "" if parts[5] == "<NA>" else parts[5].replace("_", " ")
        rows.append((start, start + dur, parts[7], words, f"line {n}"))
    return rows


def _read_text(p: Path) -> str:
    try:
        raw = p.read_bytes()
    except OSError as exc:
        raise ReferenceError(f"cannot read timeline {p}: {exc.strerror}") from exc
    try:
        return raw.decode("utf-8-sig")  # a byte-order mark is allowed
    except UnicodeDecodeError as exc:
        raise ReferenceError(
            f"timeline {p.name} is not UTF-8 text (byte 0x{raw[exc.start]:02x} at offset {exc.start}); save it as UTF-8"
        ) from None


def load_reference_timeline(path: str | Path, stem: str, duration: float | None = None) -> list[Segment]:
    """Segments of the reference for recording `stem`, in time order.

    With `duration` (the audio's length in seconds), a segment starting after the audio ends
    is an error (the timeline belongs to another recording) and ends past it are clipped.
    Every error names the file and the item (JSON index) or line (RTTM) at fault.
    """
    p = Path(path)
    raw = _read_text(p)
    try:
        if p.suffix.lower() == ".rttm":
            rows = _from_rttm(raw, stem)
        else:
            rows = _from_json(json.loads(raw), stem)
    except ReferenceError as exc:
        raise ReferenceError(f"timeline {p.name}: {exc}") from None
    except (json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
        raise ReferenceError(f"timeline {p.name} is malformed: {exc}") from exc
    if not rows:
        raise ReferenceError(f"timeline {p.name} has no segments for {stem!r}")
    for a, b, _, _, where in rows:
        if not (math.isfinite(a) and math.isfinite(b)) or a < 0:
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
