"""A recording's audio for exports that write audio: 16 kHz (as annotated) or the source's own rate."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from ..audio import SAMPLE_RATE
from ..corpus.item import CorpusItem, load_item_audio, load_item_native
from .corpus_view import ExportRecording, ExportSegment


def recording_samples(item: CorpusItem, rate: str = "16000") -> tuple[np.ndarray, int]:
    """(mono float32 samples, sample rate); `rate` is "16000" or "source"."""
    if rate == "source":
        return load_item_native(item)
    if rate != str(SAMPLE_RATE):
        raise ValueError(f"clip rate must be {SAMPLE_RATE} or 'source', got {rate!r}")
    audio = load_item_audio(item)
    return audio.samples, audio.sample_rate


def cut(samples: np.ndarray, sr: int, start: float, end: float) -> np.ndarray:
    return samples[max(0, int(round(start * sr))) : min(len(samples), int(round(end * sr)))]


def segment_clips(
    view: list[ExportRecording], rate: str = "16000"
) -> Iterator[tuple[ExportRecording, ExportSegment, np.ndarray, int]]:
    """(recording, segment, the segment's samples, rate) for every segment, loading each recording once."""
    for rec in view:
        if not rec.segments:
            continue
        samples, sr = recording_samples(rec.item, rate)
        for seg in rec.segments:
            yield rec, seg, cut(samples, sr, seg.start, seg.end), sr
