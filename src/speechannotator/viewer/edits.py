"""A correction from the review page: validate, append a human decision, write the outputs again."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..corrections import SPEAKER_FIELD, anchor_of, in_force, placed_decisions, reviewed_items
from ..export.api import rerun_exports
from ..output.decisions import EditContext, EditError, validate_edit
from ..output.write import write_output
from ..state import StateStore
from .data import NotFound, recording_row


def apply_edit(
    state_path: Path, out_dir: Path, rec: str, key: str, field: str, value: Any, who: str, note: str = ""
) -> dict[str, Any]:
    """Record ``field := value`` on segment ``key`` as a decision by ``who``; returns the new output row.

    Raises NotFound for an unknown recording or segment and EditError for a value the schema
    does not admit. An edit that changes nothing is refused too, so the trail holds only decisions.
    """
    with StateStore(state_path) as store:
        row = recording_row(store, rec)
        items = dict(reviewed_items(store, rec))
        if key not in items:
            raise NotFound(f"no segment {key!r} in {rec!r}")
        segs = {s.key: s for s in store.segments(rec)}
        raw = {k: s.speaker for k, s in segs.items()}
        ctx = EditContext(
            label_lang=store.label_language(rec),
            duration_ms=int(round(1000 * (row["duration"] or 0))),
            speakers=tuple(sorted(set(raw.values()))),
        )
        new = validate_edit(field, value, items[key], ctx)
        if field == SPEAKER_FIELD:
            d = in_force(placed_decisions(store, rec).placed).get((key, field))
            old = d.new if d is not None else raw[key]
        else:
            old = items[key][field]
        if new == old:
            raise EditError(f"{field} is already {new!r}")
        store.add_decision(rec, key, field, old, new, who, note, anchor_of(segs[key]))
        write_output(store, out_dir, rec)  # the JSON again, with the decision in force
        row = dict(reviewed_items(store, rec))[key]
    rerun_exports(out_dir)  # and every export made from this folder
    return row
