"""Speaker changes inside a segment, found at word boundaries after ASR.

Diarization labels 1.6 s windows; a quick handoff or a short answer right after the other
speaker can stay inside one segment. After ASR every word has timestamps, so a change can only
sit between two words. At each word boundary that leaves at least `min_piece_s` on both sides,
the audio just before and just after it (up to 1.6 s each, inside the segment) is embedded and
scored against the recording's speakers (the centroids the clustering ended with, in its
space). A boundary is a speaker change when the left side is nearer one speaker, the right side
nearer another, and the two preferences together exceed `margin`. The best such boundary splits
the segment, and each piece is searched again; every word stays in the piece its timestamps fall
in. The stretch before the first or after the last word counts too (a short answer the ASR left
without words): that piece has no words and leaves the table with the other wordless segments.
This is the evidence WhisperX uses (words assigned to the speaker heard under them), with fresh
embeddings at word boundaries instead of a second diarization.

Most segments hold one voice, so a coarse gate comes first: the segment's first and last
`min_piece_s` and 1.6 s windows tiling the stretch between them (when a piece of another voice
fits there) are embedded once, and the word boundaries are searched only when one of them prefers
another speaker or prefers the segment's own by less than `gate` (cosine). A
segment whose speaker has no centroid cannot be split (a change needs its speaker on one side)
and is not embedded at all.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..config import DiarizationConfig
from ..records import Segment

_CONTEXT = 1.6  # seconds embedded on each side of a boundary
_CJK_LANGS = ("zh", "yue", "ja")


@dataclass
class SpeakerSpace:
    """Where the clustering compared voices: unit CAM++ vectors minus `mean` (zero: the
    diarizer clusters raw cosine similarity), unit norm again."""

    mean: np.ndarray  # (d,)
    centroids: dict[str, np.ndarray]  # speaker -> (d,) unit norm, in that space

    def project(self, vectors: np.ndarray) -> np.ndarray:
        x = vectors / np.linalg.norm(vectors, axis=-1, keepdims=True).clip(1e-9)
        z = x - self.mean
        return z / np.linalg.norm(z, axis=-1, keepdims=True).clip(1e-9)


def _piece(seg: Segment, start: float, end: float, words: list) -> Segment:
    sep = "" if seg.language in _CJK_LANGS else " "
    return Segment(
        seg.key,
        round(start, 3),
        round(end, 3),
        seg.speaker,
        sep.join(w.text for w in words),
        seg.language,
        seg.language_probability,
        list(words),
        seg.source,
        round(seg.overlap_s * (end - start) / max(seg.duration, 1e-9), 2),
        seg.avg_logprob,  # the decoded pieces' statistics: both parts came from them
        seg.no_speech_prob,
    )


def _best_change(seg: Segment, scores: np.ndarray, cuts: list[tuple[int, float]], speakers: list[str], margin: float):
    """(word index, cut time, left speaker, right speaker) of the strongest change, or None."""
    best, best_gain = None, margin
    for c, (i, cut) in enumerate(cuts):
        left, right = scores[2 * c], scores[2 * c + 1]
        a, b = int(np.argmax(left)), int(np.argmax(right))
        if a == b:
            continue
        # Each side prefers its own speaker over the other side's: the sum is the evidence for a change.
        gain = float(left[a] - left[b] + right[b] - right[a])
        if gain > best_gain and seg.speaker in (speakers[a], speakers[b]):
            best, best_gain = (i, cut, speakers[a], speakers[b]), gain
    return best


def _embedded(
    spans: list[tuple[float, float]],
    known: dict[tuple[float, float], np.ndarray],
    samples: np.ndarray,
    sr: int,
    space: SpeakerSpace,
    device: str,
) -> np.ndarray:
    """Projected CAM++ vectors of `spans`; only spans not in `known` are embedded (the pieces of
    a split segment are searched again over mostly the same spans), and `known` keeps them."""
    from .campplus import CamPlusEncoder

    if sr != 16000:
        raise ValueError(f"word-level speaker changes need 16 kHz audio, got {sr} Hz")
    need = [sp for sp in spans if sp not in known]
    if need:
        # batches of 16 as the diarizer's: a batch's activations grow with it (64 spans of 1.6 s: ~0.3 GB)
        vecs = space.project(CamPlusEncoder.load(device).embed(samples, need, batch=16))
        known.update(zip(need, vecs))
    return np.stack([known[sp] for sp in spans])


def _grid(seg: Segment, edge_s: float) -> list[tuple[float, float]]:
    """The gate's windows: the segment's first and last `edge_s` (the shortest piece: a single
    change leaves one of them wholly in the other voice), and between them, where a piece of
    another voice can sit with the segment's own on both sides, windows of _CONTEXT s tiling it."""
    edges = [(seg.start, seg.start + edge_s), (seg.end - edge_s, seg.end)]
    a, b = seg.start + edge_s, seg.end - edge_s
    if b - a < edge_s:
        return edges
    if b - a <= _CONTEXT:
        return [*edges, (a, b)]
    n = int(np.ceil((b - a - _CONTEXT) / _CONTEXT - 1e-9)) + 1
    return edges + [(float(t), float(t) + _CONTEXT) for t in np.linspace(a, b - _CONTEXT, n)]


