"""Calibration of acoustic statistics into ordinal classes -2..2 for the rules backend.

The prior-evidence package will provide ``priors.calibration`` with the same two functions;
when it exists it wins (the import below is the one line to change). Until then these
constants are the single place where the rules backend's thresholds live.

Sources for the constants: adult speaking F0 is roughly 85-180 Hz for male and 165-255 Hz
for female voices (centre ~120 / ~205 Hz); class edges sit at +-1.5 and +-4 semitones around
the per-gender centre, so "中等" covers about a third of typical speakers. Mandarin read and
conversational speech runs about 4-5.5 characters per second; English about 3.6-5 syllables
per second.
"""

from __future__ import annotations

import math

# Per-gender F0 centre in Hz; "unknown" sits between the two populations.
PITCH_CENTRE_HZ: dict[str, float] = {"male": 120.0, "female": 205.0, "unknown": 160.0}
# Semitone distance from the centre at which a class starts (|st| >= edge).
PITCH_EDGES_ST: tuple[float, float] = (1.5, 4.0)
# Speaking-rate bins: (very slow <, slow <, fast >=, very fast >=) in units per second.
RATE_BINS: dict[str, tuple[float, float, float, float]] = {
    "zh": (3.0, 4.0, 5.5, 6.8),  # characters per second
    "en": (2.8, 3.6, 5.0, 6.0),  # syllables per second
}
# Pitch variability (std in semitones): flat below the first, lively above the second.
PITCH_STD_EDGES_ST: tuple[float, float] = (1.5, 3.5)
# Final F0 movement (semitones over the last 30 % of voiced frames).
FINAL_FALL_ST: float = -1.5
FINAL_RISE_ST: float = 1.5
# Voice quality: HNR below this is breathy/hoarse, above the second very clear.
HNR_EDGES_DB: tuple[float, float] = (10.0, 18.0)
JITTER_HIGH: float = 0.02
SHIMMER_HIGH: float = 0.10
# Scene: DNSMOS background score below which the background is intrusive; SNR edges.
DNSMOS_BAK_NOISY: float = 3.0
SNR_NOISY_DB: float = 15.0
MUSIC_PROB: float = 0.5
LAUGHTER_PROB: float = 0.5
BREATH_PROB: float = 0.6
REVERB_HIGH: float = 0.6
REVERB_MIN_RELIABILITY: float = 0.5
# Noise that is audible but this far below the speech is "faint", without naming a source.
SNR_FAINT_DB: float = 20.0
DNSMOS_BAK_FAINT: float = 2.5
# A pause inside the transcript worth a <停顿>/<pause> tag (seconds between words).
TAG_PAUSE_S: float = 0.5


def _classify_st(st: float) -> int:
    lo, hi = PITCH_EDGES_ST
    if st >= hi:
        return 2
    if st >= lo:
        return 1
    if st <= -hi:
        return -2
    if st <= -lo:
        return -1
    return 0


def _pitch_class(hz: float, gender: str | None) -> int:
    """F0 in Hz -> -2 (very low) .. 2 (very high) relative to the speaker's gender norm."""
    centre = PITCH_CENTRE_HZ.get(gender or "unknown", PITCH_CENTRE_HZ["unknown"])
    if not hz or hz <= 0 or not math.isfinite(hz):
        raise ValueError(f"pitch must be a positive number of Hz, got {hz!r}")
    return _classify_st(12.0 * math.log2(hz / centre))


def _rate_class(units_per_s: float, language: str) -> int:
    """Speaking rate -> -2 (very slow) .. 2 (very fast) with the language's bins."""
    vs, s, f, vf = RATE_BINS["zh" if (language or "").startswith("zh") else "en"]
    if units_per_s >= vf:
        return 2
    if units_per_s >= f:
        return 1
    if units_per_s < vs:
        return -2
    if units_per_s < s:
        return -1
    return 0


try:  # the priors package's calibration wins once it lands (one line to swap)
    from ...priors.calibration import pitch_class, rate_class  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - depends on which branches are merged
    pitch_class, rate_class = _pitch_class, _rate_class


def semitones(hz: float, ref_hz: float) -> float:
    return 12.0 * math.log2(hz / ref_hz) if hz > 0 and ref_hz > 0 else 0.0

# Minimum reliability of scene.noise_type before its source ("babble") is named.
NOISE_TYPE_MIN_RELIABILITY = 0.75
