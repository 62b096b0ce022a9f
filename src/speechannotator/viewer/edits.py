"""A correction from the review page: validate, append a human decision, write the outputs again."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict
from pathlib import Path
from typing import Any

from ..corrections import (
    ADDED_FIELD,
    ADDED_PREFIX,
    DELETED_FIELD,
    REVIEWED_FIELD,
    SPEAKER_FIELD,
    TEXT_FIELDS,
    anchor_of,
    in_force,
    machine_overlapped,
    placed_decisions,
    review_segments,
    reviewed_items,
)
from ..export.api import rerun_exports
from ..locks import RecordingBusy, RecordingLock
from ..output.decisions import EditContext, EditError, check_overlap, clean_text, milliseconds, validate_edit
from ..output.recompose import RECOMPOSE_AFTER, RECOMPOSER, recomposed
from ..output.write import write_output
from ..records import Anchor, Segment
from ..schema import COMPOSED_FIELDS, FIELDS, NONE_VALUE, OUTPUT_KEYS
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
        segs = {s.key: s for s in review_segments(store, rec)}
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
        seg, old = _flag_in_force(store, rec, key, REVIEWED_FIELD)
        if old is reviewed:
            return False
        store.add_decision(rec, key, REVIEWED_FIELD, old, reviewed, who, "", anchor_of(seg))
        return True


def _flag_in_force(store: StateStore, rec: str, key: str, field: str) -> tuple[Any, bool]:
    """Segment ``key`` and the value of its flag ``field`` (reviewed, deleted) in force, False
    when no decision set it."""
    segs = {s.key: s for s in review_segments(store, rec)}
    if key not in segs:
        raise NotFound(f"no segment {key!r} in {rec!r}")
    d = in_force(placed_decisions(store, rec).placed).get((key, field))
    return segs[key], (d.new if d is not None else False)


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
        seg, old = _flag_in_force(store, rec, key, DELETED_FIELD)
        if old is deleted:
            raise EditError(f"{key} is {'already deleted' if deleted else 'not deleted'}")
        store.add_decision(rec, key, DELETED_FIELD, old, deleted, who, "", anchor_of(seg))
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
        segs = {s.key: s for s in review_segments(store, rec)}
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


def _raw_speakers(store: StateStore, rec: str, segs: dict[str, Segment], force) -> dict[str, str]:
    """Segment key -> its raw speaker label now (a speaker decision in force, else the table's)."""
    return {k: (force[(k, SPEAKER_FIELD)].new if (k, SPEAKER_FIELD) in force else s.speaker) for k, s in segs.items()}


def split_text(seg: Segment, text: str, at_ms: int) -> tuple[str, str] | None:
    """``text`` divided at the word boundary nearest ``at_ms``, from the segment's word times; None
    where there are none, or the words are not the text's (a corrected transcript)."""
    words = [w for w in seg.words if w.text.strip()]
    if not words or text != seg.text:
        return None
    ends, pos = [], 0  # the character offset in ``text`` just after each word
    for w in words:  # in order; case aside (the transcript may be capitalized after recognition)
        found = re.compile(re.escape(w.text.strip()), re.IGNORECASE).search(text, pos)
        if found is None:
            return None
        pos = found.end()
        ends.append(pos)
    # Candidate cuts: before word i (i = 0..n); a cut between two words sits in their gap.
    times = [words[0].start] + [(a.end + b.start) / 2 for a, b in zip(words, words[1:])] + [words[-1].end]
    i = min(range(len(times)), key=lambda j: (abs(1000 * times[j] - at_ms), j))
    cut = ends[i - 1] if i else 0
    return text[:cut].strip(), text[cut:].strip()


def split_segment(
    state_path: Path,
    out_dir: Path,
    rec: str,
    key: str,
    at: Any,
    who: str,
    texts: tuple[Any, Any] | None = None,
) -> dict[str, Any]:
    """Cut segment ``key`` in two at ``at`` ms. The first part keeps the key and ends at ``at``;
    the second is a new segment (``add_<decision id>``) from ``at`` to the old end, with the
    parent's labels copied. The transcript is divided at the word nearest the cut where word
    times exist, else ``texts`` (first, second) must give it. Returns {"key", "row", "first"}."""
    with _writable(state_path, out_dir, rec) as (store, _):
        placement = placed_decisions(store, rec)
        items = dict(reviewed_items(store, rec))
        if key not in items:
            raise NotFound(f"no segment {key!r} in {rec!r}")
        first = items[key]
        at_ms = milliseconds("split time", at)
        if not first["start_time"] < at_ms < first["end_time"]:
            raise EditError(
                f"split time {at_ms} ms must lie inside {key} ({first['start_time']}-{first['end_time']} ms)"
            )
        segs = {s.key: s for s in review_segments(store, rec, placement)}
        force = in_force(placement.placed)
        if texts is not None:
            left, right = (clean_text(t, "text", allow_empty=True) for t in texts)
        else:
            parts = split_text(segs[key], first["text"], at_ms)
            if parts is None:
                raise EditError(
                    f"{key} has no word times for its transcript: give the text of each part (texts: [first, second])"
                )
            left, right = parts
        raw = _raw_speakers(store, rec, {key: segs[key]}, force)[key]
        row = {f: first[f] for f in OUTPUT_KEYS if f not in ("speaker_id", "speaker_name", "start_time", "end_time")}
        row.update(text=right, text_and_paralanguage=right)
        new = {
            "start_time": at_ms,
            "end_time": first["end_time"],
            "speaker": raw,
            "row": row,
            "split_of": asdict(anchor_of(segs[key])),
            "overlapped": machine_overlapped(store.segments(rec), raw, at_ms, first["end_time"]),
        }
        own = Anchor(at_ms / 1000, first["end_time"] / 1000, raw, right)
        made = store.add_decision(rec, ADDED_PREFIX + "{id}", ADDED_FIELD, None, new, who, f"split of {key}", own)
        child, note = f"{ADDED_PREFIX}{made}", f"split #{made}"
        parent = anchor_of(segs[key])
        store.add_decision(rec, key, "end_time", first["end_time"], at_ms, who, note, parent)
        for f in TEXT_FIELDS:
            if first[f] != left:
                store.add_decision(rec, key, f, first[f], left, who, note, parent)
        _recompose(store, rec, key, parent, made, "text", force)
        _recompose(store, rec, child, own, made, "text", {})
        write_output(store, out_dir, rec)
        final = dict(reviewed_items(store, rec))
        result = {"key": child, "row": final[child], "first": final[key]}
    rerun_exports(out_dir)
    return result


def add_segment(
    state_path: Path, out_dir: Path, rec: str, start: Any, end: Any, speaker: Any, text: Any, who: str
) -> dict[str, Any]:
    """A segment no machine record holds, on ``start``-``end`` ms, of raw ``speaker`` (one of the
    recording's or a new label) saying ``text``. Its labels start as the empty marker for the
    reviewer to fill; caption and contextual inference are composed from them. Validated as a
    boundary is (finite, inside the recording, no overlap of one voice). Returns {"key", "row"}."""
    with _writable(state_path, out_dir, rec) as (store, rec_row):
        placement = placed_decisions(store, rec)
        items = reviewed_items(store, rec)
        segs = {s.key: s for s in review_segments(store, rec, placement)}
        raw = _raw_speakers(store, rec, segs, in_force(placement.placed))
        ctx = EditContext(
            label_lang=store.label_language(rec),
            duration_ms=int(round(1000 * (rec_row["duration"] or 0))),
            speakers=tuple(sorted(set(raw.values()))),
            others=tuple((k, r["start_time"], r["end_time"], r["speaker_id"]) for k, r in items),
        )
        s_ms, e_ms = milliseconds("start_time", start), milliseconds("end_time", end)
        if not 0 <= s_ms < e_ms <= ctx.duration_ms:
            raise EditError(f"span {s_ms}-{e_ms} ms must satisfy 0 <= start < end <= {ctx.duration_ms}")
        label = validate_edit(SPEAKER_FIELD, speaker, {}, ctx)
        sid = next((r["speaker_id"] for k, r in items if raw.get(k) == label), f"new speaker {label}")
        check_overlap(s_ms, e_ms, {"start_time": -1, "end_time": -1, "speaker_id": sid}, ctx)
        said = clean_text(text, "text", allow_empty=False)
        lang = ctx.label_lang
        languages = Counter(r["language"] for k, r in items if raw.get(k) == label) or Counter(
            r["language"] for _, r in items
        )
        row: dict[str, object] = dict.fromkeys(map(str, FIELDS), NONE_VALUE[lang])
        row.update(
            text=said,
            text_and_paralanguage=said,
            language=min(languages, key=lambda x: (-languages[x], x)) if languages else "",
        )
        overlapped = machine_overlapped(store.segments(rec), label, s_ms, e_ms)  # shortened by a person
        new = {"start_time": s_ms, "end_time": e_ms, "speaker": label, "row": row, "overlapped": overlapped}
        own = Anchor(s_ms / 1000, e_ms / 1000, label, said)
        made = store.add_decision(rec, ADDED_PREFIX + "{id}", ADDED_FIELD, None, new, who, "added", own)
        key = f"{ADDED_PREFIX}{made}"
        _recompose(store, rec, key, own, made, "text", {})
        write_output(store, out_dir, rec)
        result = {"key": key, "row": dict(reviewed_items(store, rec))[key]}
    rerun_exports(out_dir)
    return result
