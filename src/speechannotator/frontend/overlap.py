"""Overlap-aware speaker-change boundaries inside one speech region.

Where two speakers follow each other with no pause, the 1.6 s windows that label frames
smear the change over a second. Short windows (0.6 s, 0.1 s hop) around the change are
scored against both speakers' centroids: the boundary moves to where the preference flips,
and a stretch where the audio matches both speakers about equally well (longer than a clean
change produces) is an overlap: both turns then cover it and are marked `overlap`.

Measured on benchmark conversations (8 recordings, no collar): the boundary refinement lowers
DER from 9.9 % to 8.8 %. The overlap marking (a dip in the best similarity around the
flip) helps little where turns overlap (9.02 -> 8.79 %) and hurts on quick handoffs without
overlap (5.93 -> 6.60 %, 10 false overlaps): 1.6 s-trained d-vectors of 0.6 s windows do
not separate overlapped speech from a clean change. It is therefore opt-in
(`DiarizationConfig.overlap`).
"""

from __future__ import annotations

import numpy as np

from ..records import Turn
from .embeddings import embed_short

_WIN = 0.6
_STEP = 0.1
_REACH = 1.2  # seconds searched on either side of the coarse change


def refine_changes(
    samples: np.ndarray,
    sr: int,
    turns: list[Turn],
    centroids: dict[str, np.ndarray],
    *,
    detect_overlap: bool = True,
    dip: float = 0.06,
    min_overlap: float = 0.2,
) -> list[Turn]:
    """Adjust boundaries between contiguous turns of different speakers (one region's turns)."""
    pairs = [
        i
        for i in range(len(turns) - 1)
        if turns[i].speaker != turns[i + 1].speaker and abs(turns[i + 1].start - turns[i].end) < 1e-6
    ]
    if not pairs:
        return turns
    grids, spans = [], []
    for i in pairs:
        a, b = turns[i], turns[i + 1]
        c = a.end
        lo, hi = max(a.start, c - _REACH), min(b.end, c + _REACH)
        g = np.arange(lo + _WIN / 2, hi - _WIN / 2 + 1e-9, _STEP)
        grids.append(g)
        spans += [(x - _WIN / 2, x + _WIN / 2) for x in g]
    vecs = embed_short(samples, sr, spans, frames=int(_WIN * 100))
    vecs = vecs / np.linalg.norm(vecs, axis=1, keepdims=True).clip(1e-9)
    k = 0
    for i, g in zip(pairs, grids):
        v, k = vecs[k : k + len(g)], k + len(g)
        if len(g) < 3:
            continue
        a, b = turns[i], turns[i + 1]
        d = v @ centroids[a.speaker] - v @ centroids[b.speaker]
        d = np.convolve(d, np.ones(3) / 3, mode="same")
        flips = np.flatnonzero((d[:-1] > 0) & (d[1:] <= 0))
        if not len(flips):
            continue  # no clear flip: keep the coarse boundary
        j = flips[np.argmin(np.abs(g[flips] - a.end))]
        cut = float((g[j] + g[j + 1]) / 2)
        # Overlapped speech matches neither voice as well as clean speech does: a dip in the
        # best similarity around the flip, wider than the window's own straddle of a clean change.
        best = np.maximum(v @ centroids[a.speaker], v @ centroids[b.speaker])
        floor = float(np.percentile(best, 75)) - dip
        lo_j, hi_j = j, j + 1
        while lo_j > 0 and best[lo_j - 1] < floor:
            lo_j -= 1
        while hi_j < len(g) - 1 and best[hi_j + 1] < floor:
            hi_j += 1
        start_ov, end_ov = float(g[lo_j]) + _WIN / 4, float(g[hi_j]) - _WIN / 4
        if (
            detect_overlap
            and end_ov - start_ov >= min_overlap
            and start_ov > a.start
            and end_ov < b.end
            and start_ov < cut < end_ov
        ):
            a.end, b.start = round(end_ov, 3), round(start_ov, 3)
            a.overlap = b.overlap = True
        elif a.start < cut < b.end:
            a.end = b.start = round(cut, 3)
    return turns
