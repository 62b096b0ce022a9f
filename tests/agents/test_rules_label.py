"""The rules backend labels from evidence: calibrated bins, abstention, routing, requests."""

from agents_helpers import REC, config, ev, make_store, male, seg, stage

from speechannotator import agents
from speechannotator.agents.labeling import build_task
from speechannotator.agents.phrases import zh as phrases_zh
from speechannotator.agents.rules import RulesBackend
from speechannotator.calibration import pitch_class, rate_class
from speechannotator.records import Evidence, Status, Word
from speechannotator.schema import AgeGroup, Emotion, Gender


def _label(tmp_path, segs, evs, lang="zh", **agent_cfg):
    store = make_store(tmp_path, segs, evs)
    cfg = config(**agent_cfg)
    agents.plan(stage(store, cfg, lang=lang))
    agents.label(stage(store, cfg, RulesBackend()))
    return store, store.predictions(REC)


def test_high_pitch_female_and_low_pitch_male(tmp_path):
    segs = [seg(0, 0, 2, "F", "今天天气真好。"), seg(1, 2.2, 4, "M", "是的。")]
    evs = ev(
        "seg_00000",
        gender__p_male=0.05,
        pitch__median_hz=300.0,
        pitch__std_semitones=1.0,
        pitch__final_slope_semitones=-2.0,
    )
    evs += ev("seg_00001", gender__p_male=0.95, pitch__median_hz=80.0, pitch__std_semitones=1.0)
    _, p = _label(tmp_path, segs, evs)
    assert p[("seg_00000", "gender")].value is Gender.FEMALE and p[("seg_00001", "gender")].value is Gender.MALE
    high, low = p[("seg_00000", "pitch")].value.text, p[("seg_00001", "pitch")].value.text
    assert p[("seg_00000", "pitch")].value.step == 2 and p[("seg_00001", "pitch")].value.step == -2
    assert pitch_class(300.0, "female") == 2 and high.startswith(phrases_zh.PITCH_LEVEL[2]) and "偏高" in high
    assert "句尾略有下降" in high and "语调平稳" in high
    assert "pitch.median_hz" in p[("seg_00000", "pitch")].evidence
    assert pitch_class(80.0, "male") == -2 and low.startswith(phrases_zh.PITCH_LEVEL[-2]) and "偏低" in low
    assert "低沉" in p[("seg_00001", "texture")].value


def test_same_f0_reads_differently_per_gender(tmp_path):
    segs = [seg(0, 0, 2, "F", "好的。"), seg(1, 2.2, 4, "M", "好的。")]
    evs = ev("seg_00000", gender__p_male=0.05, pitch__median_hz=150.0)
    evs += ev("seg_00001", gender__p_male=0.95, pitch__median_hz=150.0)
    _, p = _label(tmp_path, segs, evs)
    as_female, as_male = p[("seg_00000", "pitch")].value, p[("seg_00001", "pitch")].value
    # typed: the step the description starts with, read by the review without parsing
    assert as_female.step == pitch_class(150.0, "female") < 0 < as_male.step == pitch_class(150.0, "male")
    assert as_female.text.startswith(phrases_zh.PITCH_LEVEL[as_female.step])


def test_rate_bins_per_language(tmp_path):
    segs = [
        seg(0, 0, 2, "A", "我们马上出发吧。"),
        seg(1, 2.2, 4, "B", "We leave for the station now.", language="en"),
        seg(2, 4.2, 6, "C", "慢慢地说吧。"),
    ]
    evs = ev("seg_00000", rate__units_per_s=6.5) + ev("seg_00001", rate__units_per_s=6.5)
    evs += ev("seg_00002", rate__units_per_s=2.0)
    _, p = _label(tmp_path, segs, evs)
    for key, rate, lang in (("seg_00000", 6.5, "zh"), ("seg_00001", 6.5, "en"), ("seg_00002", 2.0, "zh")):
        c = rate_class(rate, lang)
        assert p[(key, "speed")].value.step == c
        assert p[(key, "speed")].value.text.startswith(phrases_zh.SPEED_LEVEL[c] + phrases_zh.SPEED_TAIL[c][:1])
    assert rate_class(6.5, "zh") >= 1 and rate_class(2.0, "zh") == -2
    assert p[("seg_00000", "speed")].value.text[:4] in ("语速较快", "语速很快")


