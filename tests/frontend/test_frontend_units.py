import json

import numpy as np
import pytest

from speechannotator.config import DiarizationConfig
from speechannotator.frontend.diarize import _cluster, _reconstruct, _to_turns, _Windows
from speechannotator.frontend.reference import ReferenceError, load_reference_timeline
from speechannotator.frontend.refine import normalize_transcript
from speechannotator.frontend.segment_table import build_segments
from speechannotator.frontend.segmentation import ChunkActivity
from speechannotator.records import Turn

RELATIVE = DiarizationConfig().frame_speech_relative  # the shipped bar, as diarize() passes it


def _windows(x: np.ndarray, seconds: float = 1.5) -> _Windows:
    """Windows of `seconds` one after another (each its own stretch of the recording)."""
    n = len(x)
    z = np.zeros(n, int)
    start = np.arange(n) * seconds
    return _Windows(z, z, z, z, np.full(n, seconds), x, start, start + seconds)


def _blobs(rng, centers, n):
    out, labels = [], []
    for k, c in enumerate(centers):
        v = c + 0.05 * rng.normal(size=(n, len(c)))
        out.append(v)
        labels += [k] * n
    x = np.concatenate(out)
    return x / np.linalg.norm(x, axis=1, keepdims=True), np.array(labels)


@pytest.mark.parametrize("k", [1, 2, 3, 4])
def test_clustering_finds_speaker_count(k):
    rng = np.random.default_rng(k)
    # Orthogonal centres: speakers clearly apart (cosine ~0), windows ~0.8 from their centre.
    q, _ = np.linalg.qr(rng.normal(size=(64, k)))
    x, truth = _blobs(rng, q.T * 0.6, 30)
    label, cent, _ = _cluster(_windows(x), DiarizationConfig())
    assert len(cent) == k
    # Same partition up to label names.
    assert len(set(zip(truth.tolist(), label.tolist()))) == k


def test_clustering_respects_requested_count_bounds_and_drops_small_clusters():
    rng = np.random.default_rng(0)
    q, _ = np.linalg.qr(rng.normal(size=(32, 3)))
    x, truth = _blobs(rng, q.T * 0.6, 20)
    assert len(_cluster(_windows(x), DiarizationConfig(num_speakers=2))[1]) == 2
    assert len(_cluster(_windows(x), DiarizationConfig(max_speakers=2))[1]) == 2
    # A voice heard for a few windows only (under min_cluster_s) is no speaker: its windows
    # join the nearest voice.
    few = np.concatenate([np.flatnonzero(truth < 2), np.flatnonzero(truth == 2)[:2]])
    label, cent, _ = _cluster(_windows(x[few]), DiarizationConfig(min_cluster_s=4.0))
    assert len(cent) == 2 and len(label) == len(few)


def test_a_voice_must_cover_a_share_of_a_long_recording():
    # Strays grow with a recording: four windows of a fifth direction (6 s) are a voice beside
    # four voices of 20 windows (120 s of speech), but not beside four of 200 (1200 s: under
    # min_cluster_share, 1 %), where they join the nearest voice.
    rng = np.random.default_rng(3)
    q, _ = np.linalg.qr(rng.normal(size=(32, 5)))
    for n, voices in ((20, 5), (200, 4)):
        x, truth = _blobs(rng, q.T * 0.6, n)
        keep = np.concatenate([np.flatnonzero(truth < 4), np.flatnonzero(truth == 4)[:4]])
        label, cent, _ = _cluster(_windows(x[keep]), DiarizationConfig())
        assert len(cent) == voices and len(label) == len(keep)
        assert len(_cluster(_windows(x[keep]), DiarizationConfig(min_cluster_share=0.0))[1]) == 5


def test_a_widely_spread_voice_is_joined_by_its_mean_direction():
    rng = np.random.default_rng(1)
    q, _ = np.linalg.qr(rng.normal(size=(64, 2)))
    # One voice through a room: its windows' pair similarity (~0.3) is under the linkage stop,
    # so linkage alone cuts it into pieces; the pieces' mean directions nearly coincide.
    spread = q[:, 0] * 0.6 + 0.09 * rng.normal(size=(100, 64))
    tight = q[:, 1] * 0.6 + 0.05 * rng.normal(size=(30, 64))
    x = np.concatenate([spread, tight])
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    label, cent, _ = _cluster(_windows(x), DiarizationConfig())
    assert len(cent) == 2 and len(set(label[:100].tolist())) == 1 and label[0] != label[100]
    assert len(_cluster(_windows(x), DiarizationConfig(merge_similarity=None))[1]) > 2


