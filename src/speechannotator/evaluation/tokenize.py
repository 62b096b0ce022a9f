"""Text normalization and tokenization for Timeline-Eval.

Character level (Chinese and mixed text): NFKC, lower case, every whitespace, punctuation,
symbol-free control character removed, then one token per character, so spaces never count.
Word level (space-delimited languages): NFKC, lower case, punctuation removed inside words,
split on whitespace.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable
from typing import Literal

from ..schema import has_cjk, normalize_text

Unit = Literal["char", "word"]
UnitChoice = Literal["auto", "char", "word"]


def char_tokens(text: str) -> list[str]:
    # schema.normalize_text already drops punctuation (P), separators (Z) and controls (C).
    return list(normalize_text(text))


def word_tokens(text: str) -> list[str]:
    text = unicodedata.normalize("NFKC", text or "").lower()
    words = []
    for raw in text.split():
        # Punctuation inside a token ("well-known", "don't") is dropped, not split on, on
        # both sides alike, so the reference and hypothesis stay comparable.
        word = "".join(ch for ch in raw if unicodedata.category(ch)[0] not in "PC")
        if word:
            words.append(word)
    return words


def tokens(text: str, unit: Unit) -> list[str]:
    if unit == "char":
        return char_tokens(text)
    if unit == "word":
        return word_tokens(text)
    raise ValueError(f"unknown unit {unit!r} (expected 'char' or 'word')")


def resolve_unit(unit: UnitChoice, reference_texts: Iterable[str]) -> Unit:
    """'auto' scores characters as soon as any reference text holds CJK, words otherwise."""
    if unit in ("char", "word"):
        return unit
    if unit != "auto":
        raise ValueError(f"unknown unit {unit!r} (expected auto, char or word)")
    return "char" if any(has_cjk(t) for t in reference_texts) else "word"
