"""Free-text checks (agents/free_text.py) and the relabels they drive, with a scripted LLM.

The bad texts are the local models' own answers on the bundled example (docs/agents-llm.md).
"""

from __future__ import annotations

import doctest
import json

from agents_helpers import REC, ScriptedLLM, config, dialogue, make_store, stage

from speechannotator import agents
from speechannotator.agents import fact_words
from speechannotator.agents import free_text as ft
from speechannotator.agents.backend import ComposeTask
from speechannotator.agents.facts import distinctive_facts, reviewed_sentence, salience, salient_fact
from speechannotator.agents.openai.backend import OpenAIBackend, OpenAIOptions
from speechannotator.agents.openai.prompts import compose_messages, instruction_text, label_messages
from speechannotator.agents.openai.routed import RoutedBackend
from speechannotator.agents.rules import RulesBackend
from speechannotator.config import EndpointConfig
from speechannotator.output.finalize import finalize
from speechannotator.records import Segment
from speechannotator.servers.httpkit import ScriptedServer, chat_reply

FEMALE = {"gender": "female", "age": "young adult", "accent": "standard American English", "tone": "declarative"}
MALE = {**FEMALE, "gender": "male", "age": "middle-aged"}


def facts(values=FEMALE, **kw) -> ft.TextFacts:
    return ft.TextFacts(values=values, lang="en", instructions=instruction_text("en"), **kw)


def kind(field: str, text: str, f: ft.TextFacts) -> str | None:
    found = ft.problem(field, text, f)
    return found[0] if found else None


def test_each_check_names_its_problem_and_natural_text_passes():
    # A value list: the 1.5B's "the pitch is ..., the tone is ..." and the 0.5B's internal name.
    listed = (
        "The speaker is male, middle-aged. The pitch is moderately low, and the speed is moderate. "
        "The emotion is calm, and the tone is urgent yet firm declarative. The rhythm is steady."
    )
    assert kind("caption", listed, facts(MALE)) == "list"
    assert kind("caption", "A calm voice; the speaker name is Speaker2_middle-aged.", facts(MALE)) == "list"
    # A sentence looped (the 0.5B, until the length cap) and a contextual inference that repeats the caption.
    loop = "He has a moderate rhythm and a moderate pace. " * 3
    assert kind("contextual_inference", loop, facts(MALE)) == "repeat"
    cap = "A deep, unhurried male voice. He sounds calm and sure of himself."
    assert kind("contextual_inference", "He sounds calm and sure of himself.", facts(MALE, caption=cap)) == (
        "same_as_caption"
    )
    phrase = (  # the 0.5B, verbatim
        "The speaker is a middle-aged male who is making amiable himself, the pitch is moderate, the speaker is "
        "making amiable himself, and the speaker is making amiable himself."
    )
    assert kind("contextual_inference", phrase, facts(MALE)) == "repeat"
    clauses = (  # the 0.5B with worked examples: one clause twice within a sentence
        "The young woman speaks slowly; her voice is slightly hoarse and medium in pitch; she sounds happy; "
        "her voice is slightly hoarse and medium in pitch."
    )
    assert kind("caption", clauses, facts()) == "repeat"
    # The relabel request's own reason given back as the text (the 0.5B did).
    assert kind("contextual_inference", "It quotes the transcript word for word, describe.", facts()) == "copied"
    # "He" for a woman, in the contextual inference too (it used to be read for captions only).
    assert kind("contextual_inference", "He is not an ill-disposed young man.", facts()) == "gender"
    assert kind("caption", "A middle-aged male voice, low and slow.", facts()) == "gender"
    # Cut mid-sentence: no end mark, or ending on a title ("... related to Mr.").
    assert kind("caption", "A bright young woman's voice that rises and", facts()) == "cut"
    assert kind("caption", "A bright young woman's voice. She discusses a topic related to Mr.", facts()) == "cut"
    # The instructions' own words as the value.
    copied = "how this speaker's voice and delivery sound in this turn"
    assert kind("caption", copied[0].upper() + copied[1:] + ".", facts()) == "copied"
    # Quoting the transcript word for word.
    said = "Was he a bad man, then, in your opinion?"
    assert kind("caption", "Her light voice asks: was he a bad man then.", facts(transcript=said)) == "quote"
    # A name the turn mentions is not a quote ("about Mr. John Dashwood": three of the four words are names).
    asked = "Tell me about Mr. John Dashwood."
    assert not ft.quotes_transcript("She is talking about Mr. John Dashwood.", asked)
    assert ft.quotes_transcript("She says tell me about him.", "Tell me about him, please.")
    # An opening another caption of the recording already used (soft: kept when no retry fixes it).
    used = ft.openings_of(["The speaker is a young adult female with a clear voice."])
    again = "The speaker is a young woman whose light voice lifts at the end."
    assert kind("caption", again, facts(used_openings=used)) == "opening" and "opening" in ft.SOFT
    # An earlier turn's caption again (the 1.5B, two turns with the same reviewed facts): not soft.
    twice = "A young woman speaks calmly at an easy pace."
    assert kind("caption", twice, facts(earlier=(twice,))) == "same_caption" and "same_caption" not in ft.SOFT
    # A one-word tone ("neutral", the 0.5B without the example) says no attitude or speech act.
    assert kind("tone", "neutral", facts()) == "bare" and kind("tone", "calm questioning tone", facts()) is None
    # The 1.5B without the example: emotion's format as the tone, and the transcript's words as the tone.
    assert kind("tone", "neutral (moderate)", facts()) == "bare"
    said = "Amiable woman, he might have been made still more respectable than he was."
    assert kind("tone", "Amiable woman he might have been made still more", facts(transcript=said)) == "quote"
    # Natural, varied, agreeing text passes every check.
    good_cap = "A light, young female voice asks her question at an easy pace. She sounds calm and curious."
    good_ctx = "She is questioning another speaker about Mr. John Dashwood's character, probably in a quiet talk."
    assert ft.problem("caption", good_cap, facts(transcript=said, used_openings=used)) is None
    assert ft.problem("contextual_inference", good_ctx, facts(transcript=said, caption=good_cap)) is None
    assert ft.problem("contextual_inference", "She asks about his family.", facts()) is None
    assert ft.sentences("Mr. Dashwood came. He left.") == ["Mr. Dashwood came.", "He left."]


