"""Supervised WCCN: a within-speaker covariance W learned on voices the benchmark never uses
(`wccn_train.py`), applied to the real-voice conversations' windows.

W = pooled covariance of the training windows around their voice's mean per session (one simulated
recording: one voice, one channel; `session`), around the voice's mean over all channels (`voice`)
or per prompt (`utterance`), shrunk towards a scaled identity (`a`); windows are whitened by
T = W^-1/2 (or `napK`: the top K within-speaker directions projected out). Reported: the EER of
same / different window pairs (benchmarks/embedding_separability.py's labels and pairs) before and
after (`--eer`), the cosine of today's split proposals' halves in each space (`--halves`), and the
count (count_variants.evaluate: the real diarize() on cached windows) for `--variants KIND:W:a:...`:
- `link:W:a:threshold`: average linkage on the whitened centered windows (merge / split on raw
  cosines as today),
- `prop:W:a`: only the split proposals in the whitened space,
- `every:W:a:threshold:merge:split`: the whole clustering on whitened windows (x - training mean) T,
- `dec:W:a:merge:split`: today's clustering with merge (`raw`: today's) and split decided on the
  whitened windows (x - training mean) T; `decw`: the split proposals there too,
- `either:W:a:split[:merge]`: today's clustering; a split also stays when the halves' whitened
  cosine is under `split` (and clusters also join when their whitened centroids reach `merge`).
docs/timeline.md has the numbers.

    PYTHONPATH=src:benchmarks nice -n 10 .venv/bin/python benchmarks/wccn_supervised.py --train /tmp/wccn/train.npz
        --cache /tmp/cnt/emb [--eer] [--halves [--center voice]] [--long] [--variants either:voice:0.3:0.55 ...]
"""

from __future__ import annotations

import argparse
import warnings
from pathlib import Path

import count_variants as cv
import numpy as np
import real_voices as rv
from embedding_separability import eer, hard_masks, window_labels

from speechannotator.frontend import clustering as C
from speechannotator.frontend.within_speaker import Whitener, fit_within_speaker


def within(train: dict, center: str = "session") -> np.ndarray:
    """The within-voice covariance around each `center` group's mean (the shipped asset: "voice")."""
    return fit_within_speaker(train["vectors"], train[center])[1]


def whitener(w: np.ndarray, a: float) -> np.ndarray:
    return Whitener.from_covariance(np.zeros(len(w)), w, a).transform


def nap(w: np.ndarray, k: int) -> np.ndarray:
    """Nuisance attribute projection: the top-k within-speaker directions projected out."""
    vals, vecs = np.linalg.eigh(w)
    u = vecs[:, np.argsort(vals)[::-1][:k]]
    return np.eye(len(w)) - u @ u.T


def eer_table(convs: list[dict], spaces: dict) -> None:
    scores: dict = {}
    for d in convs:
        win = d["win"]
        x = C.unit_rows(win.vectors.astype(np.float64))
        lab = window_labels(win.starts, win.ends, d["ref"])
        i, j = np.triu_indices(len(lab), 1)
        keep = (lab[i] != "") & (lab[j] != "") & ~((win.starts[j] < win.ends[i]) & (win.starts[i] < win.ends[j]))
        i, j = i[keep], j[keep]
        same = lab[i] == lab[j]
        masks = hard_masks(d["name"], d["voices"], lab[i], lab[j])
        for sn, f in spaces.items():
            xm = f(x)
            sim = np.einsum("nd,nd->n", xm[i], xm[j])
            for k, m in masks.items():
                acc = scores.setdefault((k, sn), ([], []))
                acc[0].extend(sim[m & same])
                acc[1].extend(sim[m & ~same])
    print(f"{'pairs':18s} " + " ".join(f"{s:>12s}" for s in spaces))
    for k in dict.fromkeys(key[0] for key in scores):
        print(f"{k:18s} " + " ".join(f"{eer(*map(np.array, scores[(k, s)])):12.1f}" for s in spaces))


def link(t: np.ndarray, threshold: float = 0.1):
    """Average linkage on the whitened centered windows; merge / split on raw cosines."""

    def run(v, d, **kw):
        x = C.unit_rows(v.astype(np.float64))
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
        return cv._result(x, labels)

    return run


def prop(t: np.ndarray):
    """Only the split proposals in the whitened space (decisions on raw cosines as today)."""

    def run(v, d, **kw):
        x = C.unit_rows(v.astype(np.float64))
        xw = C.unit_rows(x @ t)
        orig = C._split_two
        C._split_two = lambda xx, idx, mp: orig(xw, idx, mp)
        try:
            return C.estimate_clusters(v, **kw)
        finally:
            C._split_two = orig

    return run


