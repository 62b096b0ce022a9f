"""A correction from the review page: validate, append a human decision, write the outputs again."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ..corrections import (
    DELETED_FIELD,
    REVIEWED_FIELD,
    SPEAKER_FIELD,
    TEXT_FIELDS,
    anchor_of,
    in_force,
    placed_decisions,
    reviewed_items,
)
from ..export.api import rerun_exports
from ..locks import RecordingBusy, RecordingLock
from ..output.decisions import EditContext, EditError, validate_edit
from ..output.recompose import RECOMPOSE_AFTER, RECOMPOSER, recomposed
from ..output.write import write_output
from ..schema import COMPOSED_FIELDS
from ..state import StateStore
from .data import Busy, NotFound, recording_row

_NO_EXPECTATION = object()


class Conflict(Exception):
    """The value changed since the page showed it (another reviewer saved first)."""

    def __init__(self, message: str, current: Any, who: str | None):
        super().__init__(message)
        self.current, self.who = current, who


def apply_edit(
    state_path: Path,
    out_dir: Path,
    rec: str,
    key: str,
    field: str,
    value: Any,
    who: str,
    note: str = "",
    expect: Any = _NO_EXPECTATION,
) -> dict[str, Any]:
    """Record ``field := value`` on segment ``key`` as a decision by ``who``; returns the new output row.

    ``expect`` is the value the reviewer saw; when given and the value is another now, the
    edit is refused (Conflict) instead of overwriting a decision the reviewer never saw.
    Raises NotFound for an unknown recording or segment, Busy while the recording is being
    annotated, and EditError for a value the schema does not admit. An edit that changes
    nothing is refused too, so the trail holds only decisions.
    """
    with _writable(state_path, out_dir, rec) as (store, row):
        items = dict(reviewed_items(store, rec))
        if key not in items:
            raise NotFound(f"no segment {key!r} in {rec!r}")
        segs = {s.key: s for s in store.segments(rec)}
        raw = {k: s.speaker for k, s in segs.items()}
        ctx = EditContext(
            label_lang=store.label_language(rec),
            duration_ms=int(round(1000 * (row["duration"] or 0))),
            speakers=tuple(sorted(set(raw.values()))),
            others=tuple((k, r["start_time"], r["end_time"], r["speaker_id"]) for k, r in items.items() if k != key),
        )
        new = validate_edit(field, value, items[key], ctx)
        force = in_force(placed_decisions(store, rec).placed)
        d = force.get((key, field))
        old = (d.new if d is not None else raw[key]) if field == SPEAKER_FIELD else items[key][field]
        if new == old:  # also when another reviewer saved this very value meanwhile
            raise EditError(f"{field} is already {new!r}")
        if expect is not _NO_EXPECTATION and expect != old:
            by = d.who if d is not None else None
            raise Conflict(
                f"{field} was changed to {old!r}" + (f" by {by}" if by else "") + " since this page loaded it; "
                "your value was not saved (it is kept in the box: compare, then save again)",
                old,
                by,
            )
        anchor = anchor_of(segs[key])
        made = store.add_decision(rec, key, field, old, new, who, note, anchor)
        if field in RECOMPOSE_AFTER:
            _recompose(store, rec, key, anchor, made, field, force)
        write_output(store, out_dir, rec)  # the JSON again, with the decision in force
        result = dict(reviewed_items(store, rec))[key]
    rerun_exports(out_dir)  # and every export made from this folder
    return result


@contextmanager
def _writable(state_path: Path, out_dir: Path, rec: str) -> Iterator[tuple[StateStore, dict[str, Any]]]:
    """The state opened for a decision on a finished recording, under the recording's lock."""
    lock = RecordingLock(out_dir, rec)
    try:
        lock.acquire()  # the same lock `annotate` holds: no edit lands in the middle of a rerun
    except RecordingBusy:
        raise Busy(f"recording {rec!r} is being annotated; the edit was not saved, try again when it is done") from None
    try:
        with StateStore(state_path) as store:
            row = recording_row(store, rec)
            if row["status"] != "complete":
                raise Busy(
                    f"recording {rec!r} is {row['status']}: it has no finished annotation to correct "
                    "(it is being annotated, or its last run stopped)"
                )
            yield store, row
    finally:
        lock.release()


