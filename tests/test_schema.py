import pytest

from speechannotator.schema import (
    CLOSED_FIELDS,
    FIELDS,
    LABELED_FIELDS,
    OUTPUT_KEYS,
    canonical_closed,
    closed_value,
    normalize_text,
    validate_records,
)


@pytest.mark.parametrize(
    "field,value,canon",
    [
        ("gender", "男", "male"),
        ("gender", "男声", "male"),
        ("gender", "M", "male"),
        ("gender", "Male.", "male"),
        ("gender", "female voice", "female"),
        ("gender", "女声（较确定）", "female"),
        ("gender", " FEMALE ", "female"),
        ("age", "中年", "middle-aged"),
        ("age", "Middle aged", "middle-aged"),
        ("age", "young adult voice", "young adult"),
        ("age", "老年人", "elderly"),
        ("gender", "无", "none"),
        ("age", "N/A", "none"),
        ("gender", "", "none"),
        ("gender", "robot", None),
        ("age", "male", None),
    ],
)
def test_canonical_closed(field, value, canon):
    assert canonical_closed(field, value) == canon


def test_closed_value_round_trip():
    for lang in ("zh", "en"):
        for canon in ("male", "female"):
            assert canonical_closed("gender", closed_value("gender", canon, lang)) == canon
        for canon in ("child", "teenager", "young adult", "middle-aged", "elderly"):
            assert canonical_closed("age", closed_value("age", canon, lang)) == canon


def test_field_sets():
    assert len(FIELDS) == 15 and set(CLOSED_FIELDS) <= set(FIELDS) and len(LABELED_FIELDS) == 13
    assert OUTPUT_KEYS[:7] == (
        "speaker_id",
        "speaker_name",
        "text",
        "text_and_paralanguage",
        "start_time",
        "end_time",
        "language",
    )
    assert normalize_text("Ａ b，c!") == "abc"


def test_validate_records_rejects_bad_order_and_keys():
    rec = dict.fromkeys(OUTPUT_KEYS, "x")
    rec.update(speaker_id="spk_01", start_time=10, end_time=20)
    validate_records([rec])
    swapped = dict(reversed(list(rec.items())))
    with pytest.raises(ValueError, match="keys"):
        validate_records([swapped])
    later = dict(rec, start_time=0, end_time=5)
    with pytest.raises(ValueError, match="time order"):
        validate_records([rec, later])
    with pytest.raises(ValueError):
        validate_records([dict(rec, end_time=5)])


def test_a_contract_admits_names_prefixes_and_scoped_aggregates():
    from speechannotator.records import Contract

    c = Contract("k", "pitch", "o", "f", ["pitch.", "gender.p_male"], [], ["segment", "speaker_history"], "")
    assert c.admits("pitch.median_hz") and c.admits("gender.p_male") and not c.admits("gender.label")
    assert not c.admits("pitchiness") and c.admits("speaker.pitch.median_hz")
    assert not c.admits("recording.pitch.median_hz")  # the recording scope is not in this contract


def test_typed_values_render_once_and_come_back_from_json():
    from speechannotator.schema import Emotion, Level, shown, typed_value

    assert Emotion("紧张", 3).render("zh") == "紧张（较强）" and Emotion("tense", 3).render("en") == "tense (strong)"
    # external text (an LLM answer, a person's edit): either language's scale, else moderate
    assert Emotion.parse("tense  (较强)") == Emotion("tense", 3) and Emotion.parse("calm") == Emotion("calm", 2)
    assert Emotion(" x", 9).render("en") == " x (very strong)"  # a step off the scale is clamped
    assert typed_value({"label": "calm", "intensity": 1}) == Emotion("calm", 1)
    assert typed_value({"step": -1, "text": "low pitch, flat"}) == Level(-1, "low pitch, flat")
    assert shown(Level(-1, "low pitch"), "en") == "low pitch" and shown("无", "zh") == "无"


def test_schema_doctests():
    import doctest

    from speechannotator import schema

    assert doctest.testmod(schema).failed == 0


def test_calibration_certainty_and_item_run_doctests():
    import doctest

    from speechannotator import calibration
    from speechannotator.agents.rules import certainty
    from speechannotator.engine import item_run

    for module in (calibration, certainty, item_run):
        result = doctest.testmod(module)
        assert result.attempted > 0 and result.failed == 0
