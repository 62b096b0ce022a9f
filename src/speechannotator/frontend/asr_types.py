"""What an ASR backend returns for one clip, and the hallucination filter applied to it.

Both backends (faster-whisper in process, an OpenAI-compatible `/v1/audio/transcriptions`
endpoint) produce `Decoded`: the language and Whisper-style pieces with their quality
statistics (no-speech probability, average log-probability, compression ratio) and words
with times relative to the clip.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from ..config import AsrConfig

ZH_PROMPT = "以下是普通话的句子。"


@dataclass
class RawWord:
    text: str
    start: float  # seconds from the clip start
    end: float
    probability: float = 1.0


@dataclass
class Piece:
    """One decoded segment of a clip (Whisper's unit), with its quality statistics."""

    start: float
    end: float
    text: str
    words: list[RawWord] = field(default_factory=list)
    avg_logprob: float = 0.0
    compression_ratio: float = 1.0
    no_speech_prob: float = 0.0
    # Whether the backend reported avg_logprob and no_speech_prob (an OpenAI-compatible endpoint
    # may not): unscored pieces pass the filters on their neutral defaults but export no score.
    scored: bool = True


@dataclass
class Decoded:
    language: str
    language_probability: float
    pieces: list[Piece] = field(default_factory=list)


@dataclass(frozen=True)
class LanguageGuess:
    language: str
    probability: float
    runner_up: float = 0.0  # probability of the second most likely language


class AsrBackend(Protocol):
    name: str

    def detect(self, clip: np.ndarray) -> LanguageGuess | None:
        """Language of a clip, or None when the backend only detects while decoding."""

    def decode(self, clip: np.ndarray, language: str | None) -> Decoded:
        """Transcribe a 16 kHz clip (at most ~30 s) in `language` (None: detect)."""


# Whisper's stock outputs on music, silence and noise (subtitle credits and sign-offs):
# dropped only when the piece is also uncertain, since people do say "thank you".
_STOCK_PHRASES = (
    "thank you",
    "thanks for watching",
    "thank you for watching",
    "thank you so much for watching",
    "please subscribe",
    "subtitles by the amaraorg community",
    "you",
    "bye",
    "字幕由amaraorg社区提供",
    "请不吝点赞订阅转发打赏支持明镜与点点栏目",
    "谢谢观看",
    "谢谢大家",
    "字幕志愿者",
    "明镜需要您的支持",
    "订阅",
    "謝謝觀看",
)
_MUSIC = set("♪♫♬♩🎵🎶")
_TAG = re.compile(
    r"^[\[(（【]\s*(music|musik|音乐|音樂|applause|laughter|silence|noise|blank_audio)\s*[\])）】]$", re.I
)


def _bare(text: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFKC", text).lower() if c.isalnum())


_STOCK = {_bare(p) for p in _STOCK_PHRASES}
# Prompts this project gives the decoder; Whisper sometimes "transcribes" them back on unclear audio.
_PROMPTS = (_bare(ZH_PROMPT), _bare("以下是普通話的句子。"))


def is_prompt_echo(text: str) -> bool:
    """The text is (mostly) a decoding prompt said back: what remains without it is under 2 characters."""
    bare = _bare(text)
    return any(p and p in bare and len(bare.replace(p, "")) < 2 for p in _PROMPTS)


def hallucination_reason(piece: Piece, cfg: AsrConfig) -> str | None:
    """Why a decoded piece is not speech, or None to keep it.

    Voice activity already gates which audio reaches ASR; this catches what passes the gate
    (music, noise bursts): Whisper's own no-speech / confidence / repetition statistics and
    its stock phrases.
    """
    text = piece.text.strip()
    if not text or all(c in _MUSIC or not c.isalnum() for c in text) or _TAG.match(text):
        return "no words"
    if is_prompt_echo(text):
        return "prompt echo"
    if piece.compression_ratio > cfg.compression_ratio_threshold:
        return "repetitive"
    if piece.no_speech_prob > cfg.no_speech_threshold and piece.avg_logprob < cfg.logprob_threshold:
        return "no speech"
    if piece.avg_logprob < cfg.hallucination_logprob:
        return "low confidence"
    if _bare(text) in _STOCK and (piece.no_speech_prob > 0.2 or piece.avg_logprob < -0.6):
        return "stock phrase"
    return None


def wav_bytes(clip: np.ndarray, sr: int = 16000) -> bytes:
    """A clip as 16-bit PCM WAV (what an HTTP ASR endpoint receives)."""
    import io

    import soundfile as sf

    buf = io.BytesIO()
    sf.write(buf, np.clip(clip, -1.0, 1.0), sr, format="WAV", subtype="PCM_16")
    return buf.getvalue()
