"""Closed-Eval / Open-Eval pinned to hand-computed cases."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from speechannotator.evaluation.attributes import canonical_open, match_segments, score_attributes
from speechannotator.evaluation.cli import eval_group

from .conftest import record


def test_closed_fields_canonicalize_aliases_case_and_markers(char_bag):
    ref = [
        record(0, 1000, gender="男声", age="中年"),
        record(1000, 2000, gender="female", age="青年"),
        record(2000, 3000, gender="Male", age="elderly"),
    ]
    hyp = [
        record(0, 1000, gender="M", age="middle-aged"),
        record(1000, 2000, gender="女声。", age="purple"),
        record(2000, 3000, gender="", age="老年人"),
    ]
    s = score_attributes(ref, hyp, char_bag)
    means = s.field_means()
    assert means["gender"] == pytest.approx(100 * 2 / 3)  # blank prediction scores 0
    assert means["age"] == pytest.approx(100 * 2 / 3)  # "purple" is unparsable: 0
    assert s.fields["gender"].missing == 1 and s.fields["age"].missing == 1
    assert means["pitch"] is None  # not annotated in the reference: no denominator


def test_open_fields_are_clipped_cosines_with_missing_as_zero(char_bag):
    ref = [record(0, 1000, pitch="ab", speed="aa", tone="无"), record(1000, 2000, pitch="ab", speed="ab", tone="ab")]
    hyp = [record(0, 1000, pitch="AC.", speed="b", tone="none"), {"start_time": 1000, "end_time": 2000, "pitch": 7}]
    s = score_attributes(ref, hyp, char_bag)
    m = s.field_means()
    # pitch: cos(ab, ac) = 1/2 (case and edge punctuation canonicalized); then a non-string -> 0.
    assert m["pitch"] == pytest.approx(100 * (0.5 + 0) / 2)
    # speed: cos(aa, b) = 0 (orthogonal); second prediction missing -> 0.
    assert m["speed"] == 0.0
    # tone: 无 and none are the same empty marker -> 1; second missing -> 0.
    assert m["tone"] == pytest.approx(50.0)
    cats = s.category_means()
    assert cats["prosody_and_delivery"] == pytest.approx((25.0 + 0.0 + 50.0) / 3)
    assert s.macro() == pytest.approx((25.0 + 0.0 + 50.0) / 3)  # only annotated fields count


def test_unmatched_and_missing_recordings_stay_in_the_denominator(char_bag):
    refs = {"a": [record(0, 1000, gender="male")], "b": [record(0, 1000, gender="female")]}
    hyps = {"a": [record(5000, 6000, gender="male")]}  # no overlap with the reference segment
    s = score_attributes(refs, hyps, char_bag)
    assert s.field_means()["gender"] == 0.0 and s.unmatched_segments == 2
    assert s.fields["gender"].scored == 2


def test_matching_prefers_exact_then_overlap():
    ref = [
        {"start_time": 0, "end_time": 1000},
        {"start_time": 1000, "end_time": 2000},
        {"start_time": 3000, "end_time": 4000},
    ]
    hyp = [
        {"start_time": 1000, "end_time": 2000},
        {"start_time": 50, "end_time": 950},
        {"start_time": 3600, "end_time": 4600},
    ]
    assert match_segments(ref, hyp) == [1, 0, None]  # the last overlaps only 40 % (IoU 0.25)


def test_canonical_open():
    assert canonical_open("  音高偏高，句尾下降。 ") == "音高偏高,句尾下降"
    assert canonical_open("N/A") == canonical_open("无") == "none"
    assert canonical_open("   ") is None and canonical_open(None) is None


def test_use_encoder_ranks_paraphrase_above_unrelated(use_encoder):
    ref = [record(0, 1000, speed="语速较快且音节推进紧凑"), record(1000, 2000, speed="语速较快且音节推进紧凑")]
    hyp = [record(0, 1000, speed="说话速度很快，节奏紧凑"), record(1000, 2000, speed="背景里有持续的雨声")]
    s = score_attributes(ref, hyp, use_encoder)
    close = s.per_recording["recording"]["speed"].total
    assert 0.0 < s.field_means()["speed"] < 100.0
    one = score_attributes(ref[:1], hyp[:1], use_encoder).field_means()["speed"]
    two = score_attributes(ref[1:], hyp[1:], use_encoder).field_means()["speed"]
    assert one > two + 20 and close == pytest.approx((one + two) / 100)


def test_cli_attributes_json(tmp_path):
    ref = [
        record(0, 1000, gender="男声", age="青年", pitch="音高偏高"),
        record(1000, 2500, gender="女声", age="中年", pitch="无"),
    ]
    hyp = [
        record(0, 1000, gender="male", age="young adult", pitch="音高偏高"),
        record(1000, 2500, gender="男", age="中年", pitch="none"),
    ]
    (tmp_path / "r.json").write_text(json.dumps(ref, ensure_ascii=False), encoding="utf-8")
    (tmp_path / "h.json").write_text(json.dumps(hyp, ensure_ascii=False), encoding="utf-8")
    res = CliRunner().invoke(
        eval_group, ["attributes", "--ref", str(tmp_path / "r.json"), "--hyp", str(tmp_path / "h.json"), "--json"]
    )
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["fields"]["gender"] == 50.0 and out["fields"]["age"] == 100.0 and out["fields"]["pitch"] == 100.0
    assert out["categories"]["speaker_profile"] == 75.0
    assert out["macro"] == pytest.approx((50 + 100 + 100) / 3)
    assert out["encoder"].startswith("use-multilingual-v3")
