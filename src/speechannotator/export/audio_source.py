"""A recording's audio for exports that write audio, and how each segment's clip is cut from it.

Clips come at 16 kHz (as annotated), 22.05, 24 or 44.1 kHz (resampled from the source's own rate)
or at the source's rate; optionally with their edges widened or trimmed, loudness-normalised to a
BS.1770 target (pyloudnorm) and padded with silence. One recording is held in memory at a time.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import asdict, dataclass

import numpy as np

from ..audio import SAMPLE_RATE, resample
from ..corpus.item import CorpusItem, load_item_audio, load_item_native
from .corpus_view import ExportRecording, ExportSegment

CLIP_RATES: tuple[str, ...] = ("16000", "22050", "24000", "44100", "source")
MIN_CLIP_S = 0.05  # trimming never leaves less than this
LOUDNESS_MIN_S = 0.4  # BS.1770 gating blocks are 400 ms: a shorter clip keeps its level
PEAK_LIMIT = 0.999  # a gain that would clip is lowered to keep the peak here


@dataclass(frozen=True)
class ClipOptions:
    rate: str = "16000"  # one of CLIP_RATES
    loudness: float | None = None  # target integrated loudness in LUFS (None: as recorded)
    edges: float = 0.0  # seconds: > 0 widens each edge with the recording's audio, < 0 trims it
    pad: float = 0.0  # seconds of silence added at each end

    def check(self) -> None:
        if self.rate not in CLIP_RATES:
            raise ValueError(f"clip rate must be one of {', '.join(CLIP_RATES)}, got {self.rate!r}")
        if self.loudness is not None and not -70.0 <= self.loudness <= 0.0:
            raise ValueError(f"--loudness {self.loudness:g}: a BS.1770 target lies between -70 and 0 LUFS")
        if self.pad < 0:
            raise ValueError(f"--pad {self.pad:g}: seconds of silence must be >= 0")

    def to_json(self) -> dict:
        return asdict(self)


def recording_samples(item: CorpusItem, rate: str = "16000") -> tuple[np.ndarray, int]:
    """(mono float32 samples, sample rate) at `rate` (see CLIP_RATES)."""
    if rate == str(SAMPLE_RATE):
        audio = load_item_audio(item)
        return audio.samples, audio.sample_rate
    if rate not in CLIP_RATES:
        raise ValueError(f"clip rate must be one of {', '.join(CLIP_RATES)}, got {rate!r}")
    samples, sr = load_item_native(item)
    if rate == "source":
        return samples, sr
    target = int(rate)
    return np.clip(resample(samples, sr, target), -1.0, 1.0), target


def cut(samples: np.ndarray, sr: int, start: float, end: float) -> np.ndarray:
    return samples[max(0, int(round(start * sr))) : min(len(samples), int(round(end * sr)))]


def clip_span(seg: ExportSegment, total_s: float, edges: float) -> tuple[float, float]:
    """The clip's (start, end) in the recording: the segment with its edges moved by `edges`."""
    a, b = seg.start - edges, seg.end + edges
    if b - a < MIN_CLIP_S:
        mid = (seg.start + seg.end) / 2
        a, b = mid - MIN_CLIP_S / 2, mid + MIN_CLIP_S / 2
    return round(max(0.0, a), 3), round(min(total_s, b), 3)


def normalize_loudness(clip: np.ndarray, sr: int, target: float) -> np.ndarray:
    """The clip at `target` LUFS (BS.1770-4 via pyloudnorm); too short or silent clips keep their level."""
    if len(clip) < LOUDNESS_MIN_S * sr:
        return clip
    import pyloudnorm

    measured = pyloudnorm.Meter(sr).integrated_loudness(clip.astype(np.float64))
    if not np.isfinite(measured):
        return clip
    gain = 10.0 ** ((target - measured) / 20.0)
    peak = float(np.max(np.abs(clip))) * gain
    if peak > PEAK_LIMIT:
        gain *= PEAK_LIMIT / peak
    return (clip * gain).astype(np.float32)


def segment_clips(
    view: list[ExportRecording], options: ClipOptions | str = "16000"
) -> Iterator[tuple[ExportRecording, ExportSegment, np.ndarray, int, tuple[float, float]]]:
    """(recording, segment, clip samples, rate, clip span) per segment, loading each recording once."""
    opts = ClipOptions(rate=options) if isinstance(options, str) else options
    opts.check()
    for rec in view:
        if not rec.segments:
            continue
        samples, sr = recording_samples(rec.item, opts.rate)
        total = len(samples) / sr
        for seg in rec.segments:
            span = clip_span(seg, total, opts.edges)
            clip = cut(samples, sr, *span)
            if opts.loudness is not None:
                clip = normalize_loudness(clip, sr, opts.loudness)
            if opts.pad > 0:
                clip = np.pad(clip, int(round(opts.pad * sr)))
            yield rec, seg, clip, sr, span
        del samples
