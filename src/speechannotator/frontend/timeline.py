"""Speaker-aware timeline recovery (stages 3-6): VAD -> diarization -> segment table -> ASR -> refine.

One entry point shared by the pipeline and the timeline benchmark. Memory: every stage works
on views of the waveform and per-region / per-span buffers, so beyond the audio itself it
holds only the fbank, the segmentation chunks' activities, window embeddings (192 floats per
0.75 s of each local speaker) and the segment list.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ..config import Config
from ..heap import between_stages
from ..records import Segment


@dataclass
class TimelineResult:
    segments: list[Segment]
    num_speakers: int
    info: dict = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)


def recover_timeline(
    samples: np.ndarray, sr: int, config: Config | None = None, on_stage: Callable[[str], None] | None = None
) -> TimelineResult:
    from .diarize import run_diarization
    from .refine import refine_segments
    from .segment_table import build_segments, rekey
    from .transcribe import transcribe
    from .vad import detect_speech

    cfg = config or Config()
    notify = on_stage or (lambda stage: None)
    timings: dict[str, float] = {}

    def clock(name: str, t0: float) -> None:
        timings[name] = round(time.perf_counter() - t0, 3)
        between_stages()  # the step's freed model buffers: kept for the next step, or back (heap.py)

    t = time.perf_counter()
    notify("vad")
    regions = detect_speech(samples, sr, cfg.vad)
    clock("vad", t)
    t = time.perf_counter()
    notify("diarize")
    dia = run_diarization(samples, sr, regions, cfg.diarization)
    clock("diarize", t)
    segments = build_segments(dia.turns, samples, sr, max_len=cfg.max_segment_s, min_len=cfg.min_segment_s)
    t = time.perf_counter()
    notify("transcribe")
    asr_stats = transcribe(samples, sr, segments, cfg.asr)
    clock("transcribe", t)
    word_splits = 0
    if cfg.diarization.word_changes and dia.space is not None:
        from .word_changes import split_at_word_changes

        t = time.perf_counter()
        segments, word_splits = split_at_word_changes(segments, samples, sr, dia.space, cfg.diarization)
        clock("word_changes", t)
    t = time.perf_counter()
    notify("refine")
    refine_stats = refine_segments(segments, cfg)
    clock("refine", t)
    segments = rekey(segments)
    if dia.windows is not None:  # each segment's voice from the diarizer's windows (the gender vote reads it)
        for seg in segments:
            v = dia.windows.mean_inside(seg.start, seg.end, seg.speaker)
            seg.voice = None if v is None else [round(float(e), 6) for e in v]
    info = {
        "num_speakers": dia.num_speakers,
        "speech_regions": len(regions),
        "windows": dia.num_windows,
        "word_change_splits": word_splits,
        "overlap_s": round(sum(tu.overlap_s for tu in dia.turns), 2),
        "diarization_backend": cfg.diarization.backend,
        "asr_backend": cfg.asr.backend,
        **asr_stats,
        **refine_stats,
    }
    return TimelineResult(segments, dia.num_speakers, info, timings)