def test_prompts_carry_no_sample_values_and_compose_gets_the_reviewed_fields_and_transcript():
    seg = Segment("seg_00003", 0.0, 2.0, "B", text="Was he a bad man?", language="en")
    _, user = label_messages(
        segment=seg,
        fields=["tone", "background_sound", "emotion"],
        contracts={},
        evidence={},
        context={},
        lang="en",
        revision_requests={},
        cited={f: ["transcript"] for f in ("tone", "background_sound", "emotion")},
        with_audio=False,
        schema_in_prompt=None,
    )
    for copied in ("urgent yet firm declarative tone", "steady engine rumble", "e.g."):
        assert copied not in user
    # Emotion: the format and its vocabulary; the local backend's schema makes the pairs an enum
    # (told the format without an example, the 0.5B answered a bare "happy").
    assert "<emotion> (<intensity>)" in user and "fearful" in user
    from speechannotator.agents.openai.backend import level_choices

    pairs = level_choices(["emotion"], "en")["emotion"]
    assert "calm (weak)" in pairs and "happy" not in pairs and len(pairs) == 50
    values = {**FEMALE, "speaker_name": "Speaker2_young adult", "paralinguistic": "none"}
    ctx = {"previous": [{"text": "He is not an ill-disposed young man.", "same_speaker": False}]}
    _, user = compose_messages(
        segment=seg, values=values, evidence={}, context=ctx, lang="en", schema_in_prompt=None, used_openings=("a b",)
    )
    data = json.loads(user.split("<recording_data>\n")[1].split("\n</recording_data>")[0])
    assert data["this_turn"]["transcript"] == "Was he a bad man?" and data["speaker"]["gender"] == "female"
    assert data["neighbouring_turns"] == [
        {"when": "before", "who": "another speaker", "said": ctx["previous"][0]["text"]}
    ]
    assert "Speaker2" not in user and "paralinguistic" not in data.get("delivery", {})  # no ids, no none values
    assert '["a b"]' in user  # the openings already used


def _compose_server(answers: list[dict[str, str]]):
    return ScriptedServer(lambda body, i: chat_reply(json.dumps(answers[min(i, len(answers) - 1)])))


class RulesLike:
    name = "rules"

    def compose(self, task):
        return {"caption": "rules caption.", "contextual_inference": "rules inference."}


def _compose(answers, earlier=()) -> tuple[dict[str, str], list[dict]]:
    seg = Segment("seg_00002", 0.0, 2.0, "B", text="Was he a bad man?", language="en")
    task = ComposeTask(seg, dict(FEMALE), {}, {}, "en", earlier_captions=list(earlier))
    with _compose_server(answers) as srv:
        ep = EndpointConfig(url=srv.url, timeout_s=5.0, max_retries=2)
        backend = OpenAIBackend(ep, options=OpenAIOptions(retry_backoff_s=0.01), fallback=RulesLike())
        out = backend.compose(task)
        return out, srv.chat_requests()


def test_a_rejected_text_is_asked_again_with_the_reason_then_falls_back_to_the_rules():
    good_cap = "A light young female voice asks her question evenly. She sounds calm."
    good_ctx = "She is questioning another speaker about a man they both know."
    looped = "She is asking a question. She is asking a question. She is asking a question."
    out, bodies = _compose([{"caption": good_cap, "contextual_inference": looped}, {"contextual_inference": good_ctx}])
    assert out == {"caption": good_cap, "contextual_inference": good_ctx}
    second = bodies[1]["messages"][-1]["content"]
    # Only the rejected field is asked again, with the reason, the rejected text and the accepted caption.
    assert bodies[1]["response_format"]["json_schema"]["schema"]["required"] == ["contextual_inference"]
    assert "twice" in second and "She is asking a question" in second and good_cap in second
    assert bodies[1].get("temperature", 0) == 0  # the prompt changed: no hotter (irreproducible) retry
    # Still failing after the bounded retries (3 calls): the rules write it.
    out, bodies = _compose(
        [
            {"caption": "He speaks slowly.", "contextual_inference": good_ctx},
            {"caption": "He speaks slowly and low."},
            {"caption": "His voice is slow."},
        ]
    )
    assert len(bodies) == 3 and out == {"caption": "rules caption.", "contextual_inference": good_ctx}
    # The rejected text answered again unchanged: no further retry (it would repeat), the rules write it.
    out, bodies = _compose([{"caption": "He speaks slowly.", "contextual_inference": good_ctx}])
    assert len(bodies) == 2 and out["caption"] == "rules caption."


