"""Counts of what is wrong with the free text of annotated recordings (captions, contextual
inferences, tones), read with the checks of agents/free_text.py.

    python benchmarks/free_text_stats.py OUT/dialogue.json [...] [--json FILE]

Per file: distinct caption openings, texts or tones copied from a prompt (the current
instructions, or one of the sample values the label prompt carried before they were removed),
repeated sentences (within a field, or the contextual inference repeating the caption), pronoun
or gender words against the reviewed gender, texts cut mid-sentence, value lists; since the
compose-from-facts prompts also: texts the rules wrote (their caption rebuilt from the record's
values, their inference's fixed speech-act sentences), captions not saying who speaks, pitch or
pace words against the reviewed levels, captions naming a person from the transcript, and texts
that copy the voice description (agents/facts.py, rebuilt from the values); captions that are
that description itself (the fallback from facts since the rules' value list was replaced; not
counted as copies nor among the LLM's openings); since the omission check, the facts of that
description each caption the model wrote leaves out, and captions that
name the speaker twice in a sentence; since the added-word and form checks, each caption the
model wrote that adds a word, overstates the feeling, negates a fact, talks about the task or is
badly formed English. The checks only count: no model runs here.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from speechannotator.agents import compose as rules_compose
from speechannotator.agents import fact_words
from speechannotator.agents import free_text as ft
from speechannotator.agents.backend import ComposeTask
from speechannotator.agents.facts import reviewed_sentence
from speechannotator.agents.openai.prompts import instruction_text
from speechannotator.records import Segment
from speechannotator.schema import LABELED_FIELDS

# The sample values the label and compose prompts showed until they were removed (they are
# what the local models copied); counted as copies in outputs written before and after.
FORMER_SAMPLES = (
    "middle-aged",
    "standard American English",
    "medium-high pitch that falls at the end",
    "fairly fast, compact delivery",
    "steady rhythm with no noticeable pauses",
    "urgent yet firm declarative tone",
    "clear timbre with slight breathiness",
    "crisp articulation, no slurring",
    "quiet indoor room",
    "steady engine rumble",
    "A middle-aged male voice in standard American English, fast and tense.",
    "The speaker seems to be in a noisy race car, under pressure.",
)
OPEN_COPY_FIELDS = ("tone", "rhythm", "texture", "pronunciation", "environment", "background_sound")


def _norm(text: str) -> str:
    return " ".join(ft.units(text))


def copied(text: str, instructions: str) -> bool:
    flat = _norm(text)
    samples = {_norm(s) for s in FORMER_SAMPLES if len(ft.units(s)) >= 3}
    return flat in samples or ft.copied_instructions(text, instructions)


def rules_caption(record: dict, lang: str) -> str:
    """The rules' caption for the record's values (it reads nothing else)."""
    seg = Segment("s", 0.0, 1.0, "a", text=record.get("text", ""), language=lang)
    values = {f: record.get(f, "") for f in LABELED_FIELDS}
    return rules_compose.caption(ComposeTask(seg, values, {}, {}, lang))


def rules_inference(text: str, lang: str) -> bool:
    """The rules' contextual inference: it holds one of their fixed speech-act sentences."""
    return any(act in text for act in rules_compose._ACT[lang].values())


def _added_or_wrong_form(caption: str, values: dict[str, str], said: str) -> str:
    from speechannotator.agents import english_form, supported

    added = supported.added_words(caption, values, said)
    strength = supported.intensity_said(caption, values, said)
    found = {
        "added": ", ".join(added),
        "strength": strength[0] if strength else "",
        "negated": supported.negated_fact(caption, values, said) or "",
        "task": supported.task_talk(caption) or "",
        "form": english_form.form_error(caption, ft.sentences(caption)) or "",
    }
    return "; ".join(f"{what} {words}" for what, words in found.items() if words)


