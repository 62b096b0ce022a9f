"""Corpus speaker identity: one voice, one id, across recordings (OUT/speakers.jsonl).

A corpus step after the per-recording stage (either engine). Each recording's speakers get a
centroid: the duration-weighted mean of CAM++ embeddings (frontend/campplus.py) of their longest
segments. Centroids are cached in OUT/speaker_centroids.jsonl, keyed by a hash of the recording's
output, so a new recording costs its own embeddings only. The voices are then the clusters of all
centroids under average linkage at SAME_VOICE_SIMILARITY (cosine), computed over centroids sorted
by (recording, speaker): the partition does not depend on the order recordings finished in, nor
on whether they were added one at a time. Ids are kept across runs: a voice that holds a
registered voice's members keeps that id; new voices take the next numbers in the order of their
first member. Enrolled voices (`--speakers DIR`: DIR/<name>.wav or DIR/<name>/*.wav) name the
cluster whose centroid is nearest theirs, above the same threshold. Human corrections (merge two
voices, split a recording's speaker off one: corpus/voice_decisions.py) are replayed over the
clusters before naming, every time the registry is written.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..audio import AUDIO_EXTENSIONS, load_audio
from ..export.corpus_view import corpus_view
from ..locks import LOCK_DIR
from .item import load_item_audio
from .voice_decisions import Group, read_voice_decisions, replay
from .voice_registry import SPEAKERS_FILE, _read_jsonl, read_registry

# Cosine similarity of two recordings' speaker centroids above which they are one voice. Measured
# on the real-voice set (benchmarks/speaker_threshold.py: 7 voices, 6-8 s recordings through clean,
# telephone, room and noise channels, tuning half): see docs/scale.md.
SAME_VOICE_SIMILARITY = 0.52
MIN_SEGMENT_S = 0.5  # shorter segments carry little identity
MAX_SEGMENTS = 24  # the longest segments of a speaker embedded per recording
CENTROIDS_FILE = "speaker_centroids.jsonl"
CACHE_VERSION = "campplus-1"


@dataclass(frozen=True)
class Centroid:
    rec: str
    speaker: str  # the per-recording speaker_id
    vector: np.ndarray
    seconds: float  # speech behind the centroid

    @property
    def member(self) -> str:
        return f"{self.rec}:{self.speaker}"


def speaker_centroids(
    audio16k: np.ndarray, records: list[dict[str, Any]], encoder
) -> dict[str, tuple[np.ndarray, float]]:
    """speaker_id -> (unit centroid, seconds) from a recording's output records."""
    spans: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for r in records:
        a, b = r["start_time"] / 1000.0, r["end_time"] / 1000.0
        spans[str(r["speaker_id"])].append((a, b))
    out = {}
    for spk in sorted(spans):
        segs = sorted(spans[spk], key=lambda s: (-(s[1] - s[0]), s[0]))
        long = [s for s in segs if s[1] - s[0] >= MIN_SEGMENT_S][:MAX_SEGMENTS] or segs[:1]
        vecs = encoder.embed(audio16k, long)
        weights = np.array([b - a for a, b in long], dtype=np.float64)
        c = (vecs * weights[:, None]).sum(axis=0)
        out[spk] = (c / max(np.linalg.norm(c), 1e-9), float(weights.sum()))
    return out


def cluster(centroids: list[Centroid], threshold: float = SAME_VOICE_SIMILARITY) -> list[int]:
    """Cluster labels (0..k-1, numbered by first member) of centroids sorted by member."""
    n = len(centroids)
    if n == 0:
        return []
    if n == 1:
        return [0]
    from scipy.cluster.hierarchy import fcluster, linkage
    from scipy.spatial.distance import squareform

    x = np.stack([c.vector for c in centroids]).astype(np.float64)
    sim = np.clip(x @ x.T, -1.0, 1.0)
    dist = squareform(1.0 - sim, checks=False)
    labels = fcluster(linkage(dist, method="average"), t=1.0 - threshold, criterion="distance")
    order: dict[int, int] = {}
    return [order.setdefault(int(label), len(order)) for label in labels]


def _output_hash(path: Path) -> str:
    h = hashlib.sha1(CACHE_VERSION.encode())
    h.update(path.read_bytes())
    return h.hexdigest()[:16]


def _write_jsonl(path: Path, rows: Iterable[dict[str, Any]]) -> None:
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    tmp.write_text("".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in rows), encoding="utf-8")
    os.replace(tmp, path)