def test_a_caption_opening_like_an_earlier_one_is_asked_to_vary_and_kept_if_it_cannot():
    earlier = ["The speaker is a young adult female with a clear voice."]
    same = "The speaker is a young woman; her light voice rises at the end."
    varied = "Light and unhurried, her young voice rises at the end of the question."
    ctx = "She is questioning another speaker about a man they both know."
    out, bodies = _compose([{"caption": same, "contextual_inference": ctx}, {"caption": varied}], earlier=earlier)
    assert out["caption"] == varied and "the speaker is a" in bodies[0]["messages"][-1]["content"]
    assert "already used" in bodies[1]["messages"][-1]["content"]
    out, bodies = _compose([{"caption": same, "contextual_inference": ctx}], earlier=earlier)
    assert len(bodies) == 2 and out["caption"] == same  # soft: kept; the same answer again ends the retries


def test_a_tone_copied_from_the_instructions_is_relabeled_with_the_reason_then_the_rules_tone(tmp_path):
    segs, evs = dialogue()
    store = make_store(tmp_path, segs, evs)
    cfg = config(review_rounds=1)
    copied = "the attitude of the delivery and what this turn's words do"
    llm = ScriptedLLM([{"tone": copied}, {"tone": copied}])
    backend = RoutedBackend(llm, RulesBackend(), ["tone"], compact=True)
    agents.plan(stage(store, cfg, lang="zh"))
    agents.label(stage(store, cfg, backend))
    agents.review(stage(store, cfg, backend))
    first = store.verdicts(REC)[("seg_00000", "tone")][0]
    assert not first.accepted and "instructions" in first.request
    relabel = next(t for t in llm.tasks if t.round == 1 and t.segment.key == "seg_00000")
    assert "instructions" in relabel.revision_requests["tone"]
    final = store.predictions(REC)[("seg_00000", "tone")]
    assert final.backend == "rules" and final.value != copied and "text check" in final.rationale
    # Finalize hands each compose the captions already written, in time order.
    finalize(stage(store, cfg, backend))
    assert [len(c) for c in llm.composed] == list(range(len(segs)))


def test_the_reviewed_facts_as_one_sentence_and_the_checks_that_it_is_said_again_not_copied_or_contradicted():
    values = {
        **MALE,
        "pitch": "moderately low pitch, some rise and fall, rising at the end",
        "speed": "slightly slow pace, with long pauses between phrases",
        "texture": "deep and slightly hoarse",
        "emotion": "angry (strong)",
        "paralinguistic": "none",
        "background_sound": "none",
    }
    said = reviewed_sentence(values, "en")
    assert said == (  # a strong emotion is what is most distinctive about the turn: it leads
        "Sounding very angry, a middle-aged man with a deep and slightly hoarse voice speaks standard American "
        "English at a slightly slow pace and a moderately low pitch."
    )
    zh = {
        "gender": "女",
        "age": "青年",
        "pitch": "整体音高中等偏高，句尾略有下降",
        "speed": "语速适中",
        "emotion": "平静（中等）",
    }
    assert reviewed_sentence(zh, "zh") == "一位青年女性，语速适中，整体音高中等偏高，情绪平静。"
    f = facts(values, reviewed=said, transcript="Tell me about Mr. John Dashwood.", neighbours=("Was he a mad man?",))
    own = "Furious, the middle-aged American man lets his deep, slightly rough voice move slowly and stay low in pitch."
    assert kind("caption", own, f) is None
    assert kind("caption", said.replace("speaks", "is speaking"), f) == "copied_description"
    assert kind("caption", "A deep, rough voice moves slowly and stays low.", f) == "who"
    assert kind("caption", "He speaks quickly in a deep voice.", f) == "disagrees"
    assert kind("caption", "His high-pitched voice moves slowly.", f) == "disagrees"
    # The 0.5B took the person the turn talks about for the speaker.
    assert kind("caption", "Mr. John Dashwood is a mix of a gentle low-pitched tone and a slow man.", f) == "name"
    assert kind("contextual_inference", "He asks again: was he a mad man?", f) == "quote_other"
    # DRY's side effect on the 0.5B (verbatim): a word of the description written without its space.
    assert kind("caption", "A middle-aged man with a deep and slightly hoarsevoice sounds furious.", f) == "glued"
    # The 1.5B's Chinese leaking into an English caption (verbatim in substance).
    assert (
        kind("caption", "A man with a deep, rough voice speaks standard American英语, sounding furious.", f) == "script"
    )
    # What can be mended without asking again (the 0.5B's own answers, verbatim in substance).
    assert ft.repaired("His slightly hoarsevoice stays moderatelyLow; he sounds furious.", f) == (
        "His slightly hoarse voice stays moderately low; he sounds furious."
    )
    with_reason = own + " It copies the voice description word for word; say it again in your own words."
    assert ft.repaired(with_reason, f) == own  # the checker's reason appended to the rewrite
    assert ft.repaired(own, f) == own


