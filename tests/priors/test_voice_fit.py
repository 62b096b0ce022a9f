"""A segment's fit to its speaker's voice (priors/voice_fit.py)."""

import numpy as np

from speechannotator.priors.voice_fit import voice_fit
from speechannotator.records import Segment


def _seg(i: int, speaker: str, voice, start: float, end: float) -> Segment:
    v = None if voice is None else list(np.asarray(voice, np.float64) / np.linalg.norm(voice))
    return Segment(key=f"seg_{i:05d}", speaker=speaker, start=start, end=end, text="", voice=v)


def test_a_turn_that_sounds_like_the_other_speaker_has_a_negative_margin():
    a, b = np.array([1.0, 0.1, 0.0]), np.array([0.0, 1.0, 0.2])
    segs = [
        _seg(0, "S0", a, 0, 3),
        _seg(1, "S1", b, 3, 6),
        _seg(2, "S0", a + [0.0, 0.05, 0.05], 6, 9),
        _seg(3, "S0", b + [0.05, 0.0, 0.0], 9, 11),  # the diarizer gave S1's voice to S0
        _seg(4, "S1", b, 11, 14),
        _seg(5, "S1", None, 14, 15),  # no voice: no fit
    ]
    fit = voice_fit(segs)
    assert set(fit) == {s.key for s in segs[:5]}
    sim, margin = fit["seg_00003"]
    assert sim is not None and margin is not None and margin < 0
    for key in ("seg_00000", "seg_00002", "seg_00001", "seg_00004"):
        assert fit[key][1] is not None and fit[key][1] > 0, key
    # leave-one-out: the segment's own voice is not part of the mean it is compared with
    assert fit["seg_00001"][0] == np.float64(np.asarray(segs[4].voice) @ np.asarray(segs[1].voice))


def test_an_only_segment_or_an_only_voice_has_no_comparison():
    v = [1.0, 0.0]
    fit = voice_fit([_seg(0, "S0", v, 0, 2), _seg(1, "S1", [0.0, 1.0], 2, 4), _seg(2, "S1", [0.1, 1.0], 4, 6)])
    assert fit["seg_00000"] == (None, None)  # S0 has no other segment
    one = voice_fit([_seg(0, "S0", v, 0, 2), _seg(1, "S0", [0.9, 0.1], 2, 4)])
    assert one["seg_00000"][0] is not None and one["seg_00000"][1] is None  # no other voice to be closer to