def every(t: np.ndarray, mu: np.ndarray, threshold: float, merge: float, split: float):
    """The whole clustering on whitened windows (x - training mean) T with its own limits."""

    def run(v, d, **kw):
        x = C.unit_rows(v.astype(np.float64))
        xw = C.unit_rows((x - mu) @ t)
        kw = dict(kw, threshold=threshold, merge_similarity=merge, split_similarity=split)
        return C.estimate_clusters(xw, **kw)

    return run


def decide(t: np.ndarray, mu: np.ndarray, merge: float | None, split: float, whitened_proposals: bool = False):
    """Today's clustering (linkage on centered windows, split proposals on raw windows) with the
    merge (None: on raw cosines at today's limit) and split decisions taken on the whitened
    windows (x - training mean) T."""

    def run(v, d, **kw):
        x = C.unit_rows(v.astype(np.float64))
        xw = C.unit_rows((x - mu) @ t)
        om, os_, ot = C._merge_alike, C._split_mixed, C._split_two

        def merge_alike(xx, labels, centroids, limit, min_speakers):
            c = C.unit_rows(np.stack([xw[labels == j].mean(0) for j in range(labels.max() + 1)]))
            return om(xw, labels, c, merge, min_speakers)

        def split_mixed(xx, labels, least, limit, max_speakers, max_points, *_no_whitened):
            return os_(xw, labels, least, split, max_speakers, max_points)

        C._split_mixed = split_mixed
        if merge is not None:
            C._merge_alike = merge_alike
        if not whitened_proposals:
            C._split_two = lambda xx, idx, mp: ot(x, idx, mp)
        try:
            return C.estimate_clusters(v, **kw)
        finally:
            C._merge_alike, C._split_mixed, C._split_two = om, os_, ot

    return run


def halves(convs: list[dict], w: np.ndarray, mu: np.ndarray) -> None:
    """For every split today's clustering evaluates (both halves >= 8 windows), the cosine of the
    halves' centroids in each space, for halves of one voice (a second voice on at most 2 windows)
    and of two (a second voice on >= 5 windows and 20 %)."""
    spaces = {"raw": lambda x: x, "mu": lambda x: x - mu}
    for k in (3, 10, 20):
        p = nap(w, k)
        spaces[f"nap{k}"] = lambda x, t=p: x @ t
    for a in (0.3, 0.6, 0.9):
        t_a = whitener(w, a)
        spaces[f"wh{a}"] = lambda x, t=t_a: x @ t
        spaces[f"wh{a}-mu"] = lambda x, t=t_a: (x - mu) @ t
    rows, orig = [], C._split_two
    for d in convs:
        if len(d["voices"]) > 6:
            continue
        truth = cv.window_truth(d)

        def split_two(xx, idx, mp, _d=d, _t=truth):
            half = orig(xx, idx, mp)
            counts = sorted(np.unique([v for v in _t[idx] if v is not None], return_counts=True)[1], reverse=True)
            second = counts[1] if len(counts) > 1 else 0
            n1 = int(half.sum())
            if min(n1, len(idx) - n1) >= 8:
                cos = {}
                for sn, f in spaces.items():
                    z = f(xx)
                    c = C.unit_rows(np.stack([z[idx[half == h]].mean(0) for h in range(2)]))
                    cos[sn] = float(c[0] @ c[1])
                rows.append((_d["name"], second <= 2, second >= max(5, 0.2 * len(idx)), cos))
            return half

        C._split_two = split_two
        try:
            cv.evaluate([d], None)
        finally:
            C._split_two = orig
    print(f"{len(rows)} splits: {sum(r[1] for r in rows)} one voice, {sum(r[2] for r in rows)} two")
    for sn in spaces:
        one = sorted((r[3][sn], r[0]) for r in rows if r[1])
        two = sorted((r[3][sn], r[0]) for r in rows if r[2])
        print(
            f"{sn:9s} one min {one[0][0]:.3f} ({one[0][1]}) 2nd {one[1][0]:.3f} | two: "
            + " ".join(f"{n}={v:.3f}" for v, n in two)
            + f" | two below one's min: {sum(v < one[0][0] for v, _ in two)}"
        )