def test_the_facts_sentence_opens_with_what_is_distinctive_about_the_turn():
    plain = {
        **FEMALE,
        "pitch": "medium pitch, some rise and fall",
        "speed": "moderate pace, fluent delivery",
        "texture": "clear voice",
        "emotion": "happy (very weak)",  # the rules' reading of almost any calm turn: not distinctive
        "paralinguistic": "none",
        "background_sound": "none",
    }
    assert salient_fact(plain, "en") is None
    assert reviewed_sentence(plain, "en") == (
        "A young woman with a clear voice speaks standard American English at a moderate pace and a medium pitch, "
        "sounding happy."
    )
    # The bundled example's turns (their reviewed values): each opens where it differs, every fact kept.
    lower = {**plain, "pitch": "low pitch, clearly varying intonation, lower than the speaker's usual"}
    lower |= {"paralinguistic": "pause between phrases", "texture": "slightly hoarse"}
    assert salience(lower, "en") == {
        "emotion": 0, "scene": 0, "paralinguistic": 2, "pitch": 3, "speed": 0, "texture": 1
    }  # fmt: skip
    assert reviewed_sentence(lower, "en") == (
        "At a low pitch, lower than her usual, a young woman with a slightly hoarse voice speaks standard American "
        "English at a moderate pace, sounding happy, with a pause between phrases."
    )
    slow = {**plain, "speed": "slightly slow pace, with long pauses between phrases", "texture": "slightly hoarse"}
    assert reviewed_sentence(slow, "en").startswith(
        "At a slightly slow pace, with long pauses between phrases, a young woman with a slightly hoarse voice speaks"
    )
    hoarse = {**plain, **MALE, "texture": "deep and slightly hoarse", "emotion": "neutral (moderate)"}
    assert reviewed_sentence(hoarse, "en").startswith("With a deep and slightly hoarse voice, a middle-aged man speaks")
    happy = {**plain, **MALE, "emotion": "happy (moderate)"}
    assert reviewed_sentence(happy, "en").startswith("Sounding happy, a middle-aged man with a clear voice speaks")
    street = {**happy, "background_sound": "traffic noise", "environment": "busy street"}  # scene ties emotion: 3 > 2
    assert reviewed_sentence(street, "en") == (
        "In a busy street, over traffic noise, a middle-aged man with a clear voice speaks standard American English "
        "at a moderate pace and a medium pitch, sounding happy."
    )
    # An opening an earlier caption used: the next distinctive fact leads, then the plain order.
    said = reviewed_sentence(lower, "en")
    assert reviewed_sentence(lower, "en", [said]).startswith("With a pause between phrases, a young woman with a")
    earlier = [said, "With a pause between phrases, she speaks.", "With a slightly hoarse voice, she speaks."]
    assert reviewed_sentence(lower, "en", earlier).startswith("A young woman with a slightly hoarse voice speaks")
    assert reviewed_sentence(plain, "en", [reviewed_sentence(plain, "en")]) == reviewed_sentence(plain, "en")
    # In Chinese too: a pitch above the speaker's usual leads, said with the level.
    zh = {
        "gender": "女",
        "age": "青年",
        "pitch": "整体音高中等，较其平时偏高",
        "speed": "语速适中",
        "emotion": "平静（中等）",
    }
    assert reviewed_sentence(zh, "zh") == "整体音高中等，较其平时偏高，一位青年女性，语速适中，情绪平静。"


def test_the_facts_sentence_is_the_caption_when_no_model_caption_passes():
    values = {**FEMALE, "pitch": "medium pitch, higher than the speaker's usual", "speed": "moderate pace"}
    said = reviewed_sentence(values, "en")
    seg = Segment("seg_00002", 0.0, 2.0, "B", text="Was he a bad man?", language="en")
    answers = [{"caption": said}] * 3  # the description itself each time: a copy, then stuck
    with _compose_server(answers) as srv:
        ep = EndpointConfig(url=srv.url, timeout_s=5.0, max_retries=2)
        opts = OpenAIOptions(retry_backoff_s=0.01, compose_from_facts=True, compose_keys=("caption",))
        out = OpenAIBackend(ep, options=opts, fallback=RulesLike()).compose(ComposeTask(seg, values, {}, {}, "en"))
    assert out == {"caption": said, "contextual_inference": "rules inference."}
    assert said.startswith("At a medium pitch, higher than her usual, a young woman")
    # Not from facts (the openai backend's own prompt): the rules' caption stays the fallback.
    with _compose_server([{"caption": "The pitch is medium, the speed is moderate, the tone is flat."}] * 3) as srv:
        ep = EndpointConfig(url=srv.url, timeout_s=5.0, max_retries=2)
        out = OpenAIBackend(ep, options=OpenAIOptions(retry_backoff_s=0.01), fallback=RulesLike()).compose(
            ComposeTask(seg, values, {}, {}, "en")
        )
    assert out["caption"] == "rules caption."


def test_compose_from_facts_sends_the_description_asks_only_the_models_fields_and_retries_a_copy():
    values = {**FEMALE, "pitch": "medium pitch, rising at the end", "speed": "moderate pace", "texture": "clear voice"}
    said = reviewed_sentence(values, "en")
    copy = said.rstrip(".") + ", she says."
    own = "Her young voice, clear and American, keeps a medium pitch and an even pace as she speaks."
    seg = Segment("seg_00002", 0.0, 2.0, "B", text="Was he a bad man?", language="en")
    task = ComposeTask(seg, values, {}, {}, "en")
    answers = [{"caption": copy}, {"caption": own}]
    with _compose_server(answers) as srv:
        ep = EndpointConfig(url=srv.url, timeout_s=5.0, max_retries=2)
        opts = OpenAIOptions(retry_backoff_s=0.01, compose_from_facts=True, compose_keys=("caption",))
        out = OpenAIBackend(ep, options=opts, fallback=RulesLike()).compose(task)
        bodies = srv.chat_requests()
    assert out == {"caption": own, "contextual_inference": "rules inference."}  # inference: the rules', no call
    assert len(bodies) == 2 and all(
        b["response_format"]["json_schema"]["schema"]["required"] == ["caption"] for b in bodies
    )
    first = bodies[0]["messages"][-1]["content"]
    data = json.loads(first.split("<recording_data>\n")[1].split("\n</recording_data>")[0])
    assert data == {"voice_description": said}  # no field values, no transcript, no evidence
    assert "word for word" in bodies[1]["messages"][-1]["content"]


