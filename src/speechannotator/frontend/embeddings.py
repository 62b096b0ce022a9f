"""Speaker embeddings of short sliding windows (Resemblyzer GE2E d-vectors, shipped weights)."""

from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np

from .vad import SpeechRegion

_ENCODER = None
_LOCK = threading.Lock()
_WINDOW_FRAMES = 160  # Resemblyzer's partial utterance: 160 mel frames of 10 ms = 1.6 s
_FRAME_S = 0.01


def encoder():
    """The shared VoiceEncoder (loaded once per process; ~17 MB)."""
    global _ENCODER
    with _LOCK:
        if _ENCODER is None:
            import warnings

            import torch

            with warnings.catch_warnings():
                # resemblyzer imports webrtcvad, which imports the deprecated pkg_resources.
                warnings.simplefilter("ignore")
                from resemblyzer import VoiceEncoder

            # One intra-op thread: the small LSTM gains nothing from more, and with two
            # threads on a busy 2-core machine it ran 5-10x slower (spin-waiting) in
            # measurement; the other core stays free for Whisper and the priors.
            torch.set_num_threads(1)
            _ENCODER = VoiceEncoder("cpu", verbose=False)
        return _ENCODER


def _embed(mels: np.ndarray) -> np.ndarray:
    """Encoder forward of a batch of (160, 40) mel windows (one torch thread, see encoder())."""
    import torch

    enc = encoder()
    with torch.inference_mode():
        return enc(torch.from_numpy(mels.astype(np.float32, copy=False))).numpy()


@dataclass
class WindowEmbeddings:
    starts: np.ndarray  # seconds, shape (n,)
    ends: np.ndarray
    vectors: np.ndarray  # (n, 256), unit norm
    region_index: np.ndarray  # index of the speech region each window belongs to

    def __len__(self) -> int:
        return len(self.starts)

    @property
    def centers(self) -> np.ndarray:
        return (self.starts + self.ends) / 2


def embed_windows(
    samples: np.ndarray, sample_rate: int, regions: list[SpeechRegion], hop_s: float = 0.75, batch: int = 256
) -> WindowEmbeddings:
    """Embed 1.6 s windows every `hop_s` inside each speech region.

    A region shorter than a window gets one zero-padded window, so every region is covered.
    Mel frames are computed per region (memory stays proportional to one region).
    """
    encoder()  # imports resemblyzer quietly first
    from resemblyzer.audio import normalize_volume, wav_to_mel_spectrogram

    hop = max(1, int(round(hop_s / _FRAME_S)))
    pending, out, starts, ends, owner = [], [], [], [], []

    def flush() -> None:
        # Embed what is pending: mel buffers never exceed one batch (bounded memory on long files).
        if pending:
            out.append(_embed(np.stack(pending)))
            pending.clear()

    for i, r in enumerate(regions):
        wav = samples[int(r.start * sample_rate) : int(r.end * sample_rate)]
        if len(wav) < int(0.2 * sample_rate):
            continue
        wav = normalize_volume(wav.astype(np.float32), -30, increase_only=False)
        mel = wav_to_mel_spectrogram(wav)  # (frames, 40)
        n = len(mel)
        offsets = list(range(0, max(1, n - _WINDOW_FRAMES + 1), hop))
        if n > _WINDOW_FRAMES and offsets[-1] + _WINDOW_FRAMES < n:
            offsets.append(n - _WINDOW_FRAMES)  # cover the region's tail
        for o in offsets:
            m = mel[o : o + _WINDOW_FRAMES]
            if len(m) < _WINDOW_FRAMES:
                m = np.pad(m, ((0, _WINDOW_FRAMES - len(m)), (0, 0)))
            pending.append(m)
            starts.append(r.start + o * _FRAME_S)
            ends.append(min(r.end, r.start + (o + _WINDOW_FRAMES) * _FRAME_S))
            owner.append(i)
            if len(pending) >= batch:
                flush()
    flush()
    if not out:
        return WindowEmbeddings(np.zeros(0), np.zeros(0), np.zeros((0, 256), np.float32), np.zeros(0, int))
    return WindowEmbeddings(np.array(starts), np.array(ends), np.concatenate(out), np.array(owner))


def embed_short(
    samples: np.ndarray, sample_rate: int, spans: list[tuple[float, float]], frames: int = 60
) -> np.ndarray:
    """One embedding per (start, end) span from its first `frames` mel frames (short windows,
    used near speaker changes where 1.6 s windows are too coarse)."""
    encoder()  # imports resemblyzer quietly first
    from resemblyzer.audio import normalize_volume, wav_to_mel_spectrogram

    if not spans:
        return np.zeros((0, 256), np.float32)
    mels = []
    for a, b in spans:
        wav = normalize_volume(
            samples[int(a * sample_rate) : int(b * sample_rate)].astype(np.float32), -30, increase_only=False
        )
        m = wav_to_mel_spectrogram(wav)[:frames]
        mels.append(np.pad(m, ((0, frames - len(m)), (0, 0))))
    return _embed(np.stack(mels))
