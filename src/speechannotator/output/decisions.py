"""Human decisions over the finalized records: what may be edited, how an edit is validated,
and how the decisions in force are applied to the machine output.

The state keeps the machine's records (stage 11) untouched and every human decision in an
append-only trail; the output JSON is always "machine records + latest decision per
(segment, field)", so an `annotate` rerun that refinalizes keeps the human corrections.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Any

from ..records import Decision
from ..schema import (FIELDS, NONE_VALUE, SegmentRecord, canonical_closed, closed_value, is_empty_marker,
                      validate_records)
from ..state import StateStore

TEXT_FIELDS: tuple[str, ...] = ("text", "text_and_paralanguage")
BOUNDARY_FIELDS: tuple[str, ...] = ("start_time", "end_time")
SPEAKER_FIELD = "speaker"
EDITABLE_FIELDS: tuple[str, ...] = FIELDS + TEXT_FIELDS + BOUNDARY_FIELDS + (SPEAKER_FIELD,)
MAX_TEXT = 2000  # characters; a transcript or label longer than this is a paste accident
_SPEAKER_LABEL = re.compile(r"^[\w.-]{1,40}$")


class EditError(ValueError):
    """An edit that the schema does not admit; the message says why."""


@dataclass(frozen=True)
class EditContext:
    """What validation needs to know about the recording."""

    label_lang: str  # "zh" or "en"
    duration_ms: int
    speakers: tuple[str, ...]  # raw speaker labels in the state


def _clean_text(value: Any, field: str, *, allow_empty: bool) -> str:
    if not isinstance(value, str):
        raise EditError(f"{field} must be a string")
    text = unicodedata.normalize("NFC", value)
    if any(unicodedata.category(ch) == "Cc" and ch not in "\t\n" for ch in text):
        raise EditError(f"{field} holds control characters")
    text = re.sub(r"\s+", " ", text).strip()
    if not text and not allow_empty:
        raise EditError(f"{field} must not be empty (use {NONE_VALUE['en']!r} / {NONE_VALUE['zh']!r} for none)")
    if len(text) > MAX_TEXT:
        raise EditError(f"{field} is longer than {MAX_TEXT} characters")
    return text


def validate_edit(field: str, value: Any, row: dict[str, Any], ctx: EditContext) -> Any:
    """The value to store for an edit of ``field`` on output row ``row``, or EditError."""
    if field not in EDITABLE_FIELDS:
        raise EditError(f"unknown field {field!r}; editable: {', '.join(EDITABLE_FIELDS)}")
    if field in BOUNDARY_FIELDS:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
            raise EditError(f"{field} must be a number of milliseconds")
        ms = int(round(value))
        start = ms if field == "start_time" else row["start_time"]
        end = ms if field == "end_time" else row["end_time"]
        if not 0 <= start < end <= ctx.duration_ms:
            raise EditError(f"boundary {start}-{end} ms must satisfy 0 <= start < end <= {ctx.duration_ms}")
        return ms
    if field == SPEAKER_FIELD:
        label = _clean_text(value, field, allow_empty=False)
        if label not in ctx.speakers and not _SPEAKER_LABEL.match(label):
            raise EditError("a new speaker label may hold only letters, digits, '_', '.', '-' (at most 40)")
        return label
    if field in TEXT_FIELDS:
        return _clean_text(value, field, allow_empty=True)
    text = _clean_text(value, field, allow_empty=False)
    lang = ctx.label_lang
    if field in ("gender", "age"):  # closed vocabularies: any alias in, the canonical surface form out
        canon = canonical_closed(field, text)
        if canon is None:
            raise EditError(f"{text!r} is not a {field} value")
        return closed_value(field, canon, lang)
    if field == "emotion" and not is_empty_marker(text):
        from .finalize import canonical_emotion  # one home for the 'label (intensity)' form

        return canonical_emotion(text, lang)
    return NONE_VALUE[lang] if is_empty_marker(text) else text


def in_force(decisions: list[Decision]) -> dict[tuple[str, str], Decision]:
    """The latest decision per (segment key, field)."""
    return {(d.key, d.field): d for d in decisions}


def _speaker_name(n: int, lang: str) -> str:
    return f"说话人{n}" if lang == "zh" else f"Speaker{n}"


def apply_decisions(items: list[tuple[str, dict[str, Any]]], raw_speakers: dict[str, str],
                    decisions: list[Decision], label_lang: str) -> list[tuple[str, dict[str, Any]]]:
    """Machine records ``[(key, row)]`` with the decisions in force applied, in time order.

    ``raw_speakers`` maps segment key to its raw speaker label. A segment moved to another
    speaker takes that speaker's id and name; a new label gets the next free id. A decision
    whose segment no longer exists (a rerun with another timeline) stays in the trail unused.
    """
    force = in_force(decisions)
    if not force:
        return items
    by_raw: dict[str, tuple[str, str]] = {}
    for key, row in items:
        by_raw.setdefault(raw_speakers.get(key, row["speaker_id"]), (row["speaker_id"], row["speaker_name"]))
    out = []
    for key, row in items:
        row = dict(row)
        for (k, field), d in force.items():
            if k != key:
                continue
            if field == SPEAKER_FIELD:
                if d.new not in by_raw:
                    n = 1 + max((int(sid[4:]) for sid, _ in by_raw.values()), default=0)
                    by_raw[d.new] = (f"spk_{n:02d}", _speaker_name(n, label_lang))
                row["speaker_id"], row["speaker_name"] = by_raw[d.new]
            else:
                row[field] = d.new
        if (key, "text") in force and (key, "text_and_paralanguage") not in force:
            row["text_and_paralanguage"] = row["text"]  # the machine's tags belonged to the old words
        out.append((key, row))
    out.sort(key=lambda kr: (kr[1]["start_time"], kr[1]["end_time"], kr[0]))
    return out


def label_language(store: StateStore, rec: str) -> str:
    info = store.stage_info(rec, "plan") or {}
    return info.get("label_lang") if info.get("label_lang") in ("zh", "en") else "en"


def reviewed_items(store: StateStore, rec: str) -> list[tuple[str, dict[str, Any]]]:
    """The finalized records of ``rec`` with the human decisions in force, ``[(key, row)]``."""
    raw = {s.key: s.speaker for s in store.segments(rec)}
    return apply_decisions(store.records(rec), raw, store.decisions(rec), label_language(store, rec))


def reviewed_records(store: StateStore, rec: str) -> list[SegmentRecord]:
    return validate_records([row for _, row in reviewed_items(store, rec)])