def mark_reviewed(state_path: Path, out_dir: Path, rec: str, key: str, reviewed: bool, who: str) -> bool:
    """Mark segment ``key`` as checked (or not) by ``who``; returns whether a mark was added
    (a mark equal to the one in force adds nothing). The output JSON does not change."""
    with _writable(state_path, out_dir, rec) as (store, _):
        segs = {s.key: s for s in store.segments(rec)}
        if key not in segs:
            raise NotFound(f"no segment {key!r} in {rec!r}")
        d = in_force(placed_decisions(store, rec).placed).get((key, REVIEWED_FIELD))
        old = d.new if d is not None else False
        if old is reviewed:
            return False
        store.add_decision(rec, key, REVIEWED_FIELD, old, reviewed, who, "", anchor_of(segs[key]))
        return True


def _recompose(store: StateStore, rec: str, key: str, anchor, made: int, field: str, force) -> None:
    """Caption and contextual inference composed again after decision ``made`` and recorded as
    decisions of the composer, except where a person corrected them (theirs stay)."""
    row = dict(reviewed_items(store, rec))[key]
    for f, text in recomposed(store, rec, key, row).items():
        assert f in COMPOSED_FIELDS
        d = force.get((key, f))
        if (d is not None and d.who != RECOMPOSER) or text == row[f]:
            continue
        store.add_decision(rec, key, f, row[f], text, RECOMPOSER, f"after decision #{made} ({field})", anchor)


def delete_segment(state_path: Path, out_dir: Path, rec: str, key: str, deleted: bool, who: str) -> None:
    """Remove segment ``key`` from the output (``deleted``) or restore it, as a decision by ``who``."""
    with _writable(state_path, out_dir, rec) as (store, _):
        segs = {s.key: s for s in store.segments(rec)}
        if key not in segs:
            raise NotFound(f"no segment {key!r} in {rec!r}")
        d = in_force(placed_decisions(store, rec).placed).get((key, DELETED_FIELD))
        old = d.new if d is not None else False
        if old is deleted:
            raise EditError(f"{key} is {'already deleted' if deleted else 'not deleted'}")
        store.add_decision(rec, key, DELETED_FIELD, old, deleted, who, "", anchor_of(segs[key]))
        write_output(store, out_dir, rec)
    rerun_exports(out_dir)


def merge_with_next(state_path: Path, out_dir: Path, rec: str, key: str, who: str) -> dict[str, Any]:
    """Join segment ``key`` and the next one in time, which must be of the same speaker: the
    first takes the second's end and both transcripts, the second is deleted. Returns the
    merged row. Each part is a decision of its own in the trail (note: "merge #N")."""
    with _writable(state_path, out_dir, rec) as (store, row):
        items = reviewed_items(store, rec)
        pos = next((i for i, (k, _) in enumerate(items) if k == key), None)
        if pos is None:
            raise NotFound(f"no segment {key!r} in {rec!r}")
        if pos + 1 >= len(items):
            raise EditError(f"{key} is the last segment: nothing follows it to merge with")
        (_, first), (nxt, second) = items[pos], items[pos + 1]
        if first["speaker_id"] != second["speaker_id"]:
            raise EditError(
                f"the next segment ({nxt}) is {second['speaker_id']}'s, not {first['speaker_id']}'s: "
                "only one speaker's consecutive segments merge"
            )
        segs = {s.key: s for s in store.segments(rec)}
        ctx = EditContext(
            label_lang=store.label_language(rec),
            duration_ms=int(round(1000 * (row["duration"] or 0))),
            speakers=tuple(sorted({s.speaker for s in segs.values()})),
            others=tuple((k, r["start_time"], r["end_time"], r["speaker_id"]) for k, r in items if k not in (key, nxt)),
        )
        end = validate_edit("end_time", max(first["end_time"], second["end_time"]), first, ctx)
        force = in_force(placed_decisions(store, rec).placed)
        made = store.add_decision(rec, nxt, DELETED_FIELD, False, True, who, f"merged into {key}", anchor_of(segs[nxt]))
        note = f"merge #{made}"
        if end != first["end_time"]:
            store.add_decision(rec, key, "end_time", first["end_time"], end, who, note, anchor_of(segs[key]))
        for f in TEXT_FIELDS:
            joined = " ".join(t for t in (first[f], second[f]) if t)
            if joined != first[f]:
                store.add_decision(rec, key, f, first[f], joined, who, note, anchor_of(segs[key]))
        _recompose(store, rec, key, anchor_of(segs[key]), made, "text", force)
        write_output(store, out_dir, rec)
        merged = dict(reviewed_items(store, rec))[key]
    rerun_exports(out_dir)
    return merged
