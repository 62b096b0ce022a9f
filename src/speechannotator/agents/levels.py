"""Levels shared by every backend's review: one home for how a described level (pitch, speed)
is read and when the evidence contradicts it."""

from __future__ import annotations

from ..schema import CLOSED_TYPES, Emotion, Level, Value, is_empty_marker, typed_value


def parse_level(text: str, table) -> int | None:
    """The level (-2..2) of the first phrase of `table` ((phrase, level) pairs) found in `text`."""
    low = (text or "").lower()
    for word, level in table:
        if word in low:
            return level
    return None


def levels_disagree(evidence: int, said: int) -> bool:
    """A described level the evidence contradicts: two or more levels away, or on the other side
    of medium (low / medium / high differ). One step within a side (high vs moderately high) is
    within what the descriptions and the class boundaries can tell apart.

    >>> levels_disagree(1, 2), levels_disagree(-1, 0), levels_disagree(-2, 0)
    (False, True, True)
    """
    return abs(evidence - said) >= 2 or (evidence > 0) - (evidence < 0) != (said > 0) - (said < 0)


# An emotion intensity this many steps above the one the prosody and the transcript's valence carry
# (the rules' own reading) is not what was heard: the 0.5B labeled all 8 calm turns of the bundled
# example "happy (very strong)" (docs/agents-llm.md). The review sends it back; a relabel may then
# not go this far above the suggestion.
INTENSITY_EXCESS_STEPS = 2


def typed_answer(field: str, text: str | None, P) -> Value | None:
    """An LLM's answer text read, once, into the value our own labeler gives (the review and the
    record read the type, never the words): an emotion, a level, a gender or age group; other
    fields stay text."""
    if not text or is_empty_marker(text):
        return text
    if field in CLOSED_TYPES:
        return typed_value(text, field)
    if field == "emotion":
        return Emotion.parse(text)
    step = parse_level(text, P.PITCH_PARSE if field == "pitch" else P.SPEED_PARSE)
    return Level(step, text) if field in ("pitch", "speed") and step is not None else text
