"""Per-field routing: the LLM's fields, the rules' fields, and evidence-carrying relabel requests."""

from agents_helpers import REC, ScriptedLLM, config, dialogue, make_store, stage

from speechannotator import agents
from speechannotator.agents import llm_fields, make_backend
from speechannotator.agents.openai.routed import RoutedBackend
from speechannotator.agents.phrases import phrases
from speechannotator.agents.rules import RulesBackend


def test_fields_split_between_llm_and_rules_and_requests_carry_the_evidence(tmp_path):
    segs, evs = dialogue()
    store = make_store(tmp_path, segs, evs)
    cfg = config(review_rounds=1)
    # Round 0: a speed two levels below seg 0's measured 6.4 syllables/s; round 1: what the evidence says.
    llm = ScriptedLLM(
        [{"speed": "语速很慢，拖沓", "emotion": "平静（较弱）"}, {"speed": "语速较快", "emotion": "平静（较弱）"}]
    )
    backend = RoutedBackend(llm, RulesBackend(), ["speed", "emotion"], compact=True)
    agents.plan(stage(store, cfg, lang="zh"))
    agents.label(stage(store, cfg, backend))
    first = [t for t in llm.tasks if t.round == 0]
    assert {tuple(sorted(t.fields)) for t in first} == {("emotion", "speed")}
    # Compact evidence: only the contracts' priority names, not every admitted item.
    assert "rate.units_per_s" in first[0].evidence and "voice.hnr_db" not in first[0].evidence
    preds = store.predictions(REC)
    assert preds[("seg_00000", "gender")].backend == "rules" and preds[("seg_00000", "speed")].backend == "llm"
    agents.review(stage(store, cfg, backend))
    relabel = [t for t in llm.tasks if t.round == 1]
    assert relabel, "the rules' checks flagged no LLM speed"
    req = next(t for t in relabel if t.segment.key == "seg_00000").revision_requests["speed"]
    assert "rate.units_per_s = 6.4" in req  # the number the value contradicts travels with the request
    trail = store.predictions(REC, all_rounds=True)[("seg_00000", "speed")]
    assert [p.round for p in trail] == [0, 1] and trail[-1].value == "语速较快"
    # Rules fields are never sent to the LLM.
    assert all(set(t.fields) <= {"speed", "emotion"} for t in llm.tasks)


def test_local_default_fields_and_unknown_fields_are_refused():
    assert llm_fields(config(backend="local")) == ["emotion"]
    assert len(llm_fields(config(backend="openai"))) == 13
    try:
        make_backend(config(backend="local", llm_fields=["caption"]))
    except ValueError as exc:
        assert "caption" in str(exc)
    else:
        raise AssertionError("a composed field was accepted as an LLM label field")


def test_a_caption_that_contradicts_the_reviewed_gender_is_refused():
    from speechannotator.agents.compose import contradiction
    from speechannotator.schema import Gender

    female = {"gender": Gender.FEMALE}  # the reviewed gender, typed
    assert contradiction("A middle-aged male voice in standard American English, fast and tense.", female, "en")
    assert contradiction("He speaks slowly and calmly.", female, "en")
    assert contradiction("She asks, in a clear young voice, about Mr Dashwood.", female, "en") is None
    assert contradiction("She asks about his family.", female, "en") is None  # both named: not a contradiction
    assert contradiction("青年男声，语速平稳。", female, "zh")
    assert contradiction("青年女声，语速平稳。", female, "zh") is None
    assert contradiction("A young voice.", {"gender": "none"}, "en") is None


def test_a_pitch_or_speed_without_a_checkable_level_is_sent_back_with_the_evidence(tmp_path):
    # The 0.5B copied evidence numbers ("-0.605 st", "2.85 units/s") as values; the checks could
    # not parse a level and accepted them. Now the evidence decides and the request says so.
    segs, evs = dialogue()
    store = make_store(tmp_path, segs, evs)
    cfg = config(review_rounds=1)
    llm = ScriptedLLM([{"speed": "6.4 units/s", "pitch": "-0.605 st"}, {"speed": "语速较快", "pitch": "音调偏高"}])
    backend = RoutedBackend(llm, RulesBackend(), ["speed", "pitch"], compact=True)
    agents.plan(stage(store, cfg, lang="zh"))
    agents.label(stage(store, cfg, backend))
    agents.review(stage(store, cfg, backend))
    verdicts = store.verdicts(REC)
    first = verdicts[("seg_00000", "speed")][0]
    assert not first.accepted and "rate.units_per_s = 6.4" in first.request and "建议" in first.request
    assert not verdicts[("seg_00000", "pitch")][0].accepted
    # The rules' own labels always name a level: the new check flags none of them.
    (tmp_path / "r").mkdir()
    store2 = make_store(tmp_path / "r", *dialogue())
    agents.plan(stage(store2, cfg, lang="zh"))
    rules = RulesBackend()
    agents.label(stage(store2, cfg, rules))
    agents.review(stage(store2, cfg, rules))
    reasons = [v.reason for vs in store2.verdicts(REC).values() for v in vs if not v.accepted]
    assert reasons and not any("可核对" in r for r in reasons)  # other checks still fire (seg 2's gender)