def test_rate_needs_enough_units(tmp_path):
    # One syllable over 0.7 s measures 1.4 units/s ("very slow"), but one unit more or less is
    # +-100 %: a pace needs at least 1 / rate_normal units (AMI trn00's "Gosh.").
    segs = [
        seg(0, 0, 0.7, "A", "Gosh.", language="en"),
        seg(1, 1, 2.5, "A", "It is much more than that.", language="en"),
    ]
    evs = ev("seg_00000", rate__units_per_s=1.4) + ev("seg_00001", rate__units_per_s=2.0)
    _, p = _label(tmp_path, segs, evs)
    assert p[("seg_00000", "speed")].status == Status.ABSTAIN and p[("seg_00000", "speed")].value.step == 0
    assert p[("seg_00001", "speed")].status == Status.OK and p[("seg_00001", "speed")].value.step == -2


def test_slurring_needs_enough_words(tmp_path):
    # Whisper is unsure of a backchannel whatever the articulation (AMI trn08's "Right! Yeah.", 0.17);
    # the mean word probability says something about articulation from unclear_min_words words on.
    from speechannotator.records import Word

    def words(text, start, p):
        return [Word(w, start + 0.3 * i, start + 0.3 * i + 0.25, p) for i, w in enumerate(text.split())]

    segs = [
        seg(0, 0, 1.0, "A", "Right! Yeah.", language="en", words=words("Right! Yeah.", 0, 0.17)),
        seg(
            1,
            1,
            3.0,
            "A",
            "It is much more than it is.",
            language="en",
            words=words("It is much more than it is.", 1, 0.3),
        ),
    ]
    _, p = _label(tmp_path, segs, [], lang="en")
    short, long = p[("seg_00000", "pronunciation")], p[("seg_00001", "pronunciation")]
    assert "slurred" not in short.value and short.status == Status.ABSTAIN and "too few" in short.rationale
    assert "slurred" in long.value and long.status == Status.OK


def test_no_scene_evidence_gives_none_with_low_confidence(tmp_path):
    segs = [seg(0, 0, 2, "A", "外面的音乐声好大。")]
    _, p = _label(tmp_path, segs, ev("seg_00000", gender__p_male=0.9))
    for f in ("background_sound", "environment"):
        assert p[("seg_00000", f)].value == "无"
        assert p[("seg_00000", f)].confidence <= 0.3 and p[("seg_00000", f)].status == "abstain"


def test_scene_evidence_names_the_background(tmp_path):
    segs = [seg(0, 0, 2, "A", "欢迎收听。"), seg(1, 2, 4, "A", "今天聊聊天。")]
    evs = ev("seg_00000", scene__music_prob=0.1, events__music=0.8, scene__dnsmos_bak=3.8)
    evs += ev("seg_00001", scene__noise_type="babble", scene__background="noise", scene__dnsmos_bak=2.0, snr__db=8.0)
    segs.append(seg(2, 4, 6, "A", "街上人很多。"))  # faint babble far below the speech, untrusted reverb
    evs += ev("seg_00002", scene__noise_type="babble", scene__background="noise", scene__dnsmos_bak=2.9, snr__db=23.0)
    evs.append(Evidence("seg_00002", "scene.reverb", 1.0, extractor="test", reliability=0.4))
    _, p = _label(tmp_path, segs, evs)
    assert p[("seg_00002", "background_sound")].value == "轻微的背景噪声"
    assert p[("seg_00002", "environment")].value == "无"
    assert p[("seg_00000", "background_sound")].value == "持续的背景音乐"
    assert p[("seg_00001", "background_sound")].value == "嘈杂的人声"
    assert p[("seg_00001", "environment")].value == "人声嘈杂的公共场所"


def test_age_without_model_is_cautious(tmp_path):
    segs = [seg(0, 0, 2, "A", "你好。"), seg(1, 2, 4, "B", "你好呀。")]
    evs = ev("seg_00000", gender__p_male=0.95, pitch__median_hz=100.0)
    evs += ev("seg_00001", gender__p_male=0.2, pitch__median_hz=330.0, age__band="child")
    segs.append(seg(2, 4, 6, "C", "嗯。"))
    evs += ev("seg_00002", gender__p_male=0.9, age__years=47.0)
    _, p = _label(tmp_path, segs, evs)
    assert p[("seg_00002", "age")].value is AgeGroup.MIDDLE_AGED and p[("seg_00002", "age")].evidence == ["age.years"]
    a = p[("seg_00000", "age")]
    assert a.value is AgeGroup.MIDDLE_AGED and a.confidence <= 0.35 and a.status == "abstain"
    assert p[("seg_00001", "age")].value is AgeGroup.CHILD and p[("seg_00001", "age")].status == "ok"


