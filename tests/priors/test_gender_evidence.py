"""Gender evidence on the telephone band and the CAM++ embedding vote (priors/gender.py)."""

import json

import numpy as np
import pytest

from speechannotator.evaluation.recordings import real_voices as rv
from speechannotator.priors import gender
from speechannotator.priors.acoustic import missing_fundamental, segment_stats

needs_voices = pytest.mark.skipif(not rv.available(), reason="real voices not fetched (scripts/fetch_real_voices.sh)")


def _voice(f0: float, seconds: float = 1.5) -> np.ndarray:
    """A vowel-like tone: 20 harmonics falling 6 dB per octave, a first formant near 700 Hz ([a])."""
    t = np.arange(int(seconds * rv.SR)) / rv.SR
    amp = [(1 + 4 * np.exp(-(((k * f0 - 700) / 250) ** 2))) / k for k in range(1, 21)]
    x = sum(a * np.sin(2 * np.pi * k * f0 * t) for k, a in enumerate(amp, start=1))
    return (0.3 * x / np.abs(x).max()).astype(np.float32)


def test_the_telephone_band_takes_the_fundamental_and_the_pitch_vote_away():
    x = _voice(110.0)
    assert not missing_fundamental(x)
    tel = rv.telephone(x)
    assert missing_fundamental(tel)
    st, _ = segment_stats(tel, tel, "", "en", praat=False)
    # the tracker reads a harmonic here, so the pitch says nothing about gender
    assert gender.gender_vote_parts(tel, st.values.get("pitch.median_hz"))[1] is None
    assert gender.gender_vote_parts(x, 110.0)[1] is not None


def test_the_shipped_embedding_model_holds_out_the_evaluation_voices_and_can_overrule_voice2gender():
    spec = json.loads(gender.EMBED_ASSET.read_text())
    assert len(spec["weights"]) == 192 and not set(spec["trained_on"]) & set(spec["held_out"])
    assert {"zh_m", "nl_m", "ve9qrp"} <= set(spec["held_out"])  # the voices of mm_zh_nl and mm_tel
    # voice2gender sure of a woman, the embedding of a man, no pitch (telephone band)
    assert gender.fuse(0.02, None, 2.0, 0.95).p_male > 0.5
    assert gender.fuse(0.02, None, 2.0, None).p_male < 0.5
    assert gender.fuse(0.02, None, 2.0, 0.95).reliability < gender.fuse(0.98, None, 2.0, 0.95).reliability


@needs_voices
@pytest.mark.parametrize("voice", ["nl_m", "ve9qrp"])
def test_held_out_men_on_the_telephone_are_men(voice):
    clips = [rv.telephone(c.samples) for c in rv.clips(voice, limit=8)[:6]]
    votes = []
    for x in clips:
        st, _ = segment_stats(x, x, "", "en", praat=False)
        med = st.values.get("pitch.median_hz")
        votes.append(gender.gender_vote(x, med if isinstance(med, float) else None, st.voiced_s).p_male)
    assert np.mean([gender._logit(p) for p in votes if p is not None]) > 0  # the speaker's evened vote


def test_the_speakers_windows_centred_in_a_segment_give_its_voice():
    from speechannotator.frontend.campplus import SpeakerWindows

    v = np.eye(3)
    w = SpeakerWindows(np.array([0.0, 1.0, 2.5]), np.array([1.5, 2.5, 4.0]), ["S0", "S1", "S0"], v)
    # centres 0.75, 1.75, 3.25: S1's window is not S0's; a centre outside the segment is left out
    assert np.allclose(w.mean_inside(0.0, 3.5, "S0"), np.array([1, 0, 1]) / np.sqrt(2))
    assert np.allclose(w.mean_inside(0.0, 3.0, "S0"), [1, 0, 0])
    assert w.mean_inside(3.5, 5.0, "S0") is None and w.mean_inside(0.0, 5.0, "S2") is None


def test_a_segments_stored_voice_is_its_embedding_vote_and_survives_the_state():
    from speechannotator.records import Segment

    male = np.asarray(json.loads(gender.EMBED_ASSET.read_text())["weights"], np.float64)
    voice = male / np.linalg.norm(male)  # the direction the shipped model reads as most male
    g = gender.gender_vote(_voice(120.0, 3.5), 120.0, 3.5, embedding=voice)  # longer than EMBED_MAX_S
    assert g.p_embed == pytest.approx(float(gender.embedding_p_male_of(voice[None])[0])) and g.p_embed > 0.9
    short = _voice(220.0, 2.0)  # read whole by a pass of its own: the stored voice is not used
    assert gender.gender_vote(short, 220.0, 2.0, embedding=voice).p_embed == gender.embedding_p_male(short)
    seg = Segment("seg0000", 0.0, 1.5, "S0", voice=[round(float(e), 6) for e in voice])
    assert Segment.from_json(json.loads(json.dumps(seg.to_json()))).voice == seg.voice
    old = {k: v for k, v in seg.to_json().items() if k != "voice"}  # a state written before the field
    assert Segment.from_json(old).voice is None
