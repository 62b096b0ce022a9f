import numpy as np
import pytest

from speechannotator.priors.names import EVIDENCE
from speechannotator.records import RECORDING_KEY


def _table(evs):
    return {(e.key, e.name): e for e in evs}


def test_every_evidence_is_named_and_typed(small_evidence):
    _, _, evs = small_evidence
    assert evs
    for e in evs:
        assert e.name in EVIDENCE, e.name
        assert 0.0 <= e.reliability <= 1.0
        assert e.extractor
        if isinstance(e.value, float):
            assert np.isfinite(e.value)


def test_segment_statistics_follow_the_audio(small_evidence):
    _, segs, evs = small_evidence
    t = _table(evs)
    a0, b1, a2, b3 = (s.key for s in segs)
    # Male LibriVox reader ~80-105 Hz; espeak f2 at -p 65 ~217 Hz (measured by the same DIO elsewhere).
    assert 70 < t[(a0, "pitch.median_hz")].value < 120
    assert 180 < t[(b1, "pitch.median_hz")].value < 260
    assert t[(a0, "gender.label")].value == "male" and t[(b1, "gender.label")].value == "female"
    # espeak at 260 wpm is faster than at 170 wpm, same voice and similar text.
    assert t[(b3, "rate.units_per_s")].value > 1.3 * t[(b1, "rate.units_per_s")].value
    assert t[(b3, "rate.class")].value >= 1 and t[(b1, "rate.class")].value == 0
    assert t[(a0, "rate.unit")].value == "syllable"
    for k in (a0, b1):
        assert t[(k, "scene.background")].value == "none"
        assert -40 < t[(k, "loudness.lufs")].value < 0


def test_speaker_and_recording_aggregates(small_evidence):
    _, segs, evs = small_evidence
    t = _table(evs)
    assert t[("speaker:A", "gender.label")].value == "male"
    assert t[("speaker:B", "gender.label")].value == "female"
    a = [t[(s.key, "pitch.median_hz")].value for s in segs if s.speaker == "A"]
    assert min(a) <= t[("speaker:A", "pitch.median_hz")].value <= max(a)
    assert t[(RECORDING_KEY, "population.speakers")].value == 2
    assert (RECORDING_KEY, "scene.dnsmos_ovrl") in t  # at least one budgeted DNSMOS window
    assert 1.0 < t[(RECORDING_KEY, "scene.dnsmos_ovrl")].value < 5.0
    # Arousal is relative to the speaker: a speaker's z-scores straddle zero.
    z = [t[(s.key, "emotion.arousal")].value for s in segs if s.speaker == "B"]
    assert min(z) < 0 < max(z)


def test_bad_input_is_one_clear_error(small_recording):
    from speechannotator.priors import extract_priors
    from speechannotator.records import Segment

    audio, segs = small_recording
    with pytest.raises(ValueError, match="align"):
        extract_priors(audio, segs, enhanced=audio.samples[:-5])
    with pytest.raises(ValueError, match="bad times"):
        extract_priors(audio, [Segment("seg_x", 2.0, 1.0, "A")])


def test_final_movement_is_the_last_phrases():
    """A level 2 s phrase, a 0.5 s pause, then a short phrase falling 150 -> 100 Hz: the end falls.
    The last 30 % of all voiced frames spanned both phrases and read the step up as a rise (ve9qrp)."""
    from speechannotator.priors.acoustic import AcousticStats, PitchTrack, pitch_stats

    t1, t2 = np.arange(0, 2.0, 0.005), np.arange(2.5, 2.8, 0.005)
    times = np.concatenate([t1, np.arange(2.0, 2.5, 0.005), t2])
    f0 = np.concatenate([np.full(len(t1), 100.0), np.zeros(100), np.linspace(150.0, 100.0, len(t2))])
    out = AcousticStats(duration=2.8)
    pitch_stats(PitchTrack(f0=f0, times=times), out)
    assert out.values["pitch.final_slope_semitones"] < -1.5


def test_a_one_word_turn_has_no_rate():
    """AMI trn00's "Gosh." (1 syllable over 0.6 s) measured 1.6 syllables/s, which pulled the
    speaker's arousal pool and rate; below Calibration.rate_min_units there is no rate."""
    from speechannotator.calibration import DEFAULT
    from speechannotator.priors.acoustic import AcousticStats, speaking_rate

    for text, has_rate in (("Gosh.", False), ("Oh gosh, that is it.", True)):
        out = AcousticStats(duration=0.7, speech_s=0.6)
        speaking_rate(text, "en", out, DEFAULT.rate_min_units())
        assert ("rate.units_per_s" in out.values) is has_rate
