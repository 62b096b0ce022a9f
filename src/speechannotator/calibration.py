"""The calibration table: every threshold that turns a measured statistic into a label class.

One home for the numbers the prior extractors (``pitch.class``, ``rate.class``, the gender pitch
vote), the rules backend and finalize's pause tags use. Each parameter is declared with its
name, range and default (``Calibration`` fields, like pyannote's tunable pipeline parameters)
and is reachable from the settings as ``[calibration]`` (``Config.calibration``); the defaults
are the values the pipeline has run with and the measurements below justify.

Pitch. Mean speaking F0 of adults: men about 100-130 Hz, women about 190-225 Hz across the
studies collected in Baken & Orlikoff, *Clinical Measurement of Speech and Voice* (2000,
ch. 5); Peterson & Barney (1952) vowels: men 132 Hz, women 223 Hz; Hillenbrand et al.
(1995, JASA 97:3099): men 138 Hz, women 227 Hz (citation-form vowels run a little high).
The centers are 118 Hz (men) and 208 Hz (women): connected speech sits below the citation-form
vowel values; about 10 semitones apart. The spread of speaker means within a gender is about
2-3 semitones (SD), e.g. 17-20 Hz around 120 Hz for men in Baken & Orlikoff's tables:
"normal" is within +-2.5 st (about one SD) of the center, "very" beyond +-6 st. With the
gender unknown the bins widen by 4.5 st (half the male-female distance) around 160 Hz.
The male/female boundary of the gender pitch vote is 165 Hz: near the geometric mean of the
centers (157 Hz), moved up to sit midway (in semitones) between the highest male (137 Hz,
espeak -p 80) and the lowest female (173 Hz, -p 50) voice measured in the priors benchmark
(benchmarks/priors_bench.py). Checked: the LibriVox reader measures 81-104 Hz (pYIN agrees
within 3 Hz), a low male voice; WORLD-shifted voices at the bin centers are classed right.

Rate. Syllable rates of read speech (Pellegrino, Coupe & Marsico 2011, *Language* 87(3):
539-558): English 6.19, German 5.97, Mandarin 5.18, French 7.18, Italian 6.99, Spanish 7.82,
Japanese 7.84 syllables/s, pauses excluded. ``rate.units_per_s`` keeps a segment's internal
pauses (it divides by the span from first to last speech frame), which lowers rates by the
pause share (10-20 % in read speech): LibriVox readers measure 3.6-4.7 syll/s this way and
espeak-ng at its default 175 wpm about 4.3 syll/s, so a language's "normal" center is its
literature rate times 0.75 (English 4.6 syll/s, Mandarin 3.9 chars/s; the Mandarin value is
not yet checked against a recording with a transcript). "normal" is within +-25 %, "very"
beyond -40 % / +50 %.

Voice quality and scene. HNR (``voice.hnr_db``: the median over a segment's voiced frames, so
running speech with its onsets and voiced consonants, not a sustained vowel's 20 dB) below 8 dB
is breathy or hoarse: healthy voices measure above it in 3 s windows of running speech (LibriVox's
low male reader 8.2-10.2 dB, CMU ARCTIC 9.3-13.0, Allison's prompts 10.8-14.4 from the 5th to the
75th percentile, codec2's morig 11.0); the 10 dB of sustained vowels made 4 of 9 of the LibriVox
reader's windows "hoarse". Above 18 dB is very clear;
jitter above 2 % and shimmer above 10 % are pathological-range perturbation (Praat's usual
limits are about 1 % and 3.8 % for sustained vowels; running speech measures higher). DNSMOS
background (BAK) below 3.0 or an SNR below 15 dB is an intrusive background; above 20 dB SNR
with BAK at least 2.5 the noise is faint. Event and scene probabilities count from 0.5
(laughter, music), breath from 0.6 (breath detectors fire on plosive onsets).

Two threshold sets this table replaced disagreed (118/208 Hz with 2.5/6 st against
120/205 Hz with 1.5/4 st); the first was the one the running code used, so it is kept.
"""

from __future__ import annotations

import math

from pydantic import BaseModel, ConfigDict, Field

from .schema import canonical_closed

# Pellegrino et al. (2011) read-speech syllable rates, syllables/s (Mandarin: characters/s).
# Measurements, not tunable: the tunable part is ``pause_factor`` and the class edges.
READ_SYLLABLE_RATE = {"en": 6.19, "de": 5.97, "zh": 5.18, "fr": 7.18, "it": 6.99, "es": 7.82, "ja": 7.84}

LABELS = {-2: "very low", -1: "low", 0: "normal", 1: "high", 2: "very high"}
RATE_LABELS = {-2: "very slow", -1: "slow", 0: "normal", 1: "fast", 2: "very fast"}


def _param(default: float, low: float, high: float, why: str) -> float:
    return Field(default=default, ge=low, le=high, description=why)


