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


def _from_json(data: list, stem: str) -> list[tuple[float, float, str, str]]:
    rows = []
    if not isinstance(data, list):
        raise ReferenceError("expected a JSON array of segments")
    sessions = {d.get("session_id") for d in data if isinstance(d, dict) and "session_id" in d}
    for i, d in enumerate(data):
        if not isinstance(d, dict):
            raise ReferenceError(f"item {i} is not an object")
        if "speaker_id" in d:  # output format, milliseconds
            rows.append((float(d["start_time"]) / 1000, float(d["end_time"]) / 1000, str(d["speaker_id"]), str(d.get("text") or "")))
        elif "speaker" in d:  # SegLST, seconds
            if len(sessions) > 1 and d.get("session_id") != stem:
                continue
            words = d.get("words", "")
            rows.append((float(d["start_time"]), float(d["end_time"]), str(d["speaker"]), " ".join(words) if isinstance(words, list) else str(words)))
        else:
            raise ReferenceError(f"item {i} has neither speaker_id nor speaker")
    return rows


def _from_rttm(text: str, stem: str) -> list[tuple[float, float, str, str]]:
    rows = []
    files = set()
    parsed = []
    for n, line in enumerate(text.splitlines(), 1):
        parts = line.split()
        if not parts or parts[0] != "SPEAKER":
            continue
        if len(parts) < 8:
            raise ReferenceError(f"RTTM line {n} has {len(parts)} fields, expected at least 8")
        files.add(parts[1])
        parsed.append(parts)
    for parts in parsed:
        if len(files) > 1 and parts[1] != stem:
            continue
        start, dur = float(parts[3]), float(parts[4])
        words = "" if parts[5] == "<NA>" else parts[5].replace("_", " ")
        rows.append((start, start + dur, parts[7], words))
    return rows


def load_reference_timeline(path: str | Path, stem: str, duration: float | None = None) -> list[Segment]:
    """Segments of the reference for recording `stem`, in time order.

    With `duration` (the audio's length in seconds), a segment starting after the audio ends
    is an error (the timeline belongs to another recording) and ends past it are clipped.
    """
    p = Path(path)
    try:
        raw = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise ReferenceError(f"cannot read timeline {p}: {exc.strerror}") from exc
    try:
        if p.suffix.lower() == ".rttm":
            rows = _from_rttm(raw, stem)
        else:
            rows = _from_json(json.loads(raw), stem)
    except (json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
        raise ReferenceError(f"timeline {p.name} is malformed: {exc}") from exc
    if not rows:
        raise ReferenceError(f"timeline {p.name} has no segments for {stem!r}")
    rows.sort()
    for a, b, _, _ in rows:
        if not (math.isfinite(a) and math.isfinite(b)) or a < 0:
            raise ReferenceError(f"timeline {p.name} has an invalid time ({a}, {b})")
        if b < a:
            raise ReferenceError(f"timeline {p.name} has a segment ending before it starts ({a} > {b})")
    if duration is not None:
        late = [a for a, _, _, _ in rows if a >= duration + 0.05]
        if late:
            raise ReferenceError(
                f"timeline {p.name} has {len(late)} segment(s) starting after the audio ends ({late[0]:.2f} s > {duration:.2f} s)")
        rows = [(a, min(b, duration), spk, t) for a, b, spk, t in rows]
    return [
        Segment(segment_key(i), round(a, 3), round(b, 3), spk, text=text.strip(), source="reference")
        for i, (a, b, spk, text) in enumerate(rows)
    ]
