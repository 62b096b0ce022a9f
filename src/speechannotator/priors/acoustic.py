"""DataSpeech-style acoustic statistics of one segment (stage 7, enhanced audio).

Pitch: pyworld DIO + StoneMask (within 1 % of Praat, RTF 0.008, docs/models.md). Loudness:
pyloudnorm (ITU BS.1770). Energy, pauses and speech span: 10 ms frame energies with a
threshold relative to the segment's own peak and noise floor. Speaking rate: transcript
units (chars for zh, syllables otherwise) over the speech span.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from functools import cache

import numpy as np

from speechannotator.priors.textunits import count_units

SR = 16000
HOP_S = 0.010
FRAME_PERIOD_MS = 5.0
# 70 Hz floor: a 55 Hz floor let creaky phrase endings (vocal fry, 55-70 Hz) pull the
# LibriVox reader's median 20 Hz under pYIN's; Praat advises 75 Hz for male voices.
F0_FLOOR, F0_CEIL = 70.0, 600.0
PAUSE_MIN_S = 0.150  # a silence this long counts as pause (names.py)
PAUSE_COUNT_MIN_S = 0.300
LONG_PAUSE_S = 0.700
EPS = 1e-10


def frame_db(x: np.ndarray, hop: int = int(SR * HOP_S), win: int = int(SR * 0.025)) -> np.ndarray:
    """Frame RMS energy in dBFS, 25 ms windows every 10 ms."""
    if len(x) < win:
        x = np.pad(x, (0, win - len(x)))
    fr = frames_of(x, win, hop).astype(np.float64)
    return 10.0 * np.log10(np.mean(fr * fr, axis=1) + EPS)


def frames_of(x: np.ndarray, win: int, hop: int) -> np.ndarray:
    """(1 + (len(x) - win) // hop, win) frames of x, a strided view (no index array, no copy:
    the frame energies of every segment are read several times)."""
    return np.lib.stride_tricks.sliding_window_view(x, win)[::hop]


def speech_mask(db: np.ndarray) -> tuple[np.ndarray, float]:
    """Frames that hold speech: above the midpoint of floor and peak, at most 35 dB below peak.

    Returns (mask, threshold_db). The floor is the 10th percentile of frame energy, so
    a segment with real pauses separates cleanly and a continuous one keeps most frames.
    """
    peak = float(np.percentile(db, 98))
    floor = float(np.percentile(db, 10))
    thr = max(peak - 35.0, min(floor + 0.5 * (peak - floor), peak - 12.0))
    return db > thr, thr


def _runs(mask: np.ndarray) -> list[tuple[int, int]]:
    """(start, end) index runs where mask is True."""
    if not mask.any():
        return []
    d = np.diff(np.concatenate([[0], mask.astype(np.int8), [0]]))
    return list(zip(np.flatnonzero(d == 1), np.flatnonzero(d == -1)))


@dataclass
class PitchTrack:
    f0: np.ndarray  # Hz, 0 where unvoiced
    times: np.ndarray  # s

    @property
    def voiced(self) -> np.ndarray:
        return self.f0[self.f0 > 0]


def track_pitch(x: np.ndarray) -> PitchTrack:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pyworld imports pkg_resources
        import pyworld

    xd = np.ascontiguousarray(x, dtype=np.float64)
    f0, t = pyworld.dio(xd, SR, f0_floor=F0_FLOOR, f0_ceil=F0_CEIL, frame_period=FRAME_PERIOD_MS)
    f0 = pyworld.stonemask(xd, f0, t, SR)
    return PitchTrack(f0=np.asarray(f0), times=np.asarray(t))


# A telephone band (300-3400 Hz) removes the fundamental of most voices, and DIO, which looks for
# the lowest strong sinusoid, then follows the 2nd or 3rd harmonic: telephone men measure 300-350 Hz
# (real voices through real_voices.telephone: nl_m 137 -> 332 Hz, ve9qrp 100 -> 355 Hz). Below this
# ratio of 70-250 Hz to 300-1000 Hz power the median F0 is no gender evidence (priors/gender.py).
# Chosen on the training voices of scripts/build_gender_embedding.py: clean -22 to +4 dB (mmt1, an
# 8 kHz codec2 source, lowest), through the telephone band -38 to -21 dB for men.
MISSING_FUNDAMENTAL_DB = -20.0


def missing_fundamental(x: np.ndarray) -> bool:
    """True when the voice band below 250 Hz is so much weaker than 300-1000 Hz that the
    fundamental was filtered away (telephone band)."""
    if len(x) < 1024:
        return False
    from scipy.signal import welch

    f, p = welch(np.asarray(x, np.float64), SR, nperseg=1024)
    low = float(p[(f >= 70) & (f < 250)].sum())
    mid = float(p[(f >= 300) & (f < 1000)].sum())
    return mid > 0 and 10 * math.log10(max(low, EPS * mid) / mid) < MISSING_FUNDAMENTAL_DB


def _semitones(f: np.ndarray, ref: float) -> np.ndarray:
    return 12.0 * np.log2(np.maximum(f, EPS) / ref)


@dataclass
class AcousticStats:
    """Statistics of one segment; None where the input does not support a value."""

    duration: float
    values: dict[str, float | str | None] = field(default_factory=dict)
    reliability: dict[str, float] = field(default_factory=dict)
    voiced_s: float = 0.0
    speech_s: float = 0.0


def pitch_stats(track: PitchTrack, out: AcousticStats) -> None:
    f = track.f0
    voiced = f > 0
    n_v = int(voiced.sum())
    v = out.values
    v["pitch.voiced_ratio"] = float(n_v / len(f)) if len(f) else 0.0
    out.reliability["pitch.voiced_ratio"] = 1.0
    out.voiced_s = n_v * FRAME_PERIOD_MS / 1000.0
    if n_v < 10:  # < 50 ms voiced: no pitch statistics
        return
    fv = f[voiced]
    tv = track.times[voiced]
    med = float(np.median(fv))
    # Octave errors and creak (DIO halving/doubling) would dominate std, range and slopes:
    # keep frames within 0.85 octave of the median, the usual F0 post-cleaning.
    keep = (fv > med / 1.8) & (fv < med * 1.8)
    if keep.sum() >= 10:
        fv, tv = fv[keep], tv[keep]
        n_v = int(keep.sum())
    st = _semitones(fv, med)
    rel = float(min(1.0, out.voiced_s / 1.0))  # 1 s of voicing gives stable statistics
    v["pitch.mean_hz"] = float(np.mean(fv))
    v["pitch.median_hz"] = med
    v["pitch.std_hz"] = float(np.std(fv))
    v["pitch.std_semitones"] = float(np.std(st))
    p5, p95 = np.percentile(fv, [5, 95])
    v["pitch.range_hz"] = float(p95 - p5)
    v["pitch.range_semitones"] = float(12.0 * math.log2(p95 / p5))
    if np.ptp(tv) > 0.2:
        v["pitch.slope_semitones_per_s"] = float(np.polyfit(tv, st, 1)[0])
    # The end is the last phrase's: voiced frames after the last pause. The last 30 % of all
    # voiced frames spanned several phrases on sparse voicing (ve9qrp's HF radio: 1.1-4.5 s of a
    # 4.6 s turn), and a fit across the pauses read a final 0.1 s blip as a 7 st rise.
    cuts = np.flatnonzero(np.diff(tv) >= PAUSE_COUNT_MIN_S) + 1
    phrases = [(a, b) for a, b in zip([0, *cuts], [*cuts, n_v]) if b - a >= 10]  # >= 50 ms voiced
    a, b = phrases[-1] if phrases else (0, 0)
    k = max(5, int(0.3 * (b - a)))
    tail_t, tail_st = tv[a:b][-k:], st[a:b][-k:]
    if len(tail_t) >= 5 and np.ptp(tail_t) > 0.05:
        slope = float(np.polyfit(tail_t, tail_st, 1)[0])
        v["pitch.final_slope_semitones"] = slope * float(np.ptp(tail_t))
    for name in list(v):
        if name.startswith("pitch.") and name != "pitch.voiced_ratio":
            out.reliability[name] = rel


def loudness_lufs(x: np.ndarray) -> float | None:
    import pyloudnorm

    if len(x) < int(0.4 * SR):  # BS.1770 gating blocks are 400 ms
        x = np.tile(x, int(np.ceil(0.41 * SR / max(1, len(x))))) if len(x) else x
    if len(x) < int(0.4 * SR):
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        val = pyloudnorm.Meter(SR).integrated_loudness(np.asarray(x, dtype=np.float64))
    return float(val) if math.isfinite(val) else None


def pause_and_energy(x: np.ndarray, out: AcousticStats) -> tuple[np.ndarray, float]:
    """Energy, pause and speech-span statistics. Returns (speech mask, threshold)."""
    db = frame_db(x)
    mask, thr = speech_mask(db)
    v, r = out.values, out.reliability
    v["energy.rms_db"] = float(10 * np.log10(np.mean(np.asarray(x, np.float64) ** 2) + EPS))
    r["energy.rms_db"] = 1.0
    if mask.sum() >= 3:
        v["energy.std_db"] = float(np.std(db[mask]))
        r["energy.std_db"] = float(min(1.0, mask.sum() * HOP_S / 1.0))
    runs = _runs(mask)
    min_pause = int(round(PAUSE_MIN_S / HOP_S))
    silent = _runs(~mask)
    if runs:
        first, last = runs[0][0], runs[-1][1]
        internal = [(b - a) * HOP_S for a, b in silent if a >= first and b <= last]
        # Pauses between the first and last speech frame: the silence a segment's edges hold
        # (the gap to the next turn) is no pause in its speech.
        pause_frames = sum(b - a for a, b in silent if a >= first and b <= last and b - a >= min_pause)
        v["pause.ratio"] = float(pause_frames / max(1, last - first))
        out.speech_s = (last - first) * HOP_S
        v["pause.count"] = int(sum(1 for p in internal if p >= PAUSE_COUNT_MIN_S))
        v["pause.longest_s"] = float(max(internal, default=0.0))
        v["events.long_pause"] = int(sum(1 for p in internal if p >= LONG_PAUSE_S))
        v["pause.internal_s"] = float(sum(p for p in internal if p >= PAUSE_MIN_S))
    for name in ("pause.ratio", "pause.count", "pause.longest_s", "events.long_pause", "pause.internal_s"):
        if name in v:
            r[name] = 0.8
    return mask, thr


def speaking_rate(text: str, language: str, out: AcousticStats, min_units: int = 1) -> None:
    """Units over the speech span; none below ``min_units`` (``Calibration.rate_min_units``: a
    one-word turn has no rate, and its 1.6 syllables/s pulled arousal and the speaker's rate)."""
    units, unit = count_units(text, language)
    if units < max(1, min_units) or out.speech_s <= 0.05:
        return
    v, r = out.values, out.reliability
    v["rate.units_per_s"] = units / out.speech_s
    v["rate.unit"] = unit
    art = out.speech_s - float(out.values.get("pause.internal_s") or 0.0)
    if art > 0.05:
        v["rate.articulation_units_per_s"] = units / art
    # Few units or a short span make the rate noisy (one unit of 5 is 20 %).
    rel = min(1.0, units / 10.0) * min(1.0, out.speech_s / 1.5)
    for name in ("rate.units_per_s", "rate.unit", "rate.articulation_units_per_s"):
        if name in v:
            r[name] = rel


def noise_power(original: np.ndarray, enhanced: np.ndarray) -> float:
    """Background power: the lower of two estimates that fail in opposite ways.

    (1) the enhancement residual ``original - enhanced`` (DeepFilterNet removes noise) over
    frames where the enhanced signal has no speech; it overestimates on clean speech, where
    the residual is the enhancer's distortion of soft speech sounds. (2) the 5th
    percentile of the original's frame energy, the classic noise floor (125 ms of pauses in
    a 2.5 s segment suffice); it overestimates when a segment has no pauses. Measured on clean
    espeak, LibriVox and mixes at 5-20 dB.
    """
    o_db = frame_db(original)
    floor = float(10 ** (np.percentile(o_db, 5) / 10))
    resid = np.asarray(original, np.float64) - np.asarray(enhanced, np.float64)
    if float(np.max(np.abs(resid))) < 1e-6:
        return floor
    r_db = frame_db(resid)
    emask, _ = speech_mask(frame_db(enhanced))
    n = min(len(r_db), len(emask))
    quiet = r_db[:n][~emask[:n]]
    if len(quiet) < 10:
        return floor
    return min(floor, float(np.mean(10 ** (quiet / 10))))


def snr_from_residual(original: np.ndarray, enhanced: np.ndarray, mask: np.ndarray) -> float | None:
    """Speech-to-noise ratio: enhanced speech power (speech frames) over the background power."""
    if len(original) != len(enhanced) or len(original) < int(0.1 * SR):
        return None
    e_db = frame_db(enhanced)
    n = min(len(e_db), len(mask))
    sp = mask[:n]
    if sp.sum() < 3:
        return None
    speech_p = float(np.mean(10 ** (e_db[:n][sp] / 10)))
    noise_p = noise_power(original, enhanced)
    return float(np.clip(10 * np.log10((speech_p + EPS) / (noise_p + EPS)), -20.0, 80.0))


def voice_quality_parselmouth(x: np.ndarray) -> dict[str, float]:
    """HNR, jitter and shimmer from Praat when praat-parselmouth (GPLv3, optional) is installed."""
    try:
        import parselmouth
        from parselmouth.praat import call
    except ImportError:
        return {}
    snd = parselmouth.Sound(np.asarray(x, np.float64), SR)
    out: dict[str, float] = {}
    try:
        hnr = call(snd.to_harmonicity_cc(0.01, 75, 0.1, 1.0), "Get mean", 0, 0)
        pp = call(snd, "To PointProcess (periodic, cc)", 75, 600)
        jit = call(pp, "Get jitter (local)", 0, 0, 0.0001, 0.02, 1.3)
        shim = call([snd, pp], "Get shimmer (local)", 0, 0, 0.0001, 0.02, 1.3, 1.6)
    except Exception:
        return out
    for k, val in (("voice.hnr_db", hnr), ("voice.jitter", jit), ("voice.shimmer", shim)):
        if val is not None and math.isfinite(val):
            out[k] = float(val)
    return out


@cache
def _hann_autocorr(win: int) -> tuple[np.ndarray, np.ndarray]:
    """The Hann window and its autocorrelation (lags 0..win-1), the same for every frame."""
    hann = np.hanning(win)
    hann.flags.writeable = False
    wac = np.correlate(hann, hann, mode="full")[win - 1 :]
    wac.flags.writeable = False
    return hann, wac


def hnr_autocorr(x: np.ndarray, track: PitchTrack) -> float | None:
    """HNR (dB) from the normalized autocorrelation peak at the pitch period (Boersma 1993).

    Apache-licensed fallback for Praat's cross-correlation HNR: per voiced 40 ms frame,
    r = peak of the normalized autocorrelation near 1/F0, HNR = 10 log10(r / (1 - r));
    the segment value is the median over frames.
    """
    win = int(0.04 * SR)
    hann, wac = _hann_autocorr(win)
    vals = []
    step = max(1, int(0.04 / (FRAME_PERIOD_MS / 1000)))  # a frame every 40 ms is plenty for a median
    for t, f in zip(track.times[::step], track.f0[::step]):
        if f <= 0:
            continue
        a = int(t * SR) - win // 2
        if a < 0 or a + win > len(x):
            continue
        fr = np.asarray(x[a : a + win], np.float64)
        fr = (fr - fr.mean()) * hann
        ac = np.correlate(fr, fr, mode="full")[win - 1 :]
        if ac[0] <= EPS:
            continue
        nac = ac / ac[0] / np.maximum(wac / wac[0], 1e-3)
        lag = SR / f
        lo, hi = int(lag * 0.9), min(len(nac) - 1, int(lag * 1.1) + 1)
        if hi <= lo:
            continue
        r = float(np.clip(np.max(nac[lo:hi]), 1e-4, 0.9999))
        vals.append(10 * math.log10(r / (1 - r)))
    return float(np.median(vals)) if len(vals) >= 3 else None


def segment_stats(
    enhanced: np.ndarray, original: np.ndarray, text: str, language: str, *, praat: bool = True, min_units: int = 1
) -> tuple[AcousticStats, PitchTrack]:
    """All acoustic statistics of one segment (enhanced and original spans, same length)."""
    out = AcousticStats(duration=len(enhanced) / SR)
    if len(enhanced) < int(0.05 * SR):
        return out, PitchTrack(np.zeros(0), np.zeros(0))
    track = track_pitch(enhanced)
    pitch_stats(track, out)
    lufs = loudness_lufs(enhanced)
    if lufs is not None:
        out.values["loudness.lufs"] = lufs
        out.reliability["loudness.lufs"] = 1.0 if len(enhanced) >= int(0.4 * SR) else 0.5
    mask, _ = pause_and_energy(enhanced, out)
    speaking_rate(text, language, out, min_units)
    snr = snr_from_residual(original, enhanced, mask)
    if snr is not None:
        out.values["snr.db"] = snr
        out.reliability["snr.db"] = 0.7
    vq = voice_quality_parselmouth(enhanced) if praat else {}
    if vq:
        out.values.update(vq)
        out.reliability.update(dict.fromkeys(vq, 0.8))
    elif out.voiced_s >= 0.2:
        hnr = hnr_autocorr(enhanced, track)
        if hnr is not None:
            out.values["voice.hnr_db"] = hnr
            out.reliability["voice.hnr_db"] = 0.6
    return out, track
