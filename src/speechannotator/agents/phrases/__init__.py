"""Surface forms of the labels in each label language (the vocabularies of open fields)."""

from types import ModuleType

from . import en, zh


def phrases(lang: str) -> ModuleType:
    return zh if lang == "zh" else en
