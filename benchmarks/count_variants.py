"""Speaker-count variants on cached window embeddings of the real-voice conversations.

The window embeddings (VAD regions, 1.6 s Resemblyzer windows) of every `real_voices.DEV_SET` and
`real_voices.HELD_OUT_2` conversation are computed once and cached (`--cache`, default
/tmp/count_cache); each variant then runs the real `frontend.diarize.diarize` on the cached windows
with `estimate_clusters` replaced, and is scored like `real_timeline_bench.py --diarization-only`
(speaker count, DER with a 0.25 s collar). `default` reproduces the benchmark's numbers (dev 21/25,
held out 10/12, held out 2 16/16; 47/53 with 2-4 speakers, DER 5.9 %).

Variants (docs/timeline.md, "Tried for the count and not kept", has the numbers):

- `wccn*`: the windows whitened by the recording's own within-speaker covariance W, estimated from
  the differences of windows 4-8 hops apart in one VAD region (no shared audio, one voice almost
  always), shrunk towards a scaled identity (`a`), in the recording's top `pca` principal
  directions; average linkage in that space (`wccn`) or only the split proposals there
  (`wccn_prop`).
- `split_llr`: halves of a cluster between `split_similarity` and `merge_similarity` (0.8-0.85)
  split when the recording's own two-covariance (PLDA-style) model gives them a log-likelihood
  ratio (one voice vs two) below -5: within-speaker covariance W from windows 4-8 hops apart in one
  speech region, between-speaker B = total - W, both in the recording's top 16 principal
  directions; a half of n windows counts n / 4 (four consecutive windows share audio).
- `single_turn`: a speaker with at least 60 % of its windows in one speech region whose raw
  centroid is at least `split_similarity` alike to another speaker joins it.
- `transition`: a found speaker (of three or more) most of whose windows sit in runs between two
  different other speakers inside one speech region, and whose raw centroid is as alike as one
  voice (`merge_similarity`) to a blend of two other speakers' centroids, is the windows straddling
  their changes: it dissolves into the nearest speakers.

    PYTHONPATH=src:benchmarks nice -n 10 .venv/bin/python benchmarks/count_variants.py [--only NAMES] [--long MINUTES]
        [--variants NAMES] [--halves]
"""

from __future__ import annotations

import argparse
import itertools
import pickle
import sys
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import real_voices as rv

from speechannotator.config import Config
from speechannotator.frontend import clustering as C
from speechannotator.frontend import diarize as D


def cached(spec: rv.Spec, cache: Path) -> dict:
    """Audio, VAD regions, window embeddings and reference of one conversation (computed once)."""
    from speechannotator.audio import load_audio
    from speechannotator.frontend.embeddings import embed_windows
    from speechannotator.frontend.vad import detect_speech

    path = cache / f"{spec.name}.pkl"
    if path.exists():
        return pickle.loads(path.read_bytes())
    cfg = Config()
    conv = rv.build(spec)
    audio = load_audio(rv.write(conv, cache / "wav"))
    regions = detect_speech(audio.samples, audio.sample_rate, cfg.vad)
    win = embed_windows(audio.samples, audio.sample_rate, regions, hop_s=cfg.diarization.hop_s)
    d = {
        "name": spec.name,
        "voices": conv.voices,
        "sr": audio.sample_rate,
        "samples": audio.samples.astype(np.float32),
        "regions": regions,
        "win": win,
        "ref": conv.speech_rows(),
    }
    path.write_bytes(pickle.dumps(d))
    return d


# ---- in-recording covariances -------------------------------------------------------------------


def within_cov(y: np.ndarray, region: np.ndarray, gmin: int = 4, gmax: int = 8) -> np.ndarray:
    """Within-speaker covariance from windows gmin..gmax hops apart inside one VAD region."""
    d = [y[g:][region[g:] == region[:-g]] - y[:-g][region[g:] == region[:-g]] for g in range(gmin, gmax + 1)]
    d = np.concatenate(d)
    return d.T @ d / (2 * max(1, len(d)))


