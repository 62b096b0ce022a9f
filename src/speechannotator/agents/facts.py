"""The reviewed voice facts as one plain sentence, built by code for a small model to paraphrase.

Told a table of field values, the shipped 0.5B and 1.5B strung the values together or wrote
sentences wrong in meaning ("Mr. John Dashwood is a mix of a gentle low-pitched tone ...");
given the same facts already phrased as one sentence, a small model rewrites it in its own
words far more reliably (docs/agents-llm.md). The sentence is deterministic: who speaks
(gender, age), the voice (texture, accent), the pitch and pace levels, the emotion, and any
non-verbal event or background the review kept.

The small models keep the frame of the sentence they are given, so a fixed order gave every
caption of a speaker the same opening. The sentence therefore opens with what is most
distinctive about this turn, read from the reviewed values alone (`salient_fact`): an emotion
clearly not neutral, a scene that is not quiet, a non-verbal event, a pitch away from the
speaker's usual or at an extreme, a pace far from moderate, a marked voice quality. A turn with
none of these keeps the plain order. Same values, same sentence: byte-reproducible.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..schema import canonical_closed, has_cjk, is_empty_marker
from . import free_text
from .levels import intensity_of, parse_level
from .phrases import parse_emotion, phrases

_WHO = {
    "en": {
        ("child", "female"): "a girl",
        ("child", "male"): "a boy",
        ("teenager", "female"): "a teenage girl",
        ("teenager", "male"): "a teenage boy",
        ("young adult", "female"): "a young woman",
        ("young adult", "male"): "a young man",
        ("middle-aged", "female"): "a middle-aged woman",
        ("middle-aged", "male"): "a middle-aged man",
        ("elderly", "female"): "an elderly woman",
        ("elderly", "male"): "an elderly man",
    },
    "zh": {"female": "女性", "male": "男性"},
}
_ZH_AGE = {"child": "儿童", "teenager": "少年", "young adult": "青年", "middle-aged": "中年", "elderly": "老年"}
_STRONG = ("strong", "very strong", "强", "很强")
# Voice qualities a listener notices (the rules' texture words plus those an LLM labeler uses);
# "clear", "deep", "bright", "full", "natural timbre" are ordinary voices and never lead.
_MARKED_TEXTURE = (
    "hoarse", "breathy", "tense", "thin", "muffled", "raspy", "husky", "nasal", "creaky", "tremb", "shaky",
    "rough", "gravel", "strained", "沙哑", "气声", "紧", "单薄", "发闷", "颤",
)  # fmt: skip
_LONG_PAUSES = ("long pauses", "停顿较长")
# Which fact leads when two are equally distinctive: the listener's impression first.
_LEAD_ORDER = ("emotion", "scene", "paralinguistic", "pitch", "speed", "texture")


def _given(values: dict[str, str], name: str) -> str:
    v = values.get(name)
    return v.strip() if isinstance(v, str) and v.strip() and not is_empty_marker(v) else ""


def _level(values: dict[str, str], name: str, lang: str) -> str:
    """The level phrase of a pitch or speed value ("moderately low pitch"), else its first clause."""
    P = phrases(lang)
    text = _given(values, name)
    if not text:
        return ""
    parse, level = (P.PITCH_PARSE, P.PITCH_LEVEL) if name == "pitch" else (P.SPEED_PARSE, P.SPEED_LEVEL)
    first = text.split(P.SEP.strip())[0].strip()
    if first in level.values():
        return first
    found = parse_level(first, parse)
    return level[found] if found is not None else first


def _step(values: dict[str, str], name: str, lang: str) -> int | None:
    """The ordinal level (-2..2) of a pitch or speed value, None when it names none."""
    P = phrases(lang)
    parse, level = (P.PITCH_PARSE, P.PITCH_LEVEL) if name == "pitch" else (P.SPEED_PARSE, P.SPEED_LEVEL)
    said = _level(values, name, lang)
    exact = [k for k, v in level.items() if v == said]  # "low pitch" is -2, though "low" alone reads -1
    return exact[0] if exact else parse_level(said, parse)


def _who_en(values: dict[str, str]) -> str:
    g = canonical_closed("gender", values.get("gender"))
    a = canonical_closed("age", values.get("age"))
    if (a, g) in _WHO["en"]:
        return _WHO["en"][(a, g)]
    if g in ("male", "female"):
        return "a man" if g == "male" else "a woman"
    return "a speaker"


def speaker_phrase(values: dict[str, str], lang: str) -> str:
    """Who speaks, as a noun phrase ("a middle-aged man", "一位中年男性")."""
    if lang == "zh":
        g = canonical_closed("gender", values.get("gender"))
        a = canonical_closed("age", values.get("age"))
        return "一位" + _ZH_AGE.get(a or "", "") + _WHO["zh"].get(g or "", "说话人")
    return _who_en(values)


def _emotion(values: dict[str, str], lang: str) -> str:
    text = _given(values, "emotion")
    lid = parse_emotion(text, lang)
    if not lid:
        return ""
    word = phrases(lang).EMOTIONS[lid]
    strong = any(s in text for s in _STRONG)
    if lang == "zh":
        return ("情绪明显" if strong else "情绪") + word
    return f"sounding {'very ' if strong else ''}{word}"


def _pitch_relative(values: dict[str, str], lang: str) -> int:
    """+1 / -1 when the pitch value says this turn is above / below the speaker's usual, else 0."""
    text = _given(values, "pitch")
    return next((d for d, phrase in phrases(lang).PITCH_REL.items() if phrase in text), 0)


