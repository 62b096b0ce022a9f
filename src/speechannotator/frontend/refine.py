"""Stage 5, transcript refinement: deterministic normalization (the default).

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
        if text[-1] not in "。！？…”」":
            text += "。"
        return text
    text = re.sub(r"\s+([,.!?;:])", r"\1", text)
    text = re.sub(r"([,;])(?=[^\W\d_])", r"\1 ", text)
    text = text[0].upper() + text[1:]
    if text[-1] not in ".!?…\"'":
        text += "."
    return text
