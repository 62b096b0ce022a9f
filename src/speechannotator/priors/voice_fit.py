"""How well each segment's voice fits the speaker the timeline gave it.

The diarizer leaves each segment its voice (``Segment.voice``: the unit mean of the CAM++ windows
whose centre lies in it). A segment's similarity is the cosine of that voice to the
duration-weighted mean voice of its speaker's *other* segments (so a speaker's only embedded
segment has none); its margin is that similarity minus the highest cosine to another speaker's
mean voice (all of that speaker's segments). A turn that sounds more like another voice of the
recording than like the rest of its own (margin < 0) is what a misassigned turn looks like; a TTS
corpus drops it rather than train a voice on someone else's speech (export/quality.py).

No threshold is chosen here: the two cosines are measurements. Measured (stop 38, reference
speaker of each segment = the one who talks most in it, a segment misassigned where that is not
its cluster's main speaker): on the 22 spliced conversations of ``HELD_OUT_3`` 4 of 278 segments
are misassigned; ranked by low similarity they come first (ROC AUC 0.94), and margin < 0 flags 1
of them and none of the 274 others. On the 14 AMI meeting clips 10 of 61 are (AUC 0.73; 1 flagged,
and 1 of the 51 others): most misassigned far-field turns sit in a recording the diarizer heard as
one voice, where there is no other voice to be closer to.
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from speechannotator.records import Segment


def voice_fit(segments: list[Segment]) -> dict[str, tuple[float | None, float | None]]:
    """segment key -> (similarity, margin) for every segment with a voice; None where the speaker
    has no other embedded segment (similarity) or the recording no other embedded voice (margin)."""
    embedded = [s for s in segments if s.voice is not None]
    voices = {s.key: _unit(np.asarray(s.voice, np.float64)) for s in embedded}
    weighted = {s.key: voices[s.key] * max(s.end - s.start, 0.0) for s in embedded}
    sums: dict[str, np.ndarray] = {}
    counts: Counter[str] = Counter()
    for s in embedded:
        sums[s.speaker] = sums[s.speaker] + weighted[s.key] if s.speaker in sums else weighted[s.key].copy()
        counts[s.speaker] += 1
    means = {spk: _unit(v) for spk, v in sums.items()}
    out: dict[str, tuple[float | None, float | None]] = {}
    for s in embedded:
        own = sums[s.speaker] - weighted[s.key]  # this segment left out
        similarity = float(voices[s.key] @ _unit(own)) if counts[s.speaker] > 1 and np.linalg.norm(own) > 0 else None
        others = [float(voices[s.key] @ m) for spk, m in means.items() if spk != s.speaker]
        out[s.key] = (similarity, None if similarity is None or not others else similarity - max(others))
    return out


def _unit(v: np.ndarray) -> np.ndarray:
    n = float(np.linalg.norm(v))
    return v / n if n > 0 else v
