"""faster-whisper backend: any CTranslate2 Whisper folder (shipped base on CPU, large-v3 on GPU)."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import numpy as np

from ..assets import whisper_base_dir
from ..config import AsrConfig
from .asr_types import ZH_PROMPT, Decoded, LanguageGuess, Piece, RawWord

_MODELS: dict[tuple, object] = {}
_LOCK = threading.Lock()


class AsrModelError(RuntimeError):
    pass


def whisper_model(cfg: AsrConfig):
    """Load (once per process) the configured faster-whisper model folder."""
    from faster_whisper import WhisperModel

    path = cfg.model or str(whisper_base_dir())
    if not (Path(path) / "model.bin").exists():
        raise AsrModelError(f"asr.model {path!r} is not a faster-whisper (CTranslate2) model folder: no model.bin")
    # CTranslate2's default of 4 OpenMP threads oversubscribes small machines; use the cores we have.
    threads = cfg.cpu_threads or min(4, len(os.sched_getaffinity(0)))
    key = (path, cfg.device, cfg.compute_type, threads)
    with _LOCK:
        if key not in _MODELS:
            _MODELS[key] = WhisperModel(path, device=cfg.device, compute_type=cfg.compute_type, cpu_threads=threads)
        return _MODELS[key]


class WhisperAsr:
    name = "faster-whisper"

    def __init__(self, cfg: AsrConfig):
        self.cfg = cfg
        self.model = whisper_model(cfg)

    def detect(self, clip: np.ndarray) -> LanguageGuess | None:
        lang, prob, probs = self.model.detect_language(clip)
        runner = probs[1][1] if probs and len(probs) > 1 else 0.0
        return LanguageGuess(lang, float(prob), float(runner))

    def decode(self, clip: np.ndarray, language: str | None) -> Decoded:
        cfg = self.cfg
        parts, info = self.model.transcribe(
            clip,
            language=language,
            beam_size=cfg.beam_size,
            temperature=cfg.temperature,  # a single value: no sampling fallback (reproducible)
            word_timestamps=True,
            condition_on_previous_text=False,
            # Whisper drifts to Traditional characters and drops punctuation without it.
            initial_prompt=ZH_PROMPT if language == "zh" else None,
            vad_filter=False,  # spans come from our VAD already
            no_speech_threshold=cfg.no_speech_threshold,
            log_prob_threshold=cfg.logprob_threshold,
            compression_ratio_threshold=cfg.compression_ratio_threshold,
        )
        pieces = [
            Piece(
                p.start,
                p.end,
                p.text,
                [RawWord(w.word, w.start, w.end, float(w.probability)) for w in (p.words or [])],
                float(p.avg_logprob),
                float(p.compression_ratio),
                float(p.no_speech_prob),
            )
            for p in parts
        ]
        return Decoded(info.language, float(info.language_probability), pieces)
