"""What every exporter reads: the final JSON of each recording plus the state, filtered.

Exporters are pure functions of this view: values come from OUT/<id>.json (the file a person may
correct), confidences and segment keys from OUT/state.sqlite, audio locations from OUT/corpus.jsonl.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..corpus.item import CorpusItem
from ..corpus.manifest import read_manifest
from ..pipeline import STATE_FILE
from ..state import StateStore


@dataclass(frozen=True)
class ExportFilter:
    """Which segments an export keeps. A confidence bound drops a segment without that field's confidence."""

    min_duration: float | None = None  # seconds
    max_duration: float | None = None
    languages: frozenset[str] = frozenset()  # empty: all
    speakers: frozenset[str] = frozenset()  # speaker_id (spk_01) or <recording id>:<speaker_id>
    min_confidence: dict[str, float] = field(default_factory=dict)  # field -> lowest confidence kept

    def keeps(self, seg: ExportSegment) -> bool:
        d = seg.duration
        if self.min_duration is not None and d < self.min_duration:
            return False
        if self.max_duration is not None and d > self.max_duration:
            return False
        if self.languages and seg.record.get("language") not in self.languages:
            return False
        spk = seg.record.get("speaker_id")
        if self.speakers and spk not in self.speakers and f"{seg.rec}:{spk}" not in self.speakers:
            return False
        for name, lowest in self.min_confidence.items():
            got = seg.confidence.get(name)
            if got is None or got < lowest:
                return False
        return True


@dataclass(frozen=True)
class ExportSegment:
    rec: str
    index: int  # position in the recording's output
    key: str  # the segment key in the state ("" when the state has none for this position)
    record: dict[str, Any]  # the output object, as in OUT/<id>.json
    confidence: dict[str, float]  # field -> the latest review round's confidence

    @property
    def start(self) -> float:
        return self.record["start_time"] / 1000.0

    @property
    def end(self) -> float:
        return self.record["end_time"] / 1000.0

    @property
    def duration(self) -> float:
        return max(0.0, self.end - self.start)

    @property
    def speaker(self) -> str:
        """Speaker ids are per recording; this one is unique in the corpus."""
        return f"{self.rec}:{self.record['speaker_id']}"

    @property
    def uid(self) -> str:
        return f"{self.rec}/{self.index:05d}"


@dataclass(frozen=True)
class ExportRecording:
    id: str
    item: CorpusItem
    duration: float
    segments: list[ExportSegment]  # after filtering


def _item_for(rec: dict[str, Any], manifest: dict[str, CorpusItem]) -> CorpusItem:
    if rec["rec"] in manifest:
        return manifest[rec["rec"]]
    # Annotated before OUT/corpus.jsonl existed: the state knows the file.
    return CorpusItem(id=rec["rec"], path=rec["path"], duration=rec["duration"])


def corpus_view(out_dir: str | Path, filters: ExportFilter | None = None) -> list[ExportRecording]:
    """The complete recordings of OUT in id order, each with its kept segments."""
    out = Path(out_dir)
    if not (out / STATE_FILE).exists():
        raise FileNotFoundError(f"{out}: no {STATE_FILE} (not an annotation output folder)")
    filters = filters or ExportFilter()
    manifest = read_manifest(out)
    view = []
    store = StateStore(out / STATE_FILE)
    try:
        for rec in store.recordings():
            path = out / f"{rec['rec']}.json"
            if rec["status"] != "complete" or not path.exists():
                continue
            data = json.loads(path.read_text(encoding="utf-8"))
            keys = [k for k, _ in store.records(rec["rec"])]
            preds = store.predictions(rec["rec"])
            conf: dict[str, dict[str, float]] = {}
            for (key, name), p in preds.items():
                if p.status != "failed":
                    conf.setdefault(key, {})[name] = float(p.confidence)
            segs = []
            for i, d in enumerate(data):
                key = keys[i] if i < len(keys) else ""
                seg = ExportSegment(rec=rec["rec"], index=i, key=key, record=d, confidence=conf.get(key, {}))
                if filters.keeps(seg):
                    segs.append(seg)
            view.append(
                ExportRecording(
                    id=rec["rec"], item=_item_for(rec, manifest), duration=float(rec["duration"] or 0.0), segments=segs
                )
            )
    finally:
        store.close()
    return sorted(view, key=lambda r: r.id)
