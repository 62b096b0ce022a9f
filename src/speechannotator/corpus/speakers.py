"""Corpus speaker identity: one voice, one id, across recordings (OUT/speakers.jsonl).

A corpus step after the per-recording stage (either engine). Each recording's speakers get a
centroid: the duration-weighted mean of CAM++ embeddings (frontend/campplus.py) of their longest
segments, of the audio through the telephone band (300-3400 Hz), the band every channel carries:
an embedding reads a missing band (a call) or a band buried in noise as part of the voice, so
one voice over the telephone, in a room and in noise otherwise looks like several. Centroids are
cached in OUT/speaker_centroids.jsonl, keyed by a hash of the recording's
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
from typing import TYPE_CHECKING, Any

import numpy as np

from ..audio import AUDIO_EXTENSIONS, load_audio
from ..export.corpus_view import corpus_view
from ..export.rows import write_text_atomic
from ..locks import LOCK_DIR
from .item import load_item_audio
from .voice_decisions import Group, read_voice_decisions, replay
from .voice_registry import SPEAKERS_FILE, _read_jsonl, read_registry

if TYPE_CHECKING:
    from ..frontend.campplus import CamPlusEncoder

# Cosine similarity of two recordings' speaker centroids (telephone band) above which they are
# one voice: the middle of the range over which clustering the tuning half of the real-voice set
# is exact (0.55-0.67; measured by benchmarks/speaker_threshold.py as of ecf9b9c, in git history: 7 voices,
# 6-8 s recordings through clean, telephone, room and noise channels), not the pairwise optimum
# (0.653), which lies 0.013 under the lowest same-voice pair: see docs/scale.md.
SAME_VOICE_SIMILARITY = 0.61
# A speaker with less speech than this founds no voice of its own while longer ones are there:
# SAME_VOICE_SIMILARITY was measured on 6-8 s centroids, and a 2 s one scatters more. It joins
# the voice it is most similar to on average when that reaches SHORT_JOIN_SIMILARITY (measured
# the same way on single clips cut from those recordings), else the short ones cluster apart.
MIN_VOICE_S = 5.0
SHORT_JOIN_SIMILARITY = 0.53
TELEPHONE_BAND_HZ = (300.0, 3400.0)  # what a narrowband call carries (ITU-T G.712)
MIN_SEGMENT_S = 0.5  # shorter segments carry little identity
MAX_SEGMENTS = 24  # the longest segments of a speaker embedded per recording
CENTROIDS_FILE = "speaker_centroids.jsonl"
CACHE_VERSION = "campplus-3"  # 3: one centroid, through the telephone band


@dataclass(frozen=True)
class Centroid:
    rec: str
    speaker: str  # the per-recording speaker_id
    vector: np.ndarray  # unit centroid of the speech through the telephone band
    seconds: float  # speech behind the centroid

    @property
    def member(self) -> str:
        return f"{self.rec}:{self.speaker}"


def telephone_band(audio16k: np.ndarray) -> np.ndarray:
    """The audio through the telephone band (zero-phase, so segment times stay put)."""
    from scipy.signal import butter, sosfiltfilt

    sos = butter(8, TELEPHONE_BAND_HZ, btype="bandpass", fs=16000, output="sos")
    return sosfiltfilt(sos, np.asarray(audio16k, np.float64)).astype(np.float32)


def _unit_mean(vecs: np.ndarray, weights: np.ndarray) -> np.ndarray:
    c = (vecs * weights[:, None]).sum(axis=0)
    return c / max(np.linalg.norm(c), 1e-9)


@dataclass(frozen=True)
class SpeakerPrint:
    vector: np.ndarray  # unit centroid through the telephone band
    seconds: float


def speaker_centroids(audio16k: np.ndarray, records: list[dict[str, Any]], encoder) -> dict[str, SpeakerPrint]:
    """speaker_id -> its centroid from a recording's output records."""
    spans: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for r in records:
        a, b = r["start_time"] / 1000.0, r["end_time"] / 1000.0
        spans[str(r["speaker_id"])].append((a, b))
    band = telephone_band(audio16k) if spans else audio16k
    out = {}
    for spk in sorted(spans):
        segs = sorted(spans[spk], key=lambda s: (-(s[1] - s[0]), s[0]))
        long = [s for s in segs if s[1] - s[0] >= MIN_SEGMENT_S][:MAX_SEGMENTS] or segs[:1]
        weights = np.array([b - a for a, b in long], dtype=np.float64)
        out[spk] = SpeakerPrint(_unit_mean(encoder.embed(band, long), weights), float(weights.sum()))
    return out


def similarities(centroids: list[Centroid]) -> np.ndarray:
    """Cosine similarities of centroids."""
    vecs = np.stack([c.vector for c in centroids]).astype(np.float64)
    return np.clip(vecs @ vecs.T, -1.0, 1.0)


def _average_linkage(sim: np.ndarray, threshold: float) -> list[int]:
    if len(sim) < 2:
        return [0] * len(sim)
    from scipy.cluster.hierarchy import fcluster, linkage
    from scipy.spatial.distance import squareform

    dist = squareform(1.0 - sim, checks=False)
    return [int(x) for x in fcluster(linkage(dist, method="average"), t=1.0 - threshold, criterion="distance")]