def test_emotion_from_arousal_and_valence_and_model(tmp_path):
    segs = [seg(i, 2 * i, 2 * i + 1.8, "A", "好。") for i in range(4)]
    evs = ev("seg_00000", emotion__arousal=1.6, emotion__valence_text=-0.6)
    evs += ev("seg_00001", emotion__arousal=-1.2, emotion__valence_text=-0.5)
    evs += ev("seg_00002", emotion__arousal=0.1, emotion__valence_text=0.0)
    evs += ev("seg_00003", emotion__model_label="happy", emotion__model_scores={"happy": 0.92, "neutral": 0.05})
    _, p = _label(tmp_path, segs, evs)
    assert p[("seg_00000", "emotion")].value.label == "愤怒"  # typed: rendered only when written
    assert p[("seg_00001", "emotion")].value.label == "悲伤"
    assert p[("seg_00002", "emotion")].value == Emotion("平静", 2)
    assert p[("seg_00003", "emotion")].value.render("zh") == "愉快（较强）"


def test_english_labels_and_paralinguistics(tmp_path):
    segs = [seg(0, 0, 3, "A", "Is that really true?", language="en")]
    evs = male("seg_00000", events__laughter=0.85, pitch__final_slope_semitones=2.5)
    _, p = _label(tmp_path, segs, evs, lang="en")
    assert p[("seg_00000", "gender")].value == "male" and p[("seg_00000", "background_sound")].value == "none"
    assert p[("seg_00000", "paralinguistic")].value == "laughter"
    assert "rising at the end" in p[("seg_00000", "pitch")].value.text
    assert p[("seg_00000", "tone")].value.endswith("questioning tone")
    assert p[("seg_00000", "accent")].value == "standard American English"


def test_no_priors_uses_transcript_only(tmp_path):
    segs = [seg(0, 0, 1.0, "A", "我们马上出发去机场吧。")]  # 10 chars in ~1 s: very fast
    _, p = _label(tmp_path, segs, male("seg_00000", rate__units_per_s=3.0), priors=False)
    assert all(not x.evidence for x in p.values())  # nothing admitted, nothing cited
    assert p[("seg_00000", "speed")].value.text.startswith("语速很快")  # from transcript timing, not the 3.0 prior
    assert p[("seg_00000", "gender")].value == "无" and p[("seg_00000", "gender")].status == "abstain"


def test_routing_keeps_field_evidence_apart(tmp_path):
    segs = [seg(0, 0, 2, "A", "好的。")]
    store, p = _label(tmp_path, segs, male("seg_00000"))
    for f in ("background_sound", "environment"):
        assert all(n.startswith(("scene.", "snr.", "events.")) for n in p[("seg_00000", f)].evidence)
    assert all(n.startswith(("rate.", "pause.")) for n in p[("seg_00000", "speed")].evidence)


def test_revision_request_suggestion_is_applied(tmp_path):
    segs = [seg(0, 0, 2, "A", "好的。")]
    store = make_store(tmp_path, segs, male("seg_00000"))
    agents.plan(stage(store, config(), lang="zh"))
    task = build_task(
        segs[0],
        ["gender", "background_sound"],
        store.contracts(REC),
        segs,
        store.evidence(REC),
        "zh",
        requests={"gender": "与该说话人不一致。", "background_sound": "无声学支持"},
        round=1,
        suggested={"gender": "female", "background_sound": "无"},  # Verdict.suggested, any alias of a closed value
    )
    out = RulesBackend().label(task)
    assert out["gender"].value is Gender.FEMALE and out["gender"].round == 1 and "suggested" in out["gender"].rationale
    assert out["background_sound"].value == "无"