def test_small_pieces_heard_beside_every_voice_make_a_voice_of_their_own():
    rng = np.random.default_rng(3)
    q, _ = np.linalg.qr(rng.normal(size=(64, 2)))
    # A long voice (20 windows) and a short one in four pieces of two windows, each piece
    # (3 s) under min_cluster_s and under the linkage stop from the others (~0.45).
    loud = q[:, 0] * 0.6 + 0.05 * rng.normal(size=(20, 64))
    base = q[:, 1] * 0.6
    pieces = [base + 0.066 * rng.normal(size=64) + 0.05 * rng.normal(size=(2, 64)) for _ in range(4)]
    x = np.concatenate([loud, *pieces])
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    w = _windows(x)
    cfg = DiarizationConfig(min_cluster_s=4.0, merge_similarity=None)
    # Without segmentation's word the pieces are dropped into the long voice ...
    assert len(_cluster(w, cfg)[1]) == 1
    # ... but each piece shares a chunk with the long voice under another local speaker.
    w.chunk = np.concatenate([np.arange(20) % 4, np.repeat(np.arange(4), 2)])
    w.slot = np.concatenate([np.zeros(20, int), np.ones(8, int)])
    label, cent, _ = _cluster(w, cfg)
    assert len(cent) == 2 and len(set(label[20:].tolist())) == 1 and label[0] != label[20]


def test_a_voice_of_short_turns_heard_beside_every_voice_is_a_voice_of_its_own():
    rng = np.random.default_rng(5)
    q, _ = np.linalg.qr(rng.normal(size=(64, 2)))
    # A long voice (20 windows) and one that talks in short turns: one window with min_embed_s
    # of clean speech (clustered, covering 1.5 s, under min_cluster_s) and three with less
    # (assigned, not clustered), at other times of the recording.
    loud = q[:, 0] * 0.6 + 0.05 * rng.normal(size=(20, 64))
    short = q[:, 1] * 0.6 + 0.05 * rng.normal(size=(4, 64))
    x = np.concatenate([loud, short])
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    start = np.arange(24) * 1.5
    seconds = np.concatenate([np.full(21, 1.5), np.full(3, 0.5)])
    slot = np.concatenate([np.zeros(20, int), np.ones(4, int)])

    def windows(chunk: np.ndarray, n: int = 24) -> _Windows:
        z = np.zeros(n, int)
        return _Windows(chunk[:n], slot[:n], z, z, seconds[:n], x[:n], start[:n], start[:n] + 1.5)

    beside = np.concatenate([np.arange(20) % 4, np.arange(4)])  # each of its windows in a chunk of the long one
    label, cent, _ = _cluster(windows(beside), DiarizationConfig())
    assert len(cent) == 2 and len(set(label[20:].tolist())) == 1 and label[0] != label[20]
    # Never heard beside the long voice (its own chunks): a piece of it, dropped into it.
    assert len(_cluster(windows(np.concatenate([np.arange(20) % 4, np.full(4, 9)])), DiarizationConfig())[1]) == 1
    # Heard beside it, but all its windows cover under min_cluster_s: no voice.
    assert len(_cluster(windows(beside, 21), DiarizationConfig())[1]) == 1


