"""The review page's server without a browser (issue 27): edits during an `annotate` rerun, JSON
that is not JSON, cleanup on SIGTERM, and caption and contextual inference after a correction."""

from __future__ import annotations

import json
import shutil
import signal

from viewer_helpers import ViewServer

from speechannotator.locks import RecordingLock
from speechannotator.output.recompose import RECOMPOSER
from speechannotator.state import StateStore
from speechannotator.viewer.edits import apply_edit


def _call(server, path: str, body: dict | bytes | None = None):
    import http.client
    import urllib.parse

    host, port = urllib.parse.urlsplit(server.base).netloc.split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=30)
    headers = {"X-Session-Token": server.token}
    if body is not None:
        headers["Content-Type"] = "application/json"
        payload = body if isinstance(body, bytes) else json.dumps(body).encode()
        conn.request("POST", path, body=payload, headers=headers)
    else:
        conn.request("GET", path, headers=headers)
    res = conn.getresponse()
    data = res.read()
    conn.close()
    return res.status, json.loads(data) if data[:1] in (b"{", b"[") else data


def test_a_rerun_in_progress_gets_409_never_500_and_the_corpus_still_lists(annotated, tmp_path):
    out = tmp_path / "out"
    shutil.copytree(annotated[0], out)
    server = ViewServer(out)
    try:
        edit = {"rec": "dialogue", "key": "seg_00001", "field": "age", "value": "elderly"}
        with StateStore(out / "state.sqlite") as store:
            path, duration = store.recordings()[0]["path"], store.recordings()[0]["duration"]
            # What `annotate` with changed options does first: take the recording's lock and reset
            # its machine outputs under a new fingerprint (no segments, no label language).
            lock = RecordingLock(out, "dialogue").acquire()
            store.begin_recording("dialogue", path, "another-fingerprint", duration)
        for path_ in ("/api/recording?rec=dialogue", "/api/segment?rec=dialogue&key=seg_00001"):
            status, data = _call(server, path_)
            assert status == 409 and "being annotated" in data["error"], (path_, status, data)
        status, data = _call(server, "/api/edit", edit)
        assert status == 409 and "being annotated" in data["error"]
        lock.release()  # the run was killed: nothing final to correct until a run completes
        status, data = _call(server, "/api/edit", edit)
        assert status == 409 and "running" in data["error"]
        status, data = _call(server, "/api/corpus")
        assert status == 200 and [(r["rec"], r["status"]) for r in data["recordings"]] == [("dialogue", "running")]
        with StateStore(out / "state.sqlite", readonly=True) as store:
            assert not [d for d in store.decisions("dialogue") if d.field == "age"]
    finally:
        server.stop()


def test_json_constants_are_400_and_sigterm_removes_the_decoded_audio(annotated, tmp_path):
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    server = ViewServer(annotated[0], env={"TMPDIR": str(tmp)})
    try:
        for raw in (b'{"rec":"dialogue","key":"seg_00000","field":"start_time","value":Infinity}', b'{"value":NaN}'):
            status, data = _call(server, "/api/edit", raw)
            assert status == 400 and "not a JSON number" in data["error"], (raw, status, data)
        body = {"rec": "dialogue", "key": "seg_00000", "field": "start_time", "value": 1e400}
        status, data = _call(server, "/api/edit", json.dumps(body).replace("1e+400", "1e400").encode())
        assert status == 400, data  # 1e400 parses to inf
        status, data = _call(server, "/api/recording?rec=dialogue")
        assert status == 200 and data["peaks"]
        assert [p.name for p in tmp.iterdir() if p.name.startswith("sa-view-")]  # decoded
    finally:
        server.proc.send_signal(signal.SIGTERM)
        server.proc.wait(20)
    assert not [p for p in tmp.iterdir() if p.name.startswith("sa-view-")]


