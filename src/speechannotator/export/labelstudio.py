"""labelstudio: tasks with predictions for Label Studio's audio labeling template.

DEST/tasks.json (import it) and DEST/config.xml (the labeling interface: speaker labels and a
per-region transcription over the audio). Audio is referenced as Label Studio's local-files URL
(`audio_url_prefix` + the absolute path); serve the files with LOCAL_FILES_SERVING_ENABLED.
"""

from __future__ import annotations

import json
from pathlib import Path
from xml.sax.saxutils import quoteattr

from .audio_source import recording_samples
from .corpus_view import ExportRecording
from .rows import write_text_atomic

LOCAL_FILES_PREFIX = "/data/local-files/?d="


def _config(speakers: list[str]) -> str:
    labels = "\n".join(f"    <Label value={quoteattr(s)}/>" for s in speakers)
    return (
        "<View>\n"
        '  <Labels name="speaker" toName="audio">\n'
        f"{labels}\n"
        "  </Labels>\n"
        '  <Audio name="audio" value="$audio"/>\n'
        '  <TextArea name="transcription" toName="audio" perRegion="true" editable="true" rows="2"/>\n'
        "</View>\n"
    )


def export_labelstudio(view: list[ExportRecording], dest: Path, *, audio_url_prefix: str = LOCAL_FILES_PREFIX) -> Path:
    import soundfile as sf

    tasks, speakers = [], set()
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
            rid = f"{seg.index:05d}"
            result.append(
                {
                    "id": rid,
                    "from_name": "speaker",
                    "to_name": "audio",
                    "type": "labels",
                    "value": {**region, "labels": [spk]},
                }
            )
            result.append(
                {
                    "id": rid,
                    "from_name": "transcription",
                    "to_name": "audio",
                    "type": "textarea",
                    "value": {**region, "text": [seg.record["text"]]},
                }
            )
        tasks.append(
            {
                "data": {
                    "audio": audio_url_prefix + str(audio_path).lstrip("/"),
                    "recording": rec.id,
                    "segments": [s.record for s in rec.segments],
                },
                "predictions": [{"model_version": "speechannotator", "result": result}],
            }
        )
    write_text_atomic(dest / "tasks.json", json.dumps(tasks, ensure_ascii=False, indent=2) + "\n")
    write_text_atomic(dest / "config.xml", _config(sorted(speakers)))
    return dest
