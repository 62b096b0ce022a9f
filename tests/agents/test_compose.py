"""The rules' composer: each fact once in a caption, and the one check on a model's caption."""

from speechannotator.agents.backend import ComposeTask
from speechannotator.agents.compose import caption
from speechannotator.records import Segment
from speechannotator.schema import AgeGroup, Gender, Value


def _task(values: dict[str, Value], lang: str) -> ComposeTask:
    seg = Segment("seg_00000", 0.0, 2.0, "A", text="Well, I never.")
    return ComposeTask(segment=seg, values=values, evidence={}, context={}, label_language=lang)


def test_the_end_of_the_contour_and_the_pauses_are_said_once():
    en = {
        "gender": Gender.MALE,
        "age": AgeGroup.MIDDLE_AGED,
        "pitch": "moderately low pitch, some rise and fall, falling clearly at the end",
        "speed": "slightly slow pace, with long pauses between phrases",
        "rhythm": "relaxed rhythm, slightly slow pace, noticeable pauses between phrases, slightly falling at the end",
        "paralinguistic": "pause between phrases",
        "emotion": "calm (weak)",
    }
    text = caption(_task(en, "en"))
    assert text.count("at the end") == 1 and "falling clearly at the end" in text
    assert text.count("pause") == 1 and "long pauses between phrases" in text
    assert "relaxed rhythm" in text  # the rhythm's own fact stays
    zh = {
        "gender": Gender.MALE,
        "pitch": "整体音高中等偏低，略有起伏，句尾明显下降",
        "speed": "语速偏慢，句间停顿较长",
        "rhythm": "节奏舒缓，语速偏慢，句间停顿明显，句尾略有下降",
    }
    text = caption(_task(zh, "zh"))
    assert text.count("句尾") == 1 and text.count("停顿") == 1 and "节奏舒缓" in text
    fast = {
        "gender": Gender.MALE,
        "speed": "语速较快且音节推进紧凑",
        "pronunciation": "咬字清晰，语速较快但每个字词发音完整",
    }
    text = caption(_task(fast, "zh"))
    assert text.count("语速较快") == 1 and "每个字词发音完整" in text  # the pronunciation does not say the pace again


def test_a_deep_texture_for_a_segment_labeled_female_is_sent_back_with_her_texture():
    from speechannotator.agents.backend import ReviewTask
    from speechannotator.agents.rules.review import review_task
    from speechannotator.records import Evidence, Prediction

    seg = Segment("seg_00000", 0.0, 2.0, "A", text="Hello there.")
    ev = {
        "pitch.median_hz": Evidence(seg.key, "pitch.median_hz", 165.0, "Hz"),
        "voice.hnr_db": Evidence(seg.key, "voice.hnr_db", 8.0),
    }
    preds = {
        "gender": Prediction(seg.key, "gender", "female", 0.8, []),
        "texture": Prediction(seg.key, "texture", "deep and slightly hoarse", 0.6, []),
    }
    task = ReviewTask(segment=seg, predictions=preds, contracts={}, evidence=ev, context={}, label_language="en")
    verdict = review_task(task)["texture"]
    assert not verdict.accepted and verdict.suggested and "deep" not in verdict.suggested, verdict
    preds["gender"] = Prediction(seg.key, "gender", "male", 0.8, [])
    assert review_task(task)["texture"].accepted  # a man's low voice may be deep
    # the other way round: the Mandarin lecturer (a man) was "full, rounded", a woman's low voice
    preds["texture"] = Prediction(seg.key, "texture", "full, rounded and slightly hoarse", 0.6, [])
    verdict = review_task(task)["texture"]
    assert not verdict.accepted and verdict.suggested and "full" not in verdict.suggested, verdict


def test_the_scene_sentence_takes_no_article_before_a_plural_place():
    from speechannotator.agents.compose import contextual_inference

    noisy = contextual_inference(_task({"environment": "noisy surroundings", "background_sound": "none"}, "en"))
    street = contextual_inference(_task({"environment": "street or roadside", "background_sound": "none"}, "en"))
    assert noisy.startswith("The speaker is in noisy surroundings.")  # AMI trn07: "in a noisy surroundings"
    assert street.startswith("The speaker is in a street or roadside.")


def test_a_texture_is_judged_by_the_norm_the_pitch_is_judged_by():
    """The Mandarin lecture: a segment whose local evidence leaned female (the review then made it
    male, like his 8 other segments) kept "圆润饱满" (a woman's low voice) beside "音高偏高"."""
    from speechannotator.agents.backend import ReviewTask
    from speechannotator.agents.rules.review import review_task
    from speechannotator.records import Contract, Evidence, Prediction

    seg = Segment("seg_00006", 30.1, 31.2, "S0", text="都是只有一个把。", language="zh")
    ev = {"pitch.median_hz": Evidence(seg.key, "pitch.median_hz", 179.0, "Hz")}
    pitch = Contract(seg.key, "pitch", "", "", ["pitch."], [], ["segment", "speaker_history"], "")
    votes = {"gender": {"values": [{"value": "male", "weight": 8.0}], "total_weight": 8.0, "segments": 8}}
    preds = {
        "gender": Prediction(seg.key, "gender", "female", 0.83, []),
        "texture": Prediction(seg.key, "texture", "圆润饱满且略带沙哑", 0.6, []),
    }
    task = ReviewTask(
        segment=seg,
        predictions=preds,
        contracts={"pitch": pitch},
        evidence=ev,
        context={"speaker_history": {"votes": votes}},
        label_language="zh",
    )
    verdict = review_task(task)["texture"]
    assert not verdict.accepted and "圆润饱满" not in str(verdict.suggested), verdict
