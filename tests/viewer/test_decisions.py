"""Human decisions without a browser: validation against the schema, how they apply, the
append-only trail, and the `view` command's refusals."""

from __future__ import annotations

import sqlite3
from functools import partial

import pytest
from click.testing import CliRunner
from viewer_helpers import output_row

from speechannotator.corrections import apply_decisions
from speechannotator.output.decisions import EditContext, EditError, validate_edit
from speechannotator.records import Decision
from speechannotator.state import StateStore
from speechannotator.viewer.cli import view_command

CTX_EN = EditContext(label_lang="en", duration_ms=10_000, speakers=("A", "B"))
CTX_ZH = EditContext(label_lang="zh", duration_ms=10_000, speakers=("A", "B"))


_row = partial(output_row, gender="male")


def test_edits_are_validated_against_the_schema():
    row = _row(1000, 2000, "spk_01", "Speaker1")
    assert validate_edit("gender", "Woman", row, CTX_EN) == "female"  # aliases in, canonical form out
    assert validate_edit("gender", "female", row, CTX_ZH) == "女声"
    assert validate_edit("age", "老年", row, CTX_EN) == "elderly"
    assert validate_edit("emotion", "happy (strong)", row, CTX_EN) == "happy (strong)"
    assert validate_edit("emotion", "happy", row, CTX_EN) == "happy (moderate)"
    assert validate_edit("accent", "  Scottish\tEnglish ", row, CTX_EN) == "Scottish English"
    assert validate_edit("background_sound", "nothing", row, CTX_ZH) == "无"
    assert validate_edit("start_time", 1500.4, row, CTX_EN) == 1500
    assert validate_edit("speaker", "B", row, CTX_EN) == "B"
    assert validate_edit("speaker", "guest_2", row, CTX_EN) == "guest_2"
    assert validate_edit("text", "<b>kept as text</b>", row, CTX_EN) == "<b>kept as text</b>"
    for field, value, why in [
        ("gender", "purple", "not a gender"),
        ("age", 42, "must be a string"),
        ("colour", "red", "unknown field"),
        ("pitch", "   ", "must not be empty"),
        ("start_time", 2500, "start < end"),
        ("end_time", 10_001, "<= 10000"),
        ("end_time", True, "milliseconds"),
        ("speaker", "<img>", "new speaker label"),
        ("text", "a\x00b", "control characters"),
        ("tone", "x" * 2001, "longer than"),
    ]:
        with pytest.raises(EditError, match=why):
            validate_edit(field, value, row, CTX_EN)


def test_boundaries_must_be_numbers_and_may_not_create_an_overlap_of_one_voice():
    row = _row(4000, 5000, "spk_01", "Speaker1")
    others = (("seg_a", 1000, 3000, "spk_01"), ("seg_b", 3500, 3900, "spk_02"), ("seg_c", 6000, 7000, "spk_02"))
    ctx = EditContext(label_lang="en", duration_ms=10_000, speakers=("A", "B"), others=others)
    assert validate_edit("start_time", " 3950 ", row, ctx) == 3950  # a typed string; overlaps seg_b's end only
    assert validate_edit("end_time", 6500, row, ctx) == 6500  # two speakers may overlap
    for field, value, why in [
        ("start_time", "", "is empty"),
        ("start_time", "4 s", "not a number"),
        ("end_time", float("inf"), "finite"),
        ("end_time", float("nan"), "finite"),
        ("start_time", 2500, "overlap seg_a"),
        ("start_time", 3400, "cover the whole of seg_b"),
    ]:
        with pytest.raises(EditError, match=why):
            validate_edit(field, value, row, ctx)


