"""Diarization: VAD regions -> window embeddings -> clusters -> speaker turns (embedded), or a
pyannote pipeline from a local folder (`DiarizationConfig.backend = "pyannote"`).

Speaker ids are global: all windows of the recording are clustered together (at most
`max_points` directly, the rest by nearest centroid), so a long recording never gets
different ids for one speaker in different parts. Memory beyond the audio is the window
embeddings (1 KB per 0.75 s) and the turns.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..config import DiarizationConfig
from ..records import Turn
from .clustering import estimate_clusters
from .embeddings import embed_windows
from .overlap import refine_changes
from .resegment import resegment
from .vad import SpeechRegion
from .within_speaker import load_whitener
from .word_changes import SpeakerSpace

_FRAME = 0.01


@dataclass
class DiarizationResult:
    turns: list[Turn]
    num_speakers: int
    closest_speaker_similarity: float
    num_windows: int
    space: SpeakerSpace | None = None  # the speakers as the clustering saw them (word-level changes)


def _frame_labels(
    region: SpeechRegion, centers: np.ndarray, starts: np.ndarray, ends: np.ndarray, labels: np.ndarray
) -> np.ndarray:
    """Label each 10 ms frame of a region by the windows covering it (nearest center on ties)."""
    n = max(1, int(round(region.duration / _FRAME)))
    t = region.start + (np.arange(n) + 0.5) * _FRAME
    k = int(labels.max()) + 1
    votes = np.zeros((n, k))
    for s, e, c, lab in zip(starts, ends, centers, labels):
        a, b = int((s - region.start) / _FRAME), int(np.ceil((e - region.start) / _FRAME))
        a, b = max(0, a), min(n, b)
        if b > a:
            # Windows vote more for frames near their center: boundaries move to the change point.
            votes[a:b, lab] += 1.0 / (1.0 + np.abs(t[a:b] - c))
    empty = votes.sum(axis=1) == 0
    out = votes.argmax(axis=1)
    if empty.any():
        nearest = np.abs(t[empty, None] - centers[None, :]).argmin(axis=1)
        out[empty] = labels[nearest]
    return out


def _smooth(frames: np.ndarray, min_frames: int) -> np.ndarray:
    """Absorb label runs shorter than min_frames into their longer neighbour."""
    if len(frames) == 0:
        return frames
    changed = True
    while changed:
        changed = False
        bounds = np.flatnonzero(np.diff(frames)) + 1
        runs = np.split(np.arange(len(frames)), bounds)
        if len(runs) == 1:
            break
        lengths = [len(r) for r in runs]
        i = int(np.argmin(lengths))
        if lengths[i] >= min_frames:
            break
        left = lengths[i - 1] if i > 0 else -1
        right = lengths[i + 1] if i + 1 < len(runs) else -1
        src = runs[i - 1] if left >= right else runs[i + 1]
        frames[runs[i]] = frames[src[0]]
        changed = True
    return frames


def diarize(
    samples: np.ndarray, sample_rate: int, regions: list[SpeechRegion], cfg: DiarizationConfig | None = None
) -> DiarizationResult:
    cfg = cfg or DiarizationConfig()
    if not regions:
        return DiarizationResult([], 0, 0.0, 0)
    win = embed_windows(samples, sample_rate, regions, hop_s=cfg.hop_s)
    if len(win) == 0:
        return DiarizationResult([Turn(r.start, r.end, "S0") for r in regions], 1, 0.0, 0)
    cl = estimate_clusters(
        win.vectors,
        num_speakers=cfg.num_speakers,
        min_speakers=cfg.min_speakers,
        max_speakers=cfg.max_speakers,
        threshold=cfg.threshold,
        max_points=cfg.max_points,
        method=cfg.clustering,
        merge_similarity=cfg.merge_similarity,
        min_windows=cfg.min_cluster_windows,
        split_similarity=cfg.split_similarity,
        whitener=load_whitener(cfg.split_whitened_shrink) if cfg.split_whitened is not None else None,
        split_whitened=cfg.split_whitened,
    )
    labels = cl.labels
    if cfg.resegment and cl.num_speakers > 1:
        labels = resegment(win.vectors, labels, win.region_index, switch_cost=cfg.switch_cost)
    centroids = {f"S{j}": c for j, c in enumerate(cl.centroids)}
    centers = win.centers
    turns: list[Turn] = []
    for i, r in enumerate(regions):
        mine = win.region_index == i
        if mine.any():
            frames = _frame_labels(r, centers[mine], win.starts[mine], win.ends[mine], labels[mine])
        else:
            # Too short to embed: take the speaker of the nearest window in time.
            nearest = int(np.abs(centers - (r.start + r.end) / 2).argmin())
            frames = np.full(max(1, int(round(r.duration / _FRAME))), labels[nearest])
        frames = _smooth(frames, int(cfg.min_turn_s / _FRAME))
        bounds = np.flatnonzero(np.diff(frames)) + 1
        mine_turns = []
        for run in np.split(np.arange(len(frames)), bounds):
            start = round(r.start + run[0] * _FRAME, 3)
            end = round(min(r.end, r.start + (run[-1] + 1) * _FRAME), 3)
            mine_turns.append(Turn(start, end, f"S{int(frames[run[0]])}"))
        if len(mine_turns) > 1:
            mine_turns = refine_changes(samples, sample_rate, mine_turns, centroids, detect_overlap=cfg.overlap)
        turns += mine_turns
    space = SpeakerSpace(
        cl.mean.astype(np.float64),
        {f"S{j}": c.astype(np.float64) for j, c in enumerate(cl.space_centroids)},
    )
    return DiarizationResult(turns, cl.num_speakers, cl.min_between, len(win), space)


def run_diarization(
    samples: np.ndarray, sample_rate: int, regions: list[SpeechRegion], cfg: DiarizationConfig | None = None
) -> DiarizationResult:
    """The configured diarization backend."""
    cfg = cfg or DiarizationConfig()
    if cfg.backend == "pyannote":
        from .diarize_pyannote import pyannote_diarize

        turns = pyannote_diarize(samples, sample_rate, cfg)
        return DiarizationResult(turns, len({t.speaker for t in turns}), 0.0, 0)
    return diarize(samples, sample_rate, regions, cfg)
