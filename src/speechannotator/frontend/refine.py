"""Stage 6, transcript refinement: deterministic normalization (the default).

Script (Simplified Chinese), punctuation width and spacing are normalized so that the
transcript reads like the reference output and scores fairly in CER. An LLM refiner plugs in
through the OpenAI-compatible backend when configured.
"""

from __future__ import annotations

import re

_CJK = r"\u3400-\u9fff\uf900-\ufaff"
_HALF_TO_FULL = {",": "，", "?": "？", "!": "！", ":": "：", ";": "；", "(": "（", ")": "）"}


def normalize_transcript(text: str, language: str) -> str:
    text = re.sub(r"\s+", " ", (text or "").replace("\u3000", " ")).strip()
    if not text:
        return ""
    if language == "zh":
        # No spaces between CJK characters (Whisper sometimes inserts them).
        text = re.sub(rf"(?<=[{_CJK}])\s+(?=[{_CJK}])", "", text)
        text = re.sub(rf"(?<=[{_CJK}])\s+(?=[，。！？、：；])", "", text)
        # ASCII punctuation next to CJK becomes full width; a final "." becomes "。".
        text = re.sub(rf"(?<=[{_CJK}])\s*([,?!:;])\s*", lambda m: _HALF_TO_FULL[m.group(1)], text)
        text = re.sub(rf"(?<=[{_CJK}])\.", "。", text)
        text = text.rstrip("，、；：,;:")  # a turn cut mid-sentence ends with a full stop, not "，。"
        if text and text[-1] not in "。！？…”」":
            text += "。"
        return text
    text = re.sub(r"\s+([,.!?;:])", r"\1", text)
    text = re.sub(r"([,;])(?=[^\W\d_])", r"\1 ", text)
    text = text.rstrip(",;:").rstrip()  # a turn cut mid-sentence ends with ".", not ",."
    if not text:
        return ""
    text = text[0].upper() + text[1:]
    if text[-1] not in ".!?…\"'":
        text += "."
    return text


def refine_segments(segments, config) -> dict:
    """Stage 6 over the segment table: normalization, and LLM refinement when configured.

    The LLM path (`asr.refine = "llm"`) falls back to the normalized text for any segment it
    cannot refine safely; the result is normalized again so the output format stays uniform.
    """
    stats = {"refine": config.asr.refine, "refined_by_llm": 0}
    for s in segments:
        s.text = normalize_transcript(s.text, s.language)
    if config.asr.refine == "llm" and segments:
        from .refine_llm import refine_with_llm

        changed = refine_with_llm(segments, config)
        for s in segments:
            s.text = normalize_transcript(s.text, s.language)
        stats["refined_by_llm"] = changed
    return stats