def test_decisions_apply_latest_first_and_move_segments_between_speakers():
    items = [
        ("seg_0", _row(0, 1000, "spk_01", "Speaker1")),
        ("seg_1", _row(1200, 2000, "spk_02", "Speaker2")),
        ("seg_2", _row(2100, 3000, "spk_01", "Speaker1")),
    ]
    raw = {"seg_0": "A", "seg_1": "B", "seg_2": "A"}
    d = [
        Decision(1, "seg_1", "gender", "male", "female", "ann", 1.0),
        Decision(2, "seg_1", "gender", "female", "male", "bob", 2.0),  # the later one is in force
        Decision(3, "seg_2", "speaker", "A", "B", "ann", 3.0),
        Decision(4, "seg_0", "speaker", "A", "guest", "ann", 4.0),
        Decision(5, "seg_1", "text", "hello", "hi there", "ann", 5.0),
        Decision(6, "seg_2", "start_time", 2100, 500, "ann", 6.0),
        Decision(7, "seg_gone", "gender", "male", "female", "ann", 7.0),
    ]  # its segment no longer exists
    out = apply_decisions(items, raw, d, "en")
    assert [k for k, _ in out] == ["seg_0", "seg_2", "seg_1"]  # time order after the boundary edit
    rows = dict(out)
    assert rows["seg_1"]["gender"] == "male" and rows["seg_1"]["text_and_paralanguage"] == "hi there"
    assert (rows["seg_2"]["speaker_id"], rows["seg_2"]["speaker_name"]) == ("spk_02", "Speaker2")
    assert (rows["seg_0"]["speaker_id"], rows["seg_0"]["speaker_name"]) == ("spk_03", "Speaker3")
    assert rows["seg_0"]["text_and_paralanguage"] == "hello [pause]"  # untouched text keeps its tags
    assert items[0][1]["speaker_id"] == "spk_01"  # the machine records are not changed in place


def test_explain_counts_segments_in_output_order_after_a_boundary_correction(tmp_path):
    from speechannotator.output.explain import explain
    from speechannotator.records import Segment

    with StateStore(tmp_path / "state.sqlite") as store:
        store.begin_recording("r", "/x.wav", "fp", 10.0)
        with store.transaction() as c:
            store.set_label_language(c, "r", "en")
            store.write_segments(
                c, "r", [Segment("seg_00000", 1.0, 2.0, "A", "first"), Segment("seg_00001", 3.0, 4.0, "B", "second")]
            )
            store.write_records(
                c,
                "r",
                [
                    ("seg_00000", _row(1000, 2000, "spk_01", "Speaker1", "first")),
                    ("seg_00001", _row(3000, 4000, "spk_02", "Speaker2", "second")),
                ],
            )
        store.add_decision("r", "seg_00001", "start_time", 3000, 200, "ann")
        store.add_decision("r", "seg_00001", "end_time", 4000, 900, "ann")
        text = explain(store, "r", 0, "gender")
    assert "(seg_00001)" in text and "second" in text and text.rstrip().endswith("final: male")


def test_the_trail_is_append_only_and_readers_cannot_write(tmp_path):
    with StateStore(tmp_path / "state.sqlite") as store:
        first = store.add_decision("r", "seg_0", "gender", "male", "female", "ann")
        second = store.add_decision("r", "seg_0", "gender", "female", "male", "bob", "second look")
        assert second > first
        with pytest.raises(sqlite3.DatabaseError, match="append-only"):
            store._conn.execute("UPDATE decisions SET new='x'")
        with pytest.raises(sqlite3.DatabaseError, match="append-only"):
            store._conn.execute("DELETE FROM decisions")
        store.begin_recording("r", "/x.wav", "fp1")
        store.begin_recording("r", "/x.wav", "fp2")  # a changed fingerprint resets machine outputs only
    with StateStore(tmp_path / "state.sqlite", readonly=True) as ro:
        trail = [(d.who, d.new, d.note) for d in ro.decisions("r")]
        assert trail == [("ann", "female", ""), ("bob", "male", "second look")]
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            ro.add_decision("r", "seg_0", "age", "child", "elderly", "eve")
    with pytest.raises(sqlite3.OperationalError):
        StateStore(tmp_path / "absent.sqlite", readonly=True)
    assert not (tmp_path / "absent.sqlite").exists()


def test_view_refuses_a_missing_state_and_a_remote_address_without_the_flag(tmp_path):
    res = CliRunner().invoke(view_command, [str(tmp_path)])
    assert res.exit_code != 0 and "no state database" in res.output
    StateStore(tmp_path / "state.sqlite").close()
    res = CliRunner().invoke(view_command, [str(tmp_path), "--host", "0.0.0.0"])
    assert res.exit_code != 0 and "--allow-remote" in res.output


