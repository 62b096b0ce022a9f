"""Stage 12: the demo-format JSON of a recording, from the records finalize stored in the state."""

from __future__ import annotations

import json
import os
from pathlib import Path

from ..schema import SegmentRecord, validate_records
from ..stages import StageContext


def stored_records(ctx: StageContext) -> list[SegmentRecord]:
    return validate_records([data for _, data in ctx.store.records(ctx.rec)])


def write_json(path: Path, records: list[SegmentRecord]) -> None:
    """Atomic: readers see the previous file or the whole new one, never half of it."""
    path.parent.mkdir(parents=True, exist_ok=True)  # corpus ids hold folders (a/x -> OUT/a/x.json)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    text = json.dumps([r.ordered() for r in records], ensure_ascii=False, indent=2) + "\n"
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def write(ctx: StageContext) -> None:
    if ctx.output is None:
        raise ValueError(f"{ctx.rec}: no output path to write")
    write_json(ctx.output, stored_records(ctx))
