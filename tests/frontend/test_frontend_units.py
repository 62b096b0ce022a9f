import json

import numpy as np
import pytest

from speechannotator.frontend.clustering import estimate_clusters
from speechannotator.frontend.reference import ReferenceError, load_reference_timeline
from speechannotator.frontend.refine import normalize_transcript
from speechannotator.frontend.segment_table import build_segments
from speechannotator.records import Turn


def _blobs(rng, centers, n):
    out, labels = [], []
    for k, c in enumerate(centers):
        v = c + 0.15 * rng.normal(size=(n, len(c)))
        out.append(v)
        labels += [k] * n
    return np.concatenate(out), np.array(labels)


@pytest.mark.parametrize("k", [1, 2, 3, 4])
def test_clustering_finds_speaker_count(k):
    rng = np.random.default_rng(k)
    centers = np.abs(rng.normal(size=(k, 64)))
    centers = centers / np.linalg.norm(centers, axis=1, keepdims=True)
    # Orthogonalize the centres so that speakers are clearly apart (cosine ~0).
    q, _ = np.linalg.qr(rng.normal(size=(64, k)))
    x, truth = _blobs(rng, q.T * 3, 30)
    res = estimate_clusters(x)
    assert res.num_speakers == k
    # Same partition up to label names.
    for lab in range(k):
        assert len(set(res.labels[truth == lab])) == 1


def test_clustering_respects_requested_count_and_bounds():
    rng = np.random.default_rng(0)
    q, _ = np.linalg.qr(rng.normal(size=(32, 3)))
    x, _ = _blobs(rng, q.T * 3, 20)
    assert estimate_clusters(x, num_speakers=2).num_speakers == 2
    assert estimate_clusters(x, max_speakers=2).num_speakers <= 2


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
