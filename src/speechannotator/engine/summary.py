"""OUT/summary.json: what a corpus run did (done, skipped, failed with causes, audio hours, wall time)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..atomic import write_text_atomic
from .item_run import ItemResult

SUMMARY_FILE = "summary.json"


@dataclass
class CorpusSummary:
    engine: str
    done: list[str] = field(default_factory=list)  # annotated by this run
    skipped: list[str] = field(default_factory=list)  # complete before this run
    failed: dict[str, str] = field(default_factory=dict)  # id (or input) -> one-line cause
    partial: dict[str, str] = field(default_factory=dict)  # id -> failed field predictions (written empty)
    notes: dict[str, str] = field(default_factory=dict)  # id -> what reading its audio noticed (truncated)
    no_speech: list[str] = field(default_factory=list)  # read, but no speech found: an empty output
    audio_seconds: float = 0.0  # of the done, no-speech and skipped recordings
    processed_seconds: float = 0.0  # of those annotated by this run (not skipped): the throughput's
    wall_time_s: float = 0.0
    workers: int = 1
    voices: int | None = None  # corpus speaker ids joined (OUT/speakers.jsonl); None: not joined
    speaker_error: str = ""  # why the corpus speaker step could not run

    @property
    def ok(self) -> bool:
        return not self.failed

    def add(self, r: ItemResult) -> None:
        if r.status == "failed":
            self.failed[r.id] = r.error or "failed"
            return
        if r.notes:
            self.notes[r.id] = r.notes
        self.audio_seconds += r.duration
        if r.status == "no_speech":
            self.no_speech.append(r.id)
            self.processed_seconds += r.duration
            return
        (self.done if r.status == "done" else self.skipped).append(r.id)
        if r.status == "done":
            self.processed_seconds += r.duration
        if r.warning:
            self.partial[r.id] = r.warning

    def to_json(self) -> dict[str, Any]:
        hours = self.audio_seconds / 3600
        processed = self.processed_seconds / 3600
        return {
            "engine": self.engine,
            "workers": self.workers,
            "recordings": len(self.done) + len(self.skipped) + len(self.failed) + len(self.no_speech),
            "done": sorted(self.done),
            "skipped": sorted(self.skipped),
            "no_speech": sorted(self.no_speech),
            "failed": [{"id": k, "cause": v} for k, v in sorted(self.failed.items())],
            "with_failed_fields": [{"id": k, "what": v} for k, v in sorted(self.partial.items())],
            "with_warnings": [{"id": k, "what": v} for k, v in sorted(self.notes.items())],
            "voices": self.voices,
            **({"speaker_error": self.speaker_error} if self.speaker_error else {}),
            "audio_hours": round(hours, 6),
            "wall_time_s": round(self.wall_time_s, 3),
            "processed_audio_hours": round(processed, 6),
            # this run's throughput: audio skipped as complete (a resume) is not work done
            "audio_hours_per_hour": round(processed / (self.wall_time_s / 3600), 3) if self.wall_time_s > 0 else 0.0,
        }

    def write(self, out_dir: str | Path) -> Path:
        path = Path(out_dir) / SUMMARY_FILE
        return write_text_atomic(path, json.dumps(self.to_json(), ensure_ascii=False, indent=2) + "\n")