def test_pauses_are_long_or_frequent_only_as_measured(tmp_path):
    """AMI dev00/dev01: a short turn with one 0.4 s pause or one 1.1 s pause was called "with long
    pauses between phrases" and "frequent pauses" (the pause share alone decided)."""
    segs = [seg(i, 3 * i, 3 * i + 1.5, "A", "It's a name I know.", language="en") for i in range(3)]
    one_short = {"pause__ratio": 0.45, "pause__count": 1, "pause__longest_s": 0.4, "rate__units_per_s": 2.0}
    one_long = {"pause__ratio": 0.7, "pause__count": 1, "pause__longest_s": 1.1, "rate__units_per_s": 2.0}
    several = {"pause__ratio": 0.4, "pause__count": 2, "pause__longest_s": 0.8, "rate__units_per_s": 2.0}
    evs = male("seg_00000", **one_short) + male("seg_00001", **one_long) + male("seg_00002", **several)
    _, p = _label(tmp_path, segs, evs, lang="en")
    speed = [p[(f"seg_0000{i}", "speed")].value.text for i in range(3)]
    rhythm = [p[(f"seg_0000{i}", "rhythm")].value for i in range(3)]
    assert "long pauses" not in speed[0] and "long pauses" in speed[1] and "long pauses" in speed[2]
    assert "frequent pauses" not in rhythm[0] + rhythm[1] and "noticeable pauses" in rhythm[1]
    assert "frequent pauses" in rhythm[2]


def test_soft_is_quieter_than_the_recording_not_a_low_gain(tmp_path):
    """AMI dev00/dev01 sit at -41 LUFS: every turn was a "soft" tone by the level alone."""
    segs = [seg(i, 3 * i, 3 * i + 2, "A", "We leave now.", language="en") for i in range(2)]
    evs = male("seg_00000", loudness__lufs=-41.0, emotion__arousal=0.0)
    evs += male("seg_00001", loudness__lufs=-50.0, emotion__arousal=0.0) + ev("recording", loudness__lufs=-42.0)
    _, p = _label(tmp_path, segs, evs, lang="en")
    assert p[("seg_00000", "tone")].value == "calm, natural declarative tone"
    assert p[("seg_00001", "tone")].value == "soft declarative tone"
    assert "recording.loudness.lufs" in p[("seg_00001", "tone")].evidence


def test_a_calm_voice_does_not_strengthen_happy_words(tmp_path):
    """Allison's "Please press 1 to mute ...": arousal -0.42 (calmer than her usual) and the word
    "please" (valence 0.56) were "happy (moderate)" at 0.55; the words alone say little."""
    segs = [seg(i, 3 * i, 3 * i + 2, "A", "Please press 1.", language="en") for i in range(2)]
    evs = ev("seg_00000", emotion__arousal=-0.42, emotion__valence_text=0.56)
    evs += ev("seg_00001", emotion__arousal=-0.6, emotion__valence_text=-0.6)
    _, p = _label(tmp_path, segs, evs, lang="en")
    happy, sad = p[("seg_00000", "emotion")], p[("seg_00001", "emotion")]
    assert happy.value == Emotion("happy", 1) and happy.confidence <= 0.35
    assert sad.value.label == "sad" and sad.confidence > happy.confidence  # a low voice agrees with sad words


def test_a_label_near_its_class_edge_is_less_sure(tmp_path):
    """Confidence is not a constant per field: the same word read off a measurement near one of
    its class edges is less sure than one far from every edge (agents/rules/certainty.py)."""
    segs = [seg(i, 3 * i, 3 * i + 2.5, "A", "We will leave the house at noon.", language="en") for i in range(4)]
    evs = ev("seg_00000", emotion__arousal=-1.6, rate__units_per_s=4.0)  # calm, far below the edge
    evs += ev("seg_00001", emotion__arousal=-0.85, rate__units_per_s=3.0)  # calm, just below it
    evs += ev("seg_00002", emotion__arousal=0.0) + ev("seg_00003", emotion__arousal=0.0)
    _, p = _label(tmp_path, segs, evs, lang="en")
    far, near = p[("seg_00000", "emotion")], p[("seg_00001", "emotion")]
    assert far.value.label == near.value.label == "calm" and far.confidence > near.confidence
    assert p[("seg_00000", "tone")].confidence > p[("seg_00001", "tone")].confidence  # both "low"
    speeds = {p[(f"seg_0000{i}", "speed")].confidence for i in range(2)}
    assert len(speeds) == 2  # two rates, two distances from the pace edges