def test_a_correction_writes_every_recorded_export_again(annotated, tmp_path):
    import json
    import shutil

    from speechannotator.corrections import reviewed_items
    from speechannotator.export import export_corpus
    from speechannotator.export.registry import recorded_exports
    from speechannotator.viewer.edits import apply_edit

    out = tmp_path / "out"
    shutil.copytree(annotated[0], out)
    dest = export_corpus(out, "jsonl", tmp_path / "segments.jsonl", rate="16000")
    assert [e["format"] for e in recorded_exports(out)] == ["jsonl"]
    with StateStore(out / "state.sqlite", readonly=True) as store:
        key = next(iter(dict(reviewed_items(store, "dialogue"))))
    apply_edit(out / "state.sqlite", out, "dialogue", key, "text", "A corrected transcript.", "ann")
    texts = [json.loads(line)["text"] for line in dest.read_text(encoding="utf-8").splitlines()]
    assert "A corrected transcript." in texts
    assert json.loads((out / "dialogue.json").read_text(encoding="utf-8"))[0]["text"] == "A corrected transcript."


def _state_with(path, segs):
    """A state whose segment table and records are `segs` [(start s, end s, raw speaker, text)]."""
    from speechannotator.records import Segment

    store = StateStore(path)
    if store.status("r") is None:
        store.begin_recording("r", "/x.wav", "fp", 10.0)
    keyed = [(f"seg_{i:05d}", *s) for i, s in enumerate(segs)]
    with store.transaction() as c:
        store.set_label_language(c, "r", "en")
        store.write_segments(c, "r", [Segment(k, a, b, spk, t) for k, a, b, spk, t in keyed])
        store.write_records(
            c, "r", [(k, _row(int(a * 1000), int(b * 1000), "spk_01", "Speaker1", t)) for k, a, b, _, t in keyed]
        )
    store.set_status("r", "complete")
    return store


def test_a_decision_follows_its_utterance_when_keys_shift_and_is_orphaned_when_it_is_gone(tmp_path):
    from speechannotator.corrections import reviewed_items
    from speechannotator.output.explain import explain
    from speechannotator.viewer.edits import apply_edit

    first = [(0.0, 1.0, "A", "one"), (1.5, 2.5, "B", "two"), (3.0, 4.0, "A", "three")]
    _state_with(tmp_path / "state.sqlite", first).close()
    apply_edit(tmp_path / "state.sqlite", tmp_path, "r", "seg_00002", "text", "three, corrected", "ann")
    apply_edit(tmp_path / "state.sqlite", tmp_path, "r", "seg_00001", "gender", "female", "ann")
    (d_text, d_gender) = [
        d for d in StateStore(tmp_path / "state.sqlite", readonly=True).decisions("r") if d.who == "ann"
    ]
    assert (d_text.anchor.start, d_text.anchor.end, d_text.anchor.speaker, d_text.anchor.text) == (
        3.0,
        4.0,
        "A",
        "three",
    )
    # A rerun finds one more utterance at the start: every key shifts by one, "three" is seg_00003
    # now (its boundaries nudged); "two" was split in two, so its decision has no segment any more.
    rerun = [
        (0.0, 0.4, "B", "new"),
        (0.5, 1.0, "A", "one"),
        (1.5, 2.0, "B", "tw"),
        (2.0, 2.5, "B", "o"),
        (3.02, 4.0, "A", "three"),
    ]
    with _state_with(tmp_path / "state.sqlite", rerun) as store:
        rows = dict(reviewed_items(store, "r"))
        assert rows["seg_00004"]["text"] == "three, corrected"
        assert [r["text"] for r in rows.values()] == ["new", "one", "tw", "o", "three, corrected"]
        assert all(r["gender"] == "male" for r in rows.values())  # never applied to another utterance
        text = explain(store, "r", 4, "text")
        assert "human decision #1 by ann" in text and text.rstrip().endswith("final: three, corrected")
        text = explain(store, "r", 2, "gender")
        assert "orphaned human decision #" in text and "by ann" in text and "1.500-2.500 s, speaker B: two" in text
        assert text.rstrip().endswith("final: male")
