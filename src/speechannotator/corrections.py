"""Human corrections over the finalized records: the decisions in force and how they apply.

The state keeps the machine's records (stage 11) untouched and every human decision in an
append-only trail; a recording's output is always "machine records + latest decision per
(segment, field)", so a rerun that finalizes again keeps the human corrections. What an edit
may hold is checked by ``output.decisions.validate_edit``.
"""

from __future__ import annotations

from typing import Any

from .records import Decision
from .schema import FIELDS, SegmentRecord, validate_records
from .state import StateStore

TEXT_FIELDS: tuple[str, ...] = ("text", "text_and_paralanguage")
BOUNDARY_FIELDS: tuple[str, ...] = ("start_time", "end_time")
SPEAKER_FIELD = "speaker"  # its values are raw speaker labels of the state's segment table
EDITABLE_FIELDS: tuple[str, ...] = FIELDS + TEXT_FIELDS + BOUNDARY_FIELDS + (SPEAKER_FIELD,)


def in_force(decisions: list[Decision]) -> dict[tuple[str, str], Decision]:
    """The latest decision per (segment key, field)."""
    return {(d.key, d.field): d for d in decisions}


def _speaker_name(n: int, lang: str) -> str:
    return f"说话人{n}" if lang == "zh" else f"Speaker{n}"


def apply_decisions(
    items: list[tuple[str, dict[str, Any]]], raw_speakers: dict[str, str], decisions: list[Decision], label_lang: str
) -> list[tuple[str, dict[str, Any]]]:
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


def reviewed_items(store: StateStore, rec: str) -> list[tuple[str, dict[str, Any]]]:
    """The finalized records of ``rec`` with the human decisions in force, ``[(key, row)]``."""
    items, decisions = store.records(rec), store.decisions(rec)
    if not decisions:
        return items
    raw = {s.key: s.speaker for s in store.segments(rec)}
    return apply_decisions(items, raw, decisions, store.label_language(rec))


def reviewed_records(store: StateStore, rec: str) -> list[SegmentRecord]:
    return validate_records([row for _, row in reviewed_items(store, rec)])