def test_a_caption_that_leaves_out_a_fact_of_the_description_is_sent_back_naming_it():
    values = {
        **FEMALE,
        "pitch": "high pitch, higher than the speaker's usual",
        "speed": "moderate pace, fluent delivery",
        "texture": "clear voice",
        "emotion": "happy (very weak)",
        "paralinguistic": "pause between phrases",
    }
    said = reviewed_sentence(values, "en")
    assert said.startswith("At a high pitch, higher than her usual, a young woman with a clear voice speaks")
    f = facts(values, reviewed=said, distinctive=tuple(distinctive_facts(values, "en")))
    # The 0.5B's rewrites (verbatim but for the level): pace, emotion and the pause dropped. The pause is
    # distinctive (it may lead the sentence): sent back; a text that still drops it is not kept.
    dropped = (
        "At a high pitch, higher than her usual, the young woman with a clear voice speaks standard American English."
    )
    assert ft.problem("caption", dropped, f) == (
        "omitted",
        "It leaves out the non-verbal event ('pause between phrases'); keep every fact of the voice description.",
    )
    # Only ordinary facts dropped (a moderate pace, a very weak feeling): sent back, kept if no retry says them.
    with_pause = dropped.rstrip(".") + ", pausing between phrases."
    assert ft.problem("caption", with_pause, f) == (
        "omitted_ordinary",
        "It leaves out the pace ('moderate pace'); keep every fact of the voice description.",
    )
    assert "omitted_ordinary" in ft.SOFT and "omitted" not in ft.SOFT
    no_accent = (
        "At a high pitch, higher than her usual, the young woman with a clear voice speaks standard English at a "
        "moderate pace, sounding happy, with a pause between phrases."
    )
    assert fact_words.omitted_fact(no_accent, values, said) == ("the accent", "standard American English")
    # Each fact said in other words passes: synonyms from one table (phrases.en SAID_*), levels on their side.
    own = (
        "Pitched high, above what is typical for her, this young American woman talks cheerfully at an even "
        "pace, her voice crisp, pausing briefly between phrases."
    )
    assert ft.problem("caption", own, f) is None
    assert fact_words.omitted_fact(own.replace("above what is typical for her", "up"), values, said)[0] == (
        "how the pitch compares with the speaker's usual"
    )
    slow = {
        **values,
        "speed": "slightly slow pace",
        "pitch": "moderately low pitch",
        "texture": "deep and slightly hoarse",
    }
    said_slow = reviewed_sentence(slow, "en")
    assert fact_words.omitted_fact(own, slow, said_slow) == ("the voice quality", "deep and slightly hoarse")
    rough = (
        "Low in pitch, the young American woman talks cheerfully at an even pace, her voice deep and husky, pausing."
    )
    assert fact_words.omitted_fact(rough, slow, said_slow) == (
        "the pace",
        "slightly slow pace",
    )  # "even" is no slow word
    # Scene and event words from the parse tables; without a description (not from facts) nothing is asked.
    street = {**values, "background_sound": "traffic noise", "environment": "busy public place"}
    assert fact_words.omitted_fact(own, street, said) == ("the background", "traffic noise")
    assert fact_words.omitted_fact(own + " Cars rumble past in a busy public square.", street, said) is None
    assert ft.problem("caption", dropped, facts(values)) is None


def test_a_caption_that_names_the_speaker_twice_in_a_sentence_is_sent_back():
    values = {**MALE, "texture": "deep and slightly hoarse", "speed": "moderate pace", "pitch": "moderately low pitch"}
    garbled = (  # the 0.5B, verbatim
        "The man speaks in a deep and slightly hoarse voice with a middle-aged man speaking standard American "
        "English, at a moderate pace and a moderately low pitch. The man sounds neutral."
    )
    assert kind("caption", garbled, facts(values)) == "doubled"
    fine = "A middle-aged man speaks in a deep, slightly hoarse voice. The man sounds neutral."
    assert kind("caption", fine, facts(values)) is None


