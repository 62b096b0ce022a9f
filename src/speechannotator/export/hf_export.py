"""hf: a Hugging Face `datasets` folder (save_to_disk), one row per segment with its audio as WAV bytes.

Written while streaming: rows go from a generator into Arrow files on disk (`writer_batch_size`
rows at a time), so one recording's audio and one batch of clips are in memory, never the corpus.
The dataset is then saved in shards of at most `max_shard_size`.

The audio column is a `datasets.Audio(decode=False)` feature holding 16-bit WAV bytes: it loads
and reads on a machine with `datasets` and `soundfile` alone (datasets 5 decodes `Audio` columns
with torchcodec, which needs a system FFmpeg):

    ds = datasets.load_from_disk(path)
    x, sr = soundfile.read(io.BytesIO(ds[0]["audio"]["bytes"]))

Where torchcodec is installed, `ds.cast_column("audio", datasets.Audio())` decodes as usual.
"""

from __future__ import annotations

import io
import json
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import soundfile as sf

from .audio_source import ClipOptions, segment_clips
from .corpus_view import ExportRecording
from .quality import COLUMNS
from .rows import segment_row

WRITER_BATCH_ROWS = 100  # rows per Arrow record batch while writing: bounds the clips held at once
MAX_SHARD_SIZE = "500MB"


def _rows(view: list[ExportRecording], clip: ClipOptions) -> Iterator[dict[str, Any]]:
    for rec, seg, samples, sr, (a, b) in segment_clips(view, clip):
        buf = io.BytesIO()
        sf.write(buf, samples, sr, format="WAV", subtype="PCM_16")
        row = segment_row(rec, seg)
        row["confidence"] = json.dumps(row["confidence"], sort_keys=True)  # fields differ per segment
        audio = {"bytes": buf.getvalue(), "path": f"{seg.uid}.wav"}
        yield {"audio": audio, "sample_rate": sr, "clip_start": a, "clip_end": b, **row}


def _feature(name: str, value: Any):
    import datasets

    column = COLUMNS.get(name)
    if column is not None:  # declared: a null in the first row must not decide the type
        kind = {"number": datasets.Value("float64"), "text": datasets.Value("string")}
        return kind.get(column.kind, datasets.List(datasets.Value("string")))
    if isinstance(value, bool):
        return datasets.Value("bool")
    if isinstance(value, int):
        return datasets.Value("int64")
    if isinstance(value, float):
        return datasets.Value("float64")
    if isinstance(value, list):
        return datasets.List(datasets.Value("string"))
    return datasets.Value("string")


def _features(first: dict[str, Any]):
    import datasets

    feats = {"audio": {"bytes": datasets.Value("binary"), "path": datasets.Value("string")}}
    feats.update({k: _feature(k, v) for k, v in first.items() if k != "audio"})
    if "tts_issue_count" in feats:
        feats["tts_issue_count"] = datasets.Value("int64")
    return datasets.Features(feats)


@contextmanager
def _save_batches(rows: int) -> Iterator[None]:
    """save_to_disk copies the dataset in batches of datasets.config.DEFAULT_MAX_BATCH_SIZE rows
    (1000, up to 100 MB of clips held at once); ours are WRITER_BATCH_ROWS for its call."""
    from datasets import config

    saved = config.DEFAULT_MAX_BATCH_SIZE
    config.DEFAULT_MAX_BATCH_SIZE = rows
    try:
        yield
    finally:
        config.DEFAULT_MAX_BATCH_SIZE = saved


def export_hf(view: list[ExportRecording], dest: Path, *, clip: ClipOptions | None = None) -> Path:
    import datasets

    clip = clip or ClipOptions()
    rows = _rows(view, clip)
    first = next(rows, None)
    rate = None if clip.rate == "source" else int(clip.rate)
    audio = datasets.Audio(sampling_rate=rate, decode=False)
    if dest.exists():
        shutil.rmtree(dest)  # save_to_disk refuses to overwrite a dataset in place
    dest.parent.mkdir(parents=True, exist_ok=True)
    if first is None:  # every segment filtered out: an empty dataset, still loadable
        cell = {"bytes": datasets.Value("binary"), "path": datasets.Value("string")}
        features = datasets.Features({"audio": cell, "id": datasets.Value("string")})
        ds = datasets.Dataset.from_dict({"audio": [], "id": []}, features=features).cast_column("audio", audio)
        ds.save_to_disk(str(dest), num_shards=1)
        return dest
    features = _features(first)

    def generate() -> Iterator[dict[str, Any]]:
        yield first
        yield from rows

    with tempfile.TemporaryDirectory(prefix=".hf-build-", dir=dest.parent) as tmp:
        # The audio column is a struct first and an Audio feature after: encoding rows as Audio
        # would need torchcodec.
        ds = datasets.Dataset.from_generator(
            generate, features=features, cache_dir=tmp, writer_batch_size=WRITER_BATCH_ROWS, fingerprint="export"
        )
        features["audio"] = audio
        # Dataset.cast writes the cast table batch by batch into the cache (cast_column would hold it
        # in memory); Arrow types are equal, only the feature metadata changes.
        ds = ds.cast(features, batch_size=WRITER_BATCH_ROWS, writer_batch_size=WRITER_BATCH_ROWS)
        with _save_batches(WRITER_BATCH_ROWS):
            ds.save_to_disk(str(dest), max_shard_size=MAX_SHARD_SIZE)
        del ds
    return dest