def test_pronunciation_is_as_sure_as_its_mean_word_probability(tmp_path):
    """ "Clear" on words Whisper is sure of vs on a mean just over the slurred bar, by its standard error."""

    def words(probs):
        return [Word(f"w{i}", 0.3 * i, 0.3 * i + 0.25, p) for i, p in enumerate(probs)]

    segs = [
        seg(0, 0, 2.5, "A", "w0 w1 w2 w3 w4 w5", language="en", words=words([0.95, 0.9, 0.97, 0.92, 0.96, 0.94])),
        seg(1, 3, 5.5, "A", "w0 w1 w2 w3 w4 w5", language="en", words=words([0.9, 0.3, 0.8, 0.4, 0.7, 0.35])),
    ]
    _, p = _label(tmp_path, segs, ev("seg_00000", snr__db=30.0) + ev("seg_00001", snr__db=30.0), lang="en")
    sure, edge = p[("seg_00000", "pronunciation")], p[("seg_00001", "pronunciation")]
    assert "slurred" not in sure.value and "slurred" not in edge.value  # means 0.94 and 0.58, bar 0.55
    assert sure.confidence == 0.6 and edge.confidence < 0.45


def test_negative_words_over_a_usual_voice_are_a_topic(tmp_path):
    """AMI trn03: "not having crashes ... a long problem" (valence -0.55, arousal +0.09) was "sad
    (weak)" in a "heavy" tone; ve9qrp's "quite nice ... pleasant" (0.82, arousal 0.34) "happy (moderate)"."""
    segs = [seg(i, 3 * i, 3 * i + 2, "A", "We had a long problem.", language="en") for i in range(3)]
    evs = ev("seg_00000", emotion__arousal=0.09, emotion__valence_text=-0.55)
    evs += ev("seg_00001", emotion__arousal=0.34, emotion__valence_text=0.82)
    evs += ev("seg_00002", emotion__arousal=-0.5, emotion__valence_text=-0.55)
    _, p = _label(tmp_path, segs, evs, lang="en")
    assert p[("seg_00000", "emotion")].value.label == "neutral" and "heavy" not in p[("seg_00000", "tone")].value
    assert p[("seg_00001", "emotion")].value == Emotion("happy", 1)
    assert p[("seg_00002", "emotion")].value.label == "sad" and "heavy" in p[("seg_00002", "tone")].value


def test_a_telephone_voice_is_thin_not_full_and_thin(tmp_path):
    """Allison's "Activated." over the telephone band read "full, rounded and somewhat thin"."""
    segs = [seg(0, 0, 1, "A", "Activated.", language="en")]
    evs = ev("seg_00000", gender__p_male=0.02, pitch__median_hz=165.0, channel__origin="telephone")
    _, p = _label(tmp_path, segs, evs, lang="en")
    assert p[("seg_00000", "texture")].value == "somewhat thin"


def test_speech_acts_read_whole_words_and_particles():
    from speechannotator.agents.transcript import speech_act

    for said in ("Good idea.", "Looks fine to me.", "Going home now.", "Stopped at last."):
        assert speech_act(said) == "statement", said  # "go", "look", "stop" as word prefixes
    for said in ("Tell me about Mr. John Dashwood.", "Just put it on the desk.", "Look at this.", "Go."):
        assert speech_act(said) == "command", said
    assert speech_act("那再写五个点嘛。") == "statement" and speech_act("你自己写吗。") == "question"


def test_scene_and_event_nones_are_as_sure_as_their_evidence(tmp_path):
    """ "No identifiable environment cue" and "no paralinguistic event" were 0.55 and 0.6 whatever
    the evidence: now the scene reading's trust and the detectors' strongest score set them."""
    segs = [seg(i, 3 * i, 3 * i + 2.5, "A", "We will leave the house at noon.", language="en") for i in range(2)]
    evs = []
    for key, trust, laugh in (("seg_00000", 1.0, 0.02), ("seg_00001", 0.3, 0.4)):
        evs.append(Evidence(key, "scene.background", "none", extractor="test", reliability=trust))
        evs.append(Evidence(key, "scene.reverb", 0.1, extractor="test", reliability=trust))
        evs += ev(key, snr__db=35.0, events__laughter=laugh)
    _, p = _label(tmp_path, segs, evs, lang="en")
    env = [p[(f"seg_0000{i}", "environment")] for i in range(2)]
    para = [p[(f"seg_0000{i}", "paralinguistic")] for i in range(2)]
    assert env[0].value == env[1].value == "none" and env[0].confidence > env[1].confidence
    assert para[0].value == para[1].value == "none" and para[0].confidence > para[1].confidence
