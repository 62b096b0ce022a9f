"""The fixed-timeline setting through the CLI, and diarization behaviour on real speech."""

import json

import numpy as np
import pytest
from click.testing import CliRunner

from speechannotator.cli import main
from speechannotator.config import DiarizationConfig
from speechannotator.evaluation.recordings import real_voices as rv
from speechannotator.evaluation.recordings.espeak_conversations import build_conversation, materialize, reference_seglst
from speechannotator.frontend.diarize import diarize
from speechannotator.frontend.vad import detect_speech
from synth import SR


@pytest.fixture(scope="module")
def conv3(tmp_path_factory):
    d = tmp_path_factory.mktemp("conv3")
    conv = build_conversation(3, 8, seed=5, overlap_prob=0.0)
    return conv, materialize(conv, d, "talk")


def _rttm(rows, stem):
    return "".join(
        f"SPEAKER {stem} 1 {a:.3f} {b - a:.3f} {text.replace(' ', '_')} <NA> {spk} <NA> <NA>\n"
        for a, b, spk, text in rows
    )


@pytest.mark.parametrize("fmt", ["json", "seglst", "rttm"])
def test_fixed_timeline_replaces_diarization_and_asr(conv3, tmp_path, fmt):
    conv, audio = conv3
    rows = [(u.start, u.end, u.speaker, u.text) for u in sorted(conv.utterances, key=lambda u: u.start)]
    if fmt == "json":
        ref = audio.with_suffix(".json")
    elif fmt == "seglst":
        ref = tmp_path / "talk.seglst.json"
        ref.write_text(
            json.dumps(
                reference_seglst(conv, "talk")
                + [{"session_id": "other", "speaker": "z", "start_time": 0.0, "end_time": 1.0, "words": "not this one"}]
            )
        )
    else:
        ref = tmp_path / "talk.rttm"
        ref.write_text(_rttm(rows, "talk"))
    out = tmp_path / "out"
    res = CliRunner().invoke(
        main,
        [
            "annotate",
            str(audio),
            "-o",
            str(out),
            "--timeline",
            str(ref),
            "--no-priors",
            "--no-review",
            "-q",
            "--no-print",
        ],
    )
    assert res.exit_code == 0, res.output
    data = json.loads((out / "talk.json").read_text())
    assert len(data) == len(rows)
    ids = {}
    for d, (a, b, spk, text) in zip(data, rows):
        # RTTM carries durations: its end times may differ by a millisecond of rounding.
        assert abs(d["start_time"] - a * 1000) <= 1 and abs(d["end_time"] - b * 1000) <= 1.5
        assert ids.setdefault(spk, d["speaker_id"]) == d["speaker_id"]  # one id per reference speaker
        assert d["text"].rstrip(".").lower().replace(",", "") == text.rstrip(".").lower().replace(",", "")
    assert len(set(ids.values())) == 3


def test_fixed_timeline_errors_are_one_line(conv3, tmp_path):
    _, audio = conv3
    late = tmp_path / "late.rttm"
    late.write_text("SPEAKER talk 1 500.0 2.0 hello <NA> a <NA> <NA>\n")
    res = CliRunner().invoke(
        main, ["annotate", str(audio), "-o", str(tmp_path / "o1"), "--timeline", str(late), "-q", "--no-print"]
    )
    assert res.exit_code == 1
    err = [line for line in res.output.splitlines() if line.startswith("speechannotator: error")]
    assert len(err) == 1 and "starting after the audio ends" in err[0]
    bad = tmp_path / "bad.rttm"
    bad.write_text("SPEAKER talk 1 0.5\n")
    res = CliRunner().invoke(
        main, ["annotate", str(audio), "-o", str(tmp_path / "o2"), "--timeline", str(bad), "-q", "--no-print"]
    )
    assert res.exit_code == 1 and "expected at least 8" in res.output


