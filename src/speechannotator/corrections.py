"""Human corrections over the finalized records: the decisions in force and how they apply.

The state keeps the machine's records (stage 11) untouched and every human decision in an
append-only trail; a recording's output is always "machine records + latest decision per
(segment, field)", so a rerun that finalizes again keeps the human corrections. What an edit
may hold is checked by ``output.decisions.validate_edit``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from .records import Anchor, Decision, Segment
from .schema import FIELDS, SegmentRecord, validate_records
from .state import StateStore

TEXT_FIELDS: tuple[str, ...] = ("text", "text_and_paralanguage")
BOUNDARY_FIELDS: tuple[str, ...] = ("start_time", "end_time")
SPEAKER_FIELD = "speaker"  # its values are raw speaker labels of the state's segment table
EDITABLE_FIELDS: tuple[str, ...] = FIELDS + TEXT_FIELDS + BOUNDARY_FIELDS + (SPEAKER_FIELD,)
# A reviewer's "checked" mark (true/false) rides the same append-only, anchored trail; it
# changes no output value.
REVIEWED_FIELD = "reviewed"
# A segment removed from the output (true) or restored (false); merging two segments is the
# first's end and transcripts extended plus the second deleted.
DELETED_FIELD = "deleted"
MARK_FIELDS: tuple[str, ...] = (REVIEWED_FIELD, DELETED_FIELD)  # decisions that set no output value
# A decision re-anchors to a segment of the same raw speaker whose span overlaps the one it was
# made on by more than this intersection-over-union: a boundary nudged by a rerun keeps it, a
# segment split in halves or merged with a neighbour as long does not (the decision is then orphaned).
ANCHOR_MIN_IOU = 0.5


def anchor_of(seg: Segment) -> Anchor:
    return Anchor(start=seg.start, end=seg.end, speaker=seg.speaker, text=seg.text)


def _iou(a: Anchor, seg: Segment) -> float:
    inter = min(a.end, seg.end) - max(a.start, seg.start)
    union = max(a.end, seg.end) - min(a.start, seg.start)
    return inter / union if inter > 0 and union > 0 else 0.0


@dataclass
class Placement:
    """Decisions on the current segment table: ``placed`` carry the key of the segment they now
    apply to; ``orphaned`` match no segment and apply to none (they stay in the trail)."""

    placed: list[Decision]
    orphaned: list[Decision]


def place_decisions(decisions: list[Decision], segments: list[Segment]) -> Placement:
    """Where each decision applies now. A decision follows the span and speaker it was made on
    (its ``anchor``): the segment of that raw speaker with the largest overlap, above
    ``ANCHOR_MIN_IOU``; ties go to the earlier segment. A decision without an anchor (recorded
    before anchors existed) applies to its key while that key exists."""
    keys = {s.key for s in segments}
    placed: list[Decision] = []
    orphaned: list[Decision] = []
    cache: dict[Anchor, str | None] = {}
    for d in decisions:
        if d.anchor is None:
            (placed if d.key in keys else orphaned).append(d)
            continue
        if d.anchor not in cache:
            best, best_iou = None, ANCHOR_MIN_IOU
            for seg in segments:
                if seg.speaker == d.anchor.speaker and (iou := _iou(d.anchor, seg)) > best_iou:
                    best, best_iou = seg.key, iou
            cache[d.anchor] = best
        key = cache[d.anchor]
        if key is None:
            orphaned.append(d)
        else:
            placed.append(d if key == d.key else replace(d, key=key))
    return Placement(placed, orphaned)


def placed_decisions(store: StateStore, rec: str) -> Placement:
    """The recording's decisions placed on its current segment table."""
    decisions = store.decisions(rec)
    if not decisions:
        return Placement([], [])
    return place_decisions(decisions, store.segments(rec))


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
    speaker takes that speaker's id and name; a new label gets the next free id. ``decisions``
    are placed ones (``place_decisions``); a key no record has is skipped.
    """
    force = in_force(decisions)
    if not force:
        return items
    gone = {k for (k, f), d in force.items() if f == DELETED_FIELD and d.new is True}
    items = [(k, r) for k, r in items if k not in gone]
    by_raw: dict[str, tuple[str, str]] = {}
    for key, row in items:
        by_raw.setdefault(raw_speakers.get(key, row["speaker_id"]), (row["speaker_id"], row["speaker_name"]))
    out = []
    for key, row in items:
        row = dict(row)
        for (k, field), d in force.items():
            if k != key or field in MARK_FIELDS:
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
    items = store.records(rec)
    decisions = placed_decisions(store, rec).placed
    if not decisions:
        return items
    raw = {s.key: s.speaker for s in store.segments(rec)}
    return apply_decisions(items, raw, decisions, store.label_language(rec))


def reviewed_records(store: StateStore, rec: str) -> list[SegmentRecord]:
    return validate_records([row for _, row in reviewed_items(store, rec)])
