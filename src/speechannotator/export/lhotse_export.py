"""lhotse: DEST/recordings.jsonl.gz and DEST/supervisions.jsonl.gz, written by Lhotse itself.

A supervision per segment, with the 15 attributes and the rest of the output record in `custom`.
A recording that is not a plain file (a datasets row) is written once as DEST/audio/<id>.flac so
that the RecordingSet points at real audio.
"""

from __future__ import annotations

from pathlib import Path

import soundfile as sf

from .audio_source import recording_samples
from .corpus_view import ExportRecording

CUSTOM_EXCLUDED = ("text", "start_time", "end_time", "language", "speaker_id")  # first-class supervision fields


def export_lhotse(view: list[ExportRecording], dest: Path) -> Path:
    from lhotse import Recording, RecordingSet, SupervisionSegment, SupervisionSet

    dest.mkdir(parents=True, exist_ok=True)
    recordings, supervisions = [], []
    for rec in view:
        item = rec.item
        offset = item.offset
        if item.kind == "hf":
            samples, sr = recording_samples(item, "source")
            audio_path = dest / "audio" / f"{rec.id}.flac"
            audio_path.parent.mkdir(parents=True, exist_ok=True)
            sf.write(str(audio_path), samples, sr)
            offset = 0.0
        else:
            audio_path = Path(item.path)
        recording = Recording.from_file(audio_path, recording_id=rec.id)
        recordings.append(recording)
        for seg in rec.segments:
            supervisions.append(
                SupervisionSegment(
                    id=seg.uid,
                    recording_id=rec.id,
                    start=round(offset + seg.start, 3),
                    duration=round(seg.duration, 3),
                    channel=recording.channel_ids[0] if len(recording.channel_ids) == 1 else recording.channel_ids,
                    text=seg.record["text"],
                    language=seg.record["language"],
                    speaker=seg.speaker,
                    custom={
                        **{k: v for k, v in seg.record.items() if k not in CUSTOM_EXCLUDED},
                        "confidence": dict(sorted(seg.confidence.items())),
                        **seg.quality,
                        "corpus_speaker_id": seg.corpus_speaker,
                    },
                )
            )
    RecordingSet.from_recordings(recordings).to_file(dest / "recordings.jsonl.gz")
    SupervisionSet.from_segments(supervisions).to_file(dest / "supervisions.jsonl.gz")
    return dest