def salience(values: dict[str, str], lang: str) -> dict[str, int]:
    """How distinctive each fact of the turn is, 0 (ordinary) to 3, from the reviewed values only.

    emotion: not neutral, moderate 2, strong or very strong 3, weak 1 (very weak 0: the rules'
    reading of almost any calm turn); scene: any background sound or environment 3; a non-verbal
    event 2; pitch: 2 when away from the speaker's usual, +1 at an extreme level; pace: its
    distance from moderate (0..2), +1 with long pauses; texture: 1 when marked."""
    P = phrases(lang)
    score = dict.fromkeys(_LEAD_ORDER, 0)
    emo = _given(values, "emotion")
    step = intensity_of(emo, P) if emo else None
    if parse_emotion(emo, lang) not in (None, "neutral") and step is not None:
        score["emotion"] = (0, 1, 2, 3, 3)[step]
    if _given(values, "background_sound") or _given(values, "environment"):
        score["scene"] = 3
    if _given(values, "paralinguistic"):
        score["paralinguistic"] = 2
    pitch = _step(values, "pitch", lang)
    if pitch is not None:
        score["pitch"] = 2 * abs(_pitch_relative(values, lang)) + (abs(pitch) == 2)
    speed_text = _given(values, "speed")
    speed = _step(values, "speed", lang)
    if speed is not None:
        score["speed"] = min(3, abs(speed) + any(m in speed_text for m in _LONG_PAUSES))
    texture = _given(values, "texture").lower()
    score["texture"] = int(any(m in texture for m in _MARKED_TEXTURE))
    return score


def distinctive_facts(values: dict[str, str], lang: str) -> list[str]:
    """The turn's distinctive facts (names of `_LEAD_ORDER`), most distinctive first."""
    score = salience(values, lang)
    return sorted((k for k in _LEAD_ORDER if score[k] > 0), key=lambda k: (-score[k], _LEAD_ORDER.index(k)))


def salient_fact(values: dict[str, str], lang: str) -> str | None:
    """The most distinctive fact of the turn, None when all are ordinary."""
    return next(iter(distinctive_facts(values, lang)), None)


def reviewed_sentence(values: dict[str, str], lang: str, earlier_captions: Sequence[str] = ()) -> str:
    """One plain sentence of the reviewed voice facts (English or Chinese), opening with the
    turn's most distinctive fact (`salient_fact`), e.g. "At a low pitch, lower than her usual, a
    young woman with a slightly hoarse voice speaks standard American English at a moderate pace,
    with a pause between phrases." With nothing distinctive: "A young woman with a clear voice
    speaks standard American English at a moderate pace and a medium pitch, sounding neutral."
    When an earlier caption of the recording already opens like that, the next distinctive fact
    leads, then the plain order (the models keep the given frame, so a repeated lead is a repeated
    opening); if every order is taken, the most distinctive. Values that are empty or the none
    marker are left out."""
    taken = set(free_text.openings_of(earlier_captions))
    orders = [*distinctive_facts(values, lang), None]
    options = [_sentence(values, lang, lead) for lead in orders]
    return next((s for s in options if free_text.opening(s) not in taken), options[0])


