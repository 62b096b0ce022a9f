"""Quality columns: where each value comes from, null for a missing source, the TTS issues they raise."""

import math

from speechannotator.export.quality import COLUMNS, SegmentSources, quality_values


def _sources(evidence, state=None, duration=2.0, text="one two three four", confidence=None):
    state = {"key": "seg_00001", "speaker": "S0", **(state or {})}
    record = {"text": text, "language": "en"}
    return SegmentSources(duration, record, state, evidence, confidence or {})


def test_a_segment_value_wins_over_the_speaker_and_the_recording_and_a_missing_one_is_null():
    ev = {
        "seg_00001": {"snr.db": 12.0},
        "speaker:S0": {"snr.db": 30.0, "quality.mos": 4.1},
        "recording": {"snr.db": 25.0, "quality.mos": 3.0, "scene.dnsmos_ovrl": 2.5, "channel.origin": "telephone"},
    }
    q = quality_values(_sources(ev, {"words": [{"probability": 0.9}, {"probability": 0.5}]}))
    assert q["snr_db"] == 12.0 and q["mos"] == 4.1 and q["dnsmos_ovrl"] == 2.5 and q["channel"] == "telephone"
    assert q["overlap_s"] is None and q["asr_no_speech_prob"] is None and q["bandwidth_hz"] is None
    assert q["asr_word_logprob"] == round((math.log(0.9) + math.log(0.5)) / 2, 4)
    assert q["words_per_s"] == 2.0 and q["chars_per_s"] == 7.5  # 15 letters in 2 s
    assert q["tts_issues"] == ["low_dnsmos", "low_snr", "telephone"] and q["tts_issue_count"] == 3


def test_issues_come_only_from_values_that_exist():
    q = quality_values(_sources({}, duration=0.6, confidence={"gender": 0.9}))
    assert q["tts_issues"] == ["too_short"]  # nothing else is known, nothing else is claimed
    assert q["conf_gender"] == 0.9 and q["conf_age"] is None
    q = quality_values(_sources({"recording": {"events.music": 0.8, "scene.music_prob": 0.1}}, {"overlap_s": 0.4}))
    assert q["music_prob"] == 0.8 and q["overlap_s"] == 0.4  # YAMNet preferred over the AED when present
    assert q["tts_issues"] == ["overlap", "music"]


def test_cjk_characters_count_as_words():
    q = quality_values(_sources({}, text="今天天气很好", duration=2.0))
    assert q["words_per_s"] == 3.0


def test_every_number_column_declares_its_range_and_every_column_a_unit_or_kind():
    for c in COLUMNS.values():
        assert c.kind in ("number", "text", "list")
        if c.kind == "number" and c.low is not None and c.high is not None:
            assert c.low < c.high, c.name


def test_voice_fit_columns_read_the_segment_alone_and_a_closer_other_voice_is_an_issue():
    ev = {"seg_00001": {"timeline.voice_similarity": 0.21, "timeline.voice_margin": -0.05}}
    q = quality_values(_sources(ev))
    assert q["voice_similarity"] == 0.21 and q["voice_margin"] == -0.05 and "other_voice" in q["tts_issues"]
    # a speaker's mean says nothing of this turn: no value, no issue
    q = quality_values(_sources({"speaker:S0": {"timeline.voice_margin": -0.3}}))
    assert q["voice_margin"] is None and "other_voice" not in q["tts_issues"]
