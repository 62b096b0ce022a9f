"""CAM++ embeddings on real recorded voices (scripts/fetch_real_voices.sh)."""

import numpy as np
import pytest

from speechannotator.evaluation.recordings import real_voices as rv
from speechannotator.frontend.campplus import EMBEDDING_DIM, CamPlusEncoder, fbank

needs_voices = pytest.mark.skipif(not rv.available(), reason="real voices not fetched (scripts/fetch_real_voices.sh)")
# Two women and two men, different languages and recording chains.
VOICES = ("nl_f", "allison", "nl_m", "librivox")


@pytest.fixture(scope="module")
def encoder():
    return CamPlusEncoder.load("cpu")


def test_fbank_frames_are_a_slice_of_the_clip():
    rng = np.random.default_rng(0)
    x = (0.1 * rng.standard_normal(16000)).astype(np.float32)
    whole = fbank(x)
    assert whole.shape == (1 + (16000 - 400) // 160, 80)
    np.testing.assert_allclose(fbank(x[1600:8000]), whole[10 : 10 + 1 + (6400 - 400) // 160], atol=1e-4)


@needs_voices
def test_same_voice_is_closer_than_other_voices(encoder):
    vecs, who = [], []
    for v in VOICES:
        for clip in rv.clips(v, limit=4):
            vecs.append(encoder.embed(clip.samples, [(0.0, clip.duration)])[0])
            who.append(v)
    x, who = np.array(vecs), np.array(who)
    assert x.shape == (len(who), EMBEDDING_DIM)
    np.testing.assert_allclose(np.linalg.norm(x, axis=1), 1.0, atol=1e-5)
    sim = x @ x.T
    for i in range(len(who)):
        same = (who == who[i]) & (np.arange(len(who)) != i)
        # Every clip is nearer (on average) to its own voice than to any other voice,
        # the two women included.
        own = sim[i, same].mean()
        for v in set(VOICES) - {who[i]}:
            assert own > sim[i, who == v].mean() + 0.2, (who[i], v)


@needs_voices
def test_embeddings_are_deterministic_and_independent_of_batch_mates(encoder):
    clip = rv.clips("nl_m", limit=1)[0]
    spans = [(0.0, 1.5), (0.5, 2.0), (1.0, 1.3)]
    a = encoder.embed(clip.samples, spans)
    b = encoder.embed(clip.samples, spans[:1])
    assert a.tobytes() == encoder.embed(clip.samples, spans).tobytes()
    np.testing.assert_allclose(a[0], b[0], atol=1e-5)
    assert encoder.embed(clip.samples, []).shape == (0, EMBEDDING_DIM)


def test_vectors_do_not_depend_on_the_process_thread_count(encoder):
    import torch

    from speechannotator.frontend.segmentation import Segmenter

    rng = np.random.default_rng(1)
    x = (0.1 * rng.standard_normal(12 * 16000)).astype(np.float32)
    spans = [(0.0, 1.5), (2.0, 3.5), (4.0, 9.0)]
    seg = Segmenter.load("cpu")
    before = torch.get_num_threads()
    runs = []
    try:
        for n in (1, 3):  # another library (Whisper's loader) moves the process's count
            torch.set_num_threads(n)
            runs.append((encoder.embed(x, spans).tobytes(), seg(x).probability.tobytes()))
            assert torch.get_num_threads() == n  # restored after the pass
    finally:
        torch.set_num_threads(before)
    assert runs[0] == runs[1]
