"""ASR through an OpenAI-compatible `/v1/audio/transcriptions` endpoint.

For vLLM serving MOSS-Transcribe-Diarize or Qwen3-ASR, OpenAI's API, or
`speechannotator.servers.whisper_server`. Each span (or segment) is posted as a 16 kHz WAV
with `response_format=verbose_json` and word + segment timestamp granularities; the reply's
segments keep Whisper's quality statistics where the server reports them (so the
hallucination filter applies), words keep their times. Servers that return no words get one
pseudo-word per segment, so text still lands in the right segment by time. The endpoint
identifies language while decoding (`detect` returns None).
"""

from __future__ import annotations

import os

import numpy as np

from ..config import AsrConfig
from .asr_types import ZH_PROMPT, Decoded, LanguageGuess, Piece, RawWord, wav_bytes

# verbose_json's `language` is a code (vLLM, this project's server) or an English name (OpenAI).
_NAMES = {
    "english": "en",
    "chinese": "zh",
    "mandarin": "zh",
    "cantonese": "yue",
    "japanese": "ja",
    "korean": "ko",
    "german": "de",
    "french": "fr",
    "spanish": "es",
    "italian": "it",
    "portuguese": "pt",
    "russian": "ru",
    "arabic": "ar",
    "hindi": "hi",
    "dutch": "nl",
    "turkish": "tr",
    "vietnamese": "vi",
    "thai": "th",
    "indonesian": "id",
    "polish": "pl",
    "swedish": "sv",
    "ukrainian": "uk",
}


class AsrEndpointError(RuntimeError):
    pass


def language_code(value: str | None) -> str:
    v = (value or "").strip().lower()
    return _NAMES.get(v, v.split("-")[0] if v else "")


def _get(obj, name, default=None):
    return obj.get(name, default) if isinstance(obj, dict) else getattr(obj, name, default)


def parse_verbose(reply, duration: float) -> Decoded:
    """A verbose_json reply (dict or the openai SDK's object) -> Decoded."""
    words = [
        RawWord(
            str(_get(w, "word", "")),
            float(_get(w, "start", 0.0)),
            float(_get(w, "end", 0.0)),
            float(_get(w, "probability", 1.0) or 1.0),
        )
        for w in (_get(reply, "words") or [])
    ]
    pieces = []
    for s in _get(reply, "segments") or []:
        a, b = float(_get(s, "start", 0.0)), float(_get(s, "end", duration))
        pieces.append(
            Piece(
                a,
                b,
                str(_get(s, "text", "")),
                [],
                float(_get(s, "avg_logprob", 0.0) or 0.0),
                float(_get(s, "compression_ratio", 1.0) or 1.0),
                float(_get(s, "no_speech_prob", 0.0) or 0.0),
                scored=_get(s, "avg_logprob", None) is not None and _get(s, "no_speech_prob", None) is not None,
            )
        )
    if not pieces:
        text = str(_get(reply, "text", "") or "")
        pieces = [Piece(0.0, duration, text, scored=False)] if text.strip() else []
    if words:
        # Each word joins the piece that holds its midpoint, so a dropped piece drops its words.
        for w in words:
            mid = (w.start + w.end) / 2
            host = min(
                pieces,
                key=lambda p: 0.0 if p.start <= mid <= p.end else min(abs(mid - p.start), abs(mid - p.end)),
                default=None,
            )
            if host is None:
                host = Piece(0.0, duration, "".join(x.text for x in words))
                pieces.append(host)
            host.words.append(w)
    else:
        for p in pieces:
            p.words = [RawWord(p.text, p.start, max(p.start, min(p.end, duration)))] if p.text.strip() else []
    lang = language_code(_get(reply, "language"))
    return Decoded(lang, 1.0 if lang else 0.0, pieces)


class OpenAIAsr:
    name = "openai"

    def __init__(self, cfg: AsrConfig, client=None):
        if not cfg.url:
            raise AsrEndpointError("asr.backend 'openai' needs asr.url (an OpenAI-compatible /v1 endpoint)")
        self.cfg = cfg
        self.model = cfg.api_model or "whisper-1"
        if client is None:
            from openai import OpenAI

            client = OpenAI(
                base_url=cfg.url,
                api_key=os.environ.get(cfg.api_key_env) or "none",
                timeout=cfg.timeout_s,
                max_retries=cfg.max_retries,
            )
        self.client = client

    def detect(self, clip: np.ndarray) -> LanguageGuess | None:
        return None  # the endpoint detects while decoding

    def decode(self, clip: np.ndarray, language: str | None) -> Decoded:
        from openai import NOT_GIVEN, OpenAIError

        try:
            reply = self.client.audio.transcriptions.create(
                model=self.model,
                file=("span.wav", wav_bytes(clip), "audio/wav"),
                response_format="verbose_json",
                timestamp_granularities=["word", "segment"],
                language=language or NOT_GIVEN,
                prompt=ZH_PROMPT if language == "zh" else NOT_GIVEN,
                temperature=0.0,
            )
        except OpenAIError as exc:
            raise AsrEndpointError(
                f"transcription endpoint {self.cfg.url} failed: {str(exc).splitlines()[0][:200]}"
            ) from exc
        dec = parse_verbose(reply, len(clip) / 16000)
        if language:
            dec.language, dec.language_probability = language, 1.0
        return dec