def cluster(
    centroids: list[Centroid],
    threshold: float = SAME_VOICE_SIMILARITY,
    join: float = SHORT_JOIN_SIMILARITY,
    min_voice_s: float = MIN_VOICE_S,
) -> list[int]:
    """Cluster labels (0..k-1, numbered by first member) of centroids sorted by member: the
    speakers with min_voice_s of speech or more by average linkage at ``threshold``; each shorter
    one joins the voice of highest mean similarity when that reaches ``join``; the rest cluster
    among themselves at ``threshold``."""
    n = len(centroids)
    if n == 0:
        return []
    sim = similarities(centroids)
    long = [i for i, c in enumerate(centroids) if c.seconds >= min_voice_s]
    if not long:
        long = list(range(n))
    labels = [-1] * n
    for i, label in zip(long, _average_linkage(sim[np.ix_(long, long)], threshold), strict=True):
        labels[i] = label
    voices = sorted(set(labels) - {-1})
    rest = []
    for i in range(n):
        if labels[i] == -1:
            score, best = max((float(sim[i, [j for j in long if labels[j] == v]].mean()), -v) for v in voices)
            if score >= join:
                labels[i] = -best
            else:
                rest.append(i)
    top = max(voices) + 1
    for i, label in zip(rest, _average_linkage(sim[np.ix_(rest, rest)], threshold), strict=True):
        labels[i] = top + label
    order: dict[int, int] = {}
    return [order.setdefault(label, len(order)) for label in labels]


def _output_hash(path: Path) -> str:
    h = hashlib.sha1(CACHE_VERSION.encode())
    h.update(path.read_bytes())
    return h.hexdigest()[:16]


def _write_jsonl(path: Path, rows: Iterable[dict[str, Any]]) -> None:
    write_text_atomic(path, "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in rows))


def enrolled_voices(folder: Path, encoder) -> dict[str, Centroid]:
    """name -> centroids of the named example clips (DIR/<name>.wav or DIR/<name>/*.wav)."""
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
            vecs.append(encoder.embed(telephone_band(audio.samples), [(0.0, audio.duration)])[0])
            weights.append(audio.duration)
        w = np.array(weights)
        out[name] = Centroid("", name, _unit_mean(np.array(vecs), w), float(w.sum()))
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
            found = {c["speaker"]: SpeakerPrint(np.array(c["vector"]), c["seconds"]) for c in cached if c is not None}
        else:
            found = speaker_centroids(load_item_audio(rec.item).samples, records, encoder) if records else {}
        for spk, p in sorted(found.items()):
            # the cache's precision, so cached and fresh runs agree
            vec = np.round(np.asarray(p.vector, np.float64), 6)
            seconds = round(p.seconds, 3)
            result.append(Centroid(rec.id, spk, vec / np.linalg.norm(vec), seconds))
            rows.append({"rec": rec.id, "speaker": spk, "output": digest, "seconds": seconds, "vector": vec.tolist()})
    _write_jsonl(out / CENTROIDS_FILE, sorted(rows, key=lambda r: (r["rec"], r["speaker"])))
    return sorted(result, key=lambda c: (c.rec, c.speaker))


def next_voice_id(taken: set[str]) -> str:
    """The first voice_NNN not in ``taken``."""
    n = 1
    while f"voice_{n:03d}" in taken:
        n += 1
    return f"voice_{n:03d}"


def is_provisional(group: list[Centroid]) -> bool:
    """A voice with under MIN_VOICE_S of speech behind it: too little evidence for an id that
    lasts. Its id is the next free number each time the registry is written (after the
    established voices), so a short stretch that forms a voice of its own before its real voice
    is heard enough, and joins it later, leaves no gap that would number the files' voices
    differently one at a time than in one run."""
    return sum(c.seconds for c in group) < MIN_VOICE_S


def _names(
    groups: list[list[Centroid]],
    previous: list[dict[str, Any]],
    enrolled: dict[str, Centroid],
    threshold: float,
    forced: list[str | None] | None = None,
) -> list[str]:
    """An id per group: ids given by human decisions (``forced``) first, then enrolled names, then
    ids kept from the previous registry's established voices, then new numbers: established
    voices first, then provisional ones (``is_provisional``), each in the order of their first member."""
    names: list[str | None] = list(forced) if forced else [None] * len(groups)
    means = []
    for g in groups:
        w = np.array([c.seconds for c in g])
        means.append(Centroid("", "", _unit_mean(np.stack([c.vector for c in g]), w), float(w.sum())))
    names_in = sorted(enrolled)
    sim = similarities([enrolled[n] for n in names_in] + means) if enrolled and groups else np.zeros((0, 0))
    pairs = sorted(
        ((float(sim[k, len(names_in) + i]), name, i) for k, name in enumerate(names_in) for i in range(len(groups))),
        key=lambda t: (-t[0], t[1], t[2]),
    )
    used: set[str] = {n for n in names if n}
    for score, name, i in pairs:  # best matches first, one to one
        if score >= threshold and names[i] is None and name not in used:
            names[i] = name
            used.add(name)
    lasting = [r for r in previous if not r.get("provisional")]
    old = {m: r["id"] for r in lasting for m in r.get("members", [])}
    short = [is_provisional(g) for g in groups]
    for i, g in enumerate(groups):
        if names[i] is None and not short[i]:
            votes = Counter(old[c.member] for c in g if c.member in old and old[c.member] not in used)
            if votes:
                best = sorted(votes.items(), key=lambda kv: (-kv[1], kv[0]))[0][0]
                names[i] = best
                used.add(best)
    taken = {r["id"] for r in lasting} | used
    for i in sorted(range(len(groups)), key=lambda i: short[i]):
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
        self._encoder: CamPlusEncoder | None = None

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
    forced = {g.forced for g in fixed if g.forced}
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
                "provisional": is_provisional(g) and name not in enrolled and name not in forced,
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
