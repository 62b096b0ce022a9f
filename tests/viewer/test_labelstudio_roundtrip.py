"""Label Studio both ways (issue 27): the export's config carries every attribute, and the
annotators' answers, in the JSON that Label Studio exports, come back as human decisions."""

from __future__ import annotations

import copy
import json
import re
import shutil

from click.testing import CliRunner

from speechannotator.cli import main
from speechannotator.export import export_corpus
from speechannotator.schema import AGE_VALUES, FIELDS, GENDER_VALUES
from speechannotator.state import StateStore


def _records(out):
    return json.loads((out / "dialogue.json").read_text(encoding="utf-8"))


def _set(result, rid, control, **value):
    for item in result:
        if item["id"] == rid and item["from_name"] == control:
            item["value"].update(value)
            item["origin"] = "prediction-changed"


def test_labelstudio_round_trip_lands_in_the_audit_trail_and_the_json(annotated, tmp_path):
    out = tmp_path / "out"
    shutil.copytree(annotated[0], out)
    dest = export_corpus(out, "labelstudio", tmp_path / "ls")
    config = (dest / "config.xml").read_text(encoding="utf-8")
    choices = dict(re.findall(r'<Choices name="(\w+)"[^>]*>(.*?)</Choices>', config, re.S))
    assert set(choices) == {"gender", "age"}
    assert re.findall(r'Choice value="([^"]+)"', choices["age"]) == [*AGE_VALUES["en"], "none"]
    assert re.findall(r'Choice value="([^"]+)"', choices["gender"]) == [*GENDER_VALUES["en"], "none"]
    areas = re.findall(r'<TextArea name="(\w+)"', config)
    assert areas == ["transcription", "text_and_paralanguage", *[f for f in FIELDS if f not in ("gender", "age")]]
    assert '<Labels name="speaker"' in config and 'perRegion="true"' in config
    (task,) = json.loads((dest / "tasks.json").read_text(encoding="utf-8"))
    before = _records(out)
    # What an annotator does in Label Studio, as its JSON export writes it: a completed
    # annotation holding the prediction's regions, some changed, plus one region of their own.
    result = copy.deepcopy(task["predictions"][0]["result"])
    other_gender = "female" if before[1]["gender"] == "male" else "male"
    _set(result, "seg_00001", "gender", choices=[other_gender])
    _set(result, "seg_00001", "pitch", text=["high, rising"])
    _set(result, "seg_00001", "caption", text=["A voice the annotator described."])
    _set(result, "seg_00000", "transcription", text=["Tell me about Mister John Dashwood."])
    end3 = before[3]["end_time"] - 200
    for item in result:
        if item["id"] == "seg_00003":  # the region dragged: every control of it carries the new end
            item["value"]["end"] = end3 / 1000
    result.append(
        {
            "id": "wavesurfer_x1",
            "from_name": "speaker",
            "to_name": "audio",
            "type": "labels",
            "value": {"start": 1.0, "end": 2.0, "channel": 0, "labels": ["spk_01"]},
            "origin": "manual",
        }
    )
    answered = {
        "id": 41,
        "data": task["data"],
        "annotations": [
            {
                "id": 7,
                "completed_by": {"id": 3, "email": "ann@example.org"},
                "result": result,
                "was_cancelled": False,
                "ground_truth": False,
                "created_at": "2026-01-05T10:00:00.000000Z",
                "updated_at": "2026-01-05T10:02:00.000000Z",
                "lead_time": 120.5,
                "task": 41,
                "project": 2,
            },
            {
                "id": 8,
                "completed_by": 4,
                "result": [],
                "was_cancelled": True,
                "created_at": "2026-01-05T11:00:00.000000Z",
                "updated_at": "2026-01-05T11:00:00.000000Z",
            },
        ],
        "predictions": [1],
        "drafts": [],
        "meta": {},
        "inner_id": 1,
        "total_annotations": 1,
    }
    export = tmp_path / "project-2-at-2026-01-05.json"
    export.write_text(json.dumps([answered]), encoding="utf-8")
    res = CliRunner().invoke(main, ["import", "labelstudio", str(export), str(out)])
    assert res.exit_code == 0, res.output
    assert "5 decision(s) recorded" in res.output and "wavesurfer_x1" in res.output
    after = _records(out)
    assert after[1]["gender"] == other_gender and after[1]["pitch"] == "high, rising"
    assert after[1]["caption"] == "A voice the annotator described."  # theirs, not recomposed
    assert after[0]["text"] == "Tell me about Mister John Dashwood."
    assert after[3]["end_time"] == end3
    with StateStore(out / "state.sqlite", readonly=True) as store:
        mine = [d for d in store.decisions("dialogue") if d.who == "labelstudio:ann@example.org"]
    assert sorted((d.key, d.field) for d in mine) == [
        ("seg_00000", "text"),
        ("seg_00001", "caption"),
        ("seg_00001", "gender"),
        ("seg_00001", "pitch"),
        ("seg_00003", "end_time"),
    ]
    assert all(d.note == "Label Studio annotation 7" and d.anchor is not None for d in mine)
    # Importing the same file again changes nothing.
    res = CliRunner().invoke(main, ["import", "labelstudio", str(export), str(out)])
    assert res.exit_code == 0 and "0 decision(s) recorded" in res.output and "1 skipped" in res.output
    assert _records(out) == after
    bad = tmp_path / "bad.json"
    bad.write_text('{"not": "tasks"}')
    res = CliRunner().invoke(main, ["import", "labelstudio", str(bad), str(out)])
    assert res.exit_code != 0 and "not a Label Studio JSON export" in res.output
