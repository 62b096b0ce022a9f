"""The facts a caption states, read from its words: one home for how a reviewed fact may be said.

The facts sentence (agents/facts.py) states the reviewed voice facts; a rewrite says a fact when
it uses a word of each of the fact's word groups (its own words, the parse tables, the synonyms in
phrases.en `SAID_*`). The omission check (free_text) reads which facts a caption leaves out; the
added-word, strength and negation checks (agents/supported.py) read the same groups the other way.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from ..schema import canonical_closed, is_empty_marker
from .levels import parse_level
from .phrases import phrases

_TOKEN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]|[^\W\u3400-\u9fff\uf900-\ufaff]+(?:'[^\W\u3400-\u9fff]+)*")


def units(text: str) -> list[str]:
    """Lower-case words, each CJK character one unit; punctuation dropped (mixed text too)."""
    return _TOKEN.findall((text or "").lower())


# Words of a value that say no fact of their own (a texture's "slightly", a scene's "background").
_PLAIN = frozenset(
    re.findall(
        r"\w+",
        "a an the and or with of in at on to by voice voiced timbre tone slightly somewhat quite very rather "
        "background continuous steady faint noticeable intermittent some indoor place space environment "
        "surroundings standard accent",
    )
)
_USUAL_SAID = re.compile(r"\bthan (?:her|his|the speaker's) usual\b", re.I)


def says(text: str, words: Iterable[str]) -> bool:
    """Whether `text` uses one of `words` (phrases.SAID_* notation: "hoars*" begins a word)."""
    padded = " " + " ".join(units(text)) + " "
    for w in words:
        stem = " ".join(units(w.rstrip("*")))
        if stem and (f" {stem}" if w.endswith("*") else f" {stem} ") in padded:
            return True
    return False


def _own_words(value: str) -> tuple[str, ...]:
    """A value's content words as word beginnings ("traffic noise" -> "traffi*", "noise*")."""
    return tuple(w[:6] + "*" for w in units(value) if w not in _PLAIN and len(w) > 2)


def _kinds(value: str, table: dict[str, tuple[str, ...]], parse: Iterable[tuple[str, str]] = ()) -> list[str]:
    """The kinds of `table` (and of a parse table's stems) a value names, in table order."""
    found = [k for k, words in table.items() if says(value, words)]
    found += [k for stem, k in parse if stem in value.lower() and k not in found]
    return found