def enrolled_voices(folder: Path, encoder) -> dict[str, np.ndarray]:
    """name -> unit centroid of the named example clips (DIR/<name>.wav or DIR/<name>/*.wav)."""
    clips: dict[str, list[Path]] = defaultdict(list)
    for p in sorted(folder.iterdir()):
        if p.is_dir():
            clips[p.name] += sorted(q for q in p.rglob("*") if q.suffix.lower() in AUDIO_EXTENSIONS)
        elif p.suffix.lower() in AUDIO_EXTENSIONS:
            clips[p.stem].append(p)
    out = {}
    for name, paths in sorted(clips.items()):
        vecs, weights = [], []
        for p in paths:
            audio = load_audio(p)
            vecs.append(encoder.embed(audio.samples, [(0.0, audio.duration)])[0])
            weights.append(audio.duration)
        c = (np.array(vecs) * np.array(weights)[:, None]).sum(axis=0)
        out[name] = c / max(np.linalg.norm(c), 1e-9)
    return out


def _centroids(out: Path, view, encoder) -> list[Centroid]:
    """Every complete recording's speaker centroids, from the cache where its output is unchanged."""
    cache = {(r["rec"], r["speaker"]): r for r in _read_jsonl(out / CENTROIDS_FILE)}
    result, rows = [], []
    for rec in view:
        path = out / f"{rec.id}.json"
        digest = _output_hash(path)
        records = [s.record for s in rec.segments]
        speakers = sorted({str(r["speaker_id"]) for r in records})
        cached = [cache.get((rec.id, s)) for s in speakers]
        if speakers and all(c is not None and c["output"] == digest for c in cached):
            found = {c["speaker"]: (np.array(c["vector"], np.float32), c["seconds"]) for c in cached}
        else:
            found = speaker_centroids(load_item_audio(rec.item).samples, records, encoder) if records else {}
        for spk, (vec, seconds) in sorted(found.items()):
            vec = np.round(vec.astype(np.float64), 6)  # the cache's precision, so cached and fresh runs agree
            result.append(Centroid(rec.id, spk, vec / np.linalg.norm(vec), seconds))
            rows.append(
                {"rec": rec.id, "speaker": spk, "output": digest, "seconds": round(seconds, 3), "vector": vec.tolist()}
            )
    _write_jsonl(out / CENTROIDS_FILE, sorted(rows, key=lambda r: (r["rec"], r["speaker"])))
    return sorted(result, key=lambda c: (c.rec, c.speaker))


def next_voice_id(taken: set[str]) -> str:
    """The first voice_NNN not in ``taken``."""
    n = 1
    while f"voice_{n:03d}" in taken:
        n += 1
    return f"voice_{n:03d}"


def _names(
    groups: list[list[Centroid]],
    previous: list[dict[str, Any]],
    enrolled: dict[str, np.ndarray],
    threshold: float,
    forced: list[str | None] | None = None,
) -> list[str]:
    """An id per group: ids given by human decisions (``forced``) first, then enrolled names, then
    ids kept from the previous registry, then new numbers."""
    names: list[str | None] = list(forced) if forced else [None] * len(groups)
    means = []
    for g in groups:
        w = np.array([c.seconds for c in g])
        m = (np.stack([c.vector for c in g]) * w[:, None]).sum(axis=0)
        means.append(m / max(np.linalg.norm(m), 1e-9))
    pairs = sorted(
        ((float(means[i] @ v), name, i) for name, v in enrolled.items() for i in range(len(groups))),
        key=lambda t: (-t[0], t[1], t[2]),
    )
    used: set[str] = {n for n in names if n}
    for sim, name, i in pairs:  # best matches first, one to one
        if sim >= threshold and names[i] is None and name not in used:
            names[i] = name
            used.add(name)
    old = {m: r["id"] for r in previous for m in r.get("members", [])}
    for i, g in enumerate(groups):
        if names[i] is None:
            votes = Counter(old[c.member] for c in g if c.member in old and old[c.member] not in used)
            if votes:
                best = sorted(votes.items(), key=lambda kv: (-kv[1], kv[0]))[0][0]
                names[i] = best
                used.add(best)
    taken = {r["id"] for r in previous} | used
    for i in range(len(groups)):
        if names[i] is None:
            names[i] = next_voice_id(taken)
            taken.add(names[i])
    return [str(x) for x in names]


def _most_heard(segments: list, field: str) -> str | None:
    """The value of `field` annotated on most of the voice's speech."""
    votes: Counter[str] = Counter()
    for _, s in segments:
        if s.record.get(field):
            votes[str(s.record[field])] += s.duration
    return sorted(votes.items(), key=lambda kv: (-kv[1], kv[0]))[0][0] if votes else None