def top_dims(x: np.ndarray, k: int) -> np.ndarray:
    _, _, vt = np.linalg.svd(x - x.mean(0), full_matrices=False)
    return vt[:k].T


def whitener(x: np.ndarray, region: np.ndarray, a: float, pca: int) -> np.ndarray:
    p = top_dims(x, pca) if pca else np.eye(x.shape[1])
    w = within_cov(x @ p, region)
    w = (1 - a) * w + a * np.trace(w) / len(w) * np.eye(len(w))
    vals, vecs = np.linalg.eigh(w)
    return p @ vecs @ np.diag(vals**-0.5) @ vecs.T


def _within_covariance(y: np.ndarray, groups: np.ndarray, gaps: range = range(4, 9)) -> tuple[np.ndarray, int]:
    """Within-speaker covariance from pairs of windows `gaps` hops apart inside one speech region:
    1.6 s windows every 0.4 s share no audio from 4 hops on, and one region is almost always one
    voice, so their differences are what one voice varies by (words, noise, room)."""
    diffs = [y[g:][groups[g:] == groups[:-g]] - y[:-g][groups[g:] == groups[:-g]] for g in gaps if g < len(y)]
    d = np.concatenate(diffs) if diffs else np.zeros((0, y.shape[1]))
    return d.T @ d / (2 * max(1, len(d))), len(d)


@dataclass
class _TwoCovariance:
    """A recording's own speaker model in its top principal directions: windows y = s + e with
    speakers s ~ N(0, between) and e ~ N(0, within) (the two-covariance / PLDA view)."""

    proj: np.ndarray
    mean: np.ndarray
    between: np.ndarray
    within: np.ndarray

    @classmethod
    def fit(cls, x: np.ndarray, groups: np.ndarray, dims: int) -> _TwoCovariance | None:
        dims = min(dims, x.shape[1], len(x) - 1)
        if dims < 1:
            return None
        mean = x.mean(axis=0)
        proj = np.linalg.svd(x - mean, full_matrices=False)[2][:dims].T
        y = (x - mean) @ proj
        within, pairs = _within_covariance(y, groups)
        if pairs < 2:
            return None
        # A short call gives a few dozen pairs: shrink towards the mean variance.
        within = 0.7 * within + 0.3 * np.trace(within) / dims * np.eye(dims)
        total = np.atleast_2d(np.cov(y.T))
        vals, vecs = np.linalg.eigh(total - within)
        between = vecs @ np.diag(np.clip(vals, 1e-3 * np.trace(total) / dims, None)) @ vecs.T
        return cls(proj, mean, between, within)

    def llr(self, xa: np.ndarray, xb: np.ndarray, shared: int) -> float:
        """log p(one voice) - log p(two voices) for the mean windows of two sets; every `shared`
        consecutive windows share audio, so a set of n windows counts n / shared."""

        def logn(v: np.ndarray, cov: np.ndarray) -> float:
            return -0.5 * (np.linalg.slogdet(cov)[1] + v @ np.linalg.solve(cov, v))

        a, b = ((z - self.mean).mean(axis=0) @ self.proj for z in (xa, xb))
        sa = self.between + self.within * shared / len(xa)
        sb = self.between + self.within * shared / len(xb)
        joint = np.block([[sa, self.between], [self.between, sb]])
        return logn(np.concatenate([a, b]), joint) - logn(a, sa) - logn(b, sb)