def stated_facts(values: dict[str, str], reviewed: str) -> list[tuple[str, str, list[tuple[str, ...]]]]:
    """The facts the English facts sentence states (agents/facts.py: the same values, none values
    left out), each as (what, as the sentence says it, groups of words): a rewrite says the fact
    when it uses a word of every group (phrases.en's SAID_* tables and the parse tables)."""
    P = phrases("en")

    def given(name: str) -> str:
        v = values.get(name)
        return v.strip() if isinstance(v, str) and v.strip() and not is_empty_marker(v) else ""

    out: list[tuple[str, str, list[tuple[str, ...]]]] = []
    gender, age = canonical_closed("gender", values.get("gender")), canonical_closed("age", values.get("age"))
    if gender in ("male", "female") and age in P.SAID_AGE:
        out.append(("the age", age, [P.SAID_AGE[age]]))
    texture = given("texture")
    if texture:
        kinds = _kinds(texture, P.SAID_TEXTURE)
        groups = [P.SAID_TEXTURE[k] for k in kinds] or ([_own_words(texture)] if _own_words(texture) else [])
        out += [("the voice quality", texture, [g]) for g in groups]
    accent = given("accent")
    if accent:
        proper = re.findall(r"\b[A-Z][\w-]*", accent)
        proper = [w for w in proper if w != "English"] or proper
        out += [("the accent", accent, [(w.lower(),)]) for w in proper]
    for name, said, side_words in (
        ("pitch", P.SAID_PITCH, (P.SAID_LOW, P.SAID_HIGH)),
        ("speed", P.SAID_PACE, (P.SAID_SLOW, P.SAID_FAST)),
    ):
        text = given(name)
        if not text:
            continue
        parse, table = (P.PITCH_PARSE, P.PITCH_LEVEL) if name == "pitch" else (P.SPEED_PARSE, P.SPEED_LEVEL)
        first = text.split(",")[0].strip()
        level = next((k for k, v in table.items() if v == first), None)  # "low pitch" is -2, "low" alone -1
        level = parse_level(first, parse) if level is None else level
        groups = [said] + ([side_words[0] if level < 0 else side_words[1]] if level else [])
        out.append(
            ("the pace" if name == "speed" else "the pitch", table[level] if level is not None else first, groups)
        )
    if _USUAL_SAID.search(reviewed or ""):
        out.append(
            ("how the pitch compares with the speaker's usual", _USUAL_SAID.search(reviewed).group(0), [P.SAID_USUAL])
        )
    if "long pauses" in (reviewed or ""):
        out.append(("the long pauses", "long pauses between phrases", [P.SAID_PAUSE]))
    emotion = given("emotion")
    lid = next((k for stem, k in P.EMOTION_PARSE if stem in emotion.lower()), None) if emotion else None
    if lid:
        words = (
            P.EMOTIONS[lid] + "*",
            *(s + "*" for s, k in P.EMOTION_PARSE if k == lid),
            *P.SAID_EMOTION.get(lid, ()),
        )
        out.append(("the emotion", P.EMOTIONS[lid], [words]))
    para = given("paralinguistic")
    if para:
        kinds = _kinds(para, {}, P.PARA_PARSE)
        groups = [(s + "*" for s, k in P.PARA_PARSE if k == kind) for kind in kinds]
        groups = [(*g, *P.SAID_EVENT.get(kind, ())) for g, kind in zip(groups, kinds)]
        out += [("the non-verbal event", para, [g]) for g in groups or ([_own_words(para)] if _own_words(para) else [])]
    for name in ("background_sound", "environment"):
        scene = given(name)
        if scene:
            kinds = _kinds(scene, P.SAID_SCENE, P.BACKGROUND_PARSE)
            words = (*_own_words(scene), *(w for k in kinds for w in P.SAID_SCENE.get(k, ())))
            words += tuple(s + "*" for s, k in P.BACKGROUND_PARSE if k in kinds)
            if words:
                out.append(("the background" if name == "background_sound" else "the environment", scene, [words]))
    return out


# Which salience fact (agents/facts.py `salience`) each stated fact belongs to.
FACT_OF = {
    "the emotion": "emotion",
    "the background": "scene",
    "the environment": "scene",
    "the non-verbal event": "paralinguistic",
    "the pitch": "pitch",
    "how the pitch compares with the speaker's usual": "pitch",
    "the pace": "speed",
    "the long pauses": "speed",
    "the voice quality": "texture",
}


def omitted_facts(text: str, values: dict[str, str], reviewed: str) -> list[tuple[str, str]]:
    """(what, as the facts sentence says it) of each fact of the facts sentence the rewrite
    `text` does not say, by its words or an accepted synonym (phrases.en's SAID_* tables).

    The 0.5B left out the pace or the emotion on about half the turns of the bundled example.

    >>> v = {"gender": "male", "age": "middle-aged", "speed": "moderate pace", "emotion": "neutral (moderate)"}
    >>> omitted_facts("A middle-aged man speaks.", v, "")
    [('the pace', 'moderate pace'), ('the emotion', 'neutral')]
    >>> omitted_facts("A man in midlife speaks at an even pace, sounding composed.", v, "")
    []
    """
    out = [
        (what, phrase)
        for what, phrase, groups in stated_facts(values, reviewed)
        if not all(says(text, g) for g in groups)
    ]
    return list(dict.fromkeys(out))


def omitted_fact(text: str, values: dict[str, str], reviewed: str) -> tuple[str, str] | None:
    """The first of `omitted_facts`, or None."""
    return next(iter(omitted_facts(text, values, reviewed)), None)