class _LazyEncoder:
    """CAM++, loaded on the first embedding asked for: a rerun whose centroids are all cached,
    or a voice correction, needs no model."""

    def __init__(self, device: str):
        self.device = device
        self._encoder = None

    def embed(self, audio16k: np.ndarray, spans: list[tuple[float, float]]) -> np.ndarray:
        if self._encoder is None:
            from ..frontend.campplus import CamPlusEncoder

            self._encoder = CamPlusEncoder.load(self.device)
        return self._encoder.embed(audio16k, spans)


@contextmanager
def registry_lock(out_dir: str | Path) -> Iterator[None]:
    """One writer of OUT/speakers.jsonl at a time (a run's corpus step, a CLI or a review page
    correction), so that none writes a registry without a decision another has just added.
    A blocking flock: the kernel drops it when its holder ends in any way."""
    folder = Path(out_dir) / LOCK_DIR
    folder.mkdir(exist_ok=True)
    fd = os.open(folder / "speakers.lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def build_speaker_registry(
    out_dir: str | Path,
    enroll: str | Path | None = None,
    *,
    threshold: float = SAME_VOICE_SIMILARITY,
    device: str = "cpu",
) -> dict[str, str]:
    """Write OUT/speakers.jsonl and return {"<rec>:<speaker_id>": corpus_speaker_id}.

    The voices are the clusters of the speaker centroids with the human voice decisions
    (corpus/voice_decisions.py) replayed over them, oldest first."""
    with registry_lock(out_dir):
        return _build_registry(out_dir, enroll, threshold=threshold, device=device)


def _build_registry(out_dir: str | Path, enroll: str | Path | None, *, threshold: float, device: str) -> dict[str, str]:
    out = Path(out_dir)
    view = corpus_view(out)
    encoder = _LazyEncoder(device)
    cents = _centroids(out, view, encoder)
    labels = cluster(cents, threshold)
    clusters: list[list[str]] = [[] for _ in range(max(labels, default=-1) + 1)]
    for c, label in zip(cents, labels, strict=True):
        clusters[label].append(c.member)
    fixed = replay([Group(m) for m in clusters], read_voice_decisions(out))
    by_member = {c.member: c for c in cents}
    groups = [[by_member[m] for m in g.members] for g in fixed]
    enrolled = enrolled_voices(Path(enroll), encoder) if enroll else {}
    previous = read_registry(out)
    names = _names(groups, previous, enrolled, threshold, [g.forced for g in fixed])
    was_enrolled = {r["id"] for r in previous if r.get("enrolled")}
    segs: dict[tuple[str, str], list] = defaultdict(list)
    for rec in view:
        for s in rec.segments:
            segs[(rec.id, str(s.record["speaker_id"]))].append((rec, s))
    rows, mapping = [], {}
    for name, g in sorted(zip(names, groups, strict=True), key=lambda t: t[0]):
        members = [c.member for c in g]
        mapping.update(dict.fromkeys(members, name))
        mine = [pair for c in g for pair in segs.get((c.rec, c.speaker), [])]
        hours = sum(s.duration for _, s in mine) / 3600
        pitches = sorted(s.quality.get("pitch_hz") for _, s in mine if s.quality.get("pitch_hz") is not None)
        best = max(mine, key=lambda p: (p[1].duration, p[1].uid), default=None)
        rows.append(
            {
                "id": name,
                # enrolled now, or kept from an enrollment of an earlier run (a correction reruns without DIR)
                "enrolled": name in enrolled or (not enroll and name in was_enrolled),
                "members": members,
                "recordings": sorted({c.rec for c in g}),
                "hours": round(hours, 6),
                "segments": len(mine),
                "gender": _most_heard(mine, "gender"),
                "age": _most_heard(mine, "age"),
                "pitch_hz_median": round(pitches[len(pitches) // 2], 1) if pitches else None,
                "representative": None
                if best is None
                else {"recording": best[0].id, "segment": best[1].uid, "start": best[1].start, "end": best[1].end},
            }
        )
    _write_jsonl(out / SPEAKERS_FILE, rows)
    return mapping


def rewrite_registry(out_dir: str | Path) -> dict[str, str]:
    """OUT/speakers.jsonl again after a voice decision, the caller holding ``registry_lock``: the
    same corpus step, from the centroid cache (CAM++ only for a recording whose output changed
    since), ids kept by the registry."""
    return _build_registry(out_dir, None, threshold=SAME_VOICE_SIMILARITY, device="cpu")
