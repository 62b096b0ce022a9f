"""Viterbi resegmentation of window labels (the idea of VBx's HMM resegmentation, simplified).

Clustering labels every window on its own; a speaker's turn is a run of windows. Within each
speech region the labels are re-decoded as an HMM path: each window scores its similarity to
every speaker's centroid (in the recording-centered d-vector space the clustering used), a
change of speaker costs `switch_cost`, and the best path is found by Viterbi. Centroids are
re-estimated from the new labels and the decoding repeated, so isolated windows that drifted
to another voice (noise, a laugh, a backchannel-length blip) return to the run around them,
while a real turn change, supported by several windows, survives.
"""

from __future__ import annotations

import numpy as np

from .clustering import unit_rows


def viterbi(scores: np.ndarray, switch_cost: float) -> np.ndarray:
    """Best state path through (n, k) per-step scores with a constant cost per change."""
    n, k = scores.shape
    acc = scores[0].copy()
    back = np.zeros((n, k), int)
    for t in range(1, n):
        stay = acc
        best_prev = int(np.argmax(acc))
        move = acc[best_prev] - switch_cost
        take_move = move > stay
        back[t] = np.where(take_move, best_prev, np.arange(k))
        acc = np.where(take_move, move, stay) + scores[t]
    path = np.zeros(n, int)
    path[-1] = int(np.argmax(acc))
    for t in range(n - 1, 0, -1):
        path[t - 1] = back[t, path[t]]
    return path


def resegment(
    vectors: np.ndarray, labels: np.ndarray, region_index: np.ndarray, *, switch_cost: float = 0.6, iterations: int = 2
) -> np.ndarray:
    """New window labels (same label set) after Viterbi decoding per speech region."""
    k = int(labels.max()) + 1 if len(labels) else 0
    if k < 2:
        return labels
    x = unit_rows(vectors.astype(np.float64))
    xc = unit_rows(x - x.mean(axis=0, keepdims=True))
    out = labels.copy()
    for _ in range(iterations):
        present = [j for j in range(k) if (out == j).any()]
        cents = np.zeros((k, xc.shape[1]))
        for j in present:
            cents[j] = unit_rows(xc[out == j].mean(axis=0))
        scores = xc @ cents.T
        scores[:, [j for j in range(k) if j not in present]] = -1e9  # a vanished speaker stays gone
        new = out.copy()
        for r in np.unique(region_index):
            idx = np.flatnonzero(region_index == r)
            new[idx] = viterbi(scores[idx], switch_cost)
        if np.array_equal(new, out):
            break
        out = new
    return out