def test_a_frame_heard_by_one_of_two_chunks_is_speech_when_their_mean_probability_says_so():
    # Two chunks of 40 frames overlapping by 20; one local speaker talks in frames 10-30 of the
    # recording, but only the first chunk hears its frames 20-30 (the second is unsure there).
    activity = np.zeros((2, 40, 3))
    activity[0, 10:30, 0] = 1
    probability = np.zeros((2, 40))
    probability[0, 10:30] = 0.9
    probability[1, 0:10] = 0.2  # recording frames 20-30: mean (0.9 + 0.2) / 2 = 0.55
    act = ChunkActivity(np.array([0.0, 20 * 270 / 16000]), activity, probability)
    z = np.zeros(1, int)
    w = _Windows(z, z, np.array([10]), np.array([30]), np.ones(1), np.ones((1, 4)), z * 0.0, z + 1.0)
    binary, _ = _reconstruct(act, w, z, 1, 60, speech_threshold=0.4, relative=RELATIVE)
    assert binary[10:30, 0].all() and not binary[:10, 0].any() and not binary[30:, 0].any()
    # A stricter threshold leaves the frames only one chunk is sure of.
    binary, _ = _reconstruct(act, w, z, 1, 60, speech_threshold=0.6, relative=RELATIVE)
    assert binary[10:20, 0].all() and not binary[20:30, 0].any()


def test_a_recording_segmentation_is_unsure_of_everywhere_still_gets_its_most_confident_frames():
    # One chunk; a local speaker in frames 10-30, but P(speech) never reaches the 0.4 bar (a
    # quiet, far recording: AMI trn01). The bar is then relative to the recording's highest.
    activity = np.zeros((1, 40, 3))
    activity[0, 10:30, 0] = 1
    probability = np.full((1, 40), 0.05)
    probability[0, 10:30] = 0.3
    act = ChunkActivity(np.array([0.0]), activity, probability)
    z = np.zeros(1, int)
    w = _Windows(z, z, np.array([10]), np.array([30]), np.ones(1), np.ones((1, 4)), z * 0.0, z + 1.0)
    binary, _ = _reconstruct(act, w, z, 1, 40, speech_threshold=0.4, relative=RELATIVE)
    assert binary[10:30, 0].all() and not binary[:10, 0].any() and not binary[30:, 0].any()
    binary, _ = _reconstruct(act, w, z, 1, 40, speech_threshold=0.4, relative=1.0)
    assert not binary.any()  # a bar at the highest itself: nothing exceeds it


def test_subsampled_clustering_matches_whole_file_clustering():
    rng = np.random.default_rng(7)
    q, _ = np.linalg.qr(rng.normal(size=(64, 3)))
    # Speaker 2 appears only in the last quarter (a late joiner in a long meeting).
    labels = np.concatenate([rng.integers(0, 2, 900), rng.integers(0, 3, 300)])
    x = q.T[labels] * 0.6 + 0.05 * rng.normal(size=(1200, 64))
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    whole, c1, _ = _cluster(_windows(x), DiarizationConfig(max_points=5000))
    sub, c2, _ = _cluster(_windows(x), DiarizationConfig(max_points=200))
    assert len(c1) == len(c2) == 3
    assert len(set(zip(whole.tolist(), sub.tolist()))) == 3
    assert len(set(zip(labels.tolist(), sub.tolist()))) == 3


def test_overlap_is_kept_per_speaker_and_counted_in_exclusive_turns():
    step = 270 / 16000
    n = int(6.0 / step)
    binary = np.zeros((n, 2), bool)
    binary[: int(3.5 / step), 0] = True  # A: 0-3.5 s
    binary[int(3.0 / step) :, 1] = True  # B: 3-6 s, half a second over A
    score = binary * np.array([0.6, 0.9])
    turns, speech = _to_turns(binary, score, DiarizationConfig(), 6.0)
    assert [t.speaker for t in speech] == ["S0", "S1"] and speech[0].end > speech[1].start
    assert [t.speaker for t in turns] == ["S0", "S1"]
    assert turns[0].end == turns[1].start  # exclusive: the stronger voice takes the overlap
    assert abs(turns[1].overlap_s - 0.5) < 0.05 and turns[0].overlap_s == 0.0