def _join_single_turns(
    x: np.ndarray, labels: np.ndarray, groups: np.ndarray, share: float, limit: float, min_speakers: int
) -> np.ndarray:
    """A speaker with at least `share` of its windows in one speech region whose raw centroid is at
    least `limit` alike to another speaker joins it (the smallest such speaker first, repeatedly):
    one long turn of a voice in noise, or the windows straddling two voices' changes, is not
    evidence of a new voice when it is that close to a known one."""
    while labels.max() + 1 > max(1, min_speakers):
        k = labels.max() + 1
        raw = C.unit_rows(np.stack([x[labels == j].mean(axis=0) for j in range(k)]))
        sims = raw @ raw.T
        np.fill_diagonal(sims, -1.0)
        turn = [np.bincount(groups[labels == j]).max() / max(1, int((labels == j).sum())) for j in range(k)]
        cand = [j for j in range(k) if turn[j] >= share and sims[j].max() >= limit]
        if not cand:
            break
        j = min(cand, key=lambda c: int((labels == c).sum()))
        labels = np.where(labels == j, int(np.argmax(sims[j])), labels)
        labels = np.searchsorted(np.unique(labels), labels)
    return labels


# ---- variants -----------------------------------------------------------------------------------


def wccn(a: float, pca: int, threshold: float, proposals_only: bool = False):
    """Average linkage on whitened windows (or only the split proposals whitened)."""

    def run(v, d, **kw):
        x = C.unit_rows(v.astype(np.float64))
        t = whitener(x, np.asarray(d["win"].region_index), a, pca)
        orig = C._split_two
        if proposals_only:
            xw = C.unit_rows(x @ t)
            C._split_two = lambda xx, idx, mp: orig(xw, idx, mp)
            try:
                return C.estimate_clusters(v, **kw)
            finally:
                C._split_two = orig
        # the centered space replaced by the whitened one: feed vectors whose centering gives it
        z = (x - x.mean(0)) @ t
        kw = dict(kw, threshold=threshold)
        res = C.estimate_clusters(z + 0.0, **{**kw, "split_similarity": None, "merge_similarity": 2.0})
        labels = res.labels
        raw = C.unit_rows(np.stack([x[labels == j].mean(0) for j in range(labels.max() + 1)]))
        labels, raw = C._merge_alike(x, labels, raw, kw["merge_similarity"], 1)
        labels = C._split_mixed(x, labels, kw["min_windows"], kw["split_similarity"], kw["max_speakers"], 1500)
        zc = C.unit_rows(z)
        cc = C.unit_rows(np.stack([zc[labels == j].mean(0) for j in range(labels.max() + 1)]))
        labels = np.argmax(zc @ cc.T, 1)
        labels = np.searchsorted(np.unique(labels), labels)
        raw = C.unit_rows(np.stack([x[labels == j].mean(0) for j in range(labels.max() + 1)]))
        labels, _ = C._merge_alike(x, labels, raw, kw["merge_similarity"], 1)
        return _result(x, labels)

    return run


def _between_share(labels: np.ndarray, region: np.ndarray) -> np.ndarray:
    """Per speaker: share of its windows in runs with two different other speakers on both sides (one region)."""
    k = labels.max() + 1
    out, i, n = np.zeros(k), 0, len(labels)
    while i < n:
        j = i
        while j + 1 < n and labels[j + 1] == labels[i] and region[j + 1] == region[i]:
            j += 1
        if i > 0 and j + 1 < n and region[i - 1] == region[i] == region[j + 1] and labels[i - 1] != labels[j + 1]:
            out[labels[i]] += j - i + 1
        i = j + 1
    return out / np.maximum(np.bincount(labels, minlength=k), 1)


def _blend_fit(raw: np.ndarray, j: int) -> float:
    others = [k for k in range(len(raw)) if k != j]
    return max(
        float(C.unit_rows(a * raw[p] + (1 - a) * raw[q]) @ raw[j])
        for p, q in itertools.combinations(others, 2)
        for a in np.linspace(0, 1, 21)
    )


