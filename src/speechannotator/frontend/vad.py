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


def detect_speech(samples: np.ndarray, sample_rate: int, cfg: VadConfig | None = None) -> list[SpeechRegion]:
    """Speech regions of a 16 kHz waveform.

    Silero's default 400 ms padding merges neighbouring turns (MODELS.md), so the pad is
    small and the minimum silence short: diarization needs the gaps between turns.
    """
    from faster_whisper.vad import VadOptions, get_speech_timestamps

    cfg = cfg or VadConfig()
    opts = VadOptions(
        threshold=cfg.threshold,
        min_speech_duration_ms=cfg.min_speech_ms,
        min_silence_duration_ms=cfg.min_silence_ms,
        speech_pad_ms=cfg.speech_pad_ms,
    )
    stamps = get_speech_timestamps(samples, vad_options=opts, sampling_rate=sample_rate)
    return [SpeechRegion(s["start"] / sample_rate, s["end"] / sample_rate) for s in stamps]
