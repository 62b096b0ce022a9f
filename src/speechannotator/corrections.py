"""Human corrections over the finalized records: the decisions in force and how they apply.

The state keeps the machine's records (stage 11) untouched and every human decision in an
append-only trail; a recording's output is always "machine records + latest decision per
(segment, field)", so a rerun that finalizes again keeps the human corrections. What an edit
may hold is checked by ``output.decisions.validate_edit``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from typing import Any

from .records import Anchor, Decision, Segment
from .schema import FIELDS, OUTPUT_KEYS, SegmentRecord, validate_records
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
# A segment no machine record holds, made by a reviewer: added on an unlabelled stretch, or the
# second part of a split. Its decision's ``new`` records the whole segment (``added_segment``),
# its key is ``add_<decision id>`` and its anchor its own span; a split also records the span it
# was cut from (``split_of``).
ADDED_FIELD = "segment"
ADDED_PREFIX = "add_"
MARK_FIELDS: tuple[str, ...] = (REVIEWED_FIELD, DELETED_FIELD, ADDED_FIELD)  # decisions that set no field value
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
    apply to; ``orphaned`` match no segment and apply to none (they stay in the trail).
    ``added`` are the reviewer-made segments in force (``ADDED_FIELD``), as segment-table rows."""

    placed: list[Decision]
    orphaned: list[Decision]
    added: list[Segment] = field(default_factory=list)


def added_segment(d: Decision) -> Segment:
    """The segment-table row of an ``ADDED_FIELD`` decision (times in seconds)."""
    row = d.new["row"]
    return Segment(
        key=d.key,
        start=d.new["start_time"] / 1000,
        end=d.new["end_time"] / 1000,
        speaker=d.new["speaker"],
        text=row["text"],
        language=row["language"],
        source="review",
    )


def _best_match(anchor: Anchor, segments: list[Segment]) -> Segment | None:
    best, best_iou = None, ANCHOR_MIN_IOU
    for seg in segments:
        if seg.speaker == anchor.speaker and (iou := _iou(anchor, seg)) > best_iou:
            best, best_iou = seg, iou
    return best


def _overlaps(a: Segment, b: Segment) -> bool:
    return min(a.end, b.end) - max(a.start, b.start) > 0.001  # a shared edge is no overlap


def _added_in_force(d: Decision, machine: list[Segment], table: list[Segment]) -> bool:
    """Whether a reviewer-made segment still belongs in the output. A split part needs the span it
    was cut from (``split_of``) to still place. Either kind yields to the machine once a machine
    segment of its speaker overlaps it that did not when it was made (``overlapped``: a rerun
    found that speech itself), so one voice never says the same stretch twice."""
    if d.new.get("split_of") and _best_match(Anchor(**d.new["split_of"]), table) is None:
        return False
    seg = added_segment(d)
    known = [Anchor(**a) for a in d.new.get("overlapped", ())]
    return not any(
        s.speaker == seg.speaker and _overlaps(s, seg) and not any(_iou(a, s) > ANCHOR_MIN_IOU for a in known)
        for s in machine
    )


def machine_overlapped(segments: list[Segment], speaker: str, start_ms: int, end_ms: int) -> list[dict[str, Any]]:
    """The anchors of the machine segments of ``speaker`` overlapping a span a reviewer makes a
    segment on (recorded in its decision, for ``_added_in_force``)."""
    seg = Segment("", start_ms / 1000, end_ms / 1000, speaker)
    return [asdict(anchor_of(s)) for s in segments if s.speaker == speaker and _overlaps(s, seg)]


def place_decisions(decisions: list[Decision], segments: list[Segment]) -> Placement:
    """Where each decision applies now. A decision follows the span and speaker it was made on
    (its ``anchor``): the segment of that raw speaker with the largest overlap, above
    ``ANCHOR_MIN_IOU``; ties go to the earlier segment. A decision without an anchor (recorded
    before anchors existed) applies to its key while that key exists. Reviewer-made segments
    (``ADDED_FIELD``) join the table first, in the order they were made, where
    ``_added_in_force`` admits them; the other decisions then anchor on machine and added alike."""
    table = list(segments)
    added: list[Segment] = []
    dropped: set[int] = set()
    for d in decisions:
        if d.field == ADDED_FIELD:
            if _added_in_force(d, segments, table):
                added.append(added_segment(d))
                table.append(added[-1])
            else:
                dropped.add(d.id)
    keys = {s.key for s in table}
    placed: list[Decision] = []
    orphaned: list[Decision] = []
    cache: dict[Anchor, str | None] = {}
    for d in decisions:
        if d.field == ADDED_FIELD:
            (orphaned if d.id in dropped else placed).append(d)
            continue
        if d.anchor is None:
            (placed if d.key in keys else orphaned).append(d)
            continue
        if d.anchor not in cache:
            best = _best_match(d.anchor, table)
            cache[d.anchor] = best.key if best is not None else None
        key = cache[d.anchor]
        if key is None:
            orphaned.append(d)
        else:
            placed.append(d if key == d.key else replace(d, key=key))
    return Placement(placed, orphaned, added)


def placed_decisions(store: StateStore, rec: str) -> Placement:
    """The recording's decisions placed on its current segment table."""
    decisions = store.decisions(rec)
    if not decisions:
        return Placement([], [])
    return place_decisions(decisions, store.segments(rec))


def review_segments(store: StateStore, rec: str, placement: Placement | None = None) -> list[Segment]:
    """The segment table as reviewed: the machine's segments and the reviewer-made ones in force."""
    added = (placement or placed_decisions(store, rec)).added
    segments = store.segments(rec)
    return sorted(segments + added, key=lambda s: (s.start, s.end, s.key)) if added else segments


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
    by_raw: dict[str, tuple[str, str]] = {}
    for key, row in items:
        by_raw.setdefault(raw_speakers.get(key, row["speaker_id"]), (row["speaker_id"], row["speaker_name"]))

    def speaker(raw: str) -> tuple[str, str]:
        if raw not in by_raw:  # a label no machine record has: the next free id
            n = 1 + max((int(sid[4:]) for sid, _ in by_raw.values()), default=0)
            by_raw[raw] = (f"spk_{n:02d}", _speaker_name(n, label_lang))
        return by_raw[raw]

    items = list(items)
    for (k, f), d in force.items():  # reviewer-made segments, in the order they were made
        if f == ADDED_FIELD:
            sid, name = speaker(d.new["speaker"])
            fixed = {"speaker_id": sid, "speaker_name": name, "start_time": d.new["start_time"]}
            fixed["end_time"] = d.new["end_time"]
            items.append((k, {o: fixed[o] if o in fixed else d.new["row"][o] for o in OUTPUT_KEYS}))
    items = [(k, r) for k, r in items if k not in gone]
    out = []
    for key, row in items:
        row = dict(row)
        for (k, field_), d in force.items():
            if k != key or field_ in MARK_FIELDS:
                continue
            if field_ == SPEAKER_FIELD:
                row["speaker_id"], row["speaker_name"] = speaker(d.new)
            else:
                row[field_] = d.new
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
