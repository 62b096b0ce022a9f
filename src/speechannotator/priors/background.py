"""Background class of a segment (none / music / vehicle / crowd) from its YAMNet patches.

A multinomial logistic regression over per-segment features of YAMNet's raw logits, trained by
``scripts/train_background.py`` on the development half of the real-sound set only (the
tune voices of benchmarks/events_bench.py mixed with the tune files of each class at 0 .. -20
dB, generated white/pink/brown noise and clean speech as "none", the AMI train and development
meeting clips as "none"). The weights ship as ``background_lr.json`` next to this module.

Features (``features``): the median over the segment's patches of every one of the 521 logits
(YAMNet's own class profile of the segment), and per group (music, vehicle, crowd, broadband
noise) its median, its highest patch, its median over the speech group, and its mean over the
third of the patches where speech is weakest (the pauses between words, where a background is
heard best); plus the median speech logit.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

import numpy as np

CLASSES = ("none", "music", "vehicle", "crowd")
FEATURE_GROUPS = ("music", "vehicle", "crowd", "noise")
QUIET_SHARE = 1 / 3  # the share of a segment's patches with the weakest speech that counts as its pauses
MODEL_PATH = Path(__file__).with_name("background_lr.json")


def features(logits: np.ndarray, groups: dict[str, np.ndarray]) -> np.ndarray:
    """One segment's feature vector from its (patches, 521) logits and per-patch group logits."""
    s = groups["speech"]
    k = max(1, int(np.ceil(len(s) * QUIET_SHARE)))
    quiet = np.argsort(s, kind="stable")[:k]
    f = [float(np.median(s))]
    for g in FEATURE_GROUPS:
        x = groups[g]
        f += [float(np.median(x)), float(np.max(x)), float(np.median(x - s)), float(np.mean(x[quiet]))]
    return np.concatenate([np.array(f), np.median(logits, axis=0)]).astype(np.float64)


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