def test_from_facts_the_caption_must_begin_with_the_descriptions_lead_words():
    values = {**FEMALE, "pitch": "low pitch, lower than the speaker's usual", "speed": "moderate pace"}
    assert reviewed_sentence(values, "en").startswith("At a low pitch, lower than her usual,")
    seg = Segment("seg_00002", 0.0, 2.0, "B", text="Was he a bad man?", language="en")
    own = "At a low pitch, below her usual, the young American woman speaks at an unhurried, moderate pace."
    with _compose_server([{"caption": own}]) as srv:
        ep = EndpointConfig(url=srv.url, timeout_s=5.0, max_retries=2)
        opts = OpenAIOptions(
            retry_backoff_s=0.01, compose_from_facts=True, compose_keys=("caption",), caption_lead=True
        )
        out = OpenAIBackend(ep, options=opts, fallback=RulesLike()).compose(ComposeTask(seg, values, {}, {}, "en"))
        body = srv.chat_requests()[0]
    assert out["caption"] == own
    schema = body["response_format"]["json_schema"]["schema"]["properties"]["caption"]
    assert (
        schema["pattern"].startswith("^At a low")
        and "Begin the caption with these words" in body["messages"][-1]["content"]
    )
    import jsonschema
    import pytest

    jsonschema.validate({"caption": own}, body["response_format"]["json_schema"]["schema"])
    with pytest.raises(jsonschema.ValidationError):  # the speaker moved back to the front (the 1.5B did)
        jsonschema.validate({"caption": "A young woman speaks."}, body["response_format"]["json_schema"]["schema"])
    # Off by default (the openai endpoints' own prompt): no pattern.
    with _compose_server([{"caption": own}]) as srv:
        ep = EndpointConfig(url=srv.url, timeout_s=5.0, max_retries=2)
        opts = OpenAIOptions(retry_backoff_s=0.01, compose_from_facts=True, compose_keys=("caption",))
        OpenAIBackend(ep, options=opts, fallback=RulesLike()).compose(ComposeTask(seg, values, {}, {}, "en"))
        body = srv.chat_requests()[0]
    assert "pattern" not in body["response_format"]["json_schema"]["schema"]["properties"]["caption"]


def test_a_dropped_fact_is_asked_again_with_its_name_then_the_facts_sentence():
    seg = Segment("seg_00002", 0.0, 2.0, "B", text="Was he a bad man?", language="en")

    def run(values, answers):
        with _compose_server(answers) as srv:
            ep = EndpointConfig(url=srv.url, timeout_s=5.0, max_retries=2)
            opts = OpenAIOptions(retry_backoff_s=0.01, compose_from_facts=True, compose_keys=("caption",))
            out = OpenAIBackend(ep, options=opts, fallback=RulesLike()).compose(ComposeTask(seg, values, {}, {}, "en"))
            return out["caption"], srv.chat_requests()

    angry = {**FEMALE, "speed": "moderate pace", "pitch": "medium pitch", "emotion": "angry (strong)"}
    dropped = "A young American woman talks at a moderate pace and a medium pitch."
    kept = "A young American woman talks at a moderate pace and a medium pitch, clearly furious."
    caption, bodies = run(angry, [{"caption": dropped}, {"caption": kept}])
    assert caption == kept and len(bodies) == 2
    assert "leaves out the emotion ('angry')" in bodies[1]["messages"][-1]["content"]
    # The distinctive fact never said: the facts sentence; an ordinary one (a neutral feeling): the text is kept.
    caption, bodies = run(angry, [{"caption": dropped}])
    assert caption == reviewed_sentence(angry, "en") and len(bodies) == 2
    neutral = {**angry, "emotion": "neutral (moderate)"}
    caption, bodies = run(neutral, [{"caption": dropped}])
    assert caption == dropped and "leaves out the emotion ('neutral')" in bodies[1]["messages"][-1]["content"]


def test_caption_samples_draw_seeded_candidates_of_the_same_prompt_and_keep_the_first_that_passes():
    from speechannotator.agents.openai.backend import SAMPLE_SEEDS

    seg = Segment("seg_00002", 0.0, 2.0, "B", text="Was he a bad man?", language="en")
    angry = {**FEMALE, "speed": "moderate pace", "pitch": "medium pitch", "emotion": "angry (strong)"}
    said = reviewed_sentence(angry, "en")
    dropped = "A young American woman talks at a moderate pace and a medium pitch."  # the emotion left out
    good = "A young American woman talks at a moderate pace and a medium pitch, clearly furious."
    # The answer depends on the request's seed only (none: the endpoint's own answer).
    by_seed = {None: dropped, SAMPLE_SEEDS[0]: said, SAMPLE_SEEDS[1]: good}

    def run(samples):
        script = lambda body, i: chat_reply(json.dumps({"caption": by_seed.get(body.get("seed"), dropped)}))  # noqa: E731
        with ScriptedServer(script) as srv:
            ep = EndpointConfig(url=srv.url, timeout_s=5.0, max_retries=2)
            opts = OpenAIOptions(
                retry_backoff_s=0.01, compose_from_facts=True, compose_keys=("caption",), caption_samples=samples
            )
            out = OpenAIBackend(ep, options=opts, fallback=RulesLike()).compose(ComposeTask(seg, angry, {}, {}, "en"))
            return out["caption"], srv.chat_requests()

    caption, bodies = run(4)
    assert caption == good and len(bodies) == 3  # the first that passes: no more requests
    assert [b.get("seed") for b in bodies] == [None, SAMPLE_SEEDS[0], SAMPLE_SEEDS[1]]
    assert [b["temperature"] for b in bodies] == [0.0, 0.8, 0.8]
    # Each candidate answers the first prompt: no reason, no rejected text.
    assert len({b["messages"][-1]["content"] for b in bodies}) == 1
    assert "leaves out" not in bodies[1]["messages"][-1]["content"]
    # None passes: the facts sentence, after 1 + samples requests.
    caption, bodies = run(1)
    assert caption == said and len(bodies) == 2
    # Off (0): the rewrite loop, unseeded.
    caption, bodies = run(0)
    assert caption == said and all("seed" not in b for b in bodies)


