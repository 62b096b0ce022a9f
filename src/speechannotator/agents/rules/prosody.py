"""Rules for prosody, delivery, voice quality and articulation: pitch, speed, rhythm, tone,
texture and pronunciation. Each rule reads only what its field's contract admits (FieldView)
and says how sure it is; with no acoustic evidence it abstains with a cautious value.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ...calibration import semitones
from ...priors.acoustic import LONG_PAUSE_S
from ...priors.textunits import count_units
from ...records import Segment
from ...schema import Level, Value
from ..transcript import (
    internal_gaps,
    mean_word_probability,
    speech_act,
    transcript_rate,
    word_probability_error,
)
from .certainty import rate_spread, side_probability, stable_share, trusted
from .evidence import FieldView, resolve_gender

# |arousal z| under this: the voice is within the speaker's usual (label_emotion's neutral band).
AROUSAL_NEUTRAL = 0.4
AROUSAL_HIGH = 1.0  # at or above: a raised voice (tone firm or urgent; emotion tense, angry, excited)
AROUSAL_LOW = -0.8  # at or below: a lowered voice (tone low; emotion calm or sad)


@dataclass
class Outcome:
    value: Value
    confidence: float
    status: str = "ok"
    rationale: str = ""


def pitch_level(v: FieldView, gender: str | None = None) -> tuple[int | None, str]:
    """Per-gender pitch class of the segment and a short note; None without pitch evidence.
    ``gender`` overrides the gender the F0 is judged against (a reviewer's speaker value)."""
    hz = v.num("pitch.median_hz")
    if hz is None:
        hz = v.num("pitch.mean_hz")
    if hz is None or hz <= 0:
        return None, "no pitch evidence"
    if gender is None:
        gender, _, _ = resolve_gender(v)
    return v.cal.pitch_class(hz, gender), f"F0 {hz:.0f} Hz vs {gender or 'unknown'} norm"


def _measured_rate(v: FieldView, seg: Segment) -> tuple[float | None, int, float, str]:
    """(rate in units/s or None, transcript units, how far its source is trusted, note)."""
    rate = v.num("rate.units_per_s")
    units, _ = count_units(seg.text, seg.language or "")
    if units < v.cal.rate_min_units():
        return None, units, 0.0, f"{units} units in the transcript: too few for a rate"
    if rate is not None and rate > 0:
        return rate, units, 0.8, f"rate {rate:.1f} units/s"
    rate = transcript_rate(seg)
    if rate is None:
        return None, units, 0.0, "no rate evidence and no transcript"
    return rate, units, 0.5, f"transcript rate {rate:.1f} units/s"


def rate_level(v: FieldView, seg: Segment) -> tuple[int | None, float, str]:
    """(class, confidence, note) from rate evidence, else from the transcript and timestamps."""
    rate, _, conf, note = _measured_rate(v, seg)
    if rate is None:
        return None, 0.0, note
    return v.cal.rate_class(rate, seg.language or ""), conf, note


def rate_certainty(v: FieldView, seg: Segment) -> float:
    """How sure the rate class is (``certainty.side_probability``): its rate's distance from the
    nearest class edge against the noise of a rate over that many units."""
    rate, units, _, _ = _measured_rate(v, seg)
    if rate is None:
        return 0.5
    return side_probability(v.cal.rate_margin(rate, seg.language or ""), rate_spread(units))


def arousal_certainty(v: FieldView, a: float, decide: Callable[[float], str]) -> float:
    """How sure a class read off arousal ``a`` is: the share of the z's noise
    (``Calibration.arousal_noise_z``) under which ``decide`` keeps its class, times what the
    extractor trusts the z (0.5 for a z from few features or a speaker with few turns, up to 1)."""
    trust = v.reliability("emotion.arousal") if v.num("emotion.arousal", cite=False) is not None else 0.0
    return trusted(stable_share(decide, a, v.cal.arousal_noise_z), trust)


def label_pitch(v: FieldView, seg: Segment, P, gender: str | None = None) -> Outcome:
    level, note = pitch_level(v, gender)
    if level is None:
        return Outcome(Level(0, P.PITCH_LEVEL[0]), 0.2, "abstain", "no pitch evidence: cautious medium")
    std = v.num("pitch.std_semitones")
    lo, hi = v.cal.pitch_std_flat_st, v.cal.pitch_std_lively_st
    var = None if std is None else ("flat" if std < lo else "lively" if std >= hi else "some")
    fin = v.num("pitch.final_slope_semitones")
    final = "level"
    if fin is not None:
        final = (
            "steep_fall"
            if fin <= 2 * v.cal.final_fall_st
            else "fall"
            if fin <= v.cal.final_fall_st
            else ("rise" if fin >= v.cal.final_rise_st else "level")
        )
    rel = ""
    hz, spk = v.num("pitch.median_hz", cite=False), v.num("speaker.pitch.median_hz")
    if hz and spk:
        d = semitones(hz, spk)
        rel = P.PITCH_REL[1] if d >= 2.5 else P.PITCH_REL[-1] if d <= -2.5 else ""
    parts = [P.PITCH_LEVEL[level], P.PITCH_VAR[var] if var else "", P.PITCH_FINAL[final], rel]
    conf = 0.8 * max(0.3, v.reliability("pitch.median_hz") or v.reliability("pitch.mean_hz"))
    if (v.num("pitch.voiced_ratio") or 1.0) < 0.2:
        conf *= 0.6  # mostly unvoiced: the F0 statistics rest on few frames
    return Outcome(Level(level, P.join(parts)), round(conf, 2), "ok", note)


def label_speed(v: FieldView, seg: Segment, P) -> Outcome:
    level, conf, note = rate_level(v, seg)
    if level is None:
        return Outcome(Level(0, P.SPEED_LEVEL[0]), 0.2, "abstain", note)
    # "long pauses between phrases": pauses fill 30 % of the speech span and one is long
    pr, longest = v.num("pause.ratio"), v.num("pause.longest_s")
    long_pauses = (pr or 0) >= 0.3 and (longest or 0) >= LONG_PAUSE_S
    tail = P.SPEED_PAUSE if long_pauses and level <= 0 else P.SPEED_TAIL[level]
    conf = round(conf * rate_certainty(v, seg), 2)
    return Outcome(Level(level, P.SPEED_LEVEL[level] + tail), conf, "ok", note)


def pause_state(v: FieldView, seg: Segment) -> str:
    count, longest, ratio = v.num("pause.count"), v.num("pause.longest_s"), v.num("pause.ratio")
    if count is None and longest is None:
        gaps = [g for g in internal_gaps(seg) if g >= 0.3]
        count, longest = float(len(gaps)), max(gaps, default=0.0)
    longest = longest or 0.0
    if count is None:
        count = 1.0 if longest >= 0.3 else 0.0
    if count >= 4 or (count >= 2 and (ratio or 0) >= 0.35):  # one long pause is not "frequent"
        return "many"
    if longest >= LONG_PAUSE_S:
        return "long"
    if count >= 1:
        return "natural"
    return "none"


def label_rhythm(v: FieldView, seg: Segment, P) -> Outcome:
    level, conf, note = rate_level(v, seg)
    if level is None:
        return Outcome(P.RHYTHM_PACE[0], 0.2, "abstain", note)
    pause = pause_state(v, seg)
    parts = [P.RHYTHM_PACE[level], P.SPEED_LEVEL[level], P.RHYTHM_PAUSE[pause]]
    est = v.num("energy.std_db")
    if est is not None and est >= 8.0:
        parts.append(P.RHYTHM_ENERGY["varied"])
    fin = v.num("pitch.final_slope_semitones")
    if fin is not None and fin <= v.cal.final_fall_st:
        parts.append(P.PITCH_FINAL["fall"])
    return Outcome(P.join(parts), round(conf * rate_certainty(v, seg), 2), "ok", f"{note}; pauses {pause}")


def arousal(v: FieldView, seg: Segment) -> float | None:
    """Prosodic arousal z; without the extractor's value, a proxy from pitch and rate classes."""
    a = v.num("emotion.arousal")
    if a is not None:
        return a
    p, _ = pitch_level(v)
    r, _, _ = rate_level(v, seg)
    if p is None and r is None:
        return None
    return 0.6 * (p or 0) + 0.6 * (r or 0)


def label_tone(v: FieldView, seg: Segment, P) -> Outcome:
    act = speech_act(seg.text)
    a = arousal(v, seg)
    val = v.num("emotion.valence_text")
    lufs, ref = v.num("loudness.lufs"), v.num("recording.loudness.lufs")
    r, _, _ = rate_level(v, seg)
    if a is None and val is None:
        return Outcome(P.tone("calm", act), 0.3, "abstain", "no prosodic evidence; speech act from transcript")
    a = a or 0.0
    soft = lufs is not None and ref is not None and lufs <= ref - v.cal.soft_below_recording_db
    fast = (r or 0) >= 1

    def quality_at(x: float) -> str:
        return tone_quality(x, val, soft, fast)

    quality = quality_at(a)
    conf = round(0.6 * arousal_certainty(v, a, quality_at), 2)
    return Outcome(P.tone(quality, act), conf, "ok", f"arousal {a:.2f}, act {act}")


def tone_quality(a: float, valence: float | None, soft: bool, fast: bool) -> str:
    """The tone's quality from arousal z, transcript valence, a level under the recording's, a fast rate."""
    if a >= AROUSAL_HIGH:
        return "urgent" if fast else "firm"
    if a <= AROUSAL_LOW:
        return "low"
    if valence is not None and valence >= 0.4:
        return "bright"
    if valence is not None and valence <= -0.4 and a <= -AROUSAL_NEUTRAL:
        return "heavy"  # a lowered voice; negative words over a usual one are a topic (AMI trn03)
    return "soft" if soft else "calm"


def label_texture(v: FieldView, seg: Segment, P, gender: str | None = None) -> Outcome:
    """``gender`` overrides the gender the voice is judged against (the segment's reviewed one)."""
    level, _ = pitch_level(v, gender)
    hnr, jit, shim = v.num("voice.hnr_db"), v.num("voice.jitter"), v.num("voice.shimmer")
    sig, a = v.num("scene.dnsmos_sig"), v.num("emotion.arousal")
    if level is None and hnr is None and jit is None and sig is None:
        return Outcome(P.TEXTURE["neutral"], 0.2, "abstain", "no voice-quality evidence")
    if gender is None:
        gender, _, _ = resolve_gender(v)
    # "deep" names a low male voice; a woman's voice low for her norm is full, not deep
    low = "full" if gender == "female" else "deep"
    base = low if (level is not None and level <= -1) else "bright" if (level is not None and level >= 1) else ""
    mods = []
    # Hoarseness is the voice's, heard in all its turns: a low HNR in one segment of a speaker
    # whose turns measure clear on average is that segment (an overlap, creak), not the voice.
    spk_hnr = v.num("speaker.voice.hnr_db")
    low_hnr = hnr is not None and hnr < v.cal.hnr_low_db and (spk_hnr is None or spk_hnr < v.cal.hnr_low_db)
    hoarse = low_hnr or (jit or 0) > v.cal.jitter_high or (shim or 0) > v.cal.shimmer_high
    if hoarse:
        mods.append("breathy" if (v.num("events.breath") or 0) >= v.cal.breath_prob else "hoarse")
    elif hnr is not None and hnr >= v.cal.hnr_high_db:
        mods.append("clear")
    if sig is not None and sig < 3.0:
        mods.append("muffled")
    if v.text("channel.origin") == "telephone" and "muffled" not in mods:
        mods.append("thin")  # a telephone band carries nothing above ~4 kHz
        base = "" if base == "full" else base  # nor the low body "full, rounded" names
    if a is not None and a >= 1.0:
        mods.append("tense")
    if not base and not mods:
        mods.append("neutral")  # "clear" is claimed only on a high HNR (above)
    words = [P.TEXTURE[m] for m in mods]
    if base and words and P.LANG == "zh":
        value = f"{P.TEXTURE[base]}且{words[0]}" + (P.SEP + P.join(words[1:]) if words[1:] else "")
    elif base and words:
        value = f"{P.TEXTURE[base]} and {words[0]}" + (P.SEP + P.join(words[1:]) if words[1:] else "")
    else:
        value = P.join(([P.TEXTURE[base]] if base else []) + words)
    # confidence from how far the extractors trust the values behind the words
    used = [
        n for n, x in (("voice.hnr_db", hnr), ("pitch.median_hz", level), ("scene.dnsmos_sig", sig)) if x is not None
    ]
    conf = round(0.3 + 0.4 * sum(v.reliability(n) for n in used) / max(1, len(used)), 2)
    return Outcome(value, conf, "ok", f"pitch class {level}, HNR {hnr}, gender {gender}")


def label_pronunciation(v: FieldView, seg: Segment, P) -> Outcome:
    prob = mean_word_probability(seg)
    few = len(seg.words) < v.cal.unclear_min_words
    if few:
        prob = None  # too few words for their mean to say anything about articulation
    r, _, _ = rate_level(v, seg)
    snr, sig, mos = v.num("snr.db"), v.num("scene.dnsmos_sig"), v.num("quality.mos")
    # Distill-MOS cross-checks a low SNR: quiet clean speech can read as noise by level alone
    noisy = ((snr is not None and snr < 10) or (sig is not None and sig < 2.7)) and (
        mos is None or mos < v.cal.mos_clean
    )
    # how sure the clear / slurred side is: the mean's distance from the bar against its standard error
    sure = 1.0 if prob is None else side_probability(prob - v.cal.word_prob_unclear, word_probability_error(seg))
    if prob is not None and prob < v.cal.word_prob_unclear:
        parts = [P.PRON["slurred"], P.PRON["noisy"] if noisy else P.PRON["mostly"]]
        return Outcome(P.join(parts), round(0.5 * sure, 2), "ok", f"ASR word probability {prob:.2f}")
    if r is not None and r >= 1:
        lead = P.PRON["fast_ok"] + ("" if P.LANG == "zh" else " ") + P.PRON["complete"]
        parts = [P.PRON["clear"], lead]
    elif r is not None and r <= -1:
        parts = [P.PRON["clear"], P.PRON["slow"]]
    else:
        parts = [P.PRON["clear"], P.PRON["complete"]]
    if noisy:
        parts.append(P.PRON["noisy"])
    conf = round(0.6 * sure, 2) if prob is not None else 0.4
    prob = prob if prob is None else round(prob, 2)
    return Outcome(
        P.join(parts),
        conf,
        "ok" if prob is not None or r is not None else "abstain",
        (f"{len(seg.words)} words, too few for the ASR's confidence" if few else f"ASR word probability {prob}")
        + f", rate class {r}",
    )