def test_segment_table_merges_and_splits():
    sr = 16000
    samples = np.ones(sr * 60, np.float32) * 0.1
    turns = [Turn(0.0, 3.0, "A"), Turn(3.3, 6.0, "A"), Turn(6.5, 8.0, "B"), Turn(8.1, 8.2, "A"), Turn(9.0, 40.0, "B")]
    segs = build_segments(turns, samples, sr, max_len=20.0, min_len=0.4)
    spans = [(s.start, s.end, s.speaker) for s in segs]
    assert spans[0] == (0.0, 6.0, "A")  # merged across a 0.3 s pause
    assert all(e - s <= 20.0 for s, e, _ in spans)
    assert not any(sp == "A" and e - s < 0.4 for s, e, sp in spans)  # the 0.1 s fragment is gone
    long_b = [x for x in spans if x[2] == "B" and x[0] >= 9.0]
    assert len(long_b) == 2 and long_b[0][1] == long_b[1][0]  # split into two contiguous halves
    assert [s.key for s in segs] == [f"seg_{i:05d}" for i in range(len(segs))]
    # Overlapped speech travels with its turn into the segment (and is shared when a turn is split).
    over = [Turn(0.0, 4.0, "A", True, 1.0), Turn(4.0, 30.0, "B", True, 2.6)]
    got = build_segments(over, samples, sr, max_len=20.0, min_len=0.4)
    assert got[0].overlap_s == 1.0 and abs(sum(s.overlap_s for s in got[1:]) - 2.6) < 0.02


def test_normalize_transcript():
    assert normalize_transcript("你 好 , 世界", "zh") == "你好，世界。"
    assert normalize_transcript("  hello   world ,again ", "en") == "Hello world, again."
    assert normalize_transcript("", "en") == ""


def test_reference_formats(tmp_path):
    out = [{"speaker_id": "spk_01", "start_time": 1000, "end_time": 2500, "text": "你好"}]
    seglst = [
        {"session_id": "a", "speaker": "x", "start_time": 0.5, "end_time": 1.0, "words": "hi there"},
        {"session_id": "b", "speaker": "y", "start_time": 0.1, "end_time": 0.2, "words": "other"},
    ]
    (tmp_path / "o.json").write_text(json.dumps(out))
    (tmp_path / "s.json").write_text(json.dumps(seglst))
    (tmp_path / "r.rttm").write_text(
        "SPEAKER a 1 0.50 1.25 hi_there <NA> x <NA> <NA>\nSPEAKER a 1 2.0 1.0 <NA> <NA> y <NA> <NA>\n"
    )
    s = load_reference_timeline(tmp_path / "o.json", "o")
    assert (s[0].start, s[0].end, s[0].speaker, s[0].text, s[0].source) == (1.0, 2.5, "spk_01", "你好", "reference")
    s = load_reference_timeline(tmp_path / "s.json", "a")
    assert len(s) == 1 and s[0].text == "hi there"
    s = load_reference_timeline(tmp_path / "r.rttm", "a")
    assert [(x.start, x.end, x.speaker, x.text) for x in s] == [(0.5, 1.75, "x", "hi there"), (2.0, 3.0, "y", "")]
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(ReferenceError, match="malformed"):
        load_reference_timeline(tmp_path / "bad.json", "bad")


def test_reference_timeline_segments_carry_the_seconds_other_speakers_cover(tmp_path):
    from speechannotator.frontend.reference import load_reference_timeline

    turns = [
        {"session_id": "x", "speaker": "A", "start_time": 0.0, "end_time": 2.0, "words": "one"},
        {"session_id": "x", "speaker": "B", "start_time": 1.5, "end_time": 3.0, "words": "two"},
        {"session_id": "x", "speaker": "A", "start_time": 2.5, "end_time": 4.0, "words": "three"},
        {"session_id": "x", "speaker": "A", "start_time": 5.0, "end_time": 6.0, "words": "four"},
    ]
    (tmp_path / "x.json").write_text(json.dumps(turns))
    segs = load_reference_timeline(tmp_path / "x.json", "x")
    assert [s.overlap_s for s in segs] == [0.5, 1.0, 0.5, 0.0]


def test_a_turn_cut_after_a_comma_ends_with_one_full_stop():
    # AMI dev00 "we have in the group,." / "And he said,."; the same in Chinese
    assert normalize_transcript("we have in the group,", "en") == "We have in the group."
    assert normalize_transcript("And he said ,", "en") == "And he said."
    assert normalize_transcript("我们在，", "zh") == "我们在。"
    assert normalize_transcript(",", "en") == ""
