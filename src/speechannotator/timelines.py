"""The one reader of timeline files: who speaks when and what, as users pass them.

Formats: the output JSON (integer ms, ``speaker_id``, ``text``), meeteval's SegLST JSON (seconds,
``speaker``, ``words``, ``session_id``), RTTM (speaker turns; the orthography column may carry
the words, ``_`` for spaces) and STM (``session channel speaker start end [<label>] text``).
JSON items are told apart by their keys, RTTM and STM by the file's suffix. Every row becomes a
SegLST turn with exact ``Decimal`` seconds (as meeteval's own loaders keep them), so a collar or a
clip never depends on float rounding.

The fixed-timeline setting (frontend/reference.py) and Timeline-Eval (evaluation/io.py) read
through here; each adds its own checks and names the file in its own error form.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

TIMELINE_SUFFIXES = (".json", ".rttm", ".stm")


class TimelineError(ValueError):
    """A timeline that cannot be read. The message follows the file's name: it opens with the
    item or line at fault ("item 3: ...", "line 7: ...") or with "is" ("is malformed JSON ...")."""


@dataclass(frozen=True)
class Turn:
    """One row as SegLST names it; ``session_id`` is None where the format names no session
    (the output JSON, a SegLST item without one): the file's own recording."""

    session_id: str | None
    speaker: str
    start_time: Decimal  # seconds
    end_time: Decimal
    words: str
    where: str  # "item 3" (JSON) or "line 7" (RTTM, STM)


def session_name(path: Path) -> str:
    """The recording a file holds by its name: the name without .seglst.json, .json, .rttm or .stm."""
    name = path.name
    for suffix in (".seglst.json", *TIMELINE_SUFFIXES):
        if name.lower().endswith(suffix):
            return name[: -len(suffix)]
    return path.stem


def read_timeline(path: str | Path) -> list[Turn]:
    """Every turn of one file, in file order (UTF-8, a byte-order mark allowed)."""
    p = Path(path)
    text = _read_text(p)
    suffix = p.suffix.lower()
    if suffix == ".rttm":
        return turns_from_rttm(text)
    if suffix == ".stm":
        return turns_from_stm(text)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise TimelineError(f"is malformed JSON ({exc})") from None
    return turns_from_json(data)


def _read_text(p: Path) -> str:
    try:
        raw = p.read_bytes()
    except OSError as exc:
        raise TimelineError(f"cannot be read ({exc.strerror or exc.__class__.__name__})") from exc
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise TimelineError(
            f"is not UTF-8 text (byte 0x{raw[exc.start]:02x} at offset {exc.start}); save it as UTF-8"
        ) from None


def _seconds(value: object, name: str, where: str, scale: int = 1) -> Decimal:
    """An exact time from a JSON number or a text field; ``scale`` 1000 reads milliseconds."""
    if isinstance(value, bool) or value is None:
        raise TimelineError(f"{where}: {name} {value!r} is not a number")
    try:
        d = Decimal(str(value))
    except InvalidOperation:
        raise TimelineError(f"{where}: {name} {value!r} is not a number") from None
    if not d.is_finite():  # NaN / Infinity parse as Decimals (and JSON allows them)
        raise TimelineError(f"{where}: {name} {value!r} is not a finite number")
    return d / scale


def _field(item: dict[str, Any], name: str, where: str, scale: int = 1) -> Decimal:
    if name not in item:
        raise TimelineError(f"{where}: missing {name}")
    return _seconds(item[name], name, where, scale)


def _words(value: object) -> str:
    if isinstance(value, list):  # SegLST allows the words as a list
        return " ".join(map(str, value))
    return "" if value is None else str(value)


def turns_from_json(data: object) -> list[Turn]:
    """Turns of a JSON array of output-format items (``speaker_id``, ms) or SegLST items (``speaker``, s)."""
    if not isinstance(data, list):
        raise TimelineError("holds no JSON array of segments (output format or SegLST)")
    turns = []
    for i, item in enumerate(data):
        where = f"item {i}"
        if not isinstance(item, dict):
            raise TimelineError(f"{where} is not an object")
        if "speaker_id" in item:  # the output format: milliseconds, no session
            start, end = _field(item, "start_time", where, 1000), _field(item, "end_time", where, 1000)
            turns.append(Turn(None, str(item["speaker_id"]), start, end, _words(item.get("text")), where))
        elif "speaker" in item:  # SegLST: seconds
            session = item.get("session_id")
            start, end = _field(item, "start_time", where), _field(item, "end_time", where)
            turns.append(
                Turn(
                    None if session is None else str(session),
                    str(item["speaker"]),
                    start,
                    end,
                    _words(item.get("words")),
                    where,
                )
            )
        else:
            raise TimelineError(f"{where}: missing speaker_id (output format) or speaker (SegLST)")
    return turns


def _rttm_line(parts: list[str], where: str) -> Turn | None:
    # SPEAKER file channel onset duration orthography type name confidence [lookahead]
    if not parts or parts[0] != "SPEAKER":
        return None  # other RTTM record types (SPKR-INFO, ...) carry no turn
    if len(parts) < 8:
        raise TimelineError(f"{where} has {len(parts)} fields, expected at least 8")
    start = _seconds(parts[3], "onset", where)
    words = "" if parts[5] == "<NA>" else parts[5].replace("_", " ")
    return Turn(parts[1], parts[7], start, start + _seconds(parts[4], "duration", where), words, where)


def turns_from_rttm(text: str) -> list[Turn]:
    """Turns of RTTM text (SPEAKER records; the file id is the session)."""
    turns = (_rttm_line(line.split(), f"line {n}") for n, line in enumerate(text.splitlines(), 1))
    return [t for t in turns if t is not None]


def turns_from_stm(text: str) -> list[Turn]:
    """Turns of STM text (;; comments; an optional <label> column before the words)."""
    turns = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.startswith(";;"):
            continue
        where = f"line {n}"
        parts = line.split(maxsplit=5)
        if len(parts) < 5:
            raise TimelineError(f"{where}: STM needs 'session channel speaker start end [text]'")
        session, _channel, speaker, start, end = parts[:5]
        words = parts[5] if len(parts) > 5 else ""
        if words.startswith("<"):  # the optional <label> column
            words = words.split(">", 1)[1] if ">" in words else ""
        turns.append(
            Turn(session, speaker, _seconds(start, "start", where), _seconds(end, "end", where), words.strip(), where)
        )
    return turns