def transition(base=None, share: float = 0.5):
    """Dissolve found speakers that are the windows straddling two others' changes."""

    def run(v, d, **kw):
        res = base(v, d, **kw) if base else C.estimate_clusters(v, **kw)
        if kw.get("num_speakers"):
            return res
        x = C.unit_rows(v.astype(np.float64))
        xc = C.unit_rows(x - x.mean(0))
        region = np.asarray(d["win"].region_index)
        labels = res.labels.copy()
        while labels.max() + 1 >= 3:
            k = labels.max() + 1
            raw = C.unit_rows(np.stack([x[labels == j].mean(0) for j in range(k)]))
            s = _between_share(labels, region)
            cand = [j for j in range(k) if s[j] >= share and _blend_fit(raw, j) >= kw["merge_similarity"]]
            if not cand:
                break
            j = min(cand, key=lambda c: (labels == c).sum())
            keep = [c for c in range(k) if c != j]
            cc = C.unit_rows(np.stack([xc[labels == c].mean(0) for c in keep]))
            labels[labels == j] = np.array(keep)[np.argmax(xc[labels == j] @ cc.T, 1)]
            labels = np.searchsorted(np.unique(labels), labels)
        return res if labels.max() + 1 == res.num_speakers else _result(x, labels)

    return run


def _result(x: np.ndarray, labels: np.ndarray) -> C.ClusterResult:
    k = labels.max() + 1
    raw = C.unit_rows(np.stack([x[labels == j].mean(0) for j in range(k)]))
    sims = raw @ raw.T
    np.fill_diagonal(sims, -1.0)
    xc = C.unit_rows(x - x.mean(0))
    cc = C.unit_rows(np.stack([xc[labels == j].mean(0) for j in range(k)]))
    return C.ClusterResult(
        labels, k, raw.astype(np.float32), float(sims.max()) if k > 1 else 1.0, x.mean(0).astype(np.float32), cc
    )


def _pooled_model(x: np.ndarray, labels: np.ndarray, dims: int, skip: int) -> _TwoCovariance | None:
    """The two-covariance model with W pooled over the recording's current clusters but `skip`
    (what a voice varies by across its turns, not only inside one region)."""
    mean = x.mean(axis=0)
    proj = np.linalg.svd(x - mean, full_matrices=False)[2][:dims].T
    y = (x - mean) @ proj
    scatter, n = np.zeros((dims, dims)), 0
    for j in np.unique(labels):
        yj = y[labels == j]
        if j != skip and len(yj) > 1:
            scatter += (yj - yj.mean(0)).T @ (yj - yj.mean(0))
            n += len(yj) - 1
    if n < 2:
        return None
    within = 0.7 * scatter / n + 0.3 * np.trace(scatter / n) / dims * np.eye(dims)
    total = np.atleast_2d(np.cov(y.T))
    vals, vecs = np.linalg.eigh(total - within)
    between = vecs @ np.diag(np.clip(vals, 1e-3 * np.trace(total) / dims, None)) @ vecs.T
    return _TwoCovariance(proj, mean, between, within)


def split_llr(limit: float = -5.0, dims: int = 16, base=None, pooled: bool = False):
    """Halves between split_similarity and merge_similarity split when the recording's two-covariance
    LLR (one voice vs two) is below `limit`; every 4 consecutive windows share audio. `pooled`: W
    from the other clusters' windows instead of from pairs inside one region."""

    def run(v, d, **kw):
        x = C.unit_rows(v.astype(np.float64))
        model = _TwoCovariance.fit(x, np.asarray(d["win"].region_index), dims)
        orig = C._split_mixed

        def split_mixed(xx, labels, least, split_similarity, max_speakers, max_points, *_no_whitened):
            tried: set = set()
            while labels.max() + 1 < max_speakers:
                done = False
                for j in np.argsort(-np.bincount(labels), kind="stable"):
                    idx = np.flatnonzero(labels == j)
                    key = (len(idx), int(idx[0]), int(idx[-1]))
                    if len(idx) < 2 * least or key in tried:
                        continue
                    tried.add(key)
                    half = C._split_two(xx, idx, max_points)
                    if min(half.sum(), len(idx) - half.sum()) < least:
                        continue
                    ia, ib = idx[half == 0], idx[half == 1]
                    cos = float(C.unit_rows(xx[ia].mean(0)) @ C.unit_rows(xx[ib].mean(0)))
                    m = _pooled_model(xx, labels, dims, j) if pooled else model
                    ok = cos < split_similarity or (
                        m is not None and cos < kw["merge_similarity"] and m.llr(xx[ia], xx[ib], 4) < limit
                    )
                    if ok:
                        labels = labels.copy()
                        labels[ib] = labels.max() + 1
                        done = True
                        break
                if not done:
                    break
            return labels

        C._split_mixed = split_mixed
        try:
            return base(v, d, **kw) if base else C.estimate_clusters(v, **kw)
        finally:
            C._split_mixed = orig

    return run


