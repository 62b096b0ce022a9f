"""Quiet clean speech reads like the same speech at its own level (issue 24's done-when).

LibriVox at -35 dBFS (active speech power), stored as 16-bit PCM as a quiet recording is: no
background noise, the same speed class and about the same pause ratio as at its own level.
"""

from __future__ import annotations

import numpy as np
import pytest

from speechannotator.audio import Audio
from speechannotator.config import PriorsSettings
from speechannotator.evaluation.recordings import known_truth as C
from speechannotator.priors import extract_priors
from speechannotator.records import Segment, segment_key

SR = 16000


def _active_power(x: np.ndarray) -> float:
    a = x[np.abs(x) > 0.01 * float(np.abs(x).max())]
    return float((a**2).mean())


def _fields(x: np.ndarray, text: str) -> dict:
    seg = Segment(key=segment_key(0), speaker="A", start=0.0, end=len(x) / SR, text=text, language="en")
    evs = extract_priors(Audio(x, SR, "quiet", SR, 1), [seg], settings=PriorsSettings(dnsmos=False, distillmos=False))
    return {e.name: e.value for e in evs if e.key == seg.key}


@pytest.mark.parametrize("i", [1, 4])
def test_librivox_at_minus_35_dbfs_reads_like_its_own_level(i):
    x, text = C.librivox()[i]
    quiet = x * 10 ** (-35 / 20) / np.sqrt(_active_power(x))
    quiet = (np.round(quiet * 32767) / 32767).astype(np.float32)  # 16-bit PCM
    normal, low = _fields(x, text), _fields(quiet, text)
    assert low["scene.background"] == "none" and low.get("scene.noise_type", "none") == "none"
    assert low["rate.class"] == normal["rate.class"]
    assert abs(float(low["pause.ratio"]) - float(normal["pause.ratio"])) <= 0.05
    assert float(low["pause.ratio"]) < 0.3  # continuous reading, not "frequent pauses"


def test_silence_at_a_segments_edges_is_no_pause():
    """A segment reaches to the next turn (AMI dev00: 0.4-0.6 of "And he said" was edge silence,
    read as "frequent pauses"); the pause share counts the speech span only."""
    x, text = C.librivox()[1]
    edged = np.concatenate([np.zeros(SR, np.float32), x, np.zeros(SR, np.float32)])
    assert float(_fields(edged, text)["pause.ratio"]) < 0.2  # 2 s of 4.2 s were edges
