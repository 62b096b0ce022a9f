"""pyannote segmentation-3.0 from the shipped weights: level independence and chunking."""

import numpy as np
import pytest

from speechannotator.evaluation.recordings import ami
from speechannotator.evaluation.recordings import real_voices as rv
from speechannotator.frontend.diarize import diarize
from speechannotator.frontend.segmentation import CHUNK_S, FRAME_STEP, SAMPLE_RATE, Segmenter, frames_in

needs_voices = pytest.mark.skipif(not rv.available(), reason="real voices not fetched (scripts/fetch_real_voices.sh)")


def test_chunks_cover_the_recording_and_frames_match_the_network():
    seg = Segmenter.load()
    starts = seg.chunk_starts(int(23.3 * SAMPLE_RATE), step_s=5.0)
    assert starts[0] == 0 and starts[-1] + CHUNK_S * SAMPLE_RATE == int(23.3 * SAMPLE_RATE)
    assert frames_in(int(CHUNK_S * SAMPLE_RATE)) == 589  # pyannote's 589 frames per 10 s
    act = seg(np.zeros(3 * SAMPLE_RATE, np.float32))
    assert act.activity.shape == (1, 589, 3) and act.activity.sum() == 0  # silence: nobody talks
    assert abs(act.frame_step_s - FRAME_STEP / SAMPLE_RATE) < 1e-12


@needs_voices
def test_a_quiet_recording_reads_like_a_loud_one():
    clip = rv.clips("librivox", limit=2)[0].samples.astype(np.float32)
    loud = clip / np.abs(clip).max() * 0.5
    quiet = loud * 10 ** (-40 / 20)  # 40 dB down (about -55 dBFS RMS)
    seg = Segmenter.load()
    a, b = seg(loud), seg(quiet)
    speech_a, speech_b = a.activity.max(axis=2), b.activity.max(axis=2)
    assert speech_a.mean() > 0.3
    assert (speech_a == speech_b).mean() > 0.95


@pytest.mark.skipif(not ami.available(), reason="AMI clips not fetched (scripts/fetch_real_voices.sh)")
def test_every_ami_clip_with_speech_gets_segments_even_a_quiet_far_one():
    # trn01 (-39 dBFS, four people far from the microphone): segmentation's mean P(speech) never
    # exceeds 0.4 there, and the absolute frame bar alone left it without any speech.
    (m,) = [m for m in ami.meetings(("train",)) if m.name == "trn01"]
    result = diarize(ami.load(m), SAMPLE_RATE)
    assert result.speech and result.num_speakers >= 1
    heard = [(t.start, t.end) for t in result.speech]
    assert any(a < e and s < b for a, b in heard for s, e, _ in m.rows)  # overlaps a reference turn
