"""The CAM++ module tree (names match the shipped state dict; loaded by frontend/campplus.py).

Written from the published architecture (Wang et al., Interspeech 2023; 3D-Speaker's DTDNN).
A module of its own so that torch is imported only when the encoder is first loaded.
"""

from __future__ import annotations

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
            self.shortcut = nn.Sequential(nn.Conv2d(cin, cout, 1, stride=(stride, 1), bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        y = self.bn2(self.conv2(F.relu(self.bn1(self.conv1(x)), inplace=True)))
        return F.relu(y.add_(self.shortcut(x)), inplace=True)


class FrontEnd(nn.Module):
    """2-D convolutions over (frequency, time); frequency is strided down 8x."""

    def __init__(self, feat_dim: int, ch: int = 32):
        super().__init__()
        self.conv1 = nn.Conv2d(1, ch, 3, stride=1, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(ch)
        self.layer1 = nn.Sequential(ResBlock(ch, ch, 2), ResBlock(ch, ch, 1))
        self.layer2 = nn.Sequential(ResBlock(ch, ch, 2), ResBlock(ch, ch, 1))
        self.conv2 = nn.Conv2d(ch, ch, 3, stride=(2, 1), padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(ch)
        self.out_channels = ch * (feat_dim // 8)

    def forward(self, x):
        y = F.relu(self.bn1(self.conv1(x.unsqueeze(1))), inplace=True)
        y = F.relu(self.bn2(self.conv2(self.layer2(self.layer1(y)))), inplace=True)
        b, c, f, t = y.shape
        return y.reshape(b, c * f, t)


def bn_relu(channels: int) -> nn.Sequential:
    seq = nn.Sequential()
    seq.add_module("batchnorm", nn.BatchNorm1d(channels))
    seq.add_module("relu", nn.ReLU(inplace=True))  # on the batch norm's fresh output
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
        gate = torch.sigmoid_(self.linear2(F.relu(self.linear1(context), inplace=True)))
        return self.linear_local(x).mul_(gate)


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
    def __init__(self, feat_dim: int, embedding_dim: int, init_ch: int = 128, growth: int = 32, bn_size: int = 4):
        super().__init__()
        self.head = FrontEnd(feat_dim)
        ch = self.head.out_channels
        self.xvector = nn.Sequential()
        self.xvector.add_module("tdnn", TDNN(ch, init_ch, 5, stride=2))
        ch = init_ch
        for i, (layers, kernel, dilation) in enumerate([(12, 3, 1), (24, 3, 2), (16, 3, 2)]):
            self.xvector.add_module(f"block{i + 1}", DenseBlock(layers, ch, growth, bn_size * growth, kernel, dilation))
            ch += layers * growth
            self.xvector.add_module(f"transit{i + 1}", Transit(ch, ch // 2))
            ch //= 2
        self.xvector.add_module("out_nonlinear", bn_relu(ch))
        self.xvector.add_module("stats", StatsPool())
        self.xvector.add_module("dense", Embedding(ch * 2, embedding_dim))

    def forward(self, feats):  # (batch, frames, 80)
        return self.xvector(self.head(feats.permute(0, 2, 1)))