class Calibration(BaseModel):
    """Tunable thresholds: name, range (ge/le) and default of each, with what justifies it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    # -- pitch level (median F0 relative to the gender's population center) --------------------
    pitch_center_male_hz: float = _param(118.0, 80.0, 180.0, "center of adult male speaking F0")
    pitch_center_female_hz: float = _param(208.0, 150.0, 300.0, "center of adult female speaking F0")
    pitch_center_unknown_hz: float = _param(160.0, 100.0, 250.0, "one wide population when the gender is unknown")
    pitch_normal_st: float = _param(2.5, 0.5, 6.0, "|semitones from the center| up to which the pitch is normal")
    pitch_very_st: float = _param(6.0, 2.0, 12.0, "|semitones from the center| beyond which it is very low / high")
    pitch_unknown_widening_st: float = _param(4.5, 0.0, 8.0, "bins widen by this without a gender")
    gender_boundary_hz: float = _param(165.0, 130.0, 200.0, "male/female boundary of the gender pitch vote")
    # Gender from pitch alone (no classifier): outside the overlap of adult voices.
    pitch_male_below_hz: float = _param(150.0, 100.0, 180.0, "a median F0 below this reads as male")
    pitch_male_confident_hz: float = _param(135.0, 90.0, 170.0, "... and below this with more confidence")
    pitch_female_above_hz: float = _param(185.0, 150.0, 250.0, "a median F0 above this reads as female")
    pitch_female_confident_hz: float = _param(200.0, 160.0, 280.0, "... and above this with more confidence")
    # -- pitch movement --------------------------------------------------------------------------
    pitch_std_flat_st: float = _param(1.5, 0.3, 4.0, "F0 std (st) below which the pitch is flat")
    pitch_std_lively_st: float = _param(3.5, 1.5, 8.0, "F0 std (st) above which the pitch is lively")
    final_fall_st: float = _param(-1.5, -6.0, 0.0, "final F0 movement (st, last 30 % voiced) that is a fall")
    final_rise_st: float = _param(1.5, 0.0, 6.0, "final F0 movement that is a rise")
    # -- speaking rate -----------------------------------------------------------------------------
    pause_factor: float = _param(0.75, 0.5, 1.0, "speech-span rate / pause-free literature rate")
    default_read_rate: float = _param(6.5, 3.0, 9.0, "literature rate of languages outside the table")
    rate_normal: float = _param(0.25, 0.05, 0.5, "within +- this share of the center the rate is normal")
    rate_very_slow: float = _param(0.60, 0.3, 0.9, "below this ratio to the center: very slow")
    rate_very_fast: float = _param(1.50, 1.1, 2.5, "above this ratio to the center: very fast")
    # The noise of a turn's arousal z (in its speaker's spreads): how sure an emotion or tone read
    # off it is. The median standard error of the mean of a turn's feature z's (energy, pitch, its
    # spread, rate), from their disagreement, over 335 turns of the AMI clips and HELD_OUT_3: 0.36
    # (quartiles 0.24-0.50).
    arousal_noise_z: float = _param(0.35, 0.1, 1.0, "noise of a turn's arousal z: the certainty of emotion and tone")
    # -- voice quality -----------------------------------------------------------------------------
    hnr_low_db: float = _param(8.0, 0.0, 20.0, "running-speech HNR below this (segment and speaker): breathy or hoarse")
    hnr_high_db: float = _param(18.0, 10.0, 30.0, "HNR above this: very clear")
    jitter_high: float = _param(0.02, 0.005, 0.1, "local jitter above this is rough")
    shimmer_high: float = _param(0.10, 0.02, 0.3, "local shimmer above this is rough")
    # Whisper's mean word probability under word_prob_unclear reads as "some words slightly slurred"; it
    # rests on at least unclear_min_words words: with fewer, one uncertain word decides the mean, and
    # Whisper is unsure of backchannels whatever the articulation ("Right! Yeah." 0.17, AMI trn08).
    word_prob_unclear: float = _param(0.55, 0.2, 0.9, "mean ASR word probability below this: some words unclear")
    unclear_min_words: int = _param(4, 1, 20, "fewest transcribed words that mean rests on")  # type: ignore[assignment]
    # A recording's gain sets its level, not the voice: "soft" is a segment this much below the
    # recording's speech (BS.1770 LUFS); AMI dev00/01 at -41 LUFS were all "soft" by level alone.
    soft_below_recording_db: float = _param(6.0, 2.0, 20.0, "segment loudness this far below the recording's: soft")
    # -- scene and events --------------------------------------------------------------------------
    dnsmos_bak_noisy: float = _param(3.0, 1.0, 5.0, "DNSMOS BAK below this: an intrusive background")
    mos_clean: float = _param(3.5, 1.0, 5.0, "Distill-MOS at least this: no words masked by noise (clean 4.3-4.5)")
    dnsmos_bak_faint: float = _param(2.5, 1.0, 5.0, "BAK at least this (with a high SNR): faint noise")
    snr_noisy_db: float = _param(15.0, 0.0, 40.0, "SNR below this: noisy")
    snr_faint_db: float = _param(20.0, 0.0, 50.0, "SNR at least this: audible noise is faint")
    music_prob: float = _param(0.5, 0.05, 0.95, "music / singing probability that counts")
    laughter_prob: float = _param(0.5, 0.05, 0.95, "laughter probability that counts")
    breath_prob: float = _param(0.6, 0.05, 0.95, "breath probability that counts")
    reverb_high: float = _param(0.6, 0.05, 0.95, "reverberation score that makes the room reverberant")
    reverb_min_reliability: float = _param(0.5, 0.0, 1.0, "least reliability of that score")
    noise_type_min_reliability: float = _param(0.75, 0.0, 1.0, "least reliability before a noise source is named")
    # -- transcript tags ---------------------------------------------------------------------------
    tag_pause_s: float = _param(0.5, 0.1, 3.0, "a gap between words worth a pause tag, seconds")

    # -- classes -----------------------------------------------------------------------------------

    def pitch_center(self, gender: str | None) -> float:
        g = (canonical_closed("gender", gender) if gender else None) or ""  # the schema's one gender table
        return {"male": self.pitch_center_male_hz, "female": self.pitch_center_female_hz}.get(
            g, self.pitch_center_unknown_hz
        )

    def pitch_semitones(self, hz: float, gender: str | None) -> float:
        """Distance in semitones of a (median) F0 from the gender's population center."""
        return 12.0 * math.log2(hz / self.pitch_center(gender))

    def pitch_class(self, hz: float, gender: str | None) -> int:
        """-2..2 (very low .. very high) for a median F0 in Hz relative to the gender's norm."""
        if not hz or hz <= 0 or not math.isfinite(hz):
            raise ValueError(f"pitch_class needs a positive F0 in Hz, got {hz!r}")
        st = self.pitch_semitones(hz, gender)
        widen = 0.0 if self.pitch_center(gender) != self.pitch_center_unknown_hz else self.pitch_unknown_widening_st
        return _classify(st, self.pitch_normal_st + widen, self.pitch_very_st + widen)

    def rate_center(self, language: str | None) -> float:
        """Normal speaking rate (units/s, speech span with internal pauses) for a language."""
        return READ_SYLLABLE_RATE.get(_lang(language), self.default_read_rate) * self.pause_factor

    def rate_min_units(self) -> int:
        """Fewest transcript units (syllables, characters) a rate class rests on: one unit more or
        less (a clipped word, a miscounted syllable) moves a rate over n units by 1/n, which must
        stay within the normal band (1/0.25: 4 units); "Gosh." (AMI trn00) has no pace."""
        return math.ceil(1.0 / self.rate_normal)

    def rate_edges(self) -> tuple[float, float, float, float]:
        """The rate classes' edges as ratios to the language's center, slow to fast."""
        return (self.rate_very_slow, 1 - self.rate_normal, 1 + self.rate_normal, self.rate_very_fast)

    def rate_class(self, units_per_s: float, language: str | None) -> int:
        """-2..2 (very slow .. very fast) for a speaking rate (chars/s zh, syllables/s else)."""
        if units_per_s is None or units_per_s <= 0 or not math.isfinite(units_per_s):
            raise ValueError(f"rate_class needs a positive rate, got {units_per_s!r}")
        r = units_per_s / self.rate_center(language)
        very_slow, slow, fast, very_fast = self.rate_edges()
        if r > very_fast:
            return 2
        if r > fast:
            return 1
        if r < very_slow:
            return -2
        if r < slow:
            return -1
        return 0

    def rate_margin(self, units_per_s: float, language: str | None) -> float:
        """How far a rate lies from the nearest class edge, as a log ratio (0 on an edge).

        >>> round(DEFAULT.rate_margin(DEFAULT.rate_center("en") * 1.1, "en"), 3)
        0.128
        """
        r = units_per_s / self.rate_center(language)
        return min(abs(math.log(r / edge)) for edge in self.rate_edges())


def _classify(st: float, normal: float, very: float) -> int:
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


def semitones(hz: float, ref_hz: float) -> float:
    return 12.0 * math.log2(hz / ref_hz) if hz > 0 and ref_hz > 0 else 0.0


DEFAULT = Calibration()


def parameters() -> list[tuple[str, float, float, float]]:
    """(name, low, high, default) of every tunable parameter, for tuning and for the docs."""
    out = []
    for name, info in Calibration.model_fields.items():
        bounds = {type(m).__name__: m for m in info.metadata}
        out.append((name, bounds["Ge"].ge, bounds["Le"].le, info.default))
    return out


# The defaults as module functions, for callers without settings at hand (benchmarks, tests).
pitch_class, rate_class, rate_center = DEFAULT.pitch_class, DEFAULT.rate_class, DEFAULT.rate_center
