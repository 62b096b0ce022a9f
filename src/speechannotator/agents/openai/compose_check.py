"""Checks a model-written caption or contextual inference against the reviewed fields.

A text must not contradict the reviewed gender (a "male voice" caption for a female speaker)
and must not be one of the prompt's own example sentences copied verbatim, which small models
do instead of describing the segment.
"""

from __future__ import annotations

import re

from ...schema import canonical_closed
from .prompts import FIELD_GUIDE

_GENDER_WORDS = {
    "en": {
        "male": re.compile(r"\b(male|man|men|his|he|gentleman|boy)\b", re.I),
        "female": re.compile(r"\b(female|woman|women|her|hers|she|lady|girl)\b", re.I),
    },
    "zh": {"male": re.compile(r"男"), "female": re.compile(r"女")},
}
_EXAMPLES = {
    normalize
    for f in ("caption", "contextual_inference")
    for normalize in (re.sub(r"\W+", " ", t).strip().lower() for t in FIELD_GUIDE[f][1].values())
}


def compose_conflict(text: str, values: dict[str, str], lang: str, field: str = "caption") -> str | None:
    """Why `text` (the `field`) cannot stand beside the reviewed `values`, or None. The gender
    check reads the caption only: a contextual inference may speak of other people."""
    flat = re.sub(r"\W+", " ", text).strip().lower()
    if flat in _EXAMPLES:
        return "copies the instructions' example instead of describing this segment"
    if field != "caption":
        return None
    gender = canonical_closed("gender", values.get("gender"))
    words = _GENDER_WORDS["zh" if lang == "zh" else "en"]
    if gender in ("male", "female"):
        other = "female" if gender == "male" else "male"
        if words[other].search(text) and not words[gender].search(text):
            return f"calls the voice {other} but the reviewed gender is {gender}"
    return None
