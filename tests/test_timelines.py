"""The one timeline reader: every format users pass gives the same SegLST turns, exact times,
and errors that name the item or line at fault; both callers (the fixed-timeline setting and
Timeline-Eval) read through it."""

from __future__ import annotations

import json
from decimal import Decimal as D

import pytest

from speechannotator.evaluation.io import EvalInputError, load_timeline
from speechannotator.frontend.reference import ReferenceError, load_reference_timeline
from speechannotator.timelines import TimelineError, Turn, read_timeline, session_name

# One recording "talk", two turns, written in each format.
OUTPUT = [
    {"speaker_id": "A", "start_time": 100, "end_time": 2350, "text": "hello there"},
    {"speaker_id": "B", "start_time": 2000, "end_time": 4000, "text": "你好"},
]
SEGLST = [
    {"session_id": "talk", "speaker": "A", "start_time": 0.1, "end_time": 2.35, "words": ["hello", "there"]},
    {"session_id": "talk", "speaker": "B", "start_time": "2.0", "end_time": 4, "words": "你好"},
]
RTTM = "SPEAKER talk 1 0.1 2.25 hello_there <NA> A <NA> <NA>\nSPKR-INFO talk 1 <NA> <NA> <NA> unknown A <NA>\n"
RTTM += "SPEAKER talk 1 2.0 2.0 你好 <NA> B <NA> <NA>\n"
STM = ";; a comment\ntalk 1 A 0.1 2.35 <o,f0,male> hello there\ntalk 1 B 2.0 4.0 你好\n"


def _write(tmp_path, name: str, content) -> object:
    p = tmp_path / name
    p.write_text(content if isinstance(content, str) else json.dumps(content, ensure_ascii=False), encoding="utf-8")
    return p


@pytest.mark.parametrize(
    "name,content",
    [("talk.json", OUTPUT), ("talk.seglst.json", SEGLST), ("talk.rttm", RTTM), ("talk.stm", STM)],
)
def test_every_format_reads_to_the_same_turns(tmp_path, name, content):
    p = _write(tmp_path, name, content)
    turns = read_timeline(p)
    got = [(t.speaker, t.start_time, t.end_time, t.words) for t in turns]
    assert got == [("A", D("0.1"), D("2.35"), "hello there"), ("B", D("2"), D("4"), "你好")]
    assert session_name(p) == "talk"
    assert {t.session_id for t in turns} == ({None} if name == "talk.json" else {"talk"})
    # Both callers read it: the fixed timeline (float seconds) and Timeline-Eval (exact seconds).
    segs = load_reference_timeline(p, "talk")
    assert [(s.speaker, s.start, s.end, s.text) for s in segs] == [
        ("A", 0.1, 2.35, "hello there"),
        ("B", 2.0, 4.0, "你好"),
    ]
    assert [(s.speaker, s.start, s.end) for s in load_timeline(p)["talk"]] == [
        ("A", D("0.1"), D("2.35")),
        ("B", D("2"), D("4")),
    ]


def test_milliseconds_become_exact_seconds():
    from speechannotator.timelines import turns_from_json

    (t,) = turns_from_json([{"speaker_id": "A", "start_time": 1001, "end_time": 1003, "text": None}])
    assert t == Turn(None, "A", D("1.001"), D("1.003"), "", "item 0")


@pytest.mark.parametrize(
    "name,content,message",
    [
        (
            "x.json",
            [{"speaker": "A", "start_time": 0, "end_time": float("nan")}],
            "item 0: end_time nan is not a finite",
        ),
        ("x.json", [{"speaker": "A", "start_time": True, "end_time": 1}], "item 0: start_time True is not a number"),
        ("x.json", [{"speaker": "A", "end_time": 1}], "item 0: missing start_time"),
        ("x.json", [{"words": "hi"}], "item 0: missing speaker_id (output format) or speaker (SegLST)"),
        ("x.json", [[1, 2]], "item 0 is not an object"),
        ("x.json", {"speaker": "A"}, "holds no JSON array"),
        ("x.json", "{not json", "is malformed JSON"),
        ("x.rttm", "SPEAKER x 1 0.0 1.0\n", "line 1 has 5 fields, expected at least 8"),
        ("x.rttm", "SPEAKER x 1 soon 1.0 <NA> <NA> A <NA> <NA>\n", "line 1: onset 'soon' is not a number"),
        ("x.stm", ";;\nx 1 A 0.0\n", "line 2: STM needs"),
        ("x.stm", "x 1 A 0.0 inf hi\n", "line 1: end 'inf' is not a finite number"),
    ],
)
def test_errors_name_the_item_or_line_for_both_callers(tmp_path, name, content, message):
    p = _write(tmp_path, name, content)
    with pytest.raises(TimelineError) as err:
        read_timeline(p)
    assert str(err.value).startswith(message)
    with pytest.raises(ReferenceError) as ref_err:
        load_reference_timeline(p, "x")
    assert str(ref_err.value) == f"timeline {name} {err.value}"
    with pytest.raises(EvalInputError) as eval_err:
        load_timeline(p)
    assert str(eval_err.value) == f"{p} {err.value}"


def test_sessions_of_a_multi_recording_file(tmp_path):
    rttm = "SPEAKER a/x 1 0 1 <NA> <NA> A <NA> <NA>\nSPEAKER b 1 0 2 <NA> <NA> B <NA> <NA>\n"
    p = _write(tmp_path, "all.rttm", rttm)
    assert sorted(load_timeline(p)) == ["a/x", "b"]
    assert [s.speaker for s in load_reference_timeline(p, "audio/a/x")] == ["A"]  # a tail of the corpus id
    with pytest.raises(ReferenceError, match=r"holds only session 'b', not this recording 'c'"):
        load_reference_timeline(_write(tmp_path, "b.rttm", rttm.splitlines()[1]), "c")


def test_an_empty_file_is_its_recording_without_turns(tmp_path):
    assert load_timeline(_write(tmp_path, "rec.json", [])) == {"rec": []}
    with pytest.raises(ReferenceError, match="has no segments for 'rec'"):
        load_reference_timeline(tmp_path / "rec.json", "rec")
