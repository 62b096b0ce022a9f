"""Splitting a segment and adding one on the review page, without a browser: the decisions, their
anchors across a rerun, the output JSON, explain, validation and reproducibility."""

from __future__ import annotations

import json
from functools import partial

import pytest
from viewer_helpers import output_row

from speechannotator.corrections import placed_decisions, reviewed_items
from speechannotator.output.decisions import EditError
from speechannotator.output.explain import explain
from speechannotator.records import Segment, Word
from speechannotator.schema import OUTPUT_KEYS
from speechannotator.state import StateStore
from speechannotator.viewer.edits import add_segment, apply_edit, delete_segment, split_segment

_row = partial(output_row, gender="female", emotion="happy (moderate)")


def _words(text: str, start: float, end: float) -> list[Word]:
    """Evenly timed words with a 0.1 s pause between them."""
    parts = text.split()
    step = (end - start) / len(parts)
    return [Word(w, start + i * step, start + (i + 1) * step - 0.1) for i, w in enumerate(parts)]


def _state(path, segs) -> None:
    """A finished recording "r" of 10 s whose segment table and records are
    ``segs`` [(start s, end s, raw speaker, text, with word times?)]."""
    ids = {"A": ("spk_01", "Speaker1"), "B": ("spk_02", "Speaker2")}
    with StateStore(path) as store:
        if store.status("r") is None:
            store.begin_recording("r", "/x.wav", "fp", 10.0)
        keyed = [(f"seg_{i:05d}", *s) for i, s in enumerate(segs)]
        with store.transaction() as c:
            store.set_label_language(c, "r", "en")
            store.write_segments(
                c,
                "r",
                [Segment(k, a, b, spk, t, words=_words(t, a, b) if w else []) for k, a, b, spk, t, w in keyed],
            )
            store.write_records(
                c, "r", [(k, _row(int(a * 1000), int(b * 1000), *ids[spk], t)) for k, a, b, spk, t, _ in keyed]
            )
        store.set_status("r", "complete")


FIRST = [
    (0.0, 4.0, "A", "one two three four", True),
    (4.5, 5.5, "B", "five", False),
    (7.0, 8.0, "A", "eight", False),
]


def _rows(tmp_path) -> list[dict]:
    return json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))


def test_a_split_divides_the_text_at_the_nearest_word_and_keeps_the_labels(tmp_path):
    state = tmp_path / "state.sqlite"
    _state(state, FIRST)
    got = split_segment(state, tmp_path, "r", "seg_00000", 2100, "ann")
    assert got["key"].startswith("add_") and got["first"]["end_time"] == 2100
    rows = _rows(tmp_path)
    assert [tuple(r) for r in rows] == [OUTPUT_KEYS] * 4  # the demo keys, in their order
    assert [(r["start_time"], r["end_time"], r["text"]) for r in rows] == [
        (0, 2100, "one two"),
        (2100, 4000, "three four"),
        (4500, 5500, "five"),
        (7000, 8000, "eight"),
    ]
    assert rows[1]["speaker_id"] == "spk_01" and rows[1]["gender"] == "female"
    assert rows[1]["emotion"] == "happy (moderate)" and rows[1]["text_and_paralanguage"] == "three four"
    assert rows[0]["text_and_paralanguage"] == "one two"
    # The new part takes corrections like any segment, and explain tells its story.
    apply_edit(state, tmp_path, "r", got["key"], "gender", "male", "ann")
    assert _rows(tmp_path)[1]["gender"] == "male" and _rows(tmp_path)[0]["gender"] == "female"
    with StateStore(state, readonly=True) as store:
        text = explain(store, "r", 1, "text")
        assert (
            "made on the review page by human decision" in text
            and "(split of seg_00000)" in text
            and text.rstrip().endswith("final: three four")
        )
        assert explain(store, "r", 1, "gender").rstrip().endswith("final: male")


