"""Fields that claim only what the channel, event and quality evidence shows, and the review's
checks of the new conflicts."""

from agents_helpers import REC, config, ev, make_store, male, seg, stage

from speechannotator import agents
from speechannotator.agents.backend import ComposeTask
from speechannotator.agents.compose import contextual_inference
from speechannotator.agents.rules import RulesBackend
from speechannotator.agents.rules.review import review_task
from speechannotator.output.finalize import speaker_names, tag_transcript
from speechannotator.priors.speaker_names import speaker_self_names
from speechannotator.records import Evidence, Prediction, Word


def _label(tmp_path, segs, evs, lang="en"):
    store = make_store(tmp_path, segs, evs)
    cfg = config()
    agents.plan(stage(store, cfg, lang=lang))
    agents.label(stage(store, cfg, RulesBackend()))
    return store, store.predictions(REC)


def test_telephone_channel_names_the_environment_and_thins_the_texture(tmp_path):
    segs = [seg(0, 0, 3, "A", "Hello, how can I help you?", "en"), seg(1, 3, 6, "A", "Thank you for calling.", "en")]
    evs = male("seg_00000") + male("seg_00001")
    evs.append(Evidence("seg_00000", "channel.origin", "telephone", extractor="test", reliability=1.0))
    evs.append(Evidence("seg_00000", "channel.bandwidth_hz", 4000.0, extractor="test", reliability=1.0))
    evs.append(Evidence("seg_00001", "channel.origin", "wideband", extractor="test", reliability=1.0))
    _, p = _label(tmp_path, segs, evs)
    assert p[("seg_00000", "environment")].value == "telephone-band channel"
    assert "thin" in p[("seg_00000", "texture")].value
    assert p[("seg_00001", "environment")].value != "telephone-band channel"


def test_a_noise_source_yamnet_heard_names_the_background_and_the_environment(tmp_path):
    segs = [seg(i, 3 * i, 3 * i + 3, "A", "We are almost there.", "en") for i in range(3)]
    evs = male("seg_00000") + male("seg_00001") + male("seg_00002")
    for i, source in enumerate(("traffic", "crowd")):
        evs.append(Evidence(f"seg_{i:05d}", "scene.background", "noise", extractor="test", reliability=0.9))
        evs.append(Evidence(f"seg_{i:05d}", "scene.sound_source", source, extractor="test", reliability=0.9))
        evs.append(Evidence(f"seg_{i:05d}", "snr.db", 12.0, extractor="test", reliability=0.9))
    evs.append(Evidence("seg_00002", "scene.background", "noise", extractor="test", reliability=0.9))
    evs.append(Evidence("seg_00002", "snr.db", 12.0, extractor="test", reliability=0.9))
    _, p = _label(tmp_path, segs, evs)
    assert p[("seg_00000", "background_sound")].value == "traffic noise"
    assert p[("seg_00000", "environment")].value == "street or roadside"
    assert p[("seg_00001", "background_sound")].value == "crowd noise"
    assert p[("seg_00001", "environment")].value == "busy public place"
    # Noise without a source YAMNet confirmed names none.
    assert p[("seg_00002", "background_sound")].value not in ("traffic noise", "crowd noise")
    assert p[("seg_00002", "environment")].value not in ("street or roadside", "busy public place")


def test_accent_names_the_language_variety(tmp_path):
    segs = [seg(0, 0, 3, "A", "Bonjour à tous.", "fr", language_probability=0.9)]
    _, p = _label(tmp_path, segs, male("seg_00000"))
    assert p[("seg_00000", "accent")].value == "standard French"
    segs = [seg(0, 0, 3, "A", "Dobrý den.", "cs", language_probability=0.9)]
    _, p = _label(tmp_path / "cs", segs, male("seg_00000"))
    assert "standard accent" not in p[("seg_00000", "accent")].value


def test_low_female_voice_is_never_deep(tmp_path):
    low_woman = {"gender__p_male": 0.05, "gender__label": "female", "pitch__median_hz": 150.0, "voice__hnr_db": 14.0}
    segs = [seg(0, 0, 3, "A", "It is a fine day.", "en")]
    _, p = _label(tmp_path, segs, ev("seg_00000", **low_woman))
    assert "deep" not in p[("seg_00000", "texture")].value


