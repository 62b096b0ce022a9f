from agents_helpers import REC, config, dialogue, ev, make_store, stage

from speechannotator import agents
from speechannotator.records import RECORDING_KEY, speaker_key
from speechannotator.schema import LABELED_FIELDS


def _plan(tmp_path, **agent_cfg):
    segs, evs = dialogue()
    store = make_store(tmp_path, segs, evs)
    agents.plan(stage(store, config(**agent_cfg), lang="zh"))
    return store


def test_one_contract_per_segment_and_field_with_routing(tmp_path):
    store = _plan(tmp_path)
    contracts = store.contracts(REC)
    assert len(contracts) == 5 * len(LABELED_FIELDS) == 65
    c = {f: contracts[("seg_00002", f)] for f in LABELED_FIELDS}
    # speaker-profile fields may use same-speaker history
    for f in ("gender", "age", "accent"):
        assert "speaker_history" in c[f].context_scope
    # prosody / voice quality prioritise local acoustic statistics
    assert c["pitch"].priority[0].startswith("pitch.") and c["pitch"].context_scope[0] == "segment"
    assert "neighbours" not in c["texture"].context_scope and "pitch." in c["pitch"].admissible_evidence
    # emotion may use nearby turns as weak support
    assert "neighbours" in c["emotion"].context_scope and "weak" in c["emotion"].conflict_rule
    assert c["emotion"].context["previous"] == ["seg_00001"] and c["emotion"].context["next"] == ["seg_00003"]
    # scene fields stay grounded in acoustic/event evidence
    for f in ("environment", "background_sound"):
        assert c[f].context_scope == ["segment"]
        assert all(a.startswith(("scene.", "events.", "snr.", "channel.")) for a in c[f].admissible_evidence)
    assert c["gender"].objective == "判断说话人的感知性别"


def test_planner_adapts_to_undecided_gender_and_writes_context(tmp_path):
    segs, evs = dialogue()
    evs += ev("seg_00004", gender__p_male=0.45)  # the classifier is undecided on this turn
    store = make_store(tmp_path, segs, evs)
    agents.plan(stage(store, config(), lang="zh"))
    contracts = store.contracts(REC)
    assert contracts[("seg_00004", "gender")].priority[0] == "speaker.gender.p_male"
    assert "history comes first" in contracts[("seg_00004", "gender")].conflict_rule
    assert contracts[("seg_00000", "gender")].priority[0] == "gender.p_male"
    evidence = store.evidence(REC)
    summary = evidence[RECORDING_KEY]["context.summary"].value
    assert summary["n_speakers"] == 2 and summary["interaction"] == "dialogue" and summary["language"] == "zh"
    hist = evidence[speaker_key("A")]["context.history"].value
    assert hist["n_segments"] == 4 and hist["keys"][0] == "seg_00000"
    # duration-weighted speaker aggregate of a segment statistic
    agg = evidence[speaker_key("A")]["gender.p_male"].value
    assert 0.6 < agg < 0.93
    assert store.stage_info(REC, "plan")["label_lang"] == "zh"


def test_no_context_removes_history_neighbours_and_summary(tmp_path):
    store = _plan(tmp_path, context=False)
    for c in store.contracts(REC).values():
        assert c.context_scope == ["segment"] and c.context == {}


def test_no_priors_admits_no_evidence(tmp_path):
    store = _plan(tmp_path, priors=False)
    for c in store.contracts(REC).values():
        assert c.admissible_evidence == []
        assert not any(p.startswith(("pitch.", "gender.", "scene.", "emotion.")) for p in c.priority)
