"""Label Studio's answers back into the audit trail: `speechannotator import labelstudio EXPORT.json OUT`.

EXPORT.json is Label Studio's JSON export of tasks made by `speechannotator export labelstudio`
(each task's data names the recording, each region's id is the segment's key). Every answer
that differs from what was exported becomes a human decision through the review page's own
``apply_edit``: validated against the schema, anchored on its segment, refused when the value
changed in the state since the export (a page correction the annotator never saw), and the
outputs and exports written again. Annotations are applied oldest first, so the latest in force.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..corrections import SPEAKER_FIELD
from ..export.labelstudio import CLOSED_FIELDS, OPEN_FIELDS, SPEAKER_CONTROL, TEXT_CONTROLS
from ..output.decisions import EditError
from ..schema import COMPOSED_FIELDS
from ..state import STATE_FILE, StateStore
from . import data
from .edits import Conflict, apply_edit

_CONTROL_FIELD: dict[str, str] = {
    SPEAKER_CONTROL: SPEAKER_FIELD,
    **{c: f for f, c in TEXT_CONTROLS.items()},
    **{f: f for f in (*CLOSED_FIELDS, *OPEN_FIELDS)},
}


class ImportFileError(ValueError):
    """EXPORT.json is not a Label Studio export of speechannotator tasks."""


@dataclass
class ImportReport:
    applied: list[str] = field(default_factory=list)  # "rec seg_00003 gender: 'male' -> 'female' (who)"
    unchanged: int = 0  # answers equal to what was exported or to the value in force
    skipped: list[str] = field(default_factory=list)  # answers not applied, with the reason


def _who(annotation: dict[str, Any]) -> str:
    by = annotation.get("completed_by")
    if isinstance(by, dict):
        by = by.get("email") or by.get("username") or by.get("id")
    return f"labelstudio:{by if by not in (None, '') else 'annotator'}"


def _answer(item: dict[str, Any]) -> Any:
    value = item.get("value") or {}
    kind = item.get("type")
    if kind == "labels":
        return (value.get("labels") or [None])[0]
    if kind == "choices":
        return (value.get("choices") or [None])[0]
    if kind == "textarea":
        text = value.get("text")
        return " ".join(text) if isinstance(text, list) else text
    return None


def _answers(result: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """{region id: {field: answer, "start_time"/"end_time": ms}} from one annotation's result."""
    out: dict[str, dict[str, Any]] = {}
    for item in result:
        if not isinstance(item, dict) or item.get("from_name") not in _CONTROL_FIELD:
            continue
        rid, value = str(item.get("id", "")), item.get("value") or {}
        region = out.setdefault(rid, {})
        if isinstance(value.get("start"), (int, float)) and isinstance(value.get("end"), (int, float)):
            region.setdefault("start_time", int(round(1000 * value["start"])))
            region.setdefault("end_time", int(round(1000 * value["end"])))
        answer = _answer(item)
        if answer is not None:
            region[_CONTROL_FIELD[item["from_name"]]] = answer
    return out


def load_export(path: Path) -> list[dict[str, Any]]:
    try:
        tasks = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ImportFileError(f"{path}: not a readable JSON file ({exc})") from exc
    if not isinstance(tasks, list) or not all(isinstance(t, dict) and isinstance(t.get("data"), dict) for t in tasks):
        raise ImportFileError(f"{path}: not a Label Studio JSON export (a list of tasks with 'data')")
    return tasks


def import_labelstudio(export: Path, out_dir: Path) -> ImportReport:
    """Apply the annotators' answers in ``export`` to the output folder ``out_dir``."""
    state = out_dir / STATE_FILE
    report = ImportReport()
    work: list[tuple[str, int, str, dict[str, Any], dict[str, Any]]] = []  # (when, id, rec, task, annotation)
    tasks = load_export(export)
    for task in tasks:
        for ann in task.get("annotations") or []:
            if isinstance(ann, dict) and not ann.get("was_cancelled") and isinstance(ann.get("result"), list):
                when = str(ann.get("updated_at") or ann.get("created_at") or "")
                work.append((when, int(ann.get("id") or 0), str(task["data"].get("recording", "")), task, ann))
    work.sort(key=lambda w: (w[0], w[1]))
    for _, ann_id, rec, task, ann in work:
        exported = dict(zip(task["data"].get("keys") or [], task["data"].get("segments") or []))
        who, note = _who(ann), f"Label Studio annotation {ann_id}"
        for rid, answers in _answers(ann["result"]).items():
            if rid not in exported:
                report.skipped.append(f"{rec} region {rid}: not a segment of the export (new regions are not imported)")
                continue
            was = exported[rid]
            with StateStore(state, readonly=True) as store:
                try:
                    raw_of = {s["speaker_id"]: s["raw"] for s in data.recording(store, rec)["speakers"]}
                except (data.NotFound, data.Busy) as exc:
                    report.skipped.append(f"{rec} {rid}: {exc}")
                    continue
            for field_, value in _ordered(answers, was):
                if field_ == SPEAKER_FIELD:
                    expect, value = raw_of.get(was["speaker_id"]), raw_of.get(value, value)
                else:
                    expect = was[field_]
                if value == expect or (field_ != SPEAKER_FIELD and value == was[field_]):
                    report.unchanged += 1
                    continue
                try:
                    apply_edit(state, out_dir, rec, rid, field_, value, who, note, expect=expect)
                except EditError as exc:
                    if "is already" in str(exc):
                        report.unchanged += 1
                    else:
                        report.skipped.append(f"{rec} {rid} {field_}: {exc}")
                    continue
                except (Conflict, data.NotFound, data.Busy) as exc:
                    report.skipped.append(f"{rec} {rid} {field_}: {exc}")
                    continue
                report.applied.append(f"{rec} {rid} {field_}: {expect!r} -> {value!r} ({who})")
    return report


def _ordered(answers: dict[str, Any], was: dict[str, Any]) -> list[tuple[str, Any]]:
    """Boundaries first, in the order that keeps start < end at each step; then caption and
    contextual inference (an annotator's own text is then in force, and the corrections after
    it do not recompose it); then the rest."""
    bounds = [(f, answers[f]) for f in ("start_time", "end_time") if f in answers]
    if "start_time" in answers and answers["start_time"] >= was["end_time"]:
        bounds.reverse()  # the region moved later: its end first
    composed = [(f, answers[f]) for f in COMPOSED_FIELDS if f in answers]
    rest = [(f, v) for f, v in answers.items() if f not in ("start_time", "end_time", *COMPOSED_FIELDS)]
    return bounds + composed + rest