def test_three_speakers_counted_and_bounds_respected(conv3):
    conv, _ = conv3
    x = conv.samples
    regions = detect_speech(x, SR)
    free = diarize(x, SR, regions)
    assert free.num_speakers == 3
    # Every reference utterance's middle lies in a turn of the speaker that utterance's speaker maps to.
    mapping = {}
    for u in conv.utterances:
        mid = (u.start + u.end) / 2
        turn = min(
            free.turns, key=lambda t: 0 if t.start <= mid <= t.end else min(abs(mid - t.start), abs(mid - t.end))
        )
        assert mapping.setdefault(u.speaker, turn.speaker) == turn.speaker
    assert diarize(x, SR, regions, DiarizationConfig(max_speakers=2)).num_speakers == 2
    assert diarize(x, SR, regions, DiarizationConfig(num_speakers=4)).num_speakers >= 3
    assert diarize(x, SR, regions, DiarizationConfig(min_speakers=3, threshold=0.3)).num_speakers == 3


@pytest.mark.skipif(not rv.available(), reason="real voices not fetched (scripts/fetch_real_voices.sh)")
def test_ids_stay_consistent_when_clustering_is_subsampled():
    """A recording of the same 3-voice conversation three times: subsampled clustering (the
    rest of the windows by nearest centroid) gives every repetition of a turn the same id, finds
    the voices that clustering every window finds, and never gives two voices one id.

    The Dutch actor speaks two turns here (2.4 s and 2.5 s, Allison's backchannel inside the
    second), whose windows agree with each other no better (mean pair cosine 0.33-0.36) than the
    second's do with Allison's (0.34-0.40); tripled, each turn's windows cover more than
    min_cluster_s. Ids are therefore checked for consistency and purity, not for a count of
    three: linkage alone counted three here by giving the actor's second turn Allison's id."""
    conv = rv.build(rv.Spec("t_mfm", ("nl_m", "allison", "librivox"), 8, seed=2, overlap_prob=0.0, pool_limit=30))
    x = np.concatenate([conv.samples] * 3)
    dia = diarize(x, SR, None, DiarizationConfig(max_points=60))
    whole = diarize(x, SR, None, DiarizationConfig())
    assert dia.num_windows > 60 and dia.num_speakers == whole.num_speakers
    assert 3 <= dia.num_speakers <= 4
    duration = len(conv.samples) / SR
    voice_of: dict[str, str] = {}
    for u in conv.utterances:
        if u.end - u.start < 1.5:
            continue  # backchannels: too short to carry an id on their own
        ids = set()
        for rep in range(3):
            mid = rep * duration + (u.start + u.end) / 2
            turn = min(
                dia.turns, key=lambda t: 0 if t.start <= mid <= t.end else min(abs(mid - t.start), abs(mid - t.end))
            )
            ids.add(turn.speaker)
        assert len(ids) == 1, (u, ids)
        assert voice_of.setdefault(ids.pop(), u.speaker) == u.speaker, (u, voice_of)


@pytest.mark.skipif(not rv.available(), reason="real voices not fetched (scripts/fetch_real_voices.sh)")
def test_overlapping_change_gets_boundary_near_the_truth_and_overlap_is_kept():
    conv = rv.build(rv.Spec("t_mf_ov", ("nl_f", "nl_m"), 8, seed=4, overlap_prob=1.0, pool_limit=30))
    dia = diarize(conv.samples, SR)
    utts = sorted(conv.utterances, key=lambda u: u.start)
    errors = []
    for prev, nxt in zip(utts, utts[1:]):
        if prev.speaker == nxt.speaker or nxt.start >= prev.end:
            continue
        # The change from prev to nxt: the hypothesis boundary nearest the truth.
        truth = (nxt.start + prev.end) / 2
        cands = [t.start for t in dia.turns if abs(t.start - truth) < 3.0]
        errors.append(min(abs(c - truth) for c in cands) if cands else 3.0)
    assert errors and float(np.median(errors)) < 0.6, errors
    # Overlapped speech is found and kept: on the per-speaker rows and in the exclusive turns.
    assert any(t.overlap for t in dia.speech)
    assert sum(t.overlap_s for t in dia.turns) > 0.3
