import pytest

from speechannotator import calibration as cal
from speechannotator.priors.emotion import text_valence, valence_zh
from speechannotator.priors.textunits import count_units, english_syllables


def test_units_chinese_counts_characters_and_skips_tags():
    assert count_units("今天天气很好，我们去公园<笑声>吧", "zh") == (12, "char")


def test_units_english_syllables():
    assert [english_syllables(w) for w in ["make", "jumped", "lazy", "April", "the", "beautiful"]] == [1, 1, 2, 2, 1, 3]
    assert count_units("The quick brown fox jumps over the lazy dog.", "en") == (11, "syllable")


def test_pitch_class_is_relative_to_gender():
    assert cal.pitch_class(118, "male") == 0
    assert cal.pitch_class(118, "female") == -2  # a male-typical F0 is very low for a woman
    assert cal.pitch_class(90, "male") == -1 and cal.pitch_class(150, "male") == 1
    assert cal.pitch_class(208, "女声") == 0 and cal.pitch_class(270, "female") == 1
    with pytest.raises(ValueError):
        cal.pitch_class(0, "male")


def test_rate_class_per_language():
    assert cal.rate_class(4.6, "en") == 0
    assert cal.rate_class(2.5, "en") == -2 and cal.rate_class(3.2, "en") == -1
    assert cal.rate_class(6.2, "en") == 1
    # Mandarin's centre is lower: 4.6 chars/s is already fast-ish but still within normal+25 %.
    assert cal.rate_center("zh") < cal.rate_center("en") < cal.rate_center("es")
    assert cal.rate_class(5.5, "zh-CN") == 1


def test_valence():
    assert valence_zh("我今天很开心") > 0
    assert valence_zh("我不开心") < 0
    assert valence_zh("桌子上有一本书") is None
    v, method = text_valence("What a wonderful, happy day!", "en")
    assert method == "vaderSentiment" and v > 0.5
    v, _ = text_valence("This is terrible and I hate it.", "en")
    assert v < -0.5


def test_spoken_discourse_markers_and_politeness_carry_no_valence():
    # AMI dev00 (0.67: "okay", "well", "ready") and Allison's prompt (0.38: "please")
    for said in ("Okay, well. Um, yeah, go for it.", "Please press 1 to mute.", "No, it is a name."):
        assert text_valence(said, "en")[0] == 0.0
    assert text_valence("Okay, well I think we're ready to begin.", "en")[0] < 0.5  # "ready" alone
    assert text_valence("Yes, I love it, what a wonderful day!", "en")[0] > 0.5


def test_one_calibration_table_declared_with_ranges_and_reachable_from_the_config():
    from speechannotator.agents import make_backend
    from speechannotator.config import load_config

    params = cal.parameters()
    assert len(params) == len({name for name, *_ in params}) >= 30
    assert all(low <= default <= high for _, low, high, default in params)
    cfg = load_config(None, {"calibration": {"pitch_normal_st": 1.0, "tag_pause_s": 0.8}})
    assert make_backend(cfg).calibration is cfg.calibration
    assert cal.pitch_class(130, "male") == 0 and cfg.calibration.pitch_class(130, "male") == 1
    with pytest.raises(ValueError):
        load_config(None, {"calibration": {"pitch_normal_st": 40.0}})  # outside its declared range
    with pytest.raises(ValueError):
        load_config(None, {"calibration": {"pitch_normol_st": 1.0}})  # a misspelt name is an error
