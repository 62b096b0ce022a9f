"""Emotion evidence: prosodic arousal relative to the speaker, and transcript valence.

Arousal: high-arousal speech is louder, higher, more variable in pitch and faster than the
same speaker's neutral speech (Scherer 2003, Speech Communication 40:227; Juslin & Laukka
2003 review). We z-score a segment's energy, median F0, F0 spread and rate against the
speaker's segments and average the available z-scores. Valence: vaderSentiment's compound
score for English transcripts; for Chinese a small lexicon with negation (below). Transcript
text is untrusted data: only counted, never interpreted.
"""

from __future__ import annotations

import math
import re

import numpy as np

# Spread of per-segment values within one speaker's neutral reading, used when a speaker
# has too few segments to estimate it (measured on the LibriVox clips: energy 2-4 dB,
# median F0 1.5-2.5 st, F0 std 0.5-1 st, rate 10-15 %).
DEFAULT_SPREAD = {"energy.rms_db": 3.0, "pitch.median_st": 2.0, "pitch.std_semitones": 0.8, "rate.log": 0.15}

# Chinese valence lexicon: common emotion words of everyday speech (after HowNet/NTUSD-style
# polarity lists, kept short so every entry is unambiguous out of context).
ZH_POSITIVE = [
    "开心",
    "高兴",
    "快乐",
    "喜欢",
    "爱",
    "幸福",
    "满意",
    "棒",
    "好极了",
    "太好了",
    "不错",
    "优秀",
    "精彩",
    "成功",
    "感谢",
    "谢谢",
    "欢迎",
    "希望",
    "美好",
    "漂亮",
    "舒服",
    "放心",
    "激动",
    "兴奋",
    "骄傲",
    "温暖",
    "顺利",
    "恭喜",
    "哈哈",
    "赞",
    "厉害",
    "完美",
    "轻松",
    "愉快",
    "甜",
    "笑",
]
ZH_NEGATIVE = [
    "难过",
    "伤心",
    "痛苦",
    "生气",
    "愤怒",
    "讨厌",
    "害怕",
    "担心",
    "失望",
    "糟糕",
    "可怕",
    "烦",
    "累",
    "哭",
    "恨",
    "遗憾",
    "抱歉",
    "对不起",
    "不幸",
    "危险",
    "失败",
    "问题",
    "麻烦",
    "紧张",
    "焦虑",
    "孤独",
    "无聊",
    "郁闷",
    "后悔",
    "委屈",
    "惨",
    "坏",
    "死",
    "疼",
    "病",
    "吵",
    "骂",
    "怕",
]
ZH_NEGATION = ("不", "没", "没有", "别", "不是", "并不", "从不", "毫不")
_ZH_WORDS = sorted([(w, 1.0) for w in ZH_POSITIVE] + [(w, -1.0) for w in ZH_NEGATIVE], key=lambda x: -len(x[0]))
_CJK = re.compile(r"[\u4e00-\u9fff]")


def valence_zh(text: str) -> float | None:
    """Lexicon valence in [-1, 1]: longest-match polarity words, flipped by a negator just before.

    Returns None when no polarity word occurs.
    """
    hits: list[float] = []
    i = 0
    while i < len(text):
        for w, pol in _ZH_WORDS:
            if text.startswith(w, i):
                before = text[max(0, i - 3) : i]
                neg = any(before.endswith(n) for n in ZH_NEGATION)
                hits.append(-pol if neg else pol)
                i += len(w)
                break
        else:
            i += 1
    if not hits:
        return None
    s = sum(hits)
    return float(s / math.sqrt(s * s + 4.0))  # squashed like VADER's normalisation (alpha = 4 here)


_vader = None
# VADER was built for written reviews and posts; in speech these are discourse markers, answers and
# politeness ("Okay, well ...", "Um, yeah", "Please press 1"), not feelings: scored as neutral. On
# AMI dev00 and Allison's prompts they alone made turns "happy".
SPOKEN_MARKERS = ("okay", "ok", "alright", "well", "yeah", "yes", "yep", "no", "please", "sure")


def valence_en(text: str) -> float | None:
    global _vader
    try:
        if _vader is None:
            from vaderSentiment.vaderSentiment import SentimentIntensityAnalyzer

            _vader = SentimentIntensityAnalyzer()
            for word in SPOKEN_MARKERS:
                _vader.lexicon.pop(word, None)
    except ImportError:
        return None
    return float(_vader.polarity_scores(text)["compound"])


def text_valence(text: str, language: str) -> tuple[float | None, str]:
    """(valence in [-1, 1] or None, method name)."""
    text = (text or "").strip()
    if not text:
        return None, ""
    lang = (language or "").lower()
    if lang.startswith("zh") or (not lang and len(_CJK.findall(text)) > len(text) / 3):
        return valence_zh(text), "lexicon-zh"
    if lang.startswith("en") or not lang:
        return valence_en(text), "vaderSentiment"
    return None, ""


def arousal(seg: dict[str, float], speaker_segments: list[dict[str, float]]) -> tuple[float | None, float]:
    """(arousal z in about -3..3, reliability) of one segment against its speaker's segments.

    ``seg`` / ``speaker_segments`` hold ``energy.rms_db``, ``pitch.median_hz``,
    ``pitch.std_semitones``, ``rate.units_per_s`` where measured.
    """

    def feats(d: dict[str, float]) -> dict[str, float]:
        f = {}
        if d.get("energy.rms_db") is not None:
            f["energy.rms_db"] = d["energy.rms_db"]
        if d.get("pitch.median_hz"):
            f["pitch.median_st"] = 12 * math.log2(d["pitch.median_hz"] / 100.0)
        if d.get("pitch.std_semitones") is not None:
            f["pitch.std_semitones"] = d["pitch.std_semitones"]
        if d.get("rate.units_per_s"):
            f["rate.log"] = math.log(d["rate.units_per_s"])
        return f

    mine = feats(seg)
    pool = [feats(d) for d in speaker_segments]
    zs = []
    for k, v in mine.items():
        vals = [p[k] for p in pool if k in p]
        if len(vals) < 2:
            continue  # relative to nothing
        mu = float(np.mean(vals))
        sd = float(np.std(vals)) if len(vals) >= 4 else 0.0
        sd = max(sd, 0.5 * DEFAULT_SPREAD[k]) if sd else DEFAULT_SPREAD[k]
        zs.append((v - mu) / sd)
    if not zs:
        return None, 0.0
    rel = min(1.0, len(zs) / 4) * min(1.0, len(pool) / 6)
    return float(np.clip(np.mean(zs), -3, 3)), rel