def stats(records: list[dict], lang: str = "en") -> dict:
    ins = instruction_text(lang)
    openings = [ft.opening(r.get("caption", "")) for r in records]
    out = {
        "segments": len(records),
        "distinct_caption_openings": len(set(openings)),
        "copied_prompt": 0,
        "copied_prompt_open_fields": 0,
        "repeated_sentence": 0,
        "inference_repeats_caption": 0,
        "pronoun_errors": 0,
        "cut_mid_sentence": 0,
        "value_lists": 0,
        "rules_captions": 0,
        "facts_captions": 0,
        "rules_inferences": 0,
        "caption_without_who": 0,
        "pitch_or_pace_contradicted": 0,
        "caption_names_transcript_person": 0,
        "copied_voice_description": 0,
        "glued_words": 0,
        "doubled_subject": 0,
        "facts_dropped": [],  # "turn: facts" of the facts sentence a caption the model wrote leaves out
        # since the checks of agents/supported.py and agents/english_form.py: "turn: what" of each
        # caption the model wrote that adds a word, overstates the feeling, negates a fact, talks
        # about the task or is badly formed
        "added_or_wrong_form": [],
    }
    llm_openings, earlier = [], []
    for r in records:
        values = {f: r.get(f, "") for f in LABELED_FIELDS}
        cap, ctx = r.get("caption", ""), r.get("contextual_inference", "")
        for text in (cap, ctx):
            out["copied_prompt"] += copied(text, ins)
            out["repeated_sentence"] += ft.repeated_sentence(text) is not None
            out["cut_mid_sentence"] += ft.cut_off(text, lang)
            out["value_lists"] += ft.value_list(text, values, lang)
        said = reviewed_sentence(values, lang, earlier)
        earlier.append(cap)
        by_rules, by_facts = cap == rules_caption(r, lang), cap == said
        out["rules_captions"] += by_rules
        out["facts_captions"] += by_facts
        out["rules_inferences"] += rules_inference(ctx, lang)
        if not by_rules and not by_facts:
            llm_openings.append(ft.opening(cap))
            stated = fact_words.stated_facts(values, said) if lang == "en" else []
            left = [what for what, _, groups in stated if not all(fact_words.says(cap, g) for g in groups)]
            if left:
                out["facts_dropped"].append(f"{records.index(r)}: " + ", ".join(dict.fromkeys(left)))
            if lang == "en":
                wrong = _added_or_wrong_form(cap, values, said)
                if wrong:
                    out["added_or_wrong_form"].append(f"{records.index(r)}: {wrong}")
        out["doubled_subject"] += lang == "en" and ft.doubled_subject(cap) is not None
        out["caption_without_who"] += not ft.names_speaker(cap, values, lang)
        out["pitch_or_pace_contradicted"] += sum(ft.level_disagreement(t, values, lang) is not None for t in (cap, ctx))
        out["caption_names_transcript_person"] += ft.transcript_name(cap, r.get("text", ""), values) is not None
        out["copied_voice_description"] += sum(ft.copied_description(t, said) for t in (cap, ctx) if t != said)
        out["glued_words"] += sum(ft.glued_word(t, (said, r.get("text", ""))) is not None for t in (cap, ctx))
        out["copied_prompt_open_fields"] += sum(copied(str(r.get(f, "")), ins) for f in OPEN_COPY_FIELDS)
        out["inference_repeats_caption"] += ft.repeats_caption(ctx, cap) is not None
        out["pronoun_errors"] += ft.gender_conflict(cap, values, lang, "caption") is not None
        out["pronoun_errors"] += ft.gender_conflict(ctx, values, lang, "contextual_inference") is not None
    out["distinct_openings_of_llm_captions"] = f"{len(set(llm_openings))} of {len(llm_openings)}"
    out["tones"] = sorted({str(r.get("tone", "")) for r in records})
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="+", type=Path)
    ap.add_argument("--json", type=Path)
    ap.add_argument("--lang", default="en")
    a = ap.parse_args(argv)
    got = {str(f): stats(json.loads(f.read_text()), a.lang) for f in a.files}
    text = json.dumps(got, indent=1, ensure_ascii=False)
    if a.json:
        a.json.write_text(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