def single_turn(share: float = 0.6, base=None):
    """A speaker with >= `share` of its windows in one speech region, raw centroid >= split_similarity
    to another speaker, joins it."""

    def run(v, d, **kw):
        res = base(v, d, **kw) if base else C.estimate_clusters(v, **kw)
        if kw.get("num_speakers") or res.num_speakers < 2:
            return res
        x = C.unit_rows(v.astype(np.float64))
        region = np.asarray(d["win"].region_index)
        labels = _join_single_turns(x, res.labels, region, share, kw["split_similarity"], kw["min_speakers"])
        return res if labels.max() + 1 == res.num_speakers else _result(x, labels)

    return run


# ---- split proposals ----------------------------------------------------------------------------


def _refine_raw(x: np.ndarray, half: np.ndarray, least: int, rounds: int = 20) -> np.ndarray:
    """Each window to the nearer raw centroid of the two halves, until stable (2-means in the raw space)."""
    for _ in range(rounds):
        if min(half.sum(), len(half) - half.sum()) < 1:
            break
        c = C.unit_rows(np.stack([x[half == h].mean(0) for h in range(2)]))
        new = np.argmax(x @ c.T, axis=1)
        if min(new.sum(), len(new) - new.sum()) < least or np.array_equal(new, half):
            break
        half = new
    return half


def _prop_avg(y: np.ndarray) -> np.ndarray:
    from scipy.cluster.hierarchy import fcluster, linkage

    lab = fcluster(linkage(y, method="average", metric="cosine"), t=2, criterion="maxclust") - 1
    if len(np.unique(lab)) < 2:
        return np.zeros(len(y), int)
    c = C.unit_rows(np.stack([y[lab == j].mean(0) for j in range(2)]))
    return np.argmax(y @ c.T, axis=1)


def _prop_ward(y: np.ndarray) -> np.ndarray:
    from scipy.cluster.hierarchy import fcluster, linkage

    return fcluster(linkage(y, method="ward"), t=2, criterion="maxclust") - 1


def _prop_pca(y: np.ndarray) -> np.ndarray:
    """Sign of the projection on the first principal direction."""
    v = np.linalg.svd(y - y.mean(0), full_matrices=False)[2][0]
    return ((y - y.mean(0)) @ v > 0).astype(int)


def _kmeans(y: np.ndarray, half: np.ndarray, rounds: int = 50) -> np.ndarray:
    for _ in range(rounds):
        if half.min() == half.max():
            break
        c = np.stack([y[half == h].mean(0) for h in range(2)])
        new = np.argmin(((y[:, None, :] - c[None]) ** 2).sum(-1), axis=1)
        if np.array_equal(new, half):
            break
        half = new
    return half


def _prop_km(y: np.ndarray) -> np.ndarray:
    """2-means started from the first principal direction's sign."""
    return _kmeans(y, _prop_pca(y))


def _prop_km_far(y: np.ndarray) -> np.ndarray:
    """2-means started from the two windows farthest apart."""
    s = y @ y.T
    i, j = np.unravel_index(int(np.argmin(s)), s.shape)
    return _kmeans(y, (s[:, j] > s[:, i]).astype(int))