def test_caption_and_contextual_inference_follow_a_correction(annotated, tmp_path):
    out = tmp_path / "out"
    shutil.copytree(annotated[0], out)
    before = json.loads((out / "dialogue.json").read_text(encoding="utf-8"))[1]
    assert before["gender"] == "male" and "male voice" in before["caption"]
    st = out / "state.sqlite"
    apply_edit(st, out, "dialogue", "seg_00001", "gender", "female", "ann")
    apply_edit(st, out, "dialogue", "seg_00001", "emotion", "sad (strong)", "ann")
    after = json.loads((out / "dialogue.json").read_text(encoding="utf-8"))[1]
    assert "female voice" in after["caption"] and "sad (strong)" in after["caption"]
    assert before["emotion"] not in after["caption"]
    assert after["contextual_inference"] != before["contextual_inference"]
    with StateStore(st, readonly=True) as store:
        auto = [d for d in store.decisions("dialogue") if d.who == RECOMPOSER]
    assert {d.field for d in auto} == {"caption", "contextual_inference"} and all(
        "after decision #" in d.note for d in auto
    )
    # A caption a person wrote is theirs: later corrections do not recompose it.
    apply_edit(st, out, "dialogue", "seg_00001", "caption", "A woman, sad.", "ann")
    apply_edit(st, out, "dialogue", "seg_00001", "gender", "male", "ann")
    assert json.loads((out / "dialogue.json").read_text(encoding="utf-8"))[1]["caption"] == "A woman, sad."


def test_split_and_add_routes_answer_400_404_409_never_500(annotated, tmp_path):
    out = tmp_path / "out"
    shutil.copytree(annotated[0], out)
    server = ViewServer(out)
    try:
        rows = json.loads((out / "dialogue.json").read_text(encoding="utf-8"))
        mid = (rows[1]["start_time"] + rows[1]["end_time"]) // 2
        for path, body, status, words in [
            ("/api/split", b'{"rec":"dialogue","key":"seg_00001","at":Infinity}', 400, "not a JSON number"),
            ("/api/split", {"rec": "dialogue", "key": "seg_00001"}, 400, "no at"),
            ("/api/split", {"rec": "dialogue", "key": "seg_00099", "at": mid}, 404, "no segment"),
            ("/api/split", {"rec": "dialogue", "key": "seg_00001", "at": mid, "texts": "a|b"}, 400, "two strings"),
            (
                "/api/split",
                {"rec": "dialogue", "key": "seg_00001", "at": mid, "texts": [1, 2]},
                400,
                "must be a string",
            ),
            ("/api/split", {"rec": "dialogue", "key": "seg_00001", "at": mid}, 400, "no word times"),
            ("/api/add", {"rec": "dialogue", "start": 0, "end": 1e9, "speaker": "x", "text": "a"}, 400, "<= start"),
            ("/api/add", {"rec": "dialogue", "start": 0, "end": 100, "text": "a"}, 400, "speaker, text strings"),
            ("/api/add", {"rec": "nope", "start": 0, "end": 100, "speaker": "x", "text": "a"}, 404, "nope"),
        ]:
            got, data = _call(server, path, body)
            assert got == status and words in data["error"], (path, body, got, data)
        got, data = _call(
            server, "/api/add", {"rec": "dialogue", "start": 0, "end": 300, "speaker": "x", "text": "Hm."}
        )
        assert got == 200 and data["key"].startswith("add_") and data["row"]["text"] == "Hm."
        lock = RecordingLock(out, "dialogue").acquire()  # `annotate` at work on the recording
        body = {"rec": "dialogue", "key": "seg_00001", "at": mid, "texts": ["a", "b"]}
        got, data = _call(server, "/api/split", body)
        assert got == 409 and "being annotated" in data["error"]
        lock.release()
        got, data = _call(server, "/api/split", body)
        assert got == 200 and data["first"]["end_time"] == mid and data["row"]["text"] == "b"
    finally:
        server.stop()