def test_a_caption_that_adds_overstates_negates_or_talks_about_the_task_is_sent_back():
    # The models' captions, verbatim (docs/agents-llm.md), against the facts sentence of their turn.
    young = {
        **FEMALE,
        "texture": "clear voice",
        "pitch": "medium pitch, higher than the speaker's usual",
        "speed": "moderate pace",
        "emotion": "happy (very weak)",
    }
    said = reviewed_sentence(young, "en")
    f = facts(young, reviewed=said)
    energetic = (  # the 1.5B's "energetic" (not in the reviewed fields), the rest reworded
        "Pitched higher than her usual, an energetic young woman with a clear voice talks in standard American "
        "English at a moderate pace and a medium pitch, with a cheerful tone."
    )
    assert kind("caption", energetic, f) == "added" and "'energetic'" in ft.problem("caption", energetic, f)[1]
    very = energetic.replace("an energetic", "a").replace("a cheerful tone", "a very cheerful tone")
    assert kind("caption", very, f) == "intensity"  # "very happy" for a very weak happiness
    assert kind("caption", very, facts({**young, "emotion": "happy (strong)"}, reviewed=said)) is None
    task = (  # the 0.5B, sampled: the prompt's own noun
        "The voice description is described as a young woman with a clear voice speaking standard American "
        "English at a medium pitch, higher than her usual, at a moderate pace, sounding happy."
    )
    assert kind("caption", task, f) == "task"
    paused = {**young, "paralinguistic": "pause between phrases"}
    said_p = reviewed_sentence(paused, "en")
    no_pause = (
        "Pitched higher than her usual, a young woman talks in standard American English with a clear voice, "
        "cheerful, at a moderate pace and a medium pitch, with no pauses between phrases."
    )
    assert kind("caption", no_pause, facts(paused, reviewed=said_p)) == "negated"
    male = {**MALE, "texture": "deep, slightly hoarse", "pitch": "moderately low pitch", "speed": "moderate pace"}
    male["emotion"] = "neutral (moderate)"
    face = (  # the 0.5B, sampled: a face, rudeness and changeability nobody reviewed
        "The man's voice is deep and slightly hoarse, with a middle-aged face. He speaks standard American English "
        "at a moderate pace and a moderately low pitch. The man is neither rude nor changeable."
    )
    assert kind("caption", face, facts(male, reviewed=reviewed_sentence(male, "en"))) == "added"
    # The same facts in the model's own words pass: synonyms of the stated facts, forms of their words.
    own = (
        "Sounding composed, a middle-aged American man talks in a deep, somewhat raspy voice, keeping a moderate "
        "pace and a fairly low pitch."
    )
    assert ft.problem("caption", own, facts(male, reviewed=reviewed_sentence(male, "en"))) is None


def test_badly_formed_english_and_a_turn_that_does_not_exist_are_sent_back():
    male = {**MALE, "texture": "deep, slightly hoarse", "speed": "moderate pace", "emotion": "happy (weak)"}
    f = facts(male, reviewed=reviewed_sentence(male, "en"))
    # The 1.5B, verbatim apart from the fact its check sends back first.
    hoarsely = "A middle-aged man with a deep and slightly hoarsely voiced speaks standard American English, happily."
    assert kind("caption", hoarsely, f) == "form"
    assert "hoarsely voiced" in ft.problem("caption", hoarsely, f)[1]
    assert kind("caption", "An middle-aged man speaks standard American English at a moderate pace, happily.", f) == (
        "form"
    )
    verbless = (  # the 1.5B's form, its words changed from the facts sentence's
        "Cheerful, a middle-aged man with a deep, slightly hoarse voice, talking in standard American English at "
        "a moderate pace."
    )
    assert kind("caption", verbless, f) == "form" and "no main verb" in ft.problem("caption", verbless, f)[1]
    joined = (
        "Cheerful and middle-aged, he talks in a deep, slightly hoarse voice, in American English and a moderate pace."
    )
    assert kind("caption", joined, f) == "form"
    gerund = (  # the 1.5B with worked examples, verbatim
        "This middle-aged man is speaking standard American English at a moderate pace, "
        "sounding happy; his deep and slightly hoarse voice is the maintaining the happy tone."
    )
    assert kind("caption", gerund, f) == "form"
    deeply = (
        "A middle-aged man speaks standard American English with a deeply hoarse voice at a moderate pace, happily."
    )
    assert kind("caption", deeply, f) == "intensity"  # "slightly hoarse" reviewed
    # "highly pitched" is a level too (the 1.5B, for a medium pitch).
    assert ft.level_disagreement("Her voice is slightly highly pitched.", {"pitch": "medium pitch"}, "en")
    # A contextual inference about "the previous turn" of a first turn (the 1.5B, verbatim).
    first = "The speaker is likely telling a story about Mr. John Dashwood, who is mentioned in the previous turn."
    assert kind("contextual_inference", first, facts(MALE, turn_before=False, turn_after=True)) == "no_turn"
    assert kind("contextual_inference", first, facts(MALE, turn_before=True, turn_after=True)) is None
    # An inference the length cap cut off mid-sentence keeps its complete sentences (the 1.5B, verbatim).
    cut = (
        "The speaker appears to be discussing the identity of someone based on what was said. The woman is "
        "questioning whether the man was a"
    )
    assert (
        ft.repaired(cut, facts())
        == "The speaker appears to be discussing the identity of someone based on what was said."
    )
    assert ft.repaired("The woman is questioning whether the man was a", facts()).endswith("was a")  # nothing to keep
    last = "He asks a question that the next speaker will answer."
    assert kind("contextual_inference", last, facts(MALE, turn_before=True, turn_after=False)) == "no_turn"


