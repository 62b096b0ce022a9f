"""Stage 12: the demo-format JSON of a recording, from the records finalize stored in the state."""

from __future__ import annotations

from pathlib import Path

from ..corrections import reviewed_records
from ..schema import SegmentRecord
from ..stages import StageContext
from ..state import StateStore
from .files import write_json_atomic


def output_path(out_dir: str | Path, rec: str) -> Path:
    """Where a recording's JSON lives in its output folder."""
    return Path(out_dir) / f"{rec}.json"


def stored_records(ctx: StageContext) -> list[SegmentRecord]:
    """The finalized records with the human corrections in force (an unreviewed recording has none)."""
    return reviewed_records(ctx.store, ctx.rec)


def write_json(path: Path, records: list[SegmentRecord]) -> None:
    """Atomic: readers see the previous file or the whole new one, never half of it (a short
    temporary name, removed when the write fails)."""
    path.parent.mkdir(parents=True, exist_ok=True)  # corpus ids hold folders (a/x -> OUT/a/x.json)
    write_json_atomic(path, records)


def write(ctx: StageContext) -> None:
    if ctx.output is None:
        raise ValueError(f"{ctx.rec}: no output path to write")
    write_json(ctx.output, stored_records(ctx))


def write_output(store: StateStore, out_dir: str | Path, rec: str) -> tuple[Path, list[SegmentRecord]]:
    """Write a recording's JSON again from the state, e.g. after a correction on the review page."""
    path, records = output_path(out_dir, rec), reviewed_records(store, rec)
    write_json(path, records)
    return path, records
