"""Voice activity detection with the Silero v6 ONNX model shipped inside faster-whisper."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..config import VadConfig


@dataclass(frozen=True)
class SpeechRegion:
    start: float  # seconds
    end: float

    @property
    def duration(self) -> float:
        return self.end - self.start


def _detect_block(samples: np.ndarray, sample_rate: int, cfg: VadConfig) -> list[SpeechRegion]:
    from faster_whisper.vad import VadOptions, get_speech_timestamps

    opts = VadOptions(
        threshold=cfg.threshold,
        min_speech_duration_ms=cfg.min_speech_ms,
        min_silence_duration_ms=cfg.min_silence_ms,
        speech_pad_ms=cfg.speech_pad_ms,
    )
    stamps = get_speech_timestamps(samples, vad_options=opts, sampling_rate=sample_rate)
    return [SpeechRegion(s["start"] / sample_rate, s["end"] / sample_rate) for s in stamps]


def detect_speech(
    samples: np.ndarray, sample_rate: int, cfg: VadConfig | None = None, block_s: float = 600.0
) -> list[SpeechRegion]:
    """Speech regions of a 16 kHz waveform.

    Silero's default 400 ms padding merges neighbouring turns (docs/models.md), so the pad is
    small and the minimum silence short: diarization needs the gaps between turns.
    The model runs over blocks of `block_s` (each with 2 s of left context, so the recurrent
    state has settled at the block start): faster-whisper's VAD copies its input about
    twice, which on a whole 2-hour file would be ~1 GB beyond the audio. Regions cut at a
    block boundary are joined again.
    """
    cfg = cfg or VadConfig()
    block = int(block_s * sample_rate)
    if len(samples) <= block + 2 * sample_rate:
        return _detect_block(samples, sample_rate, cfg)
    ctx = 2 * sample_rate
    regions: list[SpeechRegion] = []
    for a in range(0, len(samples), block):
        b = min(len(samples), a + block)
        lo = max(0, a - ctx)
        t0, t_a, t_b = lo / sample_rate, a / sample_rate, b / sample_rate
        for r in _detect_block(samples[lo:b], sample_rate, cfg):
            start, end = max(t_a, t0 + r.start), min(t_b, t0 + r.end)
            if end <= start:
                continue
            if regions and start - regions[-1].end <= cfg.min_silence_ms / 1000 and abs(start - t_a) < 1e-6:
                regions[-1] = SpeechRegion(regions[-1].start, end)  # one region cut by the block edge
            else:
                regions.append(SpeechRegion(start, end))
    return [r for r in regions if r.duration * 1000 >= min(cfg.min_speech_ms, 100)]
