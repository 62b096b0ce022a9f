"""Speaker names from address: real-shaped transcripts (segments as ASR gives them, a speaker's
turn may span several segments)."""

from speechannotator.priors.speaker_names import addressed_names, speaker_names_from_text


def test_chinese_title_names_the_other_speaker():
    turns = [
        ("S1", "王老师，您好，我想问一下这次作业的要求。", "zh"),
        ("S2", "嗯，这次主要是写一篇读书报告。", "zh"),
        ("S2", "字数不少于两千字。", "zh"),
        ("S1", "好的，那截止时间是什么时候？", "zh"),
        ("S2", "下周五之前交给我就行。", "zh"),
        ("S1", "明白了，谢谢王老师。", "zh"),
    ]
    assert speaker_names_from_text(turns) == {"S2": "王老师"}


def test_a_title_spoken_about_a_third_person_is_no_address():
    turns = [
        ("A", "昨天我去医院见了李医生。", "zh"),
        ("B", "他是张经理介绍的吗？", "zh"),
        ("A", "对，是他介绍的。", "zh"),
    ]
    assert speaker_names_from_text(turns) == {}


def test_english_vocatives_name_the_next_speaker():
    turns = [
        ("spk0", "Okay, let's get started with the quarterly numbers.", "en"),
        ("spk0", "Anna, what do you think about the new pricing?", "en"),
        ("spk1", "I think it's too aggressive for the smaller clients.", "en"),
        ("spk0", "Good point. Thanks, Anna.", "en"),
        ("spk1", "Sure. Have we heard back from legal, Tom?", "en"),
        ("spk2", "Not yet, I'll follow up today.", "en"),
    ]
    assert speaker_names_from_text(turns) == {"spk1": "Anna", "spk2": "Tom"}


def test_self_introduction_wins_and_ambiguous_address_names_nobody():
    turns = [
        ("A", "Hi everyone, I'm Maria.", "en"),
        ("B", "Welcome, Sarah.", "en"),  # B speaks between A and C without a question: to whom?
        ("C", "Thanks. Let's begin.", "en"),
        ("A", "Thank you, Sarah.", "en"),  # A thanks C, the one before and after: that is Sarah
        ("C", "So the first item is the budget.", "en"),
        ("B", "Maria, can you share the slides?", "en"),  # A introduced herself: no second name
        ("A", "Yes, one moment.", "en"),
    ]
    assert speaker_names_from_text(turns) == {"A": "Maria", "C": "Sarah"}


def test_two_names_in_one_turn_or_disagreeing_addresses_give_no_name():
    group = [("A", "Thanks, Anna. Thanks, Tom.", "en"), ("B", "You're welcome.", "en")]
    assert speaker_names_from_text(group) == {}
    split = [
        ("A", "Anna, are you there?", "en"),
        ("B", "Yes.", "en"),
        ("A", "Sorry, Lisa, can you hear me?", "en"),
        ("B", "I can.", "en"),
    ]
    assert speaker_names_from_text(split) == {}  # one voice called Anna and Lisa: half each


def test_discourse_words_are_not_vocatives():
    for text in ("Well, what now?", "Okay, so what do we do, Everyone?", "I live in Beijing, China.", "Thanks, Sir."):
        assert addressed_names(text, "en") == [], text
    assert addressed_names("张总监您好，我是小李。", "zh") == ["张总监"]
