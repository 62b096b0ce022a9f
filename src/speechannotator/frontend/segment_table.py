"""Stage 4, the segment table: turns -> canonical speaker-homogeneous segments.

Consecutive turns of one speaker separated by a short pause are merged; over-long turns are
split at their longest internal pause (or, with none, at the quietest point near the
middle); fragments too short to carry words are dropped. Keys are assigned in time order.
"""

from __future__ import annotations

import numpy as np

from ..records import Segment, Turn, segment_key


def merge_turns(turns: list[Turn], max_gap: float, max_len: float) -> list[list[Turn]]:
    groups: list[list[Turn]] = []
    for t in sorted(turns, key=lambda t: (t.start, t.end)):
        last = groups[-1] if groups else None
        if (
            last
            and last[-1].speaker == t.speaker
            and t.start - last[-1].end <= max_gap
            and t.end - last[0].start <= max_len
        ):
            last.append(t)
        else:
            groups.append([t])
    return groups


def _split_point(group: list[Turn], samples: np.ndarray, sr: int) -> float:
    if len(group) > 1:
        gaps = [(group[i + 1].start - group[i].end, i) for i in range(len(group) - 1)]
        _, i = max(gaps)
        return (group[i].end + group[i + 1].start) / 2
    start, end = group[0].start, group[0].end
    mid = (start + end) / 2
    # The longest pause (run of quiet 50 ms frames) within +-25 % of the middle, cut at its
    # centre; among equally long pauses the one nearest the middle.
    a, b = int((mid - 0.25 * (end - start)) * sr), int((mid + 0.25 * (end - start)) * sr)
    frame = int(0.05 * sr)
    x = samples[a:b]
    if len(x) < 4 * frame:
        return mid
    n = len(x) // frame
    energy = (x[: n * frame].reshape(n, frame) ** 2).mean(axis=1)
    quiet = energy <= max(0.05 * float(np.median(energy)), float(energy.min()) * 1.5)
    best, best_score = None, None
    i = 0
    while i < n:
        if not quiet[i]:
            i += 1
            continue
        j = i
        while j < n and quiet[j]:
            j += 1
        centre = (i + j) / 2
        score = (j - i) - 0.5 * abs(centre - n / 2) / n  # length first, then nearness to the middle
        if best_score is None or score > best_score:
            best, best_score = centre, score
        i = j
    return (a + best * frame) / sr if best is not None else mid


def _split(group: list[Turn], samples: np.ndarray, sr: int, max_len: float) -> list[tuple[float, float]]:
    start, end = group[0].start, group[-1].end
    if end - start <= max_len:
        return [(start, end)]
    cut = _split_point(group, samples, sr)
    left = [t for t in group if t.end <= cut] or [Turn(start, cut, group[0].speaker)]
    right = [t for t in group if t.start >= cut] or [Turn(cut, end, group[0].speaker)]
    if len(group) == 1 or left == group or right == group:
        left, right = [Turn(start, cut, group[0].speaker)], [Turn(cut, end, group[0].speaker)]
    return _split(left, samples, sr, max_len) + _split(right, samples, sr, max_len)


def build_segments(
    turns: list[Turn],
    samples: np.ndarray,
    sr: int,
    *,
    max_len: float = 20.0,
    min_len: float = 0.4,
    max_gap: float = 0.5,
) -> list[Segment]:
    spans: list[tuple[float, float, str, float]] = []
    for group in merge_turns(turns, max_gap, max_len):
        for a, b in _split(group, samples, sr, max_len):
            spans.append((a, b, group[0].speaker, _overlap_in(group, a, b)))
    spans = [s for s in spans if s[1] - s[0] >= min_len]
    spans.sort()
    return [
        Segment(segment_key(i), round(a, 3), round(b, 3), spk, overlap_s=ov) for i, (a, b, spk, ov) in enumerate(spans)
    ]


def _overlap_in(group: list[Turn], a: float, b: float) -> float:
    """Overlapped seconds of the group's turns inside [a, b] (a turn's share by its length inside)."""
    total = 0.0
    for t in group:
        inside = min(b, t.end) - max(a, t.start)
        if inside > 0 and t.overlap_s > 0:
            total += t.overlap_s * inside / max(t.end - t.start, 1e-9)
    return round(total, 2)


def rekey(segments: list[Segment]) -> list[Segment]:
    """Drop segments without words and renumber keys in time order."""
    kept = sorted((s for s in segments if s.text.strip()), key=lambda s: (s.start, s.end))
    for i, s in enumerate(kept):
        s.key = segment_key(i)
    return kept