def _prop_fiedler(y: np.ndarray) -> np.ndarray:
    """Spectral bipartition: sign of the Fiedler vector of the normalized Laplacian of max(0, cos)."""
    a = np.clip(y @ y.T, 0.0, None)
    np.fill_diagonal(a, 0.0)
    deg = a.sum(1).clip(1e-9)
    lap = np.eye(len(y)) - a / np.sqrt(deg[:, None] * deg[None, :])
    vecs = np.linalg.eigh(lap)[1]
    f = vecs[:, 1] / np.sqrt(deg)
    return (f > 0).astype(int)


def _prop_gmm(y: np.ndarray, dims: int = 4) -> np.ndarray:
    from sklearn.mixture import GaussianMixture

    z = (y - y.mean(0)) @ np.linalg.svd(y - y.mean(0), full_matrices=False)[2][:dims].T
    gm = GaussianMixture(2, covariance_type="diag", random_state=0, means_init=None, n_init=1)
    init = _prop_pca(y)
    gm.means_init = np.stack([z[init == h].mean(0) for h in range(2)]) if init.min() != init.max() else None
    return gm.fit_predict(z)


PROPOSALS = {
    "avg": _prop_avg,
    "ward": _prop_ward,
    "pca": _prop_pca,
    "km": _prop_km,
    "km_far": _prop_km_far,
    "fiedler": _prop_fiedler,
    "gmm": _prop_gmm,
}


def candidates(
    x: np.ndarray, idx: np.ndarray, least: int, methods, refine: bool
) -> list[tuple[str, np.ndarray, float]]:
    """(method, halves, raw cosine of the halves' centroids) per proposal whose halves both hold >= least."""
    xi = x[idx]
    y = C.unit_rows(xi - xi.mean(0))
    out = []
    for m in methods:
        half = np.asarray(PROPOSALS[m](y), int)
        if refine:
            half = _refine_raw(xi, half, least)
        if min(half.sum(), len(half) - half.sum()) < least:
            continue
        c = C.unit_rows(np.stack([xi[half == h].mean(0) for h in range(2)]))
        out.append((m, half, float(c[0] @ c[1])))
    return out


def proposal(methods=("avg",), refine: bool = True, split: float | None = None):
    """Split proposals: of the candidate bipartitions (`methods`, each refined in the raw space when
    `refine`), the one whose halves' raw centroids are least alike; split_similarity (or `split`)
    decides as today."""

    def run(v, d, **kw):
        if split is not None:
            kw = dict(kw, split_similarity=split)
        least = max(2, kw["min_windows"])
        orig = C._split_two

        def split_two(xx, idx, max_points):
            cands = candidates(xx, idx, least, methods, refine)
            if not cands:
                return orig(xx, idx, max_points)
            return min(cands, key=lambda t: t[2])[1]

        C._split_two = split_two
        try:
            return C.estimate_clusters(v, **kw)
        finally:
            C._split_two = orig

    return run


def oracle_proposal():
    """Upper bound for any split proposal: the cluster's two most frequent true voices as the halves
    (other windows to the nearer half's raw centroid); split_similarity decides as today."""

    def run(v, d, **kw):
        truth, orig = window_truth(d), C._split_two

        def split_two(xx, idx, max_points):
            t = truth[idx]
            vals, counts = np.unique([u for u in t if u is not None], return_counts=True)
            if len(vals) < 2:
                return orig(xx, idx, max_points)
            a, b = vals[np.argsort(-counts)[:2]]
            c = C.unit_rows(np.stack([xx[idx[t == a]].mean(0), xx[idx[t == b]].mean(0)]))
            half = np.argmax(xx[idx] @ c.T, axis=1)
            half[t == a], half[t == b] = 0, 1
            return half

        C._split_two = split_two
        try:
            return C.estimate_clusters(v, **kw)
        finally:
            C._split_two = orig

    return run


def window_truth(d: dict) -> np.ndarray:
    """Per window: the reference voice covering most of it (None where no voice does)."""
    w, out = d["win"], []
    for s, e in zip(w.starts, w.ends):
        cover: dict = {}
        for a, b, spk in d["ref"]:
            if min(e, b) > max(s, a):
                cover[spk] = cover.get(spk, 0.0) + min(e, b) - max(s, a)
        out.append(max(cover, key=cover.get) if cover else None)
    return np.array(out, object)