def test_every_worked_example_passes_the_checks_and_a_turn_gets_examples_of_its_lead():
    from speechannotator.agents.caption_examples import EXAMPLES, EXAMPLES_SHOWN, examples_for

    for e in EXAMPLES:  # no example may teach what the checks refuse
        f = ft.TextFacts(
            values=e.values, lang="en", reviewed=e.facts, distinctive=tuple(distinctive_facts(e.values, "en"))
        )
        assert ft.problem("caption", e.rewrite, f) is None, e.rewrite
        assert fact_words.omitted_facts(e.rewrite, e.values, e.facts) == []
        assert not ft.copied_description(e.rewrite, e.facts)
    leads = {e.lead for e in EXAMPLES}
    assert {"emotion", "pitch", "speed", "scene", "paralinguistic", None} <= leads
    angry = {**FEMALE, "speed": "moderate pace", "pitch": "medium pitch", "emotion": "angry (strong)"}
    shown = [examples_for(angry, place, "en") for place in range(4)]
    assert all(len(s) == EXAMPLES_SHOWN and s[0].lead == "emotion" for s in shown)
    assert len({tuple(id(e) for e in s) for s in shown}) > 1  # neighbouring turns see other structures
    assert examples_for(angry, 2, "en") == examples_for(angry, 2, "en") and examples_for(angry, 0, "zh") == []
    # A copied example fact is a word the turn does not license: the added-word check sends it back.
    said = reviewed_sentence(angry, "en")
    copied = shown[0][0].rewrite
    assert kind("caption", copied, facts(angry, reviewed=said)) in ("added", "gender", "disagrees")
    # In the prompt: the examples with the rule that only their form is to be taken.
    seg = Segment("seg_00002", 0.0, 2.0, "B", text="Was he a bad man?", language="en")
    _, user = compose_messages(
        segment=seg, values=angry, evidence={}, context={}, lang="en", schema_in_prompt=None, keys=["caption"],
        facts=said, examples=shown[0],
    )  # fmt: skip
    assert shown[0][0].rewrite in user and shown[0][1].facts in user and "not this speaker's" in user


def test_the_caption_vocabulary_grammar_admits_the_facts_in_other_words_and_nothing_added():
    import re

    from speechannotator.agents import supported
    from speechannotator.agents.caption_examples import EXAMPLES
    from speechannotator.agents.openai.json_schemas import compose_schema

    for e in EXAMPLES:  # each worked rewrite, and the facts sentence itself, are in their own vocabulary
        pattern = supported.vocabulary_pattern(e.values, e.facts)
        assert re.fullmatch(pattern, e.rewrite) and re.fullmatch(pattern, e.facts)
    young = {**FEMALE, "texture": "clear voice", "speed": "moderate pace", "emotion": "happy (weak)"}
    said = reviewed_sentence(young, "en")
    pattern = supported.vocabulary_pattern(young, said)
    assert re.fullmatch(pattern, "Cheerful and young, she speaks standard American English at a moderate pace.")
    for added in (
        "An energetic young woman speaks standard American English.",  # a word nobody reviewed
        "A young man speaks standard American English.",  # the other gender's words are left out
        "A young woman speaks standard American English",  # no full stop
    ):
        assert not re.fullmatch(pattern, added), added
    # With lead words the caption begins with them; the schema carries the pattern for llama.cpp.
    led = supported.vocabulary_pattern(young, said, "A young woman")
    assert re.fullmatch(led, "A young woman speaks cheerfully.") and not re.fullmatch(led, "She speaks.")
    schema = compose_schema(["caption"], 480, None, {"caption": led})
    assert schema["properties"]["caption"]["pattern"] == led


def test_inference_samples_replace_an_inference_about_a_turn_that_does_not_exist():
    from speechannotator.agents.openai.backend import SAMPLE_SEEDS

    seg = Segment("seg_00000", 0.0, 2.0, "A", text="Tell me about Mr. John Dashwood.", language="en")
    after = {"next": [{"text": "He had leisure to consider it.", "same_speaker": False}]}
    invented = "She asks about Mr. John Dashwood, who is mentioned in the previous turn."  # the first turn
    good = "She opens the conversation by asking the other speaker about a man they both know."
    by_seed = {None: invented, SAMPLE_SEEDS[0]: good}
    script = lambda body, i: chat_reply(  # noqa: E731
        json.dumps({"contextual_inference": by_seed.get(body.get("seed"), invented)})
    )
    with ScriptedServer(script) as srv:
        ep = EndpointConfig(url=srv.url, timeout_s=5.0, max_retries=2)
        opts = OpenAIOptions(
            retry_backoff_s=0.01, compose_from_facts=True, compose_keys=("contextual_inference",), inference_samples=2
        )
        task = ComposeTask(seg, dict(FEMALE), {}, after, "en")
        out = OpenAIBackend(ep, options=opts, fallback=RulesLike()).compose(task)
        bodies = srv.chat_requests()
    assert out["contextual_inference"] == good and [b.get("seed") for b in bodies] == [None, SAMPLE_SEEDS[0]]


def test_doctests():
    from speechannotator.agents import english_form, supported
    from speechannotator.agents import facts as facts_module

    assert doctest.testmod(ft).failed == 0
    assert doctest.testmod(facts_module).failed == 0
    assert doctest.testmod(english_form).failed == 0
    assert doctest.testmod(supported).failed == 0
    assert doctest.testmod(fact_words).failed == 0
