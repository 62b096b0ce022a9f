"""hf: a Hugging Face `datasets` folder (save_to_disk) with one row per segment and its audio embedded."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import soundfile as sf

from .audio_source import segment_clips
from .corpus_view import ExportRecording
from .rows import segment_row


def export_hf(view: list[ExportRecording], dest: Path, *, rate: str = "16000") -> Path:
    import datasets

    rows = []
    for rec, seg, clip, sr in segment_clips(view, rate):
        buf = io.BytesIO()
        sf.write(buf, clip, sr, format="WAV", subtype="PCM_16")
        row = segment_row(rec, seg)
        row["confidence"] = json.dumps(row["confidence"], sort_keys=True)  # fields differ per segment
        rows.append({"audio": {"bytes": buf.getvalue(), "path": f"{seg.uid}.wav"}, **row})
    if rows:
        ds = datasets.Dataset.from_dict({k: [r[k] for r in rows] for k in rows[0]})
    else:  # every segment filtered out: an empty dataset, still loadable
        cell = {"bytes": datasets.Value("binary"), "path": datasets.Value("string")}
        features = datasets.Features({"audio": cell, "id": datasets.Value("string")})
        ds = datasets.Dataset.from_dict({"audio": [], "id": []}, features=features)
    # Casting the {bytes, path} column (rather than encoding rows) needs no audio codec here; readers
    # decode with datasets' own backend, or read the bytes with Audio(decode=False).
    ds = ds.cast_column("audio", datasets.Audio())
    if dest.exists():
        shutil.rmtree(dest)  # save_to_disk refuses to overwrite a dataset in place
    # An empty dataset still needs one shard for load_from_disk to open it.
    ds.save_to_disk(str(dest), num_shards=None if len(ds) else 1)
    return dest
