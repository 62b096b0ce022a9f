"""One flat row per segment: what jsonl, clips and hf share."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..atomic import write_text_atomic
from .corpus_view import ExportRecording, ExportSegment


def segment_row(rec: ExportRecording, seg: ExportSegment) -> dict[str, Any]:
    return {
        "id": seg.uid,
        "recording": rec.id,
        "source": rec.item.source,
        "segment": seg.index,
        "start": seg.start,
        "end": seg.end,
        "duration": round(seg.duration, 3),
        "speaker": seg.speaker,
        "corpus_speaker_id": seg.corpus_speaker,  # one voice, one id across recordings (None: not joined)
        **seg.record,  # text, times in ms and the 15 attributes, as in OUT/<id>.json
        "confidence": dict(sorted(seg.confidence.items())),
        **seg.quality,  # export/quality.py: quality and confidence columns, tts_issues (None: no source)
    }


def write_jsonl(path: Path, rows: Iterable[dict[str, Any]]) -> Path:
    return write_text_atomic(path, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