def either(t: np.ndarray, mu: np.ndarray, split: float, merge: float | None = None):
    """Today's clustering with the whitened second opinion on splits (clustering._halves_apart, the
    default since stop 20: a split stays when the halves' raw cosine is under split_similarity or their
    cosine on whitened windows (x - training mean) T is under `split`); with `merge`, two clusters
    also join when their whitened centroids are at least `merge` alike."""

    def run(v, d, **kw):
        white = Whitener(mu, t)
        xw = white(v)
        x = C.unit_rows(v.astype(np.float64))

        def merge_alike(xx, labels, centroids, limit, min_speakers):
            while labels.max() + 1 > max(1, min_speakers):
                k = labels.max() + 1
                score = np.full((k, k), -np.inf)
                for z, lim in ((x, limit), (xw, merge)):
                    c = C.unit_rows(np.stack([z[labels == j].mean(0) for j in range(k)]))
                    score = np.maximum(score, c @ c.T - lim)
                np.fill_diagonal(score, -np.inf)
                i, j = np.unravel_index(int(np.argmax(score)), score.shape)
                if score[i, j] < 0:
                    break
                i, j = min(i, j), max(i, j)
                labels = np.where(labels == j, i, labels)
                labels = np.where(labels > j, labels - 1, labels)
            k = labels.max() + 1
            return labels, C.unit_rows(np.stack([x[labels == j].mean(0) for j in range(k)]))

        orig = C._merge_alike
        if merge is not None:
            C._merge_alike = merge_alike
        try:
            return C.estimate_clusters(v, **dict(kw, whitener=white, split_whitened=split))
        finally:
            C._merge_alike = orig

    return run


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--train", type=Path, default=Path("/tmp/wccn/train.npz"))
    ap.add_argument("--cache", type=Path, default=Path("/tmp/count_cache"))
    ap.add_argument("--only", nargs="*")
    ap.add_argument("--long", action="store_true", help="the cached 60-minute recording (long60) instead")
    ap.add_argument("--eer", action="store_true")
    ap.add_argument("--variants", nargs="*", default=[])
    ap.add_argument("--halves", action="store_true", help="halves' cosine per space for today's split proposals")
    ap.add_argument("--center", default="session", choices=("session", "voice", "utterance"), help="W for --halves")
    ap.add_argument("--write-asset", type=Path, help="write the voice-centered W and the mean (within_speaker.npz)")
    args = ap.parse_args()
    warnings.filterwarnings("ignore", message=".*uem.*")
    train = dict(np.load(args.train))
    if args.write_asset:
        mean, w = fit_within_speaker(train["vectors"], train["voice"])
        np.savez_compressed(args.write_asset, mean=mean.astype(np.float32), within=w.astype(np.float32))
        print(f"wrote {args.write_asset}: {len(train['vectors'])} windows of {len(np.unique(train['voice']))} voices")
        return
    mu = fit_within_speaker(train["vectors"], train["voice"])[0]
    ws = {c: within(train, c) for c in ("session", "voice", "utterance")}
    specs = [s for s in rv.DEV_SET + rv.HELD_OUT_2 if not args.only or s.name in args.only]
    if args.long:
        specs = [rv.long_spec(60)]
    convs = [cv.cached(s, args.cache) for s in specs]
    if args.eer:
        spaces = {"raw": lambda x: x, "centered": lambda x: C.unit_rows(x - x.mean(0))}
        for c in ("session", "voice"):
            for a in (0.1, 0.6, 0.9):
                t = whitener(ws[c], a)
                spaces[f"c {c[:4]} {a}"] = lambda x, t=t: C.unit_rows((x - x.mean(0)) @ t)
        for k in (1, 3, 5, 10, 20, 40):
            t = nap(ws["session"], k)
            spaces[f"nap {k}"] = lambda x, t=t: C.unit_rows((x - x.mean(0)) @ t)
            spaces[f"rnap {k}"] = lambda x, t=t: C.unit_rows(x @ t)
        for c in ("session", "voice"):
            t3 = whitener(ws[c], 0.3)
            spaces[f"r {c[:4]} 0.3"] = lambda x, t=t3: C.unit_rows((x - mu) @ t)
        eer_table(convs, spaces)
    if args.halves:
        halves(convs, ws[args.center], mu)
    for spec in args.variants:
        # name:center:a:arg1:arg2:arg3, e.g. link:session:0.3:0.1  every:session:0.3:0.1:0.85:0.8
        kind, center, a, *rest = spec.split(":")
        t = nap(ws[center], int(a[3:])) if a.startswith("nap") else whitener(ws[center], float(a))
        if kind == "link":
            fn = link(t, float(rest[0]) if rest else 0.1)
        elif kind == "prop":
            fn = prop(t)
        elif kind == "either":
            fn = either(t, mu, float(rest[0]), float(rest[1]) if len(rest) > 1 else None)
        elif kind in ("dec", "decw"):
            fn = decide(t, mu, None if rest[0] == "raw" else float(rest[0]), float(rest[1]), kind == "decw")
        else:
            fn = every(t, mu, *map(float, rest))
        rows = cv.evaluate(convs, fn)
        if args.long:
            r = next(iter(rows.values()))
            der = 100 * r["der"][0] / r["der"][1]
            print(f"{spec:34s} found {r['found']}/12 DER {der:.1f}% purity {r['purity']} coverage {r['coverage']}")
        else:
            print(f"{spec:34s} {cv.summary(rows)}", flush=True)


if __name__ == "__main__":
    main()