def _gate_opens(scores: np.ndarray, own: int, gate: float) -> bool:
    """Whether a grid window (rows of `scores`) prefers the segment's own speaker `own` over
    every other by less than `gate`: then another voice may be in the segment."""
    others = np.delete(scores, own, axis=1)
    return bool((scores[:, own] - others.max(axis=1)).min() < gate)


def split_at_word_changes(
    segments: list[Segment],
    samples: np.ndarray,
    sr: int,
    space: SpeakerSpace | None,
    cfg: DiarizationConfig | None = None,
    counts: dict[str, int] | None = None,
) -> tuple[list[Segment], int]:
    """Segments split where the speaker changes between two words; returns (segments, splits).
    The piece length, the margin and the gate are `cfg.word_change_min_s`, `cfg.word_change_margin`
    and `cfg.word_change_gate` (None: every segment searched). `counts`, when given, receives the
    CAM++ spans embedded ("embedded") and the segments searched word by word ("searched")."""
    if space is None or len(space.centroids) < 2:
        return segments, 0
    cfg = cfg or DiarizationConfig()
    min_piece_s, margin = cfg.word_change_min_s, cfg.word_change_margin
    speakers = sorted(space.centroids)
    cents = np.stack([space.centroids[s] for s in speakers])
    out: list[Segment] = []
    splits = 0
    todo = [(seg, True) for seg in segments]  # the pieces of a split are searched without the gate
    known: dict[tuple[float, float], np.ndarray] = {}
    searched = 0
    while todo:
        seg, gated = todo.pop(0)
        words = sorted(seg.words, key=lambda w: (w.start, w.end))
        # Cuts between words, and before the first / after the last word: speech of another
        # voice that the ASR left without words (a short answer in another language) is cut off too.
        bounds = [(i, (words[i - 1].end + words[i].start) / 2) for i in range(1, len(words))]
        if words:
            bounds = [(0, words[0].start), *bounds, (len(words), words[-1].end)]
        cuts = [(i, cut) for i, cut in bounds if cut - seg.start >= min_piece_s and seg.end - cut >= min_piece_s]
        if not cuts or seg.speaker not in speakers:
            out.append(seg)
            continue
        if gated and cfg.word_change_gate is not None:
            grid = _embedded(_grid(seg, min_piece_s), known, samples, sr, space, cfg.device) @ cents.T
            if not _gate_opens(grid, speakers.index(seg.speaker), cfg.word_change_gate):
                out.append(seg)
                continue
        searched += 1
        spans = []
        for _, cut in cuts:
            spans += [(max(seg.start, cut - _CONTEXT), cut), (cut, min(seg.end, cut + _CONTEXT))]
        scores = _embedded(spans, known, samples, sr, space, cfg.device) @ cents.T
        change = _best_change(seg, scores, cuts, speakers, margin)
        if change is None:
            out.append(seg)
            continue
        i, cut, left_spk, right_spk = change
        left, right = _piece(seg, seg.start, cut, words[:i]), _piece(seg, cut, seg.end, words[i:])
        left.speaker, right.speaker = left_spk, right_spk
        splits += 1
        todo[:0] = [(left, False), (right, False)]
    out.sort(key=lambda s: (s.start, s.end))
    if counts is not None:
        counts.update(embedded=len(known), searched=searched)
    return out, splits
