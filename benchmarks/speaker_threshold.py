"""The corpus speaker threshold (corpus/speakers.py SAME_VOICE_SIMILARITY), measured on real voices.

Recordings are made of real recorded voices (benchmarks/real_voices.py, scripts/fetch_real_voices.sh):
each voice's clips in groups of four (0.4 s apart), each group through one channel in turn
(clean, telephone, room, pink noise at 10 dB SNR), so one voice comes in over different
channels. Each recording's speaker centroid is computed exactly as the corpus step does (CAM++,
corpus/speakers.py). Each voice's recordings alternate between the halves in an order that puts
every channel in both (the 1st, 3rd, 6th and 8th tune: clean, room, telephone, noise), so the
threshold is chosen on the channels it must bridge.

On the tuning half: the cosine similarities of same-voice and different-voice recording pairs,
and the threshold that best separates them (max TPR - FPR; the midpoint of the best interval).
On the held-out half: the clustering the corpus step does at the measured and at the shipped
threshold: voices counted, purity (recordings in a cluster whose majority voice is theirs) and
coverage (recordings in their voice's largest cluster).

Short evidence (corpus/speakers.py SHORT_JOIN_SIMILARITY): the first clip of each recording
alone is a short speaker (those under MIN_VOICE_S). On the tuning half, its mean similarity to the other tuning
recordings of its own voice against that to each other voice's; the threshold that best
separates them. On the held-out half, each short one is clustered with the held-out recordings
other than the one it was cut from: joined its voice, joined another, or left alone.

    .venv/bin/python benchmarks/speaker_threshold.py [--per-voice 8]
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import real_voices as rv  # noqa: E402

from speechannotator.corpus.speakers import (  # noqa: E402
    MIN_VOICE_S,
    SAME_VOICE_SIMILARITY,
    SHORT_JOIN_SIMILARITY,
    Centroid,
    cluster,
    similarities,
    speaker_centroids,
)
from speechannotator.frontend.campplus import CamPlusEncoder  # noqa: E402

CHANNELS = ("clean", "telephone", "room", "noise")
GAP_S = 0.4
GROUP = 4  # clips per recording


def channel(x: np.ndarray, name: str, rng: np.random.Generator) -> np.ndarray:
    if name == "telephone":
        return rv._telephone(x)
    if name == "room":
        return np.convolve(x, rv._room(rng, 0.5))[: len(x)].astype(np.float32)
    if name == "noise":
        return (x + rv._at_snr(x, rv._pink(rng, len(x)), 10.0)).astype(np.float32)
    return x


def recordings(per_voice: int) -> list[tuple[str, str, np.ndarray, list[dict]]]:
    """(voice, channel, audio, records) per recording."""
    out = []
    rng = np.random.default_rng(7)
    for voice in sorted(rv.VOICES):
        clips = rv.clips(voice)
        groups = [clips[i : i + GROUP] for i in range(0, len(clips) - GROUP + 1, GROUP)][:per_voice]
        for g, group in enumerate(groups):
            parts, records, t = [], [], 0.0
            for c in group:
                parts += [c.samples, np.zeros(int(GAP_S * rv.SR), np.float32)]
                records.append(
                    {"speaker_id": "spk_01", "start_time": int(t * 1000), "end_time": int((t + c.duration) * 1000)}
                )
                t += c.duration + GAP_S
            name = CHANNELS[g % len(CHANNELS)]
            out.append((voice, name, channel(np.concatenate(parts), name, rng), records))
    return out


def best_threshold(same: np.ndarray, diff: np.ndarray) -> tuple[float, float]:
    """The threshold with the largest TPR - FPR: midway between the first similarity that reaches
    it and the similarity just below (the middle of the gap, not its edge)."""
    grid = np.unique(np.concatenate([same, diff]))
    gains = [(same >= t).mean() - (diff >= t).mean() for t in grid]
    k = int(np.argmax(gains))
    return (float(grid[k - 1]) + float(grid[k])) / 2 if k > 0 else float(grid[0]), float(gains[k])


def scores(cents: list[Centroid], voices: list[str], threshold: float) -> tuple[int, float, float]:
    labels = cluster(cents, threshold)
    purity_hits = 0
    for lab in set(labels):
        members = [v for v, la in zip(voices, labels, strict=True) if la == lab]
        purity_hits += Counter(members).most_common(1)[0][1]
    coverage_hits = 0
    for v in set(voices):
        coverage_hits += Counter(la for vv, la in zip(voices, labels, strict=True) if vv == v).most_common(1)[0][1]
    return len(set(labels)), purity_hits / len(voices), coverage_hits / len(voices)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--per-voice", type=int, default=8, help="recordings per voice (half tune, half held out)")
    args = ap.parse_args()
    if not rv.available():
        sys.exit("real voices missing: run scripts/fetch_real_voices.sh")
    enc = CamPlusEncoder.load("cpu")
    recs = recordings(args.per_voice)
    cents, shorts, voices, chans = [], [], [], []
    for i, (voice, name, audio, records) in enumerate(recs):
        p = speaker_centroids(audio, records, enc)["spk_01"]
        cents.append(Centroid(f"{voice}/{i:03d}", "spk_01", p.vector, p.seconds))
        p = speaker_centroids(audio, records[:1], enc)["spk_01"]
        shorts.append(Centroid(f"{voice}/{i:03d}s", "spk_01", p.vector, p.seconds))
        voices.append(voice)
        chans.append(name)
    idx = np.arange(len(recs))
    counts = Counter(voices)
    per = {v: [i for i in idx if voices[i] == v] for v in counts}
    # recording k of a voice went through CHANNELS[k % 4]: halves by (k + k // 4) % 2 both hold every channel
    tune = sorted(i for v in per for k, i in enumerate(per[v]) if (k + k // 4) % 2 == 0)
    test = sorted(i for v in per for k, i in enumerate(per[v]) if (k + k // 4) % 2 == 1)
    sims = similarities(cents)
    same, diff, cross = [], [], []
    for a in tune:
        for b in tune:
            if a < b:
                s = float(sims[a, b])
                (same if voices[a] == voices[b] else diff).append(s)
                if voices[a] == voices[b] and chans[a] != chans[b]:
                    cross.append(s)
    same, diff = np.array(same), np.array(diff)
    t, j = best_threshold(same, diff)
    print(
        f"{len(recs)} recordings of {len(counts)} real voices over {', '.join(CHANNELS)}; "
        f"{len(tune)} tune, {len(test)} held out"
    )
    print(
        f"tuning pairs: same voice {len(same)} (min {same.min():.3f}, median {np.median(same):.3f}; across channels "
        f"min {min(cross):.3f}), different voices {len(diff)} (max {diff.max():.3f}, median {np.median(diff):.3f})"
    )
    print(f"best pair threshold {t:.3f} (TPR - FPR = {j:.3f}); shipped SAME_VOICE_SIMILARITY = {SAME_VOICE_SIMILARITY}")
    n_voices = len({voices[i] for i in tune})
    exact = [
        x
        for x in np.round(np.arange(0.40, 0.90, 0.01), 2)
        if scores([cents[i] for i in tune], [voices[i] for i in tune], float(x)) == (n_voices, 1.0, 1.0)
    ]
    if exact:
        lo, hi = min(exact), max(exact)
        print(f"clustering the tuning half is exact from {lo:.2f} to {hi:.2f} (middle {(lo + hi) / 2:.3f})")
    for name, thr in (("measured", t), ("shipped", SAME_VOICE_SIMILARITY)):
        sub = [cents[i] for i in test]
        n, purity, coverage = scores(sub, [voices[i] for i in test], thr)
        print(
            f"held out, {name} {thr:.3f}: {n} clusters for {len({voices[i] for i in test})} voices, "
            f"purity {purity:.1%}, coverage {coverage:.1%}"
        )
    short_evidence(cents, shorts, voices, tune, test)


def short_evidence(cents, shorts, voices, tune, test) -> None:
    own, other = [], []
    short_tune = [i for i in tune if shorts[i].seconds < MIN_VOICE_S]
    short_test = [i for i in test if shorts[i].seconds < MIN_VOICE_S]
    for i in short_tune:
        rest = [j for j in tune if j != i]
        sim = similarities([shorts[i]] + [cents[j] for j in rest])[0, 1:]
        for v in sorted({voices[j] for j in rest}):
            mean = float(np.mean([s for s, j in zip(sim, rest, strict=True) if voices[j] == v]))
            (own if v == voices[i] else other).append(mean)
    own, other = np.array(own), np.array(other)
    t, j = best_threshold(own, other)
    secs = [shorts[i].seconds for i in short_tune + short_test]
    print(
        f"short speakers ({min(secs):.1f}-{max(secs):.1f} s, one clip), tuning: mean similarity to their own voice "
        f"min {own.min():.3f}, median {np.median(own):.3f}; to other voices max {other.max():.3f}, "
        f"median {np.median(other):.3f}"
    )
    print(f"best join threshold {t:.3f} (TPR - FPR = {j:.3f}); shipped SHORT_JOIN_SIMILARITY = {SHORT_JOIN_SIMILARITY}")
    for name, thr in (("measured", t), ("shipped", SHORT_JOIN_SIMILARITY)):
        got: Counter[str] = Counter()
        for i in short_test:
            rest = [j for j in test if j != i]
            labels = cluster([cents[j] for j in rest] + [shorts[i]], join=thr)
            mine = Counter(la for la, j in zip(labels, rest, strict=False) if voices[j] == voices[i])
            if not mine:  # its voice has no other held-out recording: alone is right
                got["alone, voice absent" if labels[-1] not in labels[:-1] else "joined another"] += 1
            elif labels[-1] in mine and mine[labels[-1]] == max(mine.values()):
                got["joined its voice"] += 1
            elif any(la == labels[-1] for la in labels[:-1]):
                got["joined another"] += 1
            else:
                got["left alone"] += 1
        print(
            f"held out, {name} {thr:.3f}: {len(short_test)} short speakers: "
            + ", ".join(f"{k} {v}" for k, v in sorted(got.items()))
        )


if __name__ == "__main__":
    main()