def test_a_split_without_word_times_needs_the_reviewers_texts(tmp_path):
    state = tmp_path / "state.sqlite"
    _state(state, FIRST)
    with pytest.raises(EditError, match="no word times"):
        split_segment(state, tmp_path, "r", "seg_00001", 5000, "ann")
    for bad in (4500, 5500, 9000, float("inf"), "", "x"):
        with pytest.raises(EditError, match="split time"):
            split_segment(state, tmp_path, "r", "seg_00001", bad, "ann", ("fi", "ve"))
    got = split_segment(state, tmp_path, "r", "seg_00001", 5000, "ann", ("fi", " ve "))
    assert [r["text"] for r in _rows(tmp_path)] == ["one two three four", "fi", "ve", "eight"]
    # The second part can be split again; its own parts are new segments too.
    again = split_segment(state, tmp_path, "r", got["key"], 5200, "ann", ("v", "e"))
    assert again["key"] != got["key"]
    assert [r["text"] for r in _rows(tmp_path)] == ["one two three four", "fi", "v", "e", "eight"]


def test_adding_a_segment_is_validated_like_a_boundary(tmp_path):
    state = tmp_path / "state.sqlite"
    _state(state, FIRST)
    for start, end, spk, text, why in [
        (5800, 5700, "A", "x", "0 <= start < end"),
        (9000, 10_500, "A", "x", "0 <= start < end"),
        ("nan", 6000, "A", "x", "finite"),
        (3900, 4200, "A", "x", "overlap seg_00000"),
        (6000, 6500, "A", "", "must not be empty"),
        (4000, 6000, "C", "x", "cover the whole of seg_00001"),
        (6000, 6500, "A B", "x", "a new speaker label"),
    ]:
        with pytest.raises(EditError, match=why):
            add_segment(state, tmp_path, "r", start, end, spk, text, "ann")
    assert len(_rows(tmp_path) if (tmp_path / "r.json").exists() else []) in (0, 3)
    got = add_segment(state, tmp_path, "r", 5000, 6500, "A", "  overlapping  B ", "ann")  # two voices may overlap
    rows = _rows(tmp_path)
    assert [r["text"] for r in rows] == ["one two three four", "five", "overlapping B", "eight"]
    assert rows[2]["speaker_id"] == "spk_01" and rows[2]["gender"] == "none" and rows[2]["language"] == "en"
    new = add_segment(state, tmp_path, "r", 8500, 9000, "C", "a new voice", "ann")
    assert new["row"]["speaker_id"] == "spk_03"
    delete_segment(state, tmp_path, "r", got["key"], True, "ann")
    assert [r["text"] for r in _rows(tmp_path)] == ["one two three four", "five", "eight", "a new voice"]
    # A stretch a person cut off a machine segment may hold a new segment of the same voice.
    apply_edit(state, tmp_path, "r", "seg_00002", "end_time", 7400, "ann")
    add_segment(state, tmp_path, "r", 7500, 8000, "A", "eight again", "ann")
    assert [r["text"] for r in _rows(tmp_path)][2:4] == ["eight", "eight again"]


def test_split_and_added_segments_follow_a_rerun_or_are_orphaned(tmp_path):
    state = tmp_path / "state.sqlite"
    _state(state, FIRST)
    split = split_segment(state, tmp_path, "r", "seg_00000", 2100, "ann")
    added = add_segment(state, tmp_path, "r", 6000, 6800, "B", "six", "ann")
    apply_edit(state, tmp_path, "r", added["key"], "text", "sixty", "ann")
    before = (tmp_path / "r.json").read_bytes()
    # A rerun of the same segment table writes the same bytes.
    _state(state, FIRST)
    with StateStore(state) as store:
        from speechannotator.output.write import write_output

        write_output(store, tmp_path, "r")
    assert (tmp_path / "r.json").read_bytes() == before
    # A rerun that finds a new utterance first shifts every key and nudges the split segment:
    # the split follows it; the machine now hears "six" itself, so the added segment yields to it
    # (orphaned) while the transcript correction made on that span follows the utterance there.
    rerun = [
        (0.0, 0.0 + 0.3, "B", "new", False),
        (0.05 + 0.3, 4.0, "A", "one two three four", True),
        (4.5, 5.5, "B", "five", False),
        (6.1, 6.8, "B", "six machine", False),
        (7.0, 8.0, "A", "eight", False),
    ]
    _state(state, rerun)
    with StateStore(state, readonly=True) as store:
        rows = [r for _, r in reviewed_items(store, "r")]
        orphaned = placed_decisions(store, "r").orphaned
    assert [(r["start_time"], r["text"]) for r in rows] == [
        (0, "new"),
        (350, "one two"),
        (2100, "three four"),
        (4500, "five"),
        (6100, "sixty"),
        (7000, "eight"),
    ]
    assert {d.key for d in orphaned} == {added["key"]} and split["key"] not in {d.key for d in orphaned}
    # A rerun where the split segment is gone orphans the split: its parts apply to no utterance;
    # the added segment, on a stretch no machine segment of its voice holds again, is back.
    _state(state, [(0.0, 1.0, "A", "one", False), (1.2, 4.0, "B", "two three four", False)])
    with StateStore(state, readonly=True) as store:
        rows = [r for _, r in reviewed_items(store, "r")]
        keys = {d.key for d in placed_decisions(store, "r").orphaned}
    assert [(r["start_time"], r["end_time"], r["text"]) for r in rows] == [
        (0, 1000, "one"),
        (1200, 4000, "two three four"),
        (6000, 6800, "sixty"),
    ]
    assert split["key"] in keys and "seg_00000" in keys


