"""Speaker clustering with an automatically estimated speaker count.

`method="centered"` (the default in DiarizationConfig): the recording's mean d-vector is
removed from every window embedding before average-linkage clustering on cosine similarity,
stopped at `threshold` (0.1). Real voices on one channel share most of their Resemblyzer
d-vector: on the real-voice development set (benchmarks/real_voices.py) the centroids of two
different speakers sat at 0.41-0.80 cosine, windows of one speaker at 0.60-0.98 to each
other, so no raw threshold separates them (the former raw threshold of 0.6 found one speaker
in a same-gender call with noise, two in a three-woman telephone call). Without what all
voices of the recording share, different speakers' centroids point apart (-0.4 to -1.0 for
pairs). Centering also splits a single voice into parts, so clusters whose raw centroids
are more alike than `merge_similarity` (0.85) are joined again (28 of 31 one-voice subsets of
the development set came out as one speaker), and clusters of fewer than `min_windows`
windows (about 3 s of speech) dissolve into their nearest speaker. Measured (VAD +
diarization on 13 real-voice conversations, 2-4 speakers): speaker count right 8 -> 8... see
docs/timeline.md for the current figures.

Then (`split_similarity`, 0.8) a cluster may be split in two: with the cluster's own mean
removed, its windows are divided by average linkage, and the split stays when both halves hold at
least `min_windows` windows and their raw centroids are less alike than 0.8. Average linkage at
one stop joins the closest voices when there are many: on a 63-minute recording with 12 voices,
three pairs of similar voices (two ARCTIC / LibriVox men, the Dutch actress and actor, two
codec2 men) shared clusters. On the real-voice development set, halves of one voice came out at
raw cosine 0.82-0.95 and halves of two voices at 0.72-0.79 (clean) but 0.82-0.85 for two women
on reverberant or telephone channels, which therefore stay joined.

`method="ahc"`: the former default, average linkage on raw d-vectors stopped at 0.6
(separates espeak voices and LibriVox well, collapses real voices on one channel).
`method="spectral"`: eigengap count on a pruned affinity (frontend/spectral.py); on 20-60
windows of real voices it over-split (4-8 speakers for 2), so it is not the default.

Long recordings: at most `max_points` windows are clustered directly (evenly subsampled);
every window is then assigned to its nearest speaker centroid, so memory and time stay
bounded and speaker ids are consistent across the whole file.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .spectral import spectral_labels


@dataclass
class ClusterResult:
    labels: np.ndarray  # (n,) speaker index per window, 0..k-1
    num_speakers: int
    centroids: np.ndarray  # (k, d), unit norm
    min_between: float  # highest centroid-to-centroid similarity (how close the closest speakers are)
    # The space windows were compared in: d-vector minus `mean` (zero for the raw methods), unit
    # norm; `space_centroids` (k, d) are the speakers there (used to score new audio later).
    mean: np.ndarray | None = None
    space_centroids: np.ndarray | None = None

    def __post_init__(self) -> None:
        if self.mean is None:
            self.mean = np.zeros(self.centroids.shape[1], np.float32)
        if self.space_centroids is None:
            self.space_centroids = self.centroids


def unit_rows(x: np.ndarray) -> np.ndarray:
    """Each row scaled to unit length (d-vectors, centroids; a zero row stays near zero)."""
    return x / np.linalg.norm(x, axis=-1, keepdims=True).clip(1e-9)


def _merge_alike(
    x: np.ndarray, labels: np.ndarray, centroids: np.ndarray, limit: float, min_speakers: int
) -> tuple[np.ndarray, np.ndarray]:
    """Join the two most alike clusters while their centroids are more alike than `limit`
    (the eigengap cannot answer "one voice"; two halves of one voice stay above it)."""
    while len(centroids) > max(1, min_speakers):
        sims = centroids @ centroids.T
        np.fill_diagonal(sims, -1.0)
        i, j = np.unravel_index(int(np.argmax(sims)), sims.shape)
        if sims[i, j] < limit:
            break
        i, j = min(i, j), max(i, j)
        labels = np.where(labels == j, i, labels)
        labels = np.where(labels > j, labels - 1, labels)
        centroids = unit_rows(np.stack([x[labels == c].mean(axis=0) for c in range(len(centroids) - 1)]))
    return labels, centroids


def _split_two(x: np.ndarray, idx: np.ndarray, max_points: int) -> np.ndarray:
    """Two-way split of the windows `idx` after removing what they share (their own mean): the
    recording-level centering applied again inside one cluster. Returns 0/1 per window."""
    from scipy.cluster.hierarchy import fcluster, linkage

    y = unit_rows(x[idx] - x[idx].mean(axis=0, keepdims=True))
    sub = np.unique(np.linspace(0, len(idx) - 1, min(len(idx), max_points)).round().astype(int))
    lab = fcluster(linkage(y[sub], method="average", metric="cosine"), t=2, criterion="maxclust") - 1
    if len(np.unique(lab)) < 2:
        return np.zeros(len(idx), int)
    c = unit_rows(np.stack([y[sub][lab == j].mean(axis=0) for j in range(2)]))
    return np.argmax(y @ c.T, axis=1)


def _halves_apart(
    x: np.ndarray, idx: np.ndarray, half: np.ndarray, limit: float, whitened: np.ndarray | None, whitened_limit: float
) -> bool:
    """Whether the two halves are two voices: raw centroids less alike than `limit`, or, as a
    second opinion, their centroids in the within-speaker whitened space (frontend/within_speaker.py)
    less alike than `whitened_limit` (Allison and forig in a room: raw 0.82, whitened 0.46)."""
    for z, lim in ((x, limit), (whitened, whitened_limit)):
        if z is not None:
            c = unit_rows(np.stack([z[idx[half == h]].mean(axis=0) for h in range(2)]))
            if float(c[0] @ c[1]) < lim:
                return True
    return False


def _split_mixed(
    x: np.ndarray,
    labels: np.ndarray,
    least: int,
    split_similarity: float,
    max_speakers: int,
    max_points: int,
    whitened: np.ndarray | None = None,
    whitened_split: float = -1.0,
) -> np.ndarray:
    """Split clusters that hold two voices. Average linkage at one stop joins the closest voices
    of a recording with many (on a 60-minute recording with 12 voices, three pairs of similar
    voices shared a cluster). Inside a cluster, with its own mean removed, two voices point
    apart; the split is kept when both halves hold at least `least` windows and their raw
    centroids are less alike than `split_similarity` (stricter than the merge limit: a new
    speaker needs more evidence than keeping two apart)."""
    tried: set[tuple[int, ...]] = set()
    while labels.max() + 1 < max_speakers:
        done = False
        for j in np.argsort(-np.bincount(labels), kind="stable"):
            idx = np.flatnonzero(labels == j)
            key = (len(idx), int(idx[0]), int(idx[-1]))
            if len(idx) < 2 * least or key in tried:
                continue
            tried.add(key)
            half = _split_two(x, idx, max_points)
            n1 = int(half.sum())
            if min(n1, len(idx) - n1) < least:
                continue
            if _halves_apart(x, idx, half, split_similarity, whitened, whitened_split):
                labels = labels.copy()
                labels[idx[half == 1]] = labels.max() + 1
                done = True
                break
        if not done:
            break
    return labels


def _centered_result(
    x: np.ndarray,
    xc: np.ndarray,
    sample: np.ndarray,
    labels: np.ndarray,
    num_speakers: int | None,
    min_speakers: int,
    max_speakers: int,
    min_windows: int,
    merge_similarity: float,
    split_similarity: float | None = None,
    max_points: int = 1500,
    whitened: np.ndarray | None = None,
    whitened_split: float = -1.0,
) -> ClusterResult:
    counts = np.bincount(labels)
    # min_windows counts windows of the whole recording; the clustered sample holds a share of them.
    least = max(2, round(min_windows * len(sample) / len(x)))
    keep = [j for j in np.argsort(-counts, kind="stable") if counts[j] >= least]
    if num_speakers:
        keep = list(np.argsort(-counts, kind="stable")[:num_speakers])
    keep = keep[: max(1, max_speakers)] or [int(np.argmax(counts))]
    xs = xc[sample]
    cc = unit_rows(np.stack([xs[labels == j].mean(axis=0) for j in keep]))
    # Every window (sampled or not) to its nearest cluster; slivers (laughs, overlaps, music) dissolve.
    final = np.argmax(xc @ cc.T, axis=1)
    used = np.unique(final)
    final = np.searchsorted(used, final)
    raw = unit_rows(np.stack([x[final == j].mean(axis=0) for j in range(len(used))]))
    if not num_speakers:
        # Clusters whose voices are alike in the raw d-vector space are one voice split by the
        # centering (a one-speaker recording has nothing but such splits).
        final, raw = _merge_alike(x, final, raw, merge_similarity, min_speakers)
        if split_similarity is not None:
            final = _split_mixed(
                x, final, max(2, min_windows), split_similarity, max_speakers, max_points, whitened, whitened_split
            )
            # Every window to its nearest speaker again (centered space), then the merge rule once more.
            cc = unit_rows(np.stack([xc[final == j].mean(axis=0) for j in range(final.max() + 1)]))
            final = np.argmax(xc @ cc.T, axis=1)
            used = np.unique(final)
            final = np.searchsorted(used, final)
            raw = unit_rows(np.stack([x[final == j].mean(axis=0) for j in range(len(used))]))
            final, raw = _merge_alike(x, final, raw, merge_similarity, min_speakers)
    sims = raw @ raw.T
    np.fill_diagonal(sims, -1.0)
    k = len(raw)
    cc = unit_rows(np.stack([xc[final == j].mean(axis=0) for j in range(k)]))
    return ClusterResult(
        final,
        k,
        raw.astype(np.float32),
        float(sims.max()) if k > 1 else 1.0,
        x.mean(axis=0).astype(np.float32),
        cc.astype(np.float32),
    )


def estimate_clusters(
    vectors: np.ndarray,
    *,
    num_speakers: int | None = None,
    min_speakers: int = 1,
    max_speakers: int = 8,
    threshold: float = 0.6,
    max_points: int = 1500,
    min_cluster_share: float = 0.03,
    method: str = "ahc",
    merge_similarity: float = 0.9,
    min_windows: int = 4,
    split_similarity: float | None = None,
    whitener: Callable[[np.ndarray], np.ndarray] | None = None,
    split_whitened: float | None = None,
) -> ClusterResult:
    """Speaker clusters of window d-vectors. `whitener` (frontend/within_speaker.Whitener) with
    `split_whitened`: a second opinion on the centered method's splits (see `_halves_apart`)."""
    from scipy.cluster.hierarchy import fcluster, linkage

    n = len(vectors)
    if n == 0:
        return ClusterResult(np.zeros(0, int), 0, np.zeros((0, 256), np.float32), 0.0)
    x = unit_rows(vectors.astype(np.float64))
    if n < 3 or num_speakers == 1 or max_speakers <= 1:
        return ClusterResult(np.zeros(n, int), 1, unit_rows(x.mean(axis=0, keepdims=True)), 1.0)

    sample = np.unique(np.linspace(0, n - 1, min(n, max_points)).round().astype(int))
    xs = x[sample]
    if method == "centered":
        # Distances between voices of one recording, not to voices in general: the recording's
        # mean d-vector (channel, language, what all its voices share) is removed first.
        xc = unit_rows(x - x.mean(axis=0, keepdims=True))
        tree = linkage(xc[sample], method="average", metric="cosine")
        if num_speakers:
            labels = fcluster(tree, t=num_speakers, criterion="maxclust")
        else:
            labels = fcluster(tree, t=1.0 - threshold, criterion="distance")
            k = len(np.unique(labels))
            if k > max_speakers or k < min_speakers:
                labels = fcluster(tree, t=int(np.clip(k, min_speakers, max_speakers)), criterion="maxclust")
        return _centered_result(
            x,
            xc,
            sample,
            labels - 1,
            num_speakers,
            min_speakers,
            max_speakers,
            min_windows,
            merge_similarity,
            split_similarity,
            max_points,
            whitener(vectors) if whitener is not None and split_whitened is not None else None,
            -1.0 if split_whitened is None else split_whitened,
        )
    if method == "spectral":
        labels = (
            spectral_labels(xs, num_speakers=num_speakers, min_speakers=min_speakers, max_speakers=max_speakers) + 1
        )
    elif num_speakers:
        labels = fcluster(linkage(xs, method="average", metric="cosine"), t=num_speakers, criterion="maxclust")
    else:
        tree = linkage(xs, method="average", metric="cosine")
        labels = fcluster(tree, t=1.0 - threshold, criterion="distance")
        k = len(np.unique(labels))
        if k > max_speakers or k < min_speakers:
            labels = fcluster(tree, t=int(np.clip(k, min_speakers, max_speakers)), criterion="maxclust")
    labels = labels - 1

    # Clusters holding a sliver of the windows are noise (laughs, overlaps, music):
    # dissolve them into the nearest real speaker unless a count was requested.
    counts = np.bincount(labels)
    keep = [j for j in range(len(counts)) if counts[j] >= max(2, min_cluster_share * len(xs))]
    if num_speakers or not keep:
        keep = [j for j in range(len(counts)) if counts[j] > 0]
    keep = keep[: max(max_speakers, 1)]
    centroids = unit_rows(np.stack([xs[labels == j].mean(axis=0) for j in keep]))
    # One refinement pass: every window (sampled or not) to its nearest centroid.
    final = np.argmax(x @ centroids.T, axis=1)
    used = np.unique(final)
    centroids = unit_rows(np.stack([x[final == j].mean(axis=0) for j in used]))
    final = np.searchsorted(used, final)
    if method == "spectral" and not num_speakers:
        final, centroids = _merge_alike(x, final, centroids, merge_similarity, min_speakers)
        used = np.arange(len(centroids))
    sims = centroids @ centroids.T
    np.fill_diagonal(sims, -1.0)
    return ClusterResult(final, len(used), centroids.astype(np.float32), float(sims.max()) if len(used) > 1 else 1.0)
