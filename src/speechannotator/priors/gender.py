"""Gender evidence: the shipped voice2gender XGBoost classifier, cross-checked with pitch.

voice2gender (docs/models.md: 14/15 on test voices) reads spectral and cepstral-F0 features of
the original audio. Its F0 search stops at 280 Hz and it follows pitch, so we fuse it with
an independent pitch likelihood from pyworld's median F0: adult male speaking F0 clusters
around 100-140 Hz and female around 180-240 Hz with little overlap near 165 Hz (see
speechannotator/calibration.py), so a logistic in semitones around 165 Hz, 3 st wide, is the pitch vote.
A third vote reads the speaker itself: a logistic model over the CAM++ speaker embedding the
diarization uses (frontend/campplus.py; gender is close to linearly separable there), trained by
scripts/build_gender_embedding.py on a fixed subset of the real voices, clean and through the
telephone band, and shipped as gender_campplus.json (the voices it was trained on are listed there;
the others are held out). It hears what voice2gender and the pitch miss: a high-pitched Mandarin
man (zh_m, median F0 ~166 Hz, voice2gender 0.01) and men on the telephone, where the band starts
at 300 Hz, DIO follows a harmonic (300-350 Hz) and the pitch vote is dropped (acoustic.missing_fundamental).
The votes add as log-odds; where they disagree the fused probability sits near 0.5 and
the reliability drops, which is what the agents should see.
"""

from __future__ import annotations

import json
import logging
import math
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np

from speechannotator.calibration import DEFAULT, Calibration
from speechannotator.schema import Gender

log = logging.getLogger(__name__)

SR = 16000
_PITCH_SCALE_ST = 1.5  # logistic scale: 3 st away from the boundary gives p ~ 0.88
MODEL_WEIGHT_ALONE = 0.6  # voice2gender's weight when no embedding vote is shipped
_PITCH_WEIGHT = 1.0
EMBED_ASSET = Path(__file__).with_name("gender_campplus.json")
# The embedding vote reads at most the middle EMBED_MAX_S of a segment (CAM++'s cost grows with
# the length). Chosen on the training voices' clips joined into 8-9 s stretches (32, clean and
# telephone): every stretch right at 1.5-6 s as whole; the mean signed log-odds 2.68 whole, 2.51
# at 3 s, 2.39 at 1.5 s. The model was trained on clips of 0.6-6 s.
EMBED_MAX_S = 3.0
_warned = False
_single_thread = False


@dataclass
class GenderVote:
    p_male: float | None  # fused
    p_model: float | None
    p_pitch: float | None
    reliability: float
    p_embed: float | None = None


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


@cache
def _embed_spec() -> dict | None:
    try:
        return json.loads(EMBED_ASSET.read_text())
    except OSError:
        return None


@cache
def _embed_model() -> tuple[np.ndarray, float] | None:  # read once, not per segment
    spec = _embed_spec()
    return None if spec is None else (np.asarray(spec["weights"], np.float64), float(spec["bias"]))


def fusion_weights() -> tuple[float, float]:
    """voice2gender's and the embedding's log-odds weights (the pitch's is 1): chosen with the
    embedding model on its training voices (scripts/build_gender_embedding.py), stored with it."""
    spec = _embed_spec()
    if spec is None:
        return MODEL_WEIGHT_ALONE, 0.0
    w = spec["fusion_weights"]
    return float(w["voice2gender"]), float(w["embedding"])


def embedding_p_male_of(vectors: np.ndarray) -> np.ndarray | None:
    """Male probability of each unit CAM++ embedding (rows), None without the shipped model."""
    m = _embed_model()
    if m is None:
        return None
    z = np.asarray(vectors, np.float64) @ m[0] + m[1]
    return 1.0 / (1.0 + np.exp(-z))


