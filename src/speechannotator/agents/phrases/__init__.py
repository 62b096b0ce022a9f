"""Surface forms of the labels in each label language (the vocabularies of open fields)."""

from types import ModuleType

from . import en, zh


def phrases(lang: str) -> ModuleType:
    return zh if lang == "zh" else en


def parse_emotion(text: str, lang: str) -> str | None:
    """The emotion id a label names, read in its language first, then in the other one."""
    low = (text or "").lower()
    for P in (phrases(lang), phrases("en" if lang == "zh" else "zh")):
        for word, lid in P.EMOTION_PARSE:
            if word in low:
                return lid
    return None
