"""Transcript observations the rules backend may use in every ablation.

The transcript and its word/character timestamps belong to the segment itself (stages 4-6),
not to prior evidence, so these stay available under --no-priors.
"""

from __future__ import annotations

import math
import re

from ..records import Segment
from ..schema import has_cjk

_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_LATIN_WORD = re.compile(r"[A-Za-z']+")
_VOWEL_GROUPS = re.compile(r"[aeiouy]+")
# "嘛" is no question mark: it marks the obvious or a suggestion ("那再写五个点嘛", the zh lecture)
_ZH_QUESTION_END = ("吗", "呢", "么")
_EN_QUESTION_START = (
    "what",
    "why",
    "how",
    "who",
    "where",
    "when",
    "which",
    "is",
    "are",
    "do",
    "does",
    "did",
    "can",
    "could",
    "would",
    "will",
    "should",
    "have",
    "has",
    "shall",
    "may",
)
_ZH_COMMAND_START = ("请", "别", "不要", "快", "赶紧", "不用", "注意", "小心")
# An imperative opens the sentence with its verb: whole words ("Good idea" is no "go", "Looks
# fine" no "look"); "Tell me about ..." (the bundled example) and "Just put it ..." (AMI dev01) are.
_EN_COMMAND_START = re.compile(
    r"(please|let's|don't|do not|stop|listen|look|come|go|tell me|give me|show me|(just )?put|make sure|wait)\b"
)
_ZH_PERSUADE = ("不用", "应该", "还是", "不如", "别担心", "放心", "相信我", "从大局")
_EN_PERSUADE = ("you should", "why don't", "trust me", "don't worry", "we could", "it's better")


def syllables_en(word: str) -> int:
    """Vowel-group syllable estimate (silent final e dropped); good to ~10 % on running text."""
    w = word.lower().strip("'")
    if not w:
        return 0
    n = len(_VOWEL_GROUPS.findall(w))
    if w.endswith("e") and not w.endswith(("le", "ee")) and n > 1:
        n -= 1
    return max(1, n)


def speech_units(text: str) -> tuple[float, str]:
    """(count, unit): CJK characters plus English syllables; unit 'char' when CJK dominates."""
    cjk = len(_CJK.findall(text or ""))
    syl = sum(syllables_en(w) for w in _LATIN_WORD.findall(text or ""))
    return float(cjk + syl), ("char" if cjk >= syl else "syllable")


def internal_gaps(seg: Segment) -> list[float]:
    """Silences between consecutive words (seconds), in order."""
    ws = sorted(seg.words, key=lambda w: w.start)
    return [max(0.0, b.start - a.end) for a, b in zip(ws, ws[1:])]


def transcript_rate(seg: Segment) -> float | None:
    """Units per second of speaking time (word span minus long gaps), from the transcript alone."""
    units, _ = speech_units(seg.text)
    if units <= 0 or seg.duration <= 0.2:
        return None
    if seg.words:
        ws = sorted(seg.words, key=lambda w: w.start)
        span = max(0.2, ws[-1].end - ws[0].start)
        span -= sum(g for g in internal_gaps(seg) if g >= 0.3)
        return units / max(0.2, span)
    return units / (0.85 * seg.duration)  # segment bounds carry some padding around the speech


def _word_probabilities(seg: Segment) -> list[float]:
    return [float(w.probability) for w in seg.words if isinstance(w.probability, (int, float))]


def mean_word_probability(seg: Segment) -> float | None:
    probs = _word_probabilities(seg)
    return sum(probs) / len(probs) if probs else None


def word_probability_error(seg: Segment) -> float:
    """The standard error of ``mean_word_probability`` (0 under two words)."""
    probs = _word_probabilities(seg)
    if len(probs) < 2:
        return 0.0
    mean = sum(probs) / len(probs)
    return math.sqrt(sum((x - mean) ** 2 for x in probs) / (len(probs) - 1) / len(probs))


def speech_act(text: str) -> str:
    """'question', 'exclaim', 'command', 'persuade' or 'statement' from the transcript's surface."""
    t = (text or "").strip()
    if not t:
        return "statement"
    core = t.rstrip("。.！!？?…，, ")
    low = t.lower()
    if t.endswith(("？", "?")) or (has_cjk(t) and core.endswith(_ZH_QUESTION_END)):
        return "question"
    if not has_cjk(t) and low.split(" ", 1)[0] in _EN_QUESTION_START and t.endswith("?"):
        return "question"
    if t.endswith(("！", "!")):
        return "exclaim"
    if (has_cjk(t) and t.startswith(_ZH_COMMAND_START)) or _EN_COMMAND_START.match(low):
        return "command"
    if any(p in t for p in _ZH_PERSUADE) or any(p in low for p in _EN_PERSUADE):
        return "persuade"
    return "statement"
