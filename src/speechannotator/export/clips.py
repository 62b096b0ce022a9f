"""clips: one audio file per segment plus metadata.jsonl, the layout TTS trainers consume.

DEST/wavs/<recording id>/<segment>.wav and DEST/metadata.jsonl, whose `file_name` column makes
the folder loadable as a Hugging Face audiofolder as well.
"""

from __future__ import annotations

from pathlib import Path

import soundfile as sf

from .audio_source import ClipOptions, segment_clips
from .corpus_view import ExportRecording
from .rows import segment_row, write_jsonl


def clip_name(seg_uid: str) -> str:
    return f"wavs/{seg_uid}.wav"


def export_clips(view: list[ExportRecording], dest: Path, *, clip: ClipOptions | None = None) -> Path:
    rows = []
    for rec, seg, samples, sr, (a, b) in segment_clips(view, clip or ClipOptions()):
        name = clip_name(seg.uid)
        path = dest / name
        path.parent.mkdir(parents=True, exist_ok=True)
        sf.write(str(path), samples, sr, subtype="PCM_16")
        rows.append({"file_name": name, "sample_rate": sr, "clip_start": a, "clip_end": b, **segment_row(rec, seg)})
    return write_jsonl(dest / "metadata.jsonl", rows).parent
