"""The reviewed voice facts as one plain sentence, built by code for a small model to paraphrase.

Told a table of field values, the shipped 0.5B and 1.5B strung the values together or wrote
sentences wrong in meaning ("Mr. John Dashwood is a mix of a gentle low-pitched tone ...");
given the same facts already phrased as one sentence, a small model rewrites it in its own
words far more reliably (docs/agents-llm.md). The sentence is deterministic: who speaks
(gender, age), the voice (texture, accent), the pitch and pace levels, the emotion, and any
non-verbal event or background the review kept.
"""

from __future__ import annotations

from ..schema import canonical_closed, is_empty_marker
from .levels import parse_level
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


def reviewed_sentence(values: dict[str, str], lang: str) -> str:
    """One plain sentence of the reviewed voice facts (English or Chinese), e.g. "A young woman
    with a clear voice speaks standard American English at a moderate pace and a medium pitch,
    sounding neutral." Values that are empty or the none marker are left out."""
    texture, accent = _given(values, "texture"), _given(values, "accent")
    pitch, speed = _level(values, "pitch", lang), _level(values, "speed", lang)
    para, bg, env = _given(values, "paralinguistic"), _given(values, "background_sound"), _given(values, "environment")
    feeling = _emotion(values, lang)
    if lang == "zh":
        parts = [speaker_phrase(values, lang), f"声音{texture}" if texture else "", f"说{accent}" if accent else ""]
        parts += [speed, pitch, feeling, f"伴有{para}" if para else "", f"背景有{bg}" if bg else ""]
        parts.append(f"处于{env}" if env else "")
        return "，".join(p for p in parts if p) + "。"
    who = speaker_phrase(values, lang)
    voice = ""
    if texture:
        voice = f" with a {texture}" if "voice" in texture.lower() else f" with a {texture} voice"
    speaks = f" speaks {accent}" if accent else " speaks"
    paces = [p for p in (speed and f"a {speed}", pitch and f"a {pitch}") if p]
    pace = f" at {' and '.join(paces)}" if paces else ""
    if para and para.lower().startswith(("pause", "noticeable", "sigh")):
        para = f"a {para}"
    tail = [feeling, f"with {para}" if para else "", f"over {bg}" if bg else "", f"in a {env}" if env else ""]
    tail = [t for t in tail if t]
    text = f"{who}{voice}{speaks}{pace}" + (", " + ", ".join(tail) if tail else "")
    return text[0].upper() + text[1:] + "."
