"""Background class of a segment (none / music / vehicle / crowd) from its YAMNet patches and log-mel frames.

A multinomial logistic regression over per-segment features, trained by
``scripts/train_background.py`` on the development half of the real-sound set only (the
tune voices of benchmarks/events_bench.py mixed with the tune files of each class at 0 .. -20
dB, generated white/pink/brown noise and clean speech as "none", the AMI train and development
meeting clips as "none"). The weights ship as ``background_lr.json`` next to this module.

Features (``features``): per YAMNet group (music, vehicle, crowd, broadband noise) its median,
its highest patch, its median over the speech group, and its mean over the third of the patches
where speech is weakest (the pauses between words, where a background is heard best); the
median speech logit; and the sound of the pauses themselves, from the log-mel frames YAMNet
already computed (``frame_summary``): in the 30 % quietest frames, the level of 8 mel bands
under the loudest frames' level (a rumble is low, a crowd's babble spread like speech), how
steady the floor is over 0.48 s blocks (generated noise is flat, traffic passes, a crowd
swells), and how fast the spectrum changes there (median spectral flux: babble flickers, an
engine hums). YAMNet's full 521-logit profile was the earlier model's main input; on the dev
half by file folds the features above score 93.9 % against its 90.1 %, with as few false alarms
on clean speech and none on generated noise (scripts/train_background.py --cv). Dropping the
profile matters too: the pause features added to it (547 + 13 features, 287 rows) scored 89.5 to
90.6 % (C 0.3 to 3).
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

import numpy as np

CLASSES = ("none", "music", "vehicle", "crowd")
FEATURE_GROUPS = ("music", "vehicle", "crowd", "noise")
QUIET_SHARE = 1 / 3  # the share of a segment's patches with the weakest speech that counts as its pauses
QUIET_FRAMES = 0.3  # the share of a segment's log-mel frames (the quietest) read as its background
MEL_BANDS = 8  # the background's spectrum in the pauses: YAMNet's 64 mel bands averaged in 8 groups
BLOCK_FRAMES = 48  # 0.48 s blocks (YAMNet's patch hop) for the floor's steadiness
MODEL_PATH = Path(__file__).with_name("background_lr.json")


@lru_cache(maxsize=1)
def quantization_floor() -> np.ndarray:
    """(64,) log-mel of 16-bit quantization noise (white, variance LSB^2/12; the mean magnitude of
    a Rayleigh bin under YAMNet's Hann window): below it a recording holds nothing audible, and the
    log of digital near-silence flickers (espeak's faded tails measured a flux far above any speech)."""
    from speechannotator.priors import yamnet

    window = 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(yamnet.WIN) / yamnet.WIN)
    sigma = np.sqrt(float(np.sum(window**2)) / 12.0) / 32768.0
    return np.log(yamnet.mel_matrix().sum(axis=0) * sigma * np.sqrt(np.pi) / 2 + yamnet.LOG_OFFSET)


SUMMARY_BLOCK = 6000  # frames summarised at a time: a 2-hour log-mel in float64 whole is ~0.4 GB a copy


def frame_summary(mel: np.ndarray) -> np.ndarray:
    """(frames, MEL_BANDS + 2) of YAMNet's (frames, 64) log-mel, floored at 16-bit quantization
    noise: the band means, the frame's log energy, and its spectral flux (mean absolute change of
    the 64 log bands from the frame before). Computed in blocks of frames, each block with the
    frame before it, so the values do not depend on the block."""
    out = np.empty((len(mel), MEL_BANDS + 2), np.float32)
    for a in range(0, len(mel), SUMMARY_BLOCK):
        b = min(len(mel), a + SUMMARY_BLOCK)
        m = np.maximum(np.asarray(mel[max(0, a - 1) : b], np.float64), quantization_floor())
        flux = np.abs(np.diff(m, axis=0)).mean(axis=1)
        if a == 0:  # the first frame has none before it: its own flux is the next frame's
            flux = np.concatenate([flux[:1] if len(flux) else np.zeros(1), flux])
        else:
            m = m[1:]
        energy = np.log(np.exp(m).sum(axis=1))
        bands = m.reshape(len(m), MEL_BANDS, -1).mean(axis=2)
        out[a:b] = np.column_stack([bands, energy, flux])
    return out


def pause_features(frames: np.ndarray) -> list[float]:
    """The sound of a segment's quietest frames (see the module docstring), level-free: relative
    to the mean log energy of its loudest frames."""
    energy = frames[:, MEL_BANDS].astype(np.float64)
    order = np.argsort(energy, kind="stable")
    k = max(1, int(len(energy) * QUIET_FRAMES))
    quiet, loud = order[:k], order[-k:]
    top = float(energy[loud].mean())
    floor = frames[quiet, :MEL_BANDS].astype(np.float64).mean(axis=0) - top
    n = len(energy)
    blocks = [
        np.percentile(energy[i : i + BLOCK_FRAMES], 20) for i in range(0, max(1, n - BLOCK_FRAMES + 1), BLOCK_FRAMES)
    ]
    steady = [float(np.std(blocks)), float(np.std(energy[quiet])), float(np.median(energy)) - top]
    return [
        *map(float, floor),
        *steady,
        float(energy[quiet].mean()) - top,
        float(np.median(frames[quiet, MEL_BANDS + 1])),
    ]


def features(groups: dict[str, np.ndarray], frames: np.ndarray) -> np.ndarray:
    """One segment's feature vector from its per-patch group logits and its frame summary rows."""
    s = groups["speech"]
    k = max(1, int(np.ceil(len(s) * QUIET_SHARE)))
    quiet = np.argsort(s, kind="stable")[:k]
    f = [float(np.median(s))]
    for g in FEATURE_GROUPS:
        x = groups[g]
        f += [float(np.median(x)), float(np.max(x)), float(np.median(x - s)), float(np.mean(x[quiet]))]
    return np.array(f + pause_features(frames), np.float64)


@lru_cache(maxsize=1)
def model() -> dict[str, np.ndarray]:
    """The shipped weights: feature mean and scale, coefficients (classes, features), intercepts."""
    raw = json.loads(MODEL_PATH.read_text(encoding="utf-8"))
    if tuple(raw["classes"]) != CLASSES:
        raise ValueError(f"{MODEL_PATH}: classes {raw['classes']} are not {CLASSES}")
    return {k: np.asarray(raw[k], np.float64) for k in ("mean", "scale", "coef", "intercept")}


def probabilities(x: np.ndarray) -> dict[str, float]:
    """Class probabilities (softmax of the regression) of one feature vector."""
    m = model()
    z = m["coef"] @ ((x - m["mean"]) / m["scale"]) + m["intercept"]
    p = np.exp(z - z.max())
    p /= p.sum()
    return {c: float(v) for c, v in zip(CLASSES, p)}
