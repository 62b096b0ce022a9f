"""faster-whisper backend: any CTranslate2 Whisper folder (shipped base on CPU, large-v3 on GPU).

Language id and decoding of one clip share one encoder pass: the model keeps its last few encoder
outputs (per thread) and hands one back when the same mel window is encoded again.
`detect` encodes the clip's first window exactly as faster-whisper's decoder will (same
features, same padding), so the decode that follows finds it. On a 30-s window the encoder is
about a fifth of the CPU time of a greedy decode with word timestamps.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections import OrderedDict
from pathlib import Path

import numpy as np

from ..assets import whisper_base_dir
from ..config import AsrConfig
from .asr_types import ZH_PROMPT, Decoded, LanguageGuess, Piece, RawWord

_MODELS: dict[tuple, object] = {}
_LOCK = threading.Lock()


class AsrModelError(RuntimeError):
    pass


def _shared_encoder_model_class():
    from faster_whisper import WhisperModel
    from faster_whisper.audio import pad_or_trim

    class SharedEncoderWhisper(WhisperModel):
        """WhisperModel that keeps its last few encoder outputs (per thread) and reuses one for an
        identical window (a language id run before the decode of the same clip, or several voices'
        first windows identified before any of them is decoded)."""

        KEEP = 8  # encoder outputs kept per thread (Whisper base: 3 MB each)

        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self._kept = threading.local()
            self.encoder_passes = 0
            self.encoder_reuses = 0

        def encode(self, features: np.ndarray):
            data = np.ascontiguousarray(features)
            key = (data.shape, str(data.dtype), hashlib.blake2b(data.tobytes(), digest_size=16).digest())
            kept = getattr(self._kept, "entries", None)
            if kept is None:
                kept = self._kept.entries = OrderedDict()
            if key in kept:
                self.encoder_reuses += 1
                kept.move_to_end(key)
                return kept[key]
            out = super().encode(features)
            self.encoder_passes += 1
            kept[key] = out
            if len(kept) > self.KEEP:
                kept.popitem(last=False)
            return out

        def first_window_languages(self, clip: np.ndarray) -> list[tuple[str, float]]:
            """Language probabilities (best first) of the clip's first 30-s window, encoded the
            way `generate_segments` encodes it (last mel frame dropped, padded to 30 s)."""
            fe = self.feature_extractor
            features = fe(clip)
            content = features.shape[-1] - 1
            window = pad_or_trim(features[:, : min(fe.nb_max_frames, content)])
            results = self.model.detect_language(self.encode(window))[0]
            return [(token[2:-2], float(p)) for token, p in results]

    return SharedEncoderWhisper


def whisper_model(cfg: AsrConfig):
    """Load (once per process) the configured faster-whisper model folder."""
    path = cfg.model or str(whisper_base_dir())
    if not (Path(path) / "model.bin").exists():
        raise AsrModelError(f"asr.model {path!r} is not a faster-whisper (CTranslate2) model folder: no model.bin")
    # CTranslate2's default of 4 OpenMP threads oversubscribes small machines; use the cores we have.
    threads = cfg.cpu_threads or min(4, len(os.sched_getaffinity(0)))
    key = (path, cfg.device, cfg.compute_type, threads)
    with _LOCK:
        if key not in _MODELS:
            _MODELS[key] = _shared_encoder_model_class()(
                path, device=cfg.device, compute_type=cfg.compute_type, cpu_threads=threads
            )
        return _MODELS[key]


class WhisperAsr:
    name = "faster-whisper"

    def __init__(self, cfg: AsrConfig):
        self.cfg = cfg
        self.model = whisper_model(cfg)

    def detect(self, clip: np.ndarray) -> LanguageGuess | None:
        probs = self.model.first_window_languages(clip)
        runner = probs[1][1] if len(probs) > 1 else 0.0
        return LanguageGuess(probs[0][0], probs[0][1], runner)

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
