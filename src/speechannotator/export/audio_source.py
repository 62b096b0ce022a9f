"""A recording's audio for exports that write audio: 16 kHz (as annotated) or the source's own rate."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np

from ..audio import SAMPLE_RATE, _decode, load_audio
from ..corpus.item import CorpusItem, _hf_dataset, load_item_audio


def _native(item: CorpusItem) -> tuple[np.ndarray, int]:
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


def recording_samples(item: CorpusItem, rate: str = "16000") -> tuple[np.ndarray, int]:
    """(mono float32 samples, sample rate); `rate` is "16000" or "source"."""
    if rate == "source":
        return _native(item)
    if rate != str(SAMPLE_RATE):
        raise ValueError(f"clip rate must be {SAMPLE_RATE} or 'source', got {rate!r}")
    audio = load_item_audio(item) if item.kind == "hf" or item.offset or item.span is not None else load_audio(item.path)
    return audio.samples, audio.sample_rate


def cut(samples: np.ndarray, sr: int, start: float, end: float) -> np.ndarray:
    return samples[max(0, int(round(start * sr))):min(len(samples), int(round(end * sr)))]