def embedding_p_male(x: np.ndarray) -> float | None:
    """Male probability from the CAM++ embedding of a 16 kHz segment (its middle EMBED_MAX_S at
    most); None when the encoder or the model is unavailable or the segment is too short to carry
    a voice (< 0.2 s)."""
    if _embed_model() is None or len(x) < int(0.2 * SR):
        return None
    n = min(len(x), int(EMBED_MAX_S * SR))
    x = x[(len(x) - n) // 2 :][:n]
    try:
        from speechannotator.frontend.campplus import CamPlusEncoder

        vec = CamPlusEncoder.load().embed(np.asarray(x, np.float32), [(0.0, n / SR)])
    except (ImportError, OSError, RuntimeError) as exc:
        log.warning("CAM++ unavailable for gender (%s)", exc)
        return None
    p = embedding_p_male_of(vec)
    return None if p is None else float(p[0])


def fuse(
    p_model: float | None,
    p_pitch: float | None,
    voiced_s: float,
    p_embed: float | None = None,
    model_weight: float | None = None,
    embed_weight: float | None = None,
) -> GenderVote:
    if model_weight is None or embed_weight is None:
        shipped = fusion_weights()
        model_weight = shipped[0] if model_weight is None else model_weight
        embed_weight = shipped[1] if embed_weight is None else embed_weight
    logits, votes = [], []
    for p, w in ((p_model, model_weight), (p_pitch, _PITCH_WEIGHT * min(1.0, voiced_s / 0.5)), (p_embed, embed_weight)):
        if p is not None and w > 0:  # little voicing: a weak pitch vote
            logits.append(w * _logit(p))
            votes.append(p)
    if not logits:
        return GenderVote(None, p_model, p_pitch, 0.0, p_embed)
    p = _sigmoid(sum(logits))
    agree = all((q - 0.5) * (p - 0.5) >= 0 for q in votes)
    rel = abs(p - 0.5) * 2 * (1.0 if agree else 0.5) * min(1.0, 0.3 + voiced_s)
    return GenderVote(p, p_model, p_pitch, float(min(1.0, rel)), p_embed)


def gender_vote(
    original: np.ndarray,
    median_f0: float | None,
    voiced_s: float,
    cal: Calibration = DEFAULT,
    *,
    low_cut: bool | None = None,
    embedding: np.ndarray | None = None,
) -> GenderVote:
    """The fused vote of one segment (original audio). No pitch vote where the telephone band took
    the fundamental away (`low_cut`, the recording's; None: the segment's own spectrum decides):
    the tracker then reads a harmonic (acoustic.missing_fundamental). `embedding`: the segment's
    unit CAM++ vector where one is at hand (`Segment.voice`, the mean of the diarizer's 1.5 s
    windows), read where the segment is longer than EMBED_MAX_S: there this pass would read its
    middle only and the windows cover all of it. A shorter segment is embedded whole here: one
    embedding of a stretch reads gender better than 1.5 s pieces of it (EMBED_MAX_S's numbers)."""
    p_model, p_pitch = gender_vote_parts(original, median_f0, cal, low_cut=low_cut)
    if embedding is None or len(original) <= int(EMBED_MAX_S * SR):
        return fuse(p_model, p_pitch, voiced_s, embedding_p_male(original))
    p = embedding_p_male_of(np.asarray(embedding, np.float64)[None, :])
    return fuse(p_model, p_pitch, voiced_s, None if p is None else float(p[0]))


def gender_vote_parts(
    original: np.ndarray, median_f0: float | None, cal: Calibration = DEFAULT, *, low_cut: bool | None = None
) -> tuple[float | None, float | None]:
    """voice2gender's and the pitch's male probability of one segment (None: no vote)."""
    from speechannotator.priors.acoustic import missing_fundamental

    cut = missing_fundamental(original) if low_cut is None else low_cut
    return model_p_male(original), None if cut else pitch_p_male(median_f0, cal)


def label_of(p_male: float | None) -> str | None:
    if p_male is None:
        return None
    return Gender.of_p_male(p_male).value
