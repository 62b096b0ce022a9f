"""Diarization: local segmentation -> CAM++ windows of each local speaker -> global clustering ->
reconstruction; or a pyannote pipeline from a local folder (`DiarizationConfig.backend`).

The structure of pyannote 3.x, on models that ship in a wheel:

1. pyannote segmentation-3.0 (frontend/segmentation.py) slides 10 s chunks every `seg_step_s`
   and says per 16.9 ms frame which of up to three local speakers talk (two at once at most).
2. Windows of each local speaker's stretches are embedded with CAM++ (frontend/campplus.py)
   over the frames where it speaks alone (all its frames when it never does); a window whose
   frames another window mostly holds takes that one's vector (`window_share`, `_shared`).
3. Those embeddings are clustered over the whole recording: average linkage on cosine
   similarity stopped at `threshold` (finer than one voice needs), then clusters whose mean
   directions have cosine `merge_similarity` or more are joined (`_merge_close`); small
   clusters that segmentation heard beside every voice join each other (`_join_orphans`);
   clusters with under `min_cluster_s` of speech (or `min_cluster_share` of a long recording's)
   join their nearest large one, unless all
   windows nearest them cover that and segmentation heard them beside every voice
   (`_lone_voices`: a voice that talks in short turns).
4. The chunks' frames are averaged per global speaker; the number of speakers per frame is the
   average of the chunks' local counts, rounded (at least one where the chunks' mean P(speech)
   clears a bar, relative to the recording's highest where that is low); the most active
   speakers fill that count.

Both models normalize their input (instance norm on the waveform, the fbank mean removed), so
a quiet recording (-51 dBFS) is read like a loud one. Speaker ids are global; memory beyond the
audio is the fbank (320 B per 10 ms), the chunk activities and one 192-d vector per window.

The result keeps overlap twice: `speech` has one row per speaker and stretch (overlapping rows
where two talk at once, what DER scores), and `turns` are exclusive (the louder-scored voice of
each frame, for speaker-homogeneous TTS segments) with each turn's seconds of overlapped
speech in `Turn.overlap_s`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..config import DiarizationConfig
from ..records import Turn
from .campplus import SpeakerWindows
from .vad import SpeechRegion
from .word_changes import SpeakerSpace

SR = 16000
EMBED_BLOCK = 256  # windows whose fbank slices are held at once before CAM++ embeds them


@dataclass
class DiarizationResult:
    turns: list[Turn]  # exclusive: one speaker at a time, overlap_s inside
    num_speakers: int
    closest_speaker_similarity: float
    num_windows: int  # local speakers embedded
    speech: list[Turn] | None = None  # per-speaker activity, overlapping where voices overlap
    space: SpeakerSpace | None = None  # the speakers' CAM++ centroids (word-level changes)
    windows: SpeakerWindows | None = None  # the embedded windows (Segment.voice, the gender vote)


@dataclass
class _Windows:
    """Embedded pieces of local speakers: chunk, local slot, first and end frame (chunk frames),
    seconds of clean speech, vector, start and end in the recording (seconds)."""

    chunk: np.ndarray
    slot: np.ndarray
    f0: np.ndarray
    f1: np.ndarray
    seconds: np.ndarray
    vectors: np.ndarray
    start: np.ndarray
    end: np.ndarray

    def __len__(self) -> int:
        return len(self.chunk)


def _embed_local(samples: np.ndarray, act, cfg: DiarizationConfig) -> _Windows:
    """Cut each local speaker's stretches in each chunk into windows of `window_s` every `hop_s`
    and embed the frames of each where that speaker talks alone (all its frames there when it
    never does). A local speaker can hold two voices when segmentation misses a change, so its
    windows, not the whole local speaker, are clustered. A window whose frames another window
    mostly holds borrows that one's vector (`_shared`)."""
    from .campplus import MIN_FRAMES, CamPlusEncoder, fbank
    from .segmentation import FRAME_SIZE, FRAME_STEP

    enc = CamPlusEncoder.load(cfg.device)
    feats_all = fbank(samples)
    n_chunks, n_frames, n_slots = act.activity.shape
    seg_s = FRAME_STEP / SR
    win, hop = max(1, int(round(cfg.window_s / seg_s))), max(1, int(round(cfg.hop_s / seg_s)))
    rows: list[tuple[int, int, int, int, float]] = []
    sel: list[np.ndarray] = []
    tail_of: list[int] = []  # per window: the run's window before it when it is the run's extra last one, else -1
    for c in range(n_chunks):
        a = int(round(act.starts[c] * SR)) // 160
        local = act.activity[c] > 0
        alone = local.sum(axis=1) == 1
        for k in range(n_slots):
            for r0, r1 in _runs(local[:, k]):
                starts = list(range(r0, max(r0 + 1, r1 - win + 1), hop))
                tail = r1 - win if r1 - starts[-1] > win else -1  # flush with the run's end, under a hop on
                if tail >= 0:
                    starts.append(tail)
                before = -1
                for f0 in starts:
                    f1 = min(r1, f0 + win)
                    clean = alone[f0:f1] & local[f0:f1, k]
                    use = clean if clean.sum() * seg_s >= 0.3 else local[f0:f1, k]
                    # fbank frames (10 ms) whose centres fall in the chosen segmentation frames
                    fr = np.flatnonzero(use) + f0
                    lo = a + ((fr * FRAME_STEP + FRAME_SIZE // 2 - FRAME_STEP // 2 - 200) // 160)
                    idx = np.union1d(lo, lo + 1)
                    idx = idx[(idx >= 0) & (idx < len(feats_all))]
                    if len(idx) < MIN_FRAMES:
                        continue
                    rows.append((c, k, f0, f1, float(clean.sum()) * seg_s))
                    sel.append(idx.astype(np.int32))
                    tail_of.append(before if f0 == tail else -1)
                    before = len(rows) - 1
    r = np.array(rows, dtype=float).reshape(-1, 5)
    chunk = r[:, 0].astype(int)
    start = act.starts[chunk] + r[:, 2] * seg_s
    end = act.starts[chunk] + r[:, 3] * seg_s
    src = _shared(act.starts, chunk, (start + end) / 2, sel, np.array(tail_of, dtype=int), cfg.window_share)
    keep = np.flatnonzero(src == np.arange(len(src)))
    # Embedded every EMBED_BLOCK windows, not all at the end: the fbank slices of all windows of
    # a 64-minute recording held together were ~0.3 GB. Batches of 16: on CPU larger batches
    # gain nothing and the dense blocks' activations grow with the batch (peak memory).
    x = np.zeros((len(src), 192), np.float32)
    for b in range(0, len(keep), EMBED_BLOCK):
        part = keep[b : b + EMBED_BLOCK]
        feats = [feats_all[sel[i]] - feats_all[sel[i]].mean(axis=0, keepdims=True) for i in part]
        x[part] = enc.embed_features([np.ascontiguousarray(f, dtype=np.float32) for f in feats], batch=16)
    return _Windows(chunk, r[:, 1].astype(int), r[:, 2].astype(int), r[:, 3].astype(int), r[:, 4], x[src], start, end)


def _shared(
    chunk_starts: np.ndarray,
    chunk: np.ndarray,
    centre: np.ndarray,
    sel: list[np.ndarray],
    tail_of: np.ndarray,
    share: float | None,
) -> np.ndarray:
    """Per window, the window whose vector it takes (itself when it is embedded). A window that
    borrows stays a window of its own chunk and local speaker (clustering weight,
    `_heard_apart`, votes); only its vector is the other's. Every vector lent is embedded.

    With a chunk every 5 s each stretch is heard by two chunks and cut into windows by each, so
    every second of speech was embedded about four times:
    - a run's extra last window (flush with its end, under a hop after the one before) takes
      that one's vector when it holds at least `share` of its fbank frames (`sel`);
    - a window belongs to the chunk whose centre is nearest its own (segmentation there had
      context on both sides); a window of the other chunk takes the vector of the owner's
      embedded window that holds the most of its frames, when that is at least `share` of them."""
    from .segmentation import CHUNK_S

    src = np.arange(len(chunk))
    if share is None or not len(chunk):
        return src
    for i in np.flatnonzero(tail_of >= 0):
        if np.isin(sel[i], sel[tail_of[i]], assume_unique=True).mean() >= share:
            src[i] = tail_of[i]
    mid = chunk_starts + CHUNK_S / 2
    hi = np.minimum(np.searchsorted(mid, centre), len(mid) - 1)
    lo = np.maximum(hi - 1, 0)
    owner = np.where(centre - mid[lo] <= mid[hi] - centre, lo, hi)  # the nearest centre, the earlier on a tie
    own = owner == chunk
    owned = {int(c): np.flatnonzero(own & (chunk == c) & (src == np.arange(len(src)))) for c in np.unique(chunk)}
    first, last = np.array([s[0] for s in sel]), np.array([s[-1] for s in sel])
    for i in np.flatnonzero(~own):
        cand = owned.get(int(owner[i]), np.zeros(0, int))
        cand = cand[(first[cand] <= last[i]) & (last[cand] >= first[i])]
        held = [np.isin(sel[i], sel[k], assume_unique=True).sum() for k in cand]
        if held and max(held) >= share * len(sel[i]):
            src[i] = cand[int(np.argmax(held))]
    return src[src]  # a tail whose window before it borrowed from the owner: the owner's


def _covered(starts: np.ndarray, ends: np.ndarray) -> float:
    """Length of the union of intervals."""
    total, reach = 0.0, -np.inf
    for a, b in sorted(zip(starts.tolist(), ends.tolist())):
        if b > reach:
            total += b - max(a, reach)
            reach = b
    return total


def _cluster(w: _Windows, cfg: DiarizationConfig) -> tuple[np.ndarray, np.ndarray, float]:
    """Speaker of every window and the speakers' unit centroids, and the closest pair's
    similarity. At most `max_points` windows (evenly spaced) are clustered directly; the others
    and those of dropped clusters join their nearest centroid."""
    from scipy.cluster.hierarchy import fcluster, linkage

    x = w.vectors.astype(np.float64)
    # Unit vectors: linkage is on cosine anyway; centroids are then means of directions.
    x = x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)
    train = np.flatnonzero(w.seconds >= cfg.min_embed_s)
    if len(train) < 2:
        train = np.arange(len(x))
    if len(train) > cfg.max_points:
        train = train[np.linspace(0, len(train) - 1, cfg.max_points).round().astype(int)]
    if len(train) == 1:
        cent = x[train] / np.linalg.norm(x[train], axis=1, keepdims=True)
        return np.zeros(len(x), int), cent, 0.0
    z = linkage(x[train], method="average", metric="cosine")

    def mass_of(labels: np.ndarray) -> np.ndarray:
        # Seconds of the recording each cluster's windows cover (windows overlap, and chunks
        # overlap: the union, not the sum).
        return np.array(
            [_covered(w.start[train][labels == j], w.end[train][labels == j]) for j in range(labels.max() + 1)]
        )

    # What a voice must cover: `min_cluster_s`, and in a long recording a share of its speech.
    bar = max(cfg.min_cluster_s, cfg.min_cluster_share * _covered(w.start[train], w.end[train]))
    if cfg.num_speakers:
        labels = fcluster(z, t=min(cfg.num_speakers, len(train)), criterion="maxclust") - 1
    else:
        labels = fcluster(z, t=1.0 - cfg.threshold, criterion="distance") - 1
        if cfg.merge_similarity is not None:
            labels = _merge_close(x[train], labels, cfg.merge_similarity, cfg.min_speakers)
        labels = _join_orphans(x[train], labels, w.chunk[train], w.slot[train], mass_of, bar, cfg)
    labels = np.unique(labels, return_inverse=True)[1]
    k = labels.max() + 1
    mass = mass_of(labels)
    cent = np.stack([x[train][labels == j].mean(axis=0) for j in range(k)])
    # Small clusters (a cough, crosstalk, a mixed window) are no voice: keep the large ones and
    # the voices of short turns (`_lone_voices`), never fewer than min_speakers nor more than
    # max_speakers.
    order = np.argsort(-mass, kind="stable")
    voice = _lone_voices(x, w, train, labels, cent, mass >= bar, bar)
    keep = [j for j in order if voice[j]]
    if cfg.num_speakers:
        keep = list(order[: cfg.num_speakers])
    if len(keep) < cfg.min_speakers:
        keep = list(order[: cfg.min_speakers])
    keep = keep[: cfg.max_speakers] or list(order[:1])
    cent = cent[sorted(keep)]
    cent /= np.linalg.norm(cent, axis=1, keepdims=True)
    label = (x @ cent.T).argmax(axis=1)
    sim = cent @ cent.T
    closest = float(sim[np.triu_indices(len(cent), 1)].max()) if len(cent) > 1 else 0.0
    return label, cent, closest


def _agglomerate(
    x: np.ndarray, labels: np.ndarray, bound: float, floor: int, relative: bool, among=None, apart=None
) -> np.ndarray:
    """Join the closest pair of clusters (unit vectors `x`, `labels`) while their similarity is
    at least `bound` and more than `floor` clusters remain; labels renumbered 0..k-1.

    `relative`: the cosine of the two clusters' mean directions, which is the mean similarity of
    their window pairs divided by the square root of each cluster's own (self pairs included), a
    test relative to each cluster's spread; else the mean similarity of their window pairs
    (average linkage). Only clusters in `among` (bool per label) take part; pairs marked in
    `apart` (bool, label x label, kept up to date as clusters join) are never joined."""
    labels = np.unique(labels, return_inverse=True)[1]
    k = int(labels.max()) + 1
    sums = np.zeros((k, x.shape[1]))
    np.add.at(sums, labels, x)
    size = np.bincount(labels, minlength=k).astype(float)
    alive = np.ones(k, bool) if among is None else np.asarray(among, bool).copy()
    apart = np.zeros((k, k), bool) if apart is None else apart.copy()
    parent = np.arange(k)
    while alive.sum() > max(floor, 1):
        tot = sums @ sums.T  # sums of all window-pair similarities between clusters
        if relative:
            own = np.sqrt(np.maximum(np.diag(tot), 1e-12))
            score = tot / np.outer(own, own)
        else:
            score = tot / np.outer(size, size)
        score[apart] = -np.inf
        score[~alive, :] = -np.inf
        score[:, ~alive] = -np.inf
        np.fill_diagonal(score, -np.inf)
        i, j = np.unravel_index(int(np.argmax(score)), score.shape)
        if score[i, j] < bound:
            break
        i, j = min(i, j), max(i, j)
        sums[i] += sums[j]
        size[i] += size[j]
        apart[i] |= apart[j]
        apart[:, i] |= apart[:, j]
        alive[j] = False
        sums[j], size[j] = 0.0, 1.0
        parent[parent == j] = i
    return np.unique(parent[labels], return_inverse=True)[1]


def _merge_close(x: np.ndarray, labels: np.ndarray, bound: float, floor: int) -> np.ndarray:
    """Join clusters whose mean directions have cosine >= `bound`, the closest first.

    The linkage stop is absolute (the mean similarity of window pairs). A voice through a room
    or under noise has widely spread windows, so its pairs stay below the stop and it falls
    apart; two women on one telephone line have close windows, so an absolute stop loose enough
    for the first joins the second. The mean directions' cosine divides the cross similarity by
    each cluster's own: it joins the parts of a spread-out voice and keeps tight voices apart."""
    return _agglomerate(x, labels, bound, floor, relative=True)


def _heard_apart(chunk: np.ndarray, slot: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """(k, k) bool: some segmentation chunk holds windows of both clusters under different local
    speakers, i.e. the segmentation model heard them as two voices within one 10 s chunk."""
    k = int(labels.max()) + 1
    apart = np.zeros((k, k), bool)
    key = np.unique(np.stack([chunk, slot, labels], axis=1), axis=0)
    for c in np.unique(key[:, 0]):
        rows = key[key[:, 0] == c]
        for s1, l1 in rows[:, 1:]:
            apart[l1, rows[(rows[:, 1] != s1) & (rows[:, 2] != l1), 2]] = True
    return apart | apart.T


def _join_orphans(x, labels, chunk, slot, mass_of, bar: float, cfg: DiarizationConfig) -> np.ndarray:
    """Clusters too small to be a voice (`mass_of` them under `bar`, see `_cluster`) are dropped into their nearest
    voice (`_cluster`). A small cluster that segmentation heard as another voice beside every
    voice kept (`_heard_apart`: a different local speaker of one chunk) is none of them: such
    clusters are joined with each other by average linkage at `voice_similarity` (never two heard
    apart), and a result covering `bar` is a voice of its own. A voice with little
    speech split by the fine linkage stop is a few such pieces (two actors talking over each
    other in a 20 s exchange: each of her pieces under 3 s, all dropped into his voice)."""
    labels = np.unique(labels, return_inverse=True)[1]
    voice = mass_of(labels) >= bar  # after renumbering: a mass per label as it now stands
    if not voice.any():
        return labels
    apart = _heard_apart(chunk, slot, labels)
    orphan = ~voice & apart[:, voice].all(axis=1)
    if orphan.sum() < 2:
        return labels
    return _agglomerate(x, labels, cfg.voice_similarity, 1, relative=False, among=orphan, apart=apart)


def _lone_voices(
    x: np.ndarray,
    w: _Windows,
    train: np.ndarray,
    labels: np.ndarray,
    cent: np.ndarray,
    voice: np.ndarray,
    span_s: float,
) -> np.ndarray:
    """`voice` (bool per cluster of the clustered windows `train`, `labels`, mean directions
    `cent`: their span covers `span_s`, the bar of `_cluster`) with the small clusters that are a
    voice of their own. A voice that talks in short turns has few windows with `min_embed_s`
    of clean speech, so its clustered windows cover little (ffff_clean's fourth actress: 6 s of
    speech in 15 windows, 6 clustered, covering 2.4 s). A small cluster that segmentation heard
    beside every voice (the test of `_join_orphans`) is one when all windows nearest its
    centroid (`x`: every window, unit vectors), clustered or not, cover `span_s`."""
    if voice.all() or not voice.any():
        return voice
    unit = cent / np.maximum(np.linalg.norm(cent, axis=1, keepdims=True), 1e-12)
    nearest = (x @ unit.T).argmax(axis=1)
    span = np.array([_covered(w.start[nearest == j], w.end[nearest == j]) for j in range(len(cent))])
    apart = _heard_apart(w.chunk[train], w.slot[train], labels)
    return voice | (apart[:, voice].all(axis=1) & (span >= span_s))


def _reconstruct(
    act,
    w: _Windows,
    label: np.ndarray,
    n_speakers: int,
    total_frames: int,
    speech_threshold: float,
    relative: float,
):
    """(frames, speakers) binary global activity and scores: each window votes for its speaker
    on the frames where its local speaker is active; the number of speakers per frame is the
    chunks' average local count, rounded, and at least one where the chunks' average probability
    of speech exceeds `speech_threshold` (or `relative` times the recording's highest, if lower;
    both from DiarizationConfig)."""
    from .segmentation import FRAME_STEP

    score = np.zeros((total_frames, n_speakers))
    count = np.zeros(total_frames)
    covered = np.zeros(total_frames)
    prob = np.zeros(total_frames)
    n_chunks, n_frames, _ = act.activity.shape
    g0 = np.round(act.starts * SR / FRAME_STEP).astype(int)
    for c in range(n_chunks):
        span = min(n_frames, total_frames - g0[c])
        if span > 0:
            covered[g0[c] : g0[c] + span] += 1
            count[g0[c] : g0[c] + span] += act.activity[c][:span].sum(axis=1)
            prob[g0[c] : g0[c] + span] += act.probability[c][:span]
    votes = np.zeros((total_frames, n_speakers))
    for i in range(len(w)):
        c, k, f0, f1 = w.chunk[i], w.slot[i], w.f0[i], w.f1[i]
        on = act.activity[c][f0:f1, k]
        g = g0[c] + f0
        n = min(len(on), total_frames - g)
        if n > 0:
            votes[g : g + n, label[i]] += on[:n]
    # Windows overlap (hop < window): a frame's share per speaker, times the chunks that heard speech
    heard = np.zeros(total_frames)
    for c in range(n_chunks):
        span = min(n_frames, total_frames - g0[c])
        if span > 0:
            heard[g0[c] : g0[c] + span] += act.activity[c][:span].max(axis=1)
    tot = votes.sum(axis=1, keepdims=True)
    score = np.where(tot > 0, votes / np.maximum(tot, 1e-9), 0.0) * (heard / np.maximum(covered, 1))[:, None]
    covered = np.maximum(covered, 1)
    n_active = np.round(count / covered).astype(int)
    # With chunks every 5 s each frame is seen by two: a frame only one of them hears has a mean
    # count of 0.5, which rounds to 0 (13 s of 46 s of mmf_reverb's speech were lost so).
    # Whether a frame is speech is decided on the chunks' mean probability instead.
    # Level independence: where segmentation stays unsure over a whole recording (AMI trn01,
    # -39 dBFS: no frame's mean reaches 0.4, so no speech at all), the bar is relative to the
    # recording's most confident frame.
    mean = prob / covered
    bar = min(speech_threshold, relative * float(mean.max(initial=0.0)))
    n_active = np.minimum(np.where(mean > bar, np.maximum(n_active, 1), 0), n_speakers)
    binary = np.zeros_like(score, dtype=bool)
    order = np.argsort(-score, axis=1, kind="stable")
    for j in range(1, int(n_active.max(initial=0)) + 1):
        rows = np.flatnonzero(n_active >= j)
        binary[rows, order[rows, j - 1]] = True
    binary &= score > 0
    return binary, score


def _runs(mask: np.ndarray) -> list[tuple[int, int]]:
    d = np.diff(np.concatenate([[0], mask.astype(int), [0]]))
    return list(zip(np.flatnonzero(d == 1), np.flatnonzero(d == -1)))


def _fill(mask: np.ndarray, max_gap: int, min_len: int) -> np.ndarray:
    """Close gaps shorter than max_gap frames, then drop runs shorter than min_len."""
    m = mask.copy()
    runs = _runs(m)
    for (_a0, b0), (a1, _b1) in zip(runs, runs[1:]):
        if a1 - b0 < max_gap:
            m[b0:a1] = True
    for a, b in _runs(m):
        if b - a < min_len:
            m[a:b] = False
    return m


def _to_turns(binary: np.ndarray, score: np.ndarray, cfg: DiarizationConfig, duration: float):
    from .segmentation import FRAME_SIZE, FRAME_STEP

    step = FRAME_STEP / SR
    offset = FRAME_SIZE / 2 / SR - step / 2  # frame f covers [offset + f step, offset + (f+1) step)

    def t(f: int) -> float:
        return round(min(duration, max(0.0, offset + f * step)), 3)

    gap, short = int(round(cfg.min_gap_s / step)), int(round(cfg.min_speech_s / step))
    cleaned = np.stack([_fill(binary[:, k], gap, short) for k in range(binary.shape[1])], axis=1)
    speech = [
        Turn(t(a), t(b), f"S{k}", overlap=bool((cleaned[a:b].sum(axis=1) > 1).any()))
        for k in range(cleaned.shape[1])
        for a, b in _runs(cleaned[:, k])
    ]
    speech.sort(key=lambda u: (u.start, u.speaker))
    # Exclusive turns: in each frame the active speaker with the highest score; runs shorter
    # than min_turn_s inside speech are absorbed by their neighbours.
    active = np.asarray(cleaned.any(axis=1))
    top = np.where(cleaned, score, -1.0).argmax(axis=1)
    top = _absorb(top, active, int(round(cfg.min_turn_s / step)))
    multi = cleaned.sum(axis=1) > 1
    turns = []
    for a, b in _runs(active):
        bounds = np.flatnonzero(np.diff(top[a:b])) + 1 + a
        for s, e in zip(np.concatenate([[a], bounds]), np.concatenate([bounds, [b]])):
            ov = round(float(multi[s:e].sum()) * step, 2)
            turns.append(Turn(t(s), t(e), f"S{int(top[s])}", overlap=ov > 0, overlap_s=ov))
    return turns, speech


def _absorb(top: np.ndarray, active: np.ndarray, min_frames: int) -> np.ndarray:
    """Within each speech run, label runs shorter than min_frames take their longer neighbour's
    speaker (a flicker between voices is not a turn)."""
    top = top.copy()
    for a, b in _runs(active):
        seg = top[a:b]
        while True:
            bounds = np.flatnonzero(np.diff(seg)) + 1
            if not len(bounds):
                break
            starts = np.concatenate([[0], bounds])
            ends = np.concatenate([bounds, [len(seg)]])
            lengths = ends - starts
            i = int(np.argmin(lengths))
            if lengths[i] >= min_frames:
                break
            left = lengths[i - 1] if i > 0 else -1
            right = lengths[i + 1] if i + 1 < len(lengths) else -1
            seg[starts[i] : ends[i]] = seg[starts[i - 1]] if left >= right else seg[ends[i]]
        top[a:b] = seg
    return top


def diarize(
    samples: np.ndarray,
    sample_rate: int,
    regions: list[SpeechRegion] | None = None,
    cfg: DiarizationConfig | None = None,
) -> DiarizationResult:
    """Diarize 16 kHz mono audio. `regions` (Silero VAD) are not needed: segmentation-3.0 finds
    the speech itself; the argument stays for the backends' common signature."""
    from .segmentation import FRAME_STEP, Segmenter

    cfg = cfg or DiarizationConfig()
    if sample_rate != SR:
        raise ValueError(f"diarization needs 16 kHz audio, got {sample_rate} Hz")
    x = np.asarray(samples, dtype=np.float32)
    if len(x) < SR // 2:
        return DiarizationResult([], 0, 0.0, 0, [])
    act = Segmenter.load(cfg.device)(x, step_s=cfg.seg_step_s, speech_threshold=cfg.speech_threshold)
    loc = _embed_local(x, act, cfg)
    if len(loc.vectors) == 0:
        return DiarizationResult([], 0, 0.0, 0, [])
    label, centroids, closest = _cluster(loc, cfg)
    total = int(np.ceil(len(x) / FRAME_STEP))
    binary, score = _reconstruct(
        act, loc, label, len(centroids), total, cfg.frame_speech_threshold, cfg.frame_speech_relative
    )
    turns, speech = _to_turns(binary, score, cfg, len(x) / SR)
    # Ids in order of first appearance (S0 speaks first), so reruns and exports read naturally.
    first: dict[str, int] = {}
    for tu in sorted(speech, key=lambda u: (u.start, u.speaker)):
        first.setdefault(tu.speaker, len(first))
    for tu in speech + turns:
        tu.speaker = f"S{first[tu.speaker]}"
    space = SpeakerSpace(
        np.zeros(centroids.shape[1]),
        {f"S{first[f'S{j}']}": centroids[j].astype(np.float64) for j in range(len(centroids)) if f"S{j}" in first},
    )
    unit = loc.vectors / np.maximum(np.linalg.norm(loc.vectors, axis=1, keepdims=True), 1e-12)
    who = [first.get(f"S{j}") for j in label.tolist()]
    windows = SpeakerWindows(loc.start, loc.end, [None if j is None else f"S{j}" for j in who], unit)
    return DiarizationResult(turns, len(first), closest, len(loc), speech, space, windows)


def run_diarization(
    samples: np.ndarray, sample_rate: int, regions: list[SpeechRegion], cfg: DiarizationConfig | None = None
) -> DiarizationResult:
    """The configured diarization backend."""
    cfg = cfg or DiarizationConfig()
    if cfg.backend == "pyannote":
        from .diarize_pyannote import pyannote_diarize

        turns = pyannote_diarize(samples, sample_rate, cfg)
        return DiarizationResult(turns, len({t.speaker for t in turns}), 0.0, 0, turns)
    return diarize(samples, sample_rate, regions, cfg)
