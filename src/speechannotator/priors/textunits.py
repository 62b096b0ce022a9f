"""Speaking-rate units from a transcript: characters for Chinese, syllables otherwise.

Chinese (and Japanese kanji/kana) characters are one syllable each; Hangul blocks are one
syllable each. For alphabetic languages we count vowel groups per word with a few English
corrections (silent final e, -le, -ed/-es endings); this is the usual heuristic behind
syllable-rate estimates when no pronouncing dictionary ships (error ~10 % per word, much
less over a segment).
"""

from __future__ import annotations

import re
import unicodedata

_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3040-\u30ff\uac00-\ud7af]")
_WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?", re.UNICODE)
_VOWELS = "aeiouyàáâãäåæèéêëìíîïòóôõöøùúûüýÿœāēīōūǎěǐǒǔ"
_DIGIT_SYLLABLES = {"0": 2, "1": 1, "2": 1, "3": 1, "4": 1, "5": 1, "6": 1, "7": 2, "8": 1, "9": 1}


def is_chinese(language: str) -> bool:
    lang = (language or "").lower()
    return lang.startswith("zh") or lang in {"cmn", "yue", "chinese", "mandarin", "cantonese"}


def english_syllables(word: str) -> int:
    w = word.lower().strip("'")
    if not w:
        return 0
    groups = re.findall(f"[{_VOWELS}]+", w)
    n = len(groups)
    if n == 0:
        return 1  # "hmm", "shh": one beat
    if w.endswith("e") and not w.endswith(("le", "ee", "ye")) and n > 1:
        n -= 1  # silent final e ("make")
    elif w.endswith(("ed",)) and not w.endswith(("ted", "ded")) and n > 1:
        n -= 1  # "jumped"
    elif w.endswith("es") and not w.endswith(("ses", "zes", "ces", "ges", "xes", "shes", "ches")) and n > 1:
        n -= 1  # "makes"
    return max(1, n)


def count_units(text: str, language: str) -> tuple[int, str]:
    """(number of units, unit name) of a transcript: ('char' for zh, 'syllable' otherwise).

    CJK characters count as one unit each in every language (code-switching); the unit name
    follows the segment language.
    """
    text = unicodedata.normalize("NFC", text or "")
    # Drop inline tags such as <laughter> or 嗯<叹气>.
    text = re.sub(r"<[^<>]{0,20}>", " ", text)
    cjk = len(_CJK.findall(text))
    rest = _CJK.sub(" ", text)
    syl = sum(english_syllables(w) for w in _WORD.findall(rest))
    syl += sum(_DIGIT_SYLLABLES.get(c, 0) for c in rest if c.isdigit())
    unit = "char" if is_chinese(language) else "syllable"
    return cjk + syl, unit