VARIANTS = {
    "default": None,
    "wccn a0.6 pca16 t0.1": wccn(0.6, 16, 0.1),
    "wccn a0.6 pca16 t0.0": wccn(0.6, 16, 0.0),
    "wccn_prop a0.3 pca16": wccn(0.3, 16, 0.1, proposals_only=True),
    "split_llr": split_llr(),
    "split_llr -2 dims 4": split_llr(-2.0, 4),
    "single_turn 0.6": single_turn(0.6),
    "single_turn 0.8": single_turn(0.8),
    "single_turn 1.0": single_turn(1.0),
    "split_llr + single_turn 0.6": single_turn(0.6, split_llr()),
    "split_llr -10 + single_turn 0.6": single_turn(0.6, split_llr(-10.0)),
    "split_llr -20 + single_turn 0.6": single_turn(0.6, split_llr(-20.0)),
    "split_llr dims 8 + single_turn 0.6": single_turn(0.6, split_llr(-5.0, 8)),
    "split_llr + single_turn 0.8": single_turn(0.8, split_llr()),
    "split_llr pooled W": split_llr(pooled=True),
    "split_llr pooled W + single_turn 0.6": single_turn(0.6, split_llr(pooled=True)),
    "transition": transition(),
    "split_llr + transition": transition(split_llr()),
    "prop avg refined": proposal(("avg",)),
    "prop ward": proposal(("ward",), False),
    "prop km": proposal(("km",), False),
    "prop fiedler": proposal(("fiedler",), False),
    "prop pca": proposal(("pca",), False),
    "prop km_far": proposal(("km_far",), False),
    "prop ward refined": proposal(("ward",)),
    "prop fiedler refined": proposal(("fiedler",)),
    "prop avg+ward+fiedler+km_far": proposal(("avg", "ward", "fiedler", "km_far"), False),
    "prop gmm": proposal(("gmm",), False),
    "prop best of all": proposal(tuple(PROPOSALS), False),
    "prop best of all refined": proposal(tuple(PROPOSALS)),
    "prop oracle": oracle_proposal(),
    **{f"prop avg split {t}": proposal(("avg",), False, t) for t in (0.79, 0.81, 0.82, 0.85)},
    **{f"prop best refined split {t}": proposal(tuple(PROPOSALS), True, t) for t in (0.79, 0.81, 0.82, 0.85)},
}


def halves(convs: list[dict]) -> None:
    """For every split the default clustering evaluates, the halves' raw cosine under each proposal
    (the lowest over all proposals as `best`), for clusters of one voice (a second voice on at most 2
    windows) and of two (a second voice on at least 5 windows and 20 %)."""
    rows, orig = [], C._split_two
    for d in convs:
        if len(d["voices"]) > 6:
            continue
        truth = window_truth(d)

        def split_two(xx, idx, mp, _d=d, _t=truth):
            counts = sorted(np.unique([v for v in _t[idx] if v is not None], return_counts=True)[1], reverse=True)
            second = counts[1] if len(counts) > 1 else 0
            row = {"name": _d["name"], "one": second <= 2, "two": second >= max(5, 0.2 * len(idx))}
            for refine in (False, True):
                for m, _, cos in candidates(xx, idx, 8, tuple(PROPOSALS), refine):
                    row[m, refine] = cos
            rows.append(row)
            return orig(xx, idx, mp)

        C._split_two = split_two
        try:
            evaluate([d], None)
        finally:
            C._split_two = orig
    print(f"{len(rows)} splits evaluated: {sum(r['one'] for r in rows)} one voice, {sum(r['two'] for r in rows)} two")
    for refine in (False, True):
        for m in [*PROPOSALS, None]:
            one, two = [], []
            for r in rows:
                vals = [r[k, refine] for k in ([m] if m else PROPOSALS) if (k, refine) in r]
                if vals:
                    (one if r["one"] else two if r["two"] else []).append((min(vals), r["name"]))
            o = np.array([v for v, _ in one])
            print(
                f"{m or 'best':8s}{' refined' if refine else '        '} one voice n={len(o)} min {o.min():.4f}"
                f" p5 {np.percentile(o, 5):.3f} median {np.median(o):.3f} | two: "
                + " ".join(f"{n}={v:.4f}" for v, n in sorted(two))
            )