def test_a_level_on_the_other_side_of_medium_is_sent_back_one_step_within_a_side_is_not(tmp_path):
    # seg 0 measures 6.4 syllables/s (fast). "moderate" is one level off but on the other side of
    # medium: the loop used to accept it (only two levels counted); "very fast" is one step within.
    from speechannotator.agents.levels import levels_disagree

    assert levels_disagree(1, 0) and levels_disagree(-1, 1) and levels_disagree(2, 0)
    assert not levels_disagree(1, 2) and not levels_disagree(-2, -1) and not levels_disagree(0, 0)
    segs, evs = dialogue()
    store = make_store(tmp_path, segs, evs)
    cfg = config(review_rounds=1)
    llm = ScriptedLLM([{"speed": "语速适中"}, {"speed": "语速较快"}])
    backend = RoutedBackend(llm, RulesBackend(), ["speed"], compact=True)
    agents.plan(stage(store, cfg, lang="zh"))
    agents.label(stage(store, cfg, backend))
    agents.review(stage(store, cfg, backend))
    verdicts = store.verdicts(REC)
    assert not verdicts[("seg_00000", "speed")][0].accepted
    # The relabel request names the rejected value and the suggestion as one of the allowed levels.
    req = next(t for t in llm.tasks if t.round == 1 and t.segment.key == "seg_00000").revision_requests["speed"]
    assert req.startswith('取值"语速适中"未通过审核') and '建议取值："语速很快"' in req, req
    # ... and the relabel may answer only the levels on the evidence's side of medium.
    relabel = next(t for t in llm.tasks if t.round == 1 and t.segment.key == "seg_00000")
    assert relabel.allowed_values == {"speed": ["语速较快", "语速很快"]}
    assert store.predictions(REC)[("seg_00000", "speed")].value == "语速较快"


def test_an_emotion_or_tone_that_is_a_copied_evidence_number_is_sent_back(tmp_path):
    # The 0.5B answered emotion "0.656 z (moderate)" and tone "0.0 (reliability 0.50)" on the
    # bundled example: numbers from the evidence block, which the checks used to accept.
    segs, evs = dialogue()
    store = make_store(tmp_path, segs, evs)
    cfg = config(review_rounds=1)
    llm = ScriptedLLM(
        [
            {"emotion": "0.656 z (moderate)", "tone": "0.0 (reliability 0.50)"},
            {"emotion": "平静（较弱）", "tone": "平稳"},
        ]
    )
    backend = RoutedBackend(llm, RulesBackend(), ["emotion", "tone"], compact=True)
    agents.plan(stage(store, cfg, lang="zh"))
    agents.label(stage(store, cfg, backend))
    agents.review(stage(store, cfg, backend))
    verdicts = store.verdicts(REC)
    for f in ("emotion", "tone"):
        assert not verdicts[("seg_00001", f)][0].accepted, f
    assert verdicts[("seg_00001", "emotion")][-1].accepted or len(verdicts[("seg_00001", "emotion")]) == 1
    assert store.predictions(REC)[("seg_00001", "tone")].value == "平稳"


def test_an_emotion_more_intense_than_the_prosody_carries_is_sent_back(tmp_path):
    # The 0.5B labeled all 8 calm turns of the bundled example "happy (very strong)".
    segs, evs = dialogue()
    store = make_store(tmp_path, segs, evs)
    cfg = config(review_rounds=1)
    llm = ScriptedLLM([{"emotion": "开心（极强）"}, {"emotion": "平静（较弱）"}])
    backend = RoutedBackend(llm, RulesBackend(), ["emotion"], compact=True)
    agents.plan(stage(store, cfg, lang="zh"))
    agents.label(stage(store, cfg, backend))
    agents.review(stage(store, cfg, backend))
    first = store.verdicts(REC)[("seg_00001", "emotion")][0]
    assert not first.accepted and "强度" in first.reason, first
    assert store.predictions(REC)[("seg_00001", "emotion")].value == "平静（较弱）"
    # The relabel may name any emotion, but not the rejected intensity: told it in words, the 0.5B repeated it.
    relabel = [t for t in llm.tasks if t.round == 1 and t.segment.key == "seg_00001"][0]
    allowed = relabel.allowed_values["emotion"]
    assert (
        "开心（极强）" not in allowed
        and "平静（较弱）" in allowed
        and any(a.startswith(phrases("zh").EMOTIONS["happy"]) for a in allowed)
    )
