import sqlite3
import threading

import pytest

from speechannotator.records import Evidence, Prediction, Segment, Verdict
from speechannotator.state import StateStore


def _segs(n=3):
    return [Segment(f"seg_{i:05d}", i * 2.0, i * 2.0 + 1.5, f"S{i % 2}", text=f"t{i}", language="en") for i in range(n)]


def test_segments_evidence_predictions_roundtrip(tmp_path):
    with StateStore(tmp_path / "s.sqlite") as st:
        assert st.begin_recording("r", "r.wav", "fp1", 10.0) is False
        with st.transaction() as c:
            st.write_segments(c, "r", _segs())
            st.write_evidence(
                c, "r", [Evidence("seg_00000", "pitch.mean_hz", 180.5, "Hz", "acoustic", "pyworld", "0.3.5", 0.9)]
            )
            st.write_predictions(c, "r", [Prediction("seg_00000", "gender", "female", 0.8, ["pitch.mean_hz"], round=0)])
            st.write_predictions(c, "r", [Prediction("seg_00000", "gender", "male", 0.6, ["gender.p_male"], round=1)])
            st.write_verdicts(c, "r", [Verdict("seg_00000", "gender", 0, False, "drift", "use speaker majority")])
            st.mark_stage(c, "r", "timeline", {"n": 3})
        assert [s.key for s in st.segments("r")] == ["seg_00000", "seg_00001", "seg_00002"]
        assert st.evidence("r")["seg_00000"]["pitch.mean_hz"].value == 180.5
        assert st.predictions("r")[("seg_00000", "gender")].value == "male"
        assert [p.round for p in st.predictions("r", all_rounds=True)[("seg_00000", "gender")]] == [0, 1]
        assert st.verdicts("r")[("seg_00000", "gender")][0].request == "use speaker majority"
        assert st.stage_done("r", "timeline") and st.stage_info("r", "timeline") == {"n": 3}


def test_failed_transaction_leaves_nothing(tmp_path):
    with StateStore(tmp_path / "s.sqlite") as st:
        st.begin_recording("r", "r.wav", "fp1")
        with pytest.raises(RuntimeError), st.transaction() as c:
            st.write_segments(c, "r", _segs())
            st.mark_stage(c, "r", "timeline")
            raise RuntimeError("killed mid-stage")
        assert st.segments("r") == [] and not st.stage_done("r", "timeline")


def test_killed_process_leaves_no_half_record(tmp_path):
    # A second connection sees nothing of an uncommitted stage (as after a kill -9).
    path = tmp_path / "s.sqlite"
    st = StateStore(path)
    st.begin_recording("r", "r.wav", "fp1")
    st._conn.execute("BEGIN IMMEDIATE")
    StateStore.write_segments(st._conn, "r", _segs())
    other = sqlite3.connect(path)
    assert other.execute("SELECT count(*) FROM segments").fetchone()[0] == 0
    other.close()
    st._conn.close()  # dies without commit
    with StateStore(path) as again:
        assert again.segments("r") == []


def test_changed_fingerprint_resets_recording(tmp_path):
    with StateStore(tmp_path / "s.sqlite") as st:
        st.begin_recording("r", "r.wav", "fp1")
        with st.transaction() as c:
            st.write_segments(c, "r", _segs())
            st.mark_stage(c, "r", "timeline")
        assert st.begin_recording("r", "r.wav", "fp1") is True
        assert st.stage_done("r", "timeline")
        assert st.begin_recording("r", "r.wav", "fp2") is False
        assert not st.stage_done("r", "timeline") and st.segments("r") == []


def test_concurrent_writers(tmp_path):
    path = tmp_path / "s.sqlite"
    StateStore(path).close()
    errors = []

    def work(i):
        try:
            with StateStore(path) as st:
                st.begin_recording(f"r{i}", "x", "fp")
                for _ in range(5):
                    with st.transaction() as c:
                        st.write_segments(c, f"r{i}", _segs(4))
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    [t.start() for t in threads]
    [t.join() for t in threads]
    assert not errors
    with StateStore(path) as st:
        assert len(st.recordings()) == 4 and all(len(st.segments(f"r{i}")) == 4 for i in range(4))


def test_label_language_is_kept_with_the_recording_and_reset_with_it(tmp_path):
    with StateStore(tmp_path / "s.sqlite") as st:
        st.begin_recording("r", "r.wav", "fp1")
        with pytest.raises(ValueError, match="no label language"):
            st.label_language("r")
        with st.transaction() as c:
            st.set_label_language(c, "r", "zh")
        assert st.begin_recording("r", "r.wav", "fp1") is True and st.label_language("r") == "zh"
        st.begin_recording("r", "r.wav", "fp2")  # new content or settings: chosen again
        with pytest.raises(ValueError, match="no label language"):
            st.label_language("r")
        with pytest.raises(ValueError, match="'zh' or 'en'"), st.transaction() as c:
            st.set_label_language(c, "r", "fr")


def test_a_version_1_state_gains_the_label_language_column(tmp_path):
    path = tmp_path / "s.sqlite"
    with sqlite3.connect(path) as old:
        old.execute(
            "CREATE TABLE recordings (rec TEXT PRIMARY KEY, path TEXT NOT NULL, fingerprint TEXT NOT NULL, "
            "duration REAL, status TEXT NOT NULL, error TEXT NOT NULL DEFAULT '', updated REAL NOT NULL)"
        )
        old.execute("INSERT INTO recordings VALUES ('r', 'r.wav', 'fp1', 1.0, 'running', '', 0)")
    old.close()
    with StateStore(path) as st:
        assert st.begin_recording("r", "r.wav", "fp1") is True
        with st.transaction() as c:
            st.set_label_language(c, "r", "en")
        assert st.label_language("r") == "en"


def test_round_0_of_labeling_starts_over_and_a_plan_is_written_whole(tmp_path):
    from speechannotator.records import Contract

    with StateStore(tmp_path / "s.sqlite") as st:
        st.begin_recording("r", "r.wav", "fp1")
        with st.transaction() as c:
            st.write_contracts(
                c, "r", [Contract("seg_00000", f, "o", "v", [], [], ["segment"], "") for f in ("a", "b")]
            )
            st.write_contracts(c, "r", [Contract("seg_00000", "a", "o", "v", [], [], ["segment"], "")])
            st.write_predictions(c, "r", [Prediction("seg_00000", "a", "x", 0.5, [], round=0)])
            st.write_verdicts(c, "r", [Verdict("seg_00000", "a", 0, False, "no", "redo")])
        assert list(st.contracts("r")) == [("seg_00000", "a")]
        with st.transaction() as c:
            st.clear_predictions(c, "r")
        assert st.predictions("r") == {} and st.verdicts("r") == {}
