"""jsonl: one record per segment for the whole corpus (a file)."""

from __future__ import annotations

from pathlib import Path

from .corpus_view import ExportRecording
from .rows import segment_row, write_jsonl


def export_jsonl(view: list[ExportRecording], dest: Path) -> Path:
    path = dest if dest.suffix == ".jsonl" else dest / "segments.jsonl"
    return write_jsonl(path, (segment_row(r, s) for r in view for s in r.segments))
