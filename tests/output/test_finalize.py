"""Stage 11: ids, regularization, canonical values, names, tags, composition, validation."""

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "agents"))

from agents_helpers import REC, chars, config, dialogue, ev, make_store, male, seg, stage  # noqa: E402

from speechannotator import agents  # noqa: E402
from speechannotator.agents.rules import RulesBackend  # noqa: E402
from speechannotator.atomic import TEMP_PREFIX  # noqa: E402
from speechannotator.output.confidence import shown_confidences  # noqa: E402
from speechannotator.output.finalize import (  # noqa: E402
    SpeakerValue,
    canonical_value,
    finalize,
    pooled_gender,
    regularize,
    tag_transcript,
)
from speechannotator.records import Prediction, Word  # noqa: E402
from speechannotator.schema import OUTPUT_KEYS, Gender, validate_records  # noqa: E402


def _pipeline(tmp_path, segs, evs, lang="zh", **agent_cfg):
    store = make_store(tmp_path, segs, evs)
    cfg, backend = config(**agent_cfg), RulesBackend()
    agents.plan(stage(store, cfg, lang=lang))
    agents.label(stage(store, cfg, backend))
    agents.review(stage(store, cfg, backend))
    return store, finalize(stage(store, cfg, backend))


def test_records_are_valid_in_demo_key_order(tmp_path):
    segs, evs = dialogue()
    store, recs = _pipeline(tmp_path, segs, evs)
    rows = [r.ordered() for r in recs]
    assert [tuple(r) for r in rows] == [OUTPUT_KEYS] * 5
    validate_records(json.loads(json.dumps(rows, ensure_ascii=False)))
    assert [r["speaker_id"] for r in rows] == ["spk_01", "spk_02", "spk_01", "spk_01", "spk_01"]
    assert rows[0]["start_time"] == 0 and rows[2]["start_time"] == 3800 and rows[2]["end_time"] == 6000
    assert all(isinstance(r["start_time"], int) for r in rows)
    assert rows[0]["speaker_name"].startswith("说话人1_") and rows[1]["speaker_name"].startswith("说话人2_")
    assert rows[1]["gender"] == "女声" and {rows[i]["gender"] for i in (0, 2, 3, 4)} == {"男声"}
    assert rows[0]["caption"].startswith("青年男性声音") and rows[0]["caption"].endswith("。")
    assert "2人参与的对话" in rows[0]["contextual_inference"]
    assert [k for k, _ in store.records(REC)] == [s.key for s in segs] and store.stage_done(REC, "finalize")


def test_speaker_regularization_without_review(tmp_path):
    segs, evs = dialogue()
    store, recs = _pipeline(tmp_path, segs, evs, review=False)
    assert store.predictions(REC)[("seg_00002", "gender")].value is Gender.FEMALE  # the unreviewed drift ...
    assert recs[2].gender == "男声"  # ... does not survive speaker-level regularization
    assert len({r.age for r in recs if r.speaker_id == "spk_01"}) == 1
    # The confidence reported beside a value belongs to that value: the speaker's, where
    # regularization overrode the turn's own label; a person's decision is 1.0.
    conf = shown_confidences(store, REC)
    own = store.predictions(REC)[("seg_00002", "gender")].confidence
    speaker = regularize(store.segments(REC), store.predictions(REC), pooled_gender(["A", "B"], store.evidence(REC)))
    assert conf["seg_00002"]["gender"] == speaker[("seg_00002", "gender")].confidence != own
    assert conf["seg_00002"]["emotion"] == store.predictions(REC)[("seg_00002", "emotion")].confidence
    store.add_decision(REC, "seg_00002", "emotion", "calm", "happy", "ann")
    assert shown_confidences(store, REC)["seg_00002"]["emotion"] == 1.0


