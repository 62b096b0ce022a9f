"""srt and vtt: one subtitle file per recording, DEST/<id>.srt|.vtt, cues "[speaker] text"."""

from __future__ import annotations

from pathlib import Path

from ..atomic import write_text_atomic
from .corpus_view import ExportRecording


def _stamp(seconds: float, sep: str) -> str:
    ms = int(round(seconds * 1000))
    return f"{ms // 3600000:02d}:{ms // 60000 % 60:02d}:{ms // 1000 % 60:02d}{sep}{ms % 1000:03d}"


def _cue_text(record: dict) -> str:
    # A blank line ends a cue in both formats; "-->" would read as a timing line in WebVTT.
    text = " ".join(str(record.get("text", "")).split()).replace("-->", "->")
    return f"[{record['speaker_id']}] {text}".strip()


def _write(view: list[ExportRecording], dest: Path, kind: str) -> Path:
    for rec in view:
        cues = []
        for n, seg in enumerate(rec.segments, start=1):
            sep = "," if kind == "srt" else "."
            timing = f"{_stamp(seg.start, sep)} --> {_stamp(seg.end, sep)}"
            cues.append(f"{n}\n{timing}\n{_cue_text(seg.record)}\n")
        head = "WEBVTT\n\n" if kind == "vtt" else ""
        write_text_atomic(dest / f"{rec.id}.{kind}", head + "\n".join(cues))
    return dest


def export_srt(view: list[ExportRecording], dest: Path) -> Path:
    return _write(view, dest, "srt")


def export_vtt(view: list[ExportRecording], dest: Path) -> Path:
    return _write(view, dest, "vtt")
