"""Which exports were made from an annotation folder (OUT/exports.json), so that a human
correction can write every one of them again."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

from ..atomic import write_text_atomic
from .audio_source import ClipOptions
from .corpus_view import ExportFilter

REGISTRY_FILE = "exports.json"


def _filters_json(filters: ExportFilter | None) -> dict[str, Any]:
    d = asdict(filters or ExportFilter())
    return {k: sorted(v) if isinstance(v, frozenset) else v for k, v in d.items()}


def filters_from(d: dict[str, Any]) -> ExportFilter:
    return ExportFilter(
        min_duration=d.get("min_duration"),
        max_duration=d.get("max_duration"),
        languages=frozenset(d.get("languages", ())),
        speakers=frozenset(d.get("speakers", ())),
        min_confidence=dict(d.get("min_confidence", {})),
        where=d.get("where"),
        preset=d.get("preset"),
    )


def recorded_exports(out_dir: str | Path) -> list[dict[str, Any]]:
    path = Path(out_dir) / REGISTRY_FILE
    if not path.exists():
        return []
    return list(json.loads(path.read_text(encoding="utf-8")))


def clip_from(entry: dict[str, Any]) -> ClipOptions:
    """The clip settings of a recorded export (older entries hold only the rate)."""
    return ClipOptions(**{"rate": entry.get("rate", "16000"), **entry.get("clip", {})})


def record_export(out_dir: str | Path, fmt: str, dest: Path, filters: ExportFilter | None, clip: ClipOptions) -> None:
    """Remember one export (the latest settings per destination win)."""
    entry = {
        "format": fmt,
        "dest": str(Path(dest).resolve()),
        "rate": clip.rate,
        "clip": clip.to_json(),
        "filters": _filters_json(filters),
    }
    kept = [e for e in recorded_exports(out_dir) if e["dest"] != entry["dest"]]
    write_text_atomic(Path(out_dir) / REGISTRY_FILE, json.dumps(kept + [entry], indent=2) + "\n")
