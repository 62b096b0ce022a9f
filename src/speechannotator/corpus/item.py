"""One recording of a corpus: its id (which names its outputs), where its audio is, what is known of it.

An item is small and JSON-serialisable so that it can travel in a Ray dataset; the audio is loaded
by whoever annotates it (`load_item_audio`).
"""

from __future__ import annotations

import io
import json
from dataclasses import asdict, dataclass, fields
from functools import lru_cache
from pathlib import Path, PurePosixPath
from typing import Any

import numpy as np

from ..audio import Audio, AudioError, _decode, audio_from_array, load_audio

RESERVED_IDS = frozenset({"summary", "corpus"})  # OUT/summary.json and OUT/corpus.jsonl


@dataclass(frozen=True)
class CorpusItem:
    id: str
    path: str  # the audio file; for kind "hf" the dataset folder
    kind: str = "file"  # "file" or "hf" (a row of a Hugging Face datasets folder)
    offset: float = 0.0  # a Lhotse cut's start in the file (seconds)
    span: float | None = None  # a cut's duration; None: to the end of the file
    duration: float | None = None  # known in advance (manifest, file header): for progress and ETA
    language: str | None = None  # forces the ASR language
    num_speakers: int | None = None
    timeline: str | None = None  # a reference timeline file (fixed-timeline setting)
    split: str | None = None  # hf: the split of a DatasetDict
    index: int | None = None  # hf: the row
    column: str | None = None  # hf: the audio column

    @property
    def source(self) -> str:
        """Where the audio comes from, in words (recorded in the state and in exports)."""
        if self.kind == "hf":
            return f"{self.path}#{self.split or ''}/{self.index}"
        if self.offset or self.span is not None:
            end = "" if self.span is None else f"{self.offset + self.span:.3f}"
            return f"{self.path}#{self.offset:.3f}-{end}"
        return self.path

    def to_json(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v is not None and not (k == "offset" and v == 0.0)}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> CorpusItem:
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in d.items() if k in names})

    def dumps(self) -> str:
        return json.dumps(self.to_json(), ensure_ascii=False, sort_keys=True)


def check_id(rec: str) -> str | None:
    """Why `rec` cannot name an output (None when it can). Ids are relative POSIX paths."""
    if not rec or not rec.strip():
        return "empty recording id"
    if "\\" in rec or "\x00" in rec or any(ord(c) < 32 for c in rec):
        return f"recording id {rec!r} holds a backslash or a control character"
    p = PurePosixPath(rec)
    if p.is_absolute() or any(part in ("", ".", "..") for part in rec.split("/")):
        return f"recording id {rec!r} must be a relative path without '.' or '..' parts"
    if rec in RESERVED_IDS:
        return f"recording id {rec!r} is reserved (OUT/{rec}.json{'l' if rec == 'corpus' else ''} is the corpus's own)"
    return None


@lru_cache(maxsize=4)
def _hf_dataset(path: str, split: str | None, column: str):
    import datasets

    ds = datasets.load_from_disk(path)
    if split is not None:
        ds = ds[split]
    # Raw bytes and path: we decode with soundfile, the same way as files.
    return ds.cast_column(column, datasets.Audio(decode=False))


def _load_hf(item: CorpusItem) -> Audio:
    import soundfile as sf

    row = _hf_dataset(item.path, item.split, item.column or "audio")[int(item.index or 0)]
    cell = row[item.column or "audio"] or {}
    if cell.get("bytes"):
        try:
            data, sr = sf.read(io.BytesIO(cell["bytes"]), dtype="float32", always_2d=True)
        except Exception as exc:
            raise AudioError(f"audio bytes cannot be decoded ({exc.__class__.__name__})") from exc
        return audio_from_array(data, sr, item.source)
    if cell.get("path"):
        return load_audio(cell["path"])
    raise AudioError("the audio cell holds neither bytes nor a path")


def _load_span(item: CorpusItem) -> Audio:
    import soundfile as sf

    try:
        info = sf.info(item.path)
        start = int(round(item.offset * info.samplerate))
        frames = -1 if item.span is None else int(round(item.span * info.samplerate))
        data, sr = sf.read(item.path, start=start, frames=frames, dtype="float32", always_2d=True)
        return audio_from_array(data, sr, item.source)
    except (sf.LibsndfileError, RuntimeError):
        pass  # containers soundfile cannot seek in: decode all, then cut
    audio = load_audio(item.path)
    a = audio.span(item.offset, item.offset + item.span if item.span is not None else audio.duration)
    return audio_from_array(a, audio.sample_rate, item.source)


def load_item_audio(item: CorpusItem) -> Audio:
    """The item's audio as 16 kHz mono, or AudioError naming the cause."""
    if item.kind == "hf":
        return _load_hf(item)
    if item.offset or item.span is not None:
        return _load_span(item)
    return load_audio(item.path)


def load_item_native(item: CorpusItem) -> tuple[np.ndarray, int]:
    """The item's audio down-mixed to mono at its own sample rate (for exports at the source rate)."""
    import soundfile as sf

    if item.kind == "hf":
        cell = _hf_dataset(item.path, item.split, item.column or "audio")[int(item.index or 0)][item.column or "audio"]
        if cell.get("bytes"):
            data, sr = sf.read(io.BytesIO(cell["bytes"]), dtype="float32", always_2d=True)
        else:
            data, sr = _decode(Path(cell["path"]))
    else:
        data, sr = _decode(Path(item.path))
    mono = data.mean(axis=1) if data.shape[1] > 1 else data[:, 0]
    a = int(round(item.offset * sr))
    b = len(mono) if item.span is None else a + int(round(item.span * sr))
    return np.clip(mono[a:b], -1.0, 1.0).astype(np.float32), int(sr)
