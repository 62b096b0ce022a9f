"""Gender evidence: the shipped voice2gender XGBoost classifier, cross-checked with pitch.

voice2gender (docs/models.md: 14/15 on test voices) reads spectral and cepstral-F0 features of
the original audio. Its F0 search stops at 280 Hz and it follows pitch, so we fuse it with
an independent pitch likelihood from pyworld's median F0: adult male speaking F0 clusters
around 100-140 Hz and female around 180-240 Hz with little overlap near 165 Hz (see
speechannotator/calibration.py), so a logistic in semitones around 165 Hz, 3 st wide, is the pitch vote.
The two votes add as log-odds; where they disagree the fused probability sits near 0.5 and
the reliability drops, which is what the agents should see.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass

import numpy as np

from speechannotator.calibration import DEFAULT, Calibration

log = logging.getLogger(__name__)

SR = 16000
_PITCH_SCALE_ST = 1.5  # logistic scale: 3 st away from the boundary gives p ~ 0.88
_MODEL_WEIGHT = 0.6
_PITCH_WEIGHT = 1.0
_warned = False
_single_thread = False


@dataclass
class GenderVote:
    p_male: float | None  # fused
    p_model: float | None
    p_pitch: float | None
    reliability: float


def _logit(p: float) -> float:
    p = min(max(p, 1e-4), 1 - 1e-4)
    return math.log(p / (1 - p))


def _sigmoid(z: float) -> float:
    return 1.0 / (1.0 + math.exp(-z))


def model_p_male(x: np.ndarray) -> float | None:
    """voice2gender male probability, None when the segment is unusable or the package missing."""
    global _warned
    try:
        import voice2gender
    except Exception as exc:  # missing package or broken xgboost
        if not _warned:
            log.warning("voice2gender unavailable (%s); gender evidence uses pitch only", exc)
            _warned = True
        return None
    pcm = (np.clip(np.asarray(x, np.float64), -1, 1) * 32767).astype("<i2").tobytes()
    try:
        return _fast_predict(pcm)
    except (ValueError, TypeError):
        return None
    except Exception:  # the package's private layout changed: use its public API
        try:
            return float(voice2gender.predict([pcm], sample_rate=SR)["male_probability"])
        except (ValueError, TypeError):
            return None


def _fast_predict(pcm: bytes) -> float:
    """voice2gender's own features and booster, but ``inplace_predict`` instead of building a
    DMatrix per call: same output, 0.2 ms instead of 40-90 ms per segment on 2 busy cores."""
    from voice2gender._model import FEATURE_NAMES, booster
    from voice2gender._preprocess import extract_features_from_pcm_sequence

    global _single_thread
    if not _single_thread:  # one row per call: OpenMP threads only add contention
        booster.set_param({"nthread": 1})
        _single_thread = True
    feats = extract_features_from_pcm_sequence([pcm], sample_rate=SR)
    vec = np.asarray([[feats[n] for n in FEATURE_NAMES]], dtype=np.float32)
    if not np.isfinite(vec).all():
        raise ValueError("non-finite features")
    female = float(np.asarray(booster.inplace_predict(vec)).reshape(-1)[0])  # the model outputs P(female)
    return 1.0 - female


def pitch_p_male(median_f0: float | None, cal: Calibration = DEFAULT) -> float | None:
    if median_f0 is None or not median_f0 > 0:
        return None
    st = 12.0 * math.log2(cal.gender_boundary_hz / median_f0)
    return _sigmoid(st / _PITCH_SCALE_ST)


def fuse(p_model: float | None, p_pitch: float | None, voiced_s: float) -> GenderVote:
    logits, weights = [], []
    if p_model is not None:
        logits.append(_MODEL_WEIGHT * _logit(p_model))
        weights.append(_MODEL_WEIGHT)
    if p_pitch is not None:
        w = _PITCH_WEIGHT * min(1.0, voiced_s / 0.5)  # little voicing: weak pitch vote
        logits.append(w * _logit(p_pitch))
        weights.append(w)
    if not logits:
        return GenderVote(None, p_model, p_pitch, 0.0)
    p = _sigmoid(sum(logits))
    agree = p_model is None or p_pitch is None or (p_model - 0.5) * (p_pitch - 0.5) >= 0
    rel = abs(p - 0.5) * 2 * (1.0 if agree else 0.5) * min(1.0, 0.3 + voiced_s)
    return GenderVote(p, p_model, p_pitch, float(min(1.0, rel)))


def gender_vote(
    original: np.ndarray, median_f0: float | None, voiced_s: float, cal: Calibration = DEFAULT
) -> GenderVote:
    return fuse(model_p_male(original), pitch_p_male(median_f0, cal), voiced_s)


def label_of(p_male: float | None) -> str | None:
    if p_male is None:
        return None
    return "male" if p_male >= 0.5 else "female"