def test_review_rejects_telephone_on_a_wideband_channel_and_unheard_laughter(tmp_path):
    segs = [seg(0, 0, 3, "A", "Ha, that is funny.", "en")]
    evs = male("seg_00000")
    evs.append(Evidence("seg_00000", "channel.origin", "wideband", extractor="test", reliability=1.0))
    evs.append(Evidence("seg_00000", "channel.bandwidth_hz", 7500.0, extractor="test", reliability=1.0))
    evs.append(Evidence("seg_00000", "events.laughter", 0.3, extractor="test", reliability=1.0))
    store, _ = _label(tmp_path, segs, evs)
    from speechannotator.agents.backend import ReviewTask
    from speechannotator.agents.context import admitted_evidence

    contracts = {f: c for (k, f), c in store.contracts(REC).items() if k == "seg_00000"}
    evidence = store.evidence(REC)
    preds = {
        "environment": Prediction("seg_00000", "environment", "telephone-band channel", 0.6, []),
        "paralinguistic": Prediction("seg_00000", "paralinguistic", "laughter", 0.6, []),
    }
    task = ReviewTask(
        segment=segs[0],
        predictions=preds,
        contracts=contracts,
        evidence=admitted_evidence(segs[0], contracts, evidence),
        context={},
        label_language="en",
        round=1,
    )
    verdicts = review_task(task)
    assert not verdicts["environment"].accepted and "7500" in verdicts["environment"].reason
    assert not verdicts["paralinguistic"].accepted


def test_close_miked_only_over_a_wideband_channel():
    s = seg(0, 0, 3, "A", "Good morning.", "en")
    snr = Evidence(s.key, "snr.db", 30.0)
    for origin, clean in (("wideband", True), ("telephone", False)):
        task = ComposeTask(
            segment=s,
            values={"speed": "", "tone": ""},
            evidence={"snr.db": snr, "channel.origin": Evidence(s.key, "channel.origin", origin)},
            context={},
            label_language="en",
        )
        assert ("close-miked" in contextual_inference(task)) is clean


def test_self_introduced_names_are_used_consistently_per_speaker():
    turns = [
        ("A", "Hi, this is Anna from the support team.", "en"),
        ("B", "Hello Anna, I'm Tom.", "en"),
        ("A", "Thanks Tom, how can I help?", "en"),
        ("C", "大家好，我是王芳。", "zh"),
        ("D", "I'm sorry, I am not sure.", "en"),
    ]
    given = speaker_self_names(turns)
    assert given == {"A": "Anna", "B": "Tom", "C": "王芳"}
    names = speaker_names(["A", "B", "D"], {"A": "young adult", "B": None, "D": None}, {}, "en", given)
    assert names["A"].startswith("Anna") and names["B"] == "Tom" and names["D"] == "Speaker3"


def test_laughter_tag_goes_where_the_laugh_was_heard():
    words = [Word("that", 0.1, 0.3), Word("was", 0.35, 0.5), Word("great", 1.6, 1.9)]
    s = seg(0, 0.0, 2.0, "A", "that was great", "en", words=words)
    out = tag_transcript(s, "laughter", "en", laughter_times=[[0.55, 1.5]])
    assert out == "that was <laughter> <pause> great"  # the laugh fills the pause before "great"
    assert tag_transcript(s, "laughter", "en").endswith("<laughter>")


def test_one_label_holding_a_man_and_a_woman_is_not_a_monologue():
    from speechannotator.agents.context import mixed_voices, recording_summary, speaker_histories

    segs = [seg(0, 0, 3, "S0", "Hello.", "en"), seg(1, 3, 6, "S0", "Hi there.", "en")]
    man = Evidence(segs[0].key, "gender.p_male", 0.97, reliability=0.9)
    woman = Evidence(segs[1].key, "gender.p_male", 0.02, reliability=0.9)
    evidence = {segs[0].key: {"gender.p_male": man}, segs[1].key: {"gender.p_male": woman}}
    assert mixed_voices(segs, evidence) == ["S0"]
    summary = recording_summary(segs, speaker_histories(segs), evidence)
    assert summary["interaction"] == "several voices"
    task = ComposeTask(
        segment=segs[0], values={}, evidence={}, context={"recording_summary": summary}, label_language="en"
    )
    text = contextual_inference(task)
    assert "monologue" not in text and "more than one voice" in text
    one = {segs[0].key: {"gender.p_male": man}, segs[1].key: {"gender.p_male": man}}
    assert recording_summary(segs, speaker_histories(segs), one)["interaction"] == "monologue"


def test_hoarse_needs_the_speakers_turns_too(tmp_path):
    # AMI trn03: one turn at 8.3 dB HNR of a speaker whose turns average 11 dB read "slightly hoarse".
    segs = [seg(0, 0, 3, "A", "It is a fine day.", "en"), seg(1, 3, 6, "B", "It is a fine day.", "en")]
    evs = male("seg_00000", voice__hnr_db=6.0) + male("seg_00001", voice__hnr_db=6.0)
    evs += ev("speaker:A", voice__hnr_db=11.0) + ev("speaker:B", voice__hnr_db=6.5)
    _, p = _label(tmp_path, segs, evs)
    assert "hoarse" not in p[("seg_00000", "texture")].value
    assert "hoarse" in p[("seg_00001", "texture")].value
