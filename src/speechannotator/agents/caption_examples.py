"""Worked examples of a caption rewrite, shown to a small model beside the facts sentence.

Asked only to say the facts sentence "in other words and another structure", the shipped 0.5B and
1.5B kept its frame ("A young woman with a ... voice speaks ... at a ... pace") or copied it: the
rewrites were close paraphrases, and a caption no retry fixed became the facts sentence itself
(docs/agents-llm.md). Shown how other descriptions were rewritten, a model sees what another
structure is. Examples used to be harmful: with a sample value in the prompt, the models copied
its content ("urgent yet firm declarative tone" on 5 of 8 turns). Two things make these safe: each
example describes another voice (other age, accent, feeling), so a copied fact is a word the turn's
reviewed facts do not license, which the added-word check (agents/supported.py) sends back; and
every rewrite here passes every free-text check against its own facts sentence (a test reads them),
so no example teaches what the checks refuse.

Which examples a turn gets is deterministic (its place in the recording and its lead fact), so
reruns stay byte-identical.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from .facts import reviewed_sentence, salient_fact


@dataclass(frozen=True)
class CaptionExample:
    """Reviewed values of an invented voice, and a rewrite of their facts sentence."""

    values: dict[str, str]
    rewrite: str

    @cached_property  # every compose call reads every example's lead
    def facts(self) -> str:
        return reviewed_sentence(self.values, "en")

    @cached_property
    def lead(self) -> str | None:
        return salient_fact(self.values, "en")


def _v(gender: str, age: str, texture: str, accent: str, pitch: str, speed: str, emotion: str, **more: str):
    return {
        "gender": gender,
        "age": age,
        "texture": texture,
        "accent": accent,
        "pitch": pitch,
        "speed": speed,
        "emotion": emotion,
        **more,
    }


# One per kind of lead fact (facts.salience) and more for the plain order; the voices differ from
# one another and from typical speakers in accent, so that a copied fact is visible.
EXAMPLES: tuple[CaptionExample, ...] = (
    CaptionExample(
        _v(
            "male",
            "elderly",
            "slightly breathy",
            "standard British English",
            "high pitch, higher than the speaker's usual",
            "moderate pace",
            "surprised (moderate)",
        ),
        "Surprised, the elderly man speaks standard British English at a moderate pace; his slightly breathy voice "
        "sits high in pitch, above his usual.",
    ),
    CaptionExample(
        _v(
            "female",
            "middle-aged",
            "full, rounded",
            "standard American English",
            "medium pitch",
            "fast pace",
            "excited (strong)",
        ),
        "This middle-aged woman is very excited: her full, rounded voice rushes through standard American English "
        "at a fast pace while keeping a medium pitch.",
    ),
    CaptionExample(
        _v(
            "male",
            "young adult",
            "slightly tense",
            "standard Australian English",
            "moderately high pitch",
            "very slow pace, with long pauses between phrases",
            "sad (weak)",
        ),
        "Speaking standard Australian English very slowly, with long pauses between phrases, the young man sounds "
        "sad; his voice is slightly tense and moderately high in pitch.",
    ),
    CaptionExample(
        _v(
            "female",
            "elderly",
            "somewhat thin",
            "standard Irish English",
            "moderately low pitch",
            "slightly slow pace",
            "calm (moderate)",
            background_sound="continuous background music",
        ),
        "Calm and a little slow, an elderly woman speaks standard Irish English in a somewhat thin, moderately "
        "low-pitched voice, with continuous music in the background.",
    ),
    CaptionExample(
        _v(
            "male",
            "middle-aged",
            "bright",
            "standard Canadian English",
            "medium pitch",
            "moderate pace",
            "neutral (moderate)",
            paralinguistic="laughter",
        ),
        "A middle-aged man laughs as he talks; his bright voice stays neutral in standard Canadian English, at a "
        "moderate pace and a medium pitch.",
    ),
    CaptionExample(
        _v(
            "female",
            "teenager",
            "clear voice",
            "standard American English",
            "high pitch",
            "fast pace",
            "angry (moderate)",
        ),
        "The teenage girl is angry, and her clear, high-pitched voice comes fast as she speaks standard American "
        "English.",
    ),
    CaptionExample(
        _v(
            "male",
            "elderly",
            "slightly muffled",
            "standard Scottish English",
            "low pitch, lower than the speaker's usual",
            "moderate pace",
            "tense (weak)",
        ),
        "Tense, an elderly man speaks standard Scottish English at a moderate pace, his slightly muffled voice low "
        "in pitch and lower than usual for him.",
    ),
    CaptionExample(
        _v(
            "female",
            "young adult",
            "bright",
            "standard Canadian English",
            "medium pitch",
            "moderate pace",
            "neutral (moderate)",
        ),
        "The young woman's voice is bright; she speaks standard Canadian English at a moderate pace and a medium "
        "pitch, and sounds neutral.",
    ),
)
EXAMPLES_SHOWN = 2


def examples_for(values: dict[str, str], place: int, lang: str) -> list[CaptionExample]:
    """The EXAMPLES_SHOWN examples for a turn: one whose facts sentence leads the way this turn's
    does (how that kind of opening can be rewritten), then one by the turn's place in the
    recording (so that neighbouring turns see different structures). None for Chinese: the
    examples are English."""
    if lang != "en":
        return []
    lead = salient_fact(values, lang)
    same = [e for e in EXAMPLES if e.lead == lead]
    first = same[place % len(same)] if same else EXAMPLES[place % len(EXAMPLES)]
    rest = [e for e in EXAMPLES if e is not first]
    return [first, *rest[place % len(rest) : place % len(rest) + EXAMPLES_SHOWN - 1]]