def test_a_split_reaches_the_recorded_exports_with_each_row_on_its_own_segment(annotated, tmp_path):
    import shutil

    from speechannotator.export import export_corpus

    out = tmp_path / "out"
    shutil.copytree(annotated[0], out)
    dest = export_corpus(out, "jsonl", tmp_path / "segments.jsonl", rate="16000")
    before = [json.loads(line) for line in dest.read_text(encoding="utf-8").splitlines()]
    rows = json.loads((out / "dialogue.json").read_text(encoding="utf-8"))
    at = (rows[1]["start_time"] + rows[1]["end_time"]) // 2
    got = split_segment(out / "state.sqlite", out, "dialogue", "seg_00001", at, "ann", ("first half", "second half"))
    after = [json.loads(line) for line in dest.read_text(encoding="utf-8").splitlines()]
    rows = json.loads((out / "dialogue.json").read_text(encoding="utf-8"))
    assert [r["text"] for r in after] == [r["text"] for r in rows] and len(after) == len(before) + 1
    assert after[2]["text"] == "second half" and (after[2]["start_time"], after[2]["end_time"]) == (
        at,
        rows[2]["end_time"],
    )
    # The rows after the new one keep their own segment's measurements (keys follow the JSON).
    cols = ("snr_db", "mos", "asr_avg_logprob", "overlap_s", "confidence")
    assert [[r[c] for c in cols] for r in after[3:]] == [[r[c] for c in cols] for r in before[2:]]
    assert got["key"].startswith("add_") and after[2]["confidence"] in ({}, None)


def test_a_deleted_added_segment_is_listed_for_restoring(tmp_path):
    from speechannotator.viewer.data import recording

    state = tmp_path / "state.sqlite"
    _state(state, FIRST)
    got = add_segment(state, tmp_path, "r", 6000, 6500, "B", "six", "ann")
    delete_segment(state, tmp_path, "r", got["key"], True, "ann")
    with StateStore(state, readonly=True) as store:
        view = recording(store, "r")
    assert [(d["key"], d["start_time"], d["text"]) for d in view["deleted"]] == [(got["key"], 6000, "six")]
    assert got["key"] not in [s["key"] for s in view["segments"]]
    delete_segment(state, tmp_path, "r", got["key"], False, "ann")
    assert [r["text"] for r in _rows(tmp_path)] == ["one two three four", "five", "six", "eight"]


def test_split_text_follows_the_words_through_capitals_and_punctuation():
    from speechannotator.viewer.edits import split_text

    # Word times as Whisper gives them; the transcript was capitalized after recognition.
    words = [Word("unless", 16.0, 16.3), Word("cold", 16.4, 16.7), Word("-hearted", 16.7, 17.0)]
    words += [Word("and", 17.3, 17.5), Word("selfish.", 17.6, 18.0)]
    seg = Segment("seg_00004", 16.0, 18.0, "A", "Unless cold-hearted and selfish.", words=words)
    assert split_text(seg, seg.text, 17_100) == ("Unless cold-hearted", "and selfish.")
    assert split_text(seg, seg.text, 16_000) == ("", "Unless cold-hearted and selfish.")
    assert split_text(seg, "A corrected text.", 17_100) is None  # the words are not this text's
    assert split_text(Segment("k", 0.0, 1.0, "A", "no words"), "no words", 500) is None