LEAD_WORDS = 3  # words of the facts sentence a caption is made to begin with (OpenAIOptions.caption_lead)


def lead_words(sentence: str) -> str:
    """The first LEAD_WORDS words of a facts sentence, up to its first comma: the opening a
    caption is made to begin with, so that it keeps the sentence's distinctive lead (the 1.5B
    moved the speaker back to the front on 7 of 8 turns). Empty for Chinese.

    >>> lead_words("At a low pitch, lower than her usual, a young woman ... speaks.")
    'At a low'
    >>> lead_words("Sounding happy, a middle-aged man with a clear voice speaks.")
    'Sounding happy'
    """
    if has_cjk(sentence):
        return ""
    return " ".join(sentence.split(",")[0].split()[:LEAD_WORDS])


def _sentence(values: dict[str, str], lang: str, lead: str | None) -> str:
    texture, accent = _given(values, "texture"), _given(values, "accent")
    pitch, speed = _level(values, "pitch", lang), _level(values, "speed", lang)
    para, bg, env = _given(values, "paralinguistic"), _given(values, "background_sound"), _given(values, "environment")
    feeling = _emotion(values, lang)
    rel = _pitch_relative(values, lang)
    pauses = any(m in _given(values, "speed") for m in _LONG_PAUSES)
    if lang == "zh":
        parts = {
            "who": speaker_phrase(values, lang),
            "texture": f"声音{texture}" if texture else "",
            "accent": f"说{accent}" if accent else "",
            "speed": speed + (phrases(lang).SPEED_PAUSE if lead == "speed" and pauses else ""),
            "pitch": pitch + (phrases(lang).SEP + phrases(lang).PITCH_REL[rel] if lead == "pitch" and rel else ""),
            "emotion": feeling,
            "paralinguistic": f"伴有{para}" if para else "",
            "scene": "，".join(p for p in (f"背景有{bg}" if bg else "", f"处于{env}" if env else "") if p),
        }
        order = ["who", "texture", "accent", "speed", "pitch", "emotion", "paralinguistic", "scene"]
        if lead:
            order.remove(lead)
            order.insert(0, lead)
        return "，".join(parts[k] for k in order if parts[k]) + "。"
    who = speaker_phrase(values, lang)
    # "clear voice" and "natural timbre" name the voice already; "deep" needs the noun.
    noun = "" if any(w in texture.lower() for w in ("voice", "timbre")) else " voice"
    voice = f" with a {texture}{noun}" if texture else ""
    if para and para.lower().startswith(("pause", "noticeable", "sigh")):
        para = f"a {para}"
    fronted = ""
    if lead == "emotion":
        fronted, feeling = feeling[0].upper() + feeling[1:], ""
    elif lead == "scene":
        fronted = ", ".join(p for p in (f"In a {env}" if env else "", f"over {bg}" if bg else "") if p)
        fronted, bg, env = fronted[0].upper() + fronted[1:], "", ""
    elif lead == "paralinguistic":
        fronted, para = f"With {para}", ""
    elif lead == "pitch":
        own = {"female": "her", "male": "his"}.get(
            canonical_closed("gender", values.get("gender")) or "", "the speaker's"
        )
        fronted = f"At a {pitch}" + (f", {'higher' if rel > 0 else 'lower'} than {own} usual" if rel else "")
        pitch = ""
    elif lead == "speed":
        fronted, speed = f"At a {speed}" + (", with long pauses between phrases" if pauses else ""), ""
    elif lead == "texture":
        fronted, voice = f"With a {texture}{noun}", ""
    speaks = f" speaks {accent}" if accent else " speaks"
    paces = [p for p in (speed and f"a {speed}", pitch and f"a {pitch}") if p]
    pace = f" at {' and '.join(paces)}" if paces else ""
    tail = [feeling, f"with {para}" if para else "", f"over {bg}" if bg else "", f"in a {env}" if env else ""]
    tail = [t for t in tail if t]
    text = f"{who}{voice}{speaks}{pace}" + (", " + ", ".join(tail) if tail else "")
    if fronted:
        text = f"{fronted}, {text}"
    return text[0].upper() + text[1:] + "."
