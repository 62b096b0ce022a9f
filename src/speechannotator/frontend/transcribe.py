"""Per-segment ASR with language identification (faster-whisper; shipped Whisper base by default).

Each segment is decoded on its own, so code-switched recordings get the right language per
segment. Whisper's language id is unreliable under ~1.5 s (MODELS.md), so short segments
take the language of their speaker (or of the recording) instead. Chinese is decoded with a
Simplified-Chinese prompt and converted with OpenCC, since Whisper otherwise drifts to
Traditional characters.
"""

from __future__ import annotations

import os
import threading
from collections import Counter
from dataclasses import dataclass

import numpy as np

from ..assets import whisper_base_dir
from ..config import AsrConfig
from ..records import Segment, Word

ZH_PROMPT = "以下是普通话的句子。"
MIN_LID_SECONDS = 1.5
_MODELS: dict[tuple, object] = {}
_LOCK = threading.Lock()


def whisper_model(cfg: AsrConfig):
    """Load (once per process) the configured faster-whisper model folder."""
    from faster_whisper import WhisperModel

    path = cfg.model or str(whisper_base_dir())
    # CTranslate2's default of 4 OpenMP threads oversubscribes small machines; use the cores we have.
    threads = cfg.cpu_threads or min(4, len(os.sched_getaffinity(0)))
    key = (path, cfg.device, cfg.compute_type, threads)
    with _LOCK:
        if key not in _MODELS:
            _MODELS[key] = WhisperModel(path, device=cfg.device, compute_type=cfg.compute_type, cpu_threads=threads)
        return _MODELS[key]


@dataclass
class LanguageGuess:
    language: str
    probability: float


def _to_simplified(text: str) -> str:
    return _converter().convert(text) if text else text


_OPENCC = None


def _converter():
    global _OPENCC
    if _OPENCC is None:
        import opencc

        _OPENCC = opencc.OpenCC("t2s")
    return _OPENCC


def detect_languages(model, audio: np.ndarray, sr: int, segments: list[Segment], forced: str | None = None) -> list[LanguageGuess]:
    """Language per segment; short segments inherit their speaker's / the recording's majority."""
    if forced:
        return [LanguageGuess(forced, 1.0) for _ in segments]
    guesses: list[LanguageGuess | None] = []
    for s in segments:
        if s.duration < MIN_LID_SECONDS:
            guesses.append(None)
            continue
        lang, prob, _ = model.detect_language(audio[int(s.start * sr): int(s.end * sr)])
        guesses.append(LanguageGuess(lang, float(prob)))
    weights_by_speaker: dict[str, Counter] = {}
    overall: Counter = Counter()
    for s, g in zip(segments, guesses):
        if g is not None:
            weights_by_speaker.setdefault(s.speaker, Counter())[g.language] += s.duration * g.probability
            overall[g.language] += s.duration * g.probability
    out = []
    for s, g in zip(segments, guesses):
        if g is None:
            pool = weights_by_speaker.get(s.speaker) or overall
            if pool:
                lang, w = pool.most_common(1)[0]
                g = LanguageGuess(lang, min(0.9, w / sum(pool.values())))
            else:
                lang, prob, _ = model.detect_language(audio[int(s.start * sr): int(s.end * sr)])
                g = LanguageGuess(lang, float(prob) * 0.5)
        out.append(g)
    return out


def _decode(model, clip: np.ndarray, language: str | None, cfg: AsrConfig):
    zh = language == "zh"
    parts, info = model.transcribe(
        clip,
        language=language,
        beam_size=cfg.beam_size,
        word_timestamps=True,
        condition_on_previous_text=False,
        initial_prompt=ZH_PROMPT if zh else None,
        vad_filter=False,
        # Input spans come from VAD, so silence is already gated; these stop Whisper from
        # looping on noise inside a span.
        no_speech_threshold=0.6,
        compression_ratio_threshold=2.4,
    )
    words = [w for p in parts for w in (p.words or [])]
    return words, info


def _chunks(segments: list[Segment], max_span: float) -> list[list[Segment]]:
    """Consecutive segments grouped into spans that fit one Whisper window."""
    chunks: list[list[Segment]] = []
    for s in sorted(segments, key=lambda s: s.start):
        if chunks and s.end - chunks[-1][0].start <= max_span:
            chunks[-1].append(s)
        else:
            chunks.append([s])
    return chunks


def _assign(words, offset: float, segments: list[Segment], zh: bool) -> None:
    """Give each decoded word to the segment that holds its midpoint (or the nearest one)."""
    buckets: dict[str, list] = {s.key: [] for s in segments}
    for w in words:
        mid = offset + (w.start + w.end) / 2
        best = min(segments, key=lambda s: 0.0 if s.start <= mid <= s.end else min(abs(mid - s.start), abs(mid - s.end)))
        buckets[best.key].append(w)
    for s in segments:
        ws = buckets[s.key]
        raw = "".join(w.word for w in ws).strip()
        s.text = _to_simplified(raw) if zh else raw
        s.words = [
            Word((_to_simplified(w.word) if zh else w.word).strip(), round(offset + w.start, 3), round(offset + w.end, 3), round(float(w.probability), 3))
            for w in ws
            if w.word.strip()
        ]


def transcribe_segments(audio: np.ndarray, sr: int, segments: list[Segment], cfg: AsrConfig | None = None, progress=None) -> list[Segment]:
    """Fill text, language and word timestamps (absolute seconds) of each segment.

    `chunk` mode (default) decodes consecutive segments together in spans of up to 28 s and
    gives each word to the segment holding it: one Whisper encoder pass per span instead of
    one per segment (Whisper pads every input to 30 s), about 5x faster on CPU. Language is
    identified per span. `segment` mode decodes and identifies each segment on its own, for
    code-switched recordings where neighbouring turns change language.
    """
    cfg = cfg or AsrConfig()
    model = whisper_model(cfg)
    if cfg.mode == "segment":
        groups = [[s] for s in segments]
    else:
        groups = _chunks(segments, cfg.chunk_s)
    spans = [Segment(key=f"span{i}", start=g[0].start, end=g[-1].end, speaker=g[0].speaker) for i, g in enumerate(groups)]
    langs = detect_languages(model, audio, sr, spans, cfg.language)
    for group, span, g in zip(groups, spans, langs):
        clip = audio[int(span.start * sr): int(span.end * sr)]
        words, _info = _decode(model, clip, g.language, cfg)
        _assign(words, span.start, group, g.language == "zh")
        for s in group:
            s.language = g.language
            s.language_probability = round(g.probability, 3)
        if progress is not None:
            progress(span.duration)
    return segments