# The clustering the variants here were measured against: the default before stop 20's whitened
# second opinion on splits (`split_whitened`, which wccn_supervised.py's `either` variant became).
BASELINE = Config().diarization.model_copy(update={"split_whitened": None})


def evaluate(convs: list[dict], fn, cfg=BASELINE) -> dict:
    """The real diarize() on cached windows with estimate_clusters replaced by `fn` (None: the
    clustering of `cfg`)."""
    import real_timeline_bench as rb

    saved = D.embed_windows, D.estimate_clusters
    rows = {}
    try:
        for d in convs:
            D.embed_windows = lambda *a, _w=d["win"], **k: _w
            if fn is not None:
                D.estimate_clusters = lambda v, _d=d, **kw: fn(v, _d, **kw)
            res = D.diarize(d["samples"], d["sr"], d["regions"], cfg)
            sc = rb.diarization_scores(d["ref"], [(t.start, t.end, t.speaker) for t in res.turns])
            rows[d["name"]] = {"found": res.num_speakers, "true": len(d["voices"]), "der": sc["der"], **sc}
    finally:
        D.embed_windows, D.estimate_clusters = saved
    return rows


def summary(rows: dict) -> str:
    def pool(sel) -> str:
        sub = [r for n, r in rows.items() if sel(n, r)]
        if not sub:
            return "-"
        der = 100 * sum(r["der"][0] for r in sub) / sum(r["der"][1] for r in sub)
        return f"{sum(r['found'] == r['true'] for r in sub)}/{len(sub)} DER {der:.1f}%"

    small = lambda r: 2 <= r["true"] <= 4  # noqa: E731
    miss = " ".join(f"{n}:{r['true']}->{r['found']}" for n, r in rows.items() if r["found"] != r["true"])
    return (
        f"dev {pool(lambda n, r: small(r) and not n.endswith(('_h', '_h2')))}"
        f" | held out {pool(lambda n, r: n.endswith('_h'))} | held out 2 {pool(lambda n, r: n.endswith('_h2'))}"
        f" | 2-4 {pool(lambda n, r: small(r))} | miss {miss or '-'}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cache", type=Path, default=Path("/tmp/count_cache"))
    ap.add_argument("--only", nargs="*", help="conversation names (default: DEV_SET and HELD_OUT_2)")
    ap.add_argument("--long", type=float, metavar="MINUTES", help="instead: the long recording with 12 voices")
    ap.add_argument("--variants", nargs="*", help=f"names (default: all): {', '.join(VARIANTS)}")
    ap.add_argument(
        "--halves", action="store_true", help="instead: the halves' cosines per proposal (one / two voices)"
    )
    args = ap.parse_args()
    warnings.filterwarnings("ignore", message=".*uem.*")
    args.cache.mkdir(parents=True, exist_ok=True)
    every = rv.DEV_SET + rv.HELD_OUT_2
    specs = [rv.long_spec(args.long)] if args.long else [s for s in every if not args.only or s.name in args.only]
    convs = [cached(s, args.cache) for s in specs]
    if args.halves:
        halves(convs)
        return
    for name in args.variants or VARIANTS:
        rows = evaluate(convs, VARIANTS[name])
        if args.long:
            r = next(iter(rows.values()))
            der = 100 * r["der"][0] / r["der"][1]
            print(f"{name:34s} found {r['found']}/12 DER {der:.1f}% purity {r['purity']} coverage {r['coverage']}")
        else:
            print(f"{name:34s} {summary(rows)}", flush=True)


if __name__ == "__main__":
    main()
