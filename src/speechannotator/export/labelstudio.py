"""labelstudio: tasks with predictions for Label Studio's audio labeling template.

DEST/tasks.json (import it) and DEST/config.xml (the labeling interface): one region per
segment over the audio, carrying its speaker label, its transcript and transcript with
paralanguage tags, and the 15 attributes: choices for the closed fields (gender, age), text
areas for the open ones. Each region's id is the segment's key in the state, so
`speechannotator import labelstudio` (``viewer.labelstudio_import``) can bring the annotators'
answers back as human decisions. Audio is referenced as Label Studio's local-files URL
(`audio_url_prefix` + the absolute path); serve the files with LOCAL_FILES_SERVING_ENABLED.
"""

from __future__ import annotations

import json
from pathlib import Path
from xml.sax.saxutils import quoteattr

from ..atomic import write_text_atomic
from ..schema import AGE_VALUES, FIELDS, GENDER_VALUES, NONE_VALUE
from .audio_source import recording_samples
from .corpus_view import ExportRecording

LOCAL_FILES_PREFIX = "/data/local-files/?d="


# Output field -> the control that carries it in the config (one home for both directions).
SPEAKER_CONTROL = "speaker"
TEXT_CONTROLS: dict[str, str] = {"text": "transcription", "text_and_paralanguage": "text_and_paralanguage"}
CLOSED_FIELDS: dict[str, dict[str, tuple[str, ...]]] = {"gender": GENDER_VALUES, "age": AGE_VALUES}
OPEN_FIELDS: tuple[str, ...] = tuple(f for f in FIELDS if f not in CLOSED_FIELDS)


def _label_lang(records: list[dict]) -> str:
    """The label language the records are written in (closed values and markers tell)."""
    zh = {*GENDER_VALUES["zh"], *AGE_VALUES["zh"], NONE_VALUE["zh"]}
    return "zh" if any(r.get("gender") in zh or r.get("age") in zh for r in records) else "en"


def _config(speakers: list[str], langs: list[str]) -> str:
    labels = "\n".join(f"    <Label value={quoteattr(s)}/>" for s in speakers)
    lines = [
        "<View>",
        '  <Audio name="audio" value="$audio"/>',
        f'  <Labels name="{SPEAKER_CONTROL}" toName="audio">',
        labels,
        "  </Labels>",
        '  <View visibleWhen="region-selected">',
    ]
    for field, control in TEXT_CONTROLS.items():
        lines += [
            f"    <Header value={quoteattr(field)}/>",
            f'    <TextArea name="{control}" toName="audio" perRegion="true" editable="true" rows="2"/>',
        ]
    for field in FIELDS:
        lines.append(f"    <Header value={quoteattr(field)}/>")
        if field in CLOSED_FIELDS:
            values = [v for lang in langs for v in (*CLOSED_FIELDS[field][lang], NONE_VALUE[lang])]
            lines.append(f'    <Choices name="{field}" toName="audio" perRegion="true" choice="single-radio">')
            lines += [f"      <Choice value={quoteattr(v)}/>" for v in dict.fromkeys(values)]
            lines.append("    </Choices>")
        else:
            rows = 3 if field in ("caption", "contextual_inference") else 1
            lines.append(
                f'    <TextArea name="{field}" toName="audio" perRegion="true" editable="true" '
                f'maxSubmissions="1" rows="{rows}"/>'
            )
    lines += ["  </View>", "</View>", ""]
    return "\n".join(lines)


def _region(rid: str, region: dict, control: str, kind: str, value: dict) -> dict:
    return {"id": rid, "from_name": control, "to_name": "audio", "type": kind, "value": {**region, **value}}


def export_labelstudio(view: list[ExportRecording], dest: Path, *, audio_url_prefix: str = LOCAL_FILES_PREFIX) -> Path:
    import soundfile as sf

    tasks, speakers, langs = [], set(), set()
    for rec in view:
        item = rec.item
        if item.kind == "hf" or item.offset or item.span is not None:
            # Label Studio plays whole files: write the recording's audio once.
            samples, sr = recording_samples(item, "source")
            audio_path = (dest / "audio" / f"{rec.id}.flac").resolve()
            audio_path.parent.mkdir(parents=True, exist_ok=True)
            sf.write(str(audio_path), samples, sr)
        else:
            audio_path = Path(item.path).resolve()
        result = []
        for seg in rec.segments:
            spk = seg.record["speaker_id"]
            speakers.add(spk)
            region = {"start": seg.start, "end": seg.end, "channel": 0}
            rid = seg.key or f"{seg.index:05d}"  # the state's key: the import finds the segment by it
            result.append(_region(rid, region, SPEAKER_CONTROL, "labels", {"labels": [spk]}))
            for field, control in TEXT_CONTROLS.items():
                result.append(_region(rid, region, control, "textarea", {"text": [seg.record[field]]}))
            for field in FIELDS:
                if field in CLOSED_FIELDS:
                    result.append(_region(rid, region, field, "choices", {"choices": [seg.record[field]]}))
                else:
                    result.append(_region(rid, region, field, "textarea", {"text": [seg.record[field]]}))
        langs.add(_label_lang([s.record for s in rec.segments]))
        tasks.append(
            {
                "data": {
                    "audio": audio_url_prefix + str(audio_path).lstrip("/"),
                    "recording": rec.id,
                    "segments": [s.record for s in rec.segments],
                    "keys": [s.key for s in rec.segments],
                },
                "predictions": [{"model_version": "speechannotator", "result": result}],
            }
        )
    write_text_atomic(dest / "tasks.json", json.dumps(tasks, ensure_ascii=False, indent=2) + "\n")
    write_text_atomic(dest / "config.xml", _config(sorted(speakers), sorted(langs) or ["en"]))
    return dest