def test_regularize_keeps_strong_local_evidence_against_a_weak_majority():
    segs = [seg(i, 2 * i, 2 * i + 1.5, "A", "好。") for i in range(3)]

    def p(k, v, c):
        return Prediction(k, "gender", v, c, [])

    preds = {
        ("seg_00000", "gender"): p("seg_00000", "男声", 0.6),
        ("seg_00001", "gender"): p("seg_00001", "男声", 0.6),
        ("seg_00002", "gender"): p("seg_00002", "女声", 0.95),
    }
    reg = regularize(segs, preds)
    assert reg[("seg_00002", "gender")].value == "female"  # strong, and the majority share is only ~0.56
    assert reg[("seg_00002", "gender")].confidence == 0.95  # its own label, its own confidence
    preds[("seg_00002", "gender")] = p("seg_00002", "女声", 0.7)
    reg = regularize(segs, preds)
    assert reg[("seg_00002", "gender")].value == "male"
    # the speaker's value shown over the turn's own label: not the turn's 0.7 but the speaker's
    # (vote share of male ~0.66 times the male turns' confidence 0.6) times 1 - 0.7
    assert 0.35 * 0.3 < reg[("seg_00002", "gender")].confidence < 0.45 * 0.3
    assert reg[("seg_00000", "gender")].confidence == 0.6
    # the speaker's pooled evidence, where there is one, names the speaker's gender, not the labels'
    # majority, with the probability of its side
    pooled = regularize(segs, preds, {("A", "gender"): (Gender.FEMALE, 0.8)})
    assert [pooled[(s.key, "gender")] for s in segs] == [
        SpeakerValue(Gender.FEMALE, pytest.approx(0.8 * 0.4)),
        SpeakerValue(Gender.FEMALE, pytest.approx(0.8 * 0.4)),
        SpeakerValue(Gender.FEMALE, 0.7),
    ]


def test_pause_and_laughter_tags():
    words = chars("不是所有的比赛都发生在会议室里", 0.0, step=0.2, pause_after={6: 0.8})
    s = seg(0, 0, 4.5, "A", "不是所有的比赛都发生在会议室里。", words=words)
    assert tag_transcript(s, "无", "zh") == "不是所有的比赛<停顿>都发生在会议室里。"
    assert tag_transcript(s, "笑声", "zh").endswith("。<笑声>")
    # a pause at a comma is a natural phrase break, not tagged
    w2 = chars("好的我们走", 0.0, step=0.2, pause_after={1: 0.6})
    assert tag_transcript(seg(1, 0, 2, "A", "好的，我们走。", words=w2), "无", "zh") == "好的，我们走。"
    en = seg(
        2,
        0,
        3,
        "A",
        "I think so.",
        language="en",
        words=[Word("I", 0.0, 0.2), Word("think", 0.25, 0.6), Word("so.", 1.4, 1.7)],
    )
    assert tag_transcript(en, "none", "en") == "I think <pause> so."


def test_emotion_and_empty_values_are_canonical():
    assert canonical_value("emotion", "紧张(较强)", "zh") == "紧张（较强）"
    assert canonical_value("emotion", "紧张", "zh") == "紧张（中等）"
    assert canonical_value("emotion", "tense (strong)", "zh") == "tense（较强）"
    assert canonical_value("emotion", "calm（较弱）", "en") == "calm (weak)"


def test_role_name_english_and_laughter(tmp_path):
    segs = [
        seg(0, 0, 3, "H", "Hello, I'm your host for tonight.", language="en"),
        seg(1, 3.2, 5, "G", "Thanks for having me!", language="en"),
    ]
    evs = male("seg_00000", events__laughter=0.9) + ev("seg_00001", gender__p_male=0.1, pitch__median_hz=230.0)
    _, recs = _pipeline(tmp_path, segs, evs, lang="en")
    assert recs[0].speaker_name == "Host1_young adult" and recs[1].speaker_name == "Speaker2_young adult"
    assert recs[0].text_and_paralanguage.endswith("<laughter>") and recs[0].paralinguistic == "laughter"
    assert recs[1].gender == "female" and recs[0].background_sound == "none"
    assert recs[1].caption.startswith("A young adult female voice") and recs[1].contextual_inference


def test_no_context_drops_roles(tmp_path):
    segs = [seg(0, 0, 3, "H", "大家好，我是主持人小王。")]
    _, recs = _pipeline(tmp_path, segs, male("seg_00000"), context=False)
    assert recs[0].speaker_name.startswith("说话人1_")
    _, recs = _pipeline(tmp_path / "ctx", segs, male("seg_00000"))
    assert recs[0].speaker_name.startswith("主持人1_")


def test_the_write_stage_rebuilds_the_json_from_the_state(tmp_path):
    from speechannotator.output.write import write
    from speechannotator.stages import StageContext

    segs, evs = dialogue()
    store, recs = _pipeline(tmp_path, segs, evs)
    out = tmp_path / f"{REC}.json"
    write(StageContext(store, REC, config(), output=out))  # no backend needed: finalize already ran
    assert json.loads(out.read_text(encoding="utf-8")) == [r.ordered() for r in recs]
    assert not list(tmp_path.glob(f"{TEMP_PREFIX}*"))
