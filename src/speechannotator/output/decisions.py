"""What a human correction may hold: an edit is validated against the schema before it is
appended to the state's decision trail (``corrections`` applies the decisions in force)."""

from __future__ import annotations

import math
import re
import unicodedata
from dataclasses import dataclass
from typing import Any

from ..corrections import BOUNDARY_FIELDS, EDITABLE_FIELDS, SPEAKER_FIELD, TEXT_FIELDS
from ..schema import NONE_VALUE, Emotion, LabelLanguage, canonical_closed, closed_value, is_empty_marker

MAX_TEXT = 2000  # characters; a transcript or label longer than this is a paste accident
_SPEAKER_LABEL = re.compile(r"^[\w.-]{1,40}$")


class EditError(ValueError):
    """An edit that the schema does not admit; the message says why."""


@dataclass(frozen=True)
class EditContext:
    """What validation needs to know about the recording."""

    label_lang: LabelLanguage
    duration_ms: int
    speakers: tuple[str, ...]  # raw speaker labels in the state
    # The recording's other segments as output rows show them: (key, start ms, end ms, speaker id).
    others: tuple[tuple[str, int, int, str], ...] = ()


def milliseconds(field: str, value: Any) -> int:
    """A boundary as typed or sent: a finite number, or a string holding one."""
    if isinstance(value, str):
        text = value.strip()
        if not text:
            raise EditError(f"{field} is empty: type a time in milliseconds")
        try:
            value = float(text)
        except ValueError:
            raise EditError(f"{field} {text[:40]!r} is not a number of milliseconds") from None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise EditError(f"{field} must be a finite number of milliseconds")
    return int(round(value))


def check_overlap(start: int, end: int, row: dict[str, Any], ctx: EditContext) -> None:
    """A boundary may not make the segment overlap another of its speaker (one voice says one
    thing at a time) nor swallow a whole segment of anyone; overlapping speech of two speakers
    is fine, and so is an overlap the segment already had."""
    was = (row["start_time"], row["end_time"])
    for k, s, e, spk in ctx.others:
        if spk == row["speaker_id"] and s < end and start < e and not (s < was[1] and was[0] < e):
            raise EditError(
                f"{start}-{end} ms would overlap {k} ({s}-{e} ms) of the same speaker; move or merge that one first"
            )
        if start <= s and e <= end and not (was[0] <= s and e <= was[1]):
            raise EditError(f"{start}-{end} ms would cover the whole of {k} ({s}-{e} ms)")


def clean_text(value: Any, field: str, *, allow_empty: bool) -> str:
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
        ms = milliseconds(field, value)
        start = ms if field == "start_time" else row["start_time"]
        end = ms if field == "end_time" else row["end_time"]
        if not 0 <= start < end <= ctx.duration_ms:
            raise EditError(f"boundary {start}-{end} ms must satisfy 0 <= start < end <= {ctx.duration_ms}")
        check_overlap(start, end, row, ctx)
        return ms
    if field == SPEAKER_FIELD:
        label = clean_text(value, field, allow_empty=False)
        if label not in ctx.speakers and not _SPEAKER_LABEL.match(label):
            raise EditError("a new speaker label may hold only letters, digits, '_', '.', '-' (at most 40)")
        return label
    if field in TEXT_FIELDS:
        return clean_text(value, field, allow_empty=True)
    text = clean_text(value, field, allow_empty=False)
    lang = ctx.label_lang
    if field in ("gender", "age"):  # closed vocabularies: any alias in, the canonical surface form out
        canon = canonical_closed(field, text)
        if canon is None:
            raise EditError(f"{text!r} is not a {field} value")
        return closed_value(field, canon, lang)
    if field == "emotion" and not is_empty_marker(text):
        return Emotion.parse(text).render(lang)  # a person's text, read at this boundary
    return NONE_VALUE[lang] if is_empty_marker(text) else text
