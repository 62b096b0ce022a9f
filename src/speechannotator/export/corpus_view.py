"""What every exporter reads: the final JSON of each recording plus the state, filtered.

Exporters are pure functions of this view: values come from OUT/<id>.json (the file a person may
correct), confidences and segment keys from OUT/state.sqlite, audio locations from OUT/corpus.jsonl.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from .. import corrections
from ..corpus.item import CorpusItem
from ..corpus.manifest import read_manifest
from ..corpus.voice_registry import read_speaker_map
from ..output.confidence import confidences_of
from ..pipeline import STATE_FILE
from ..schema import FIELDS
from ..state import StateStore
from .quality import SegmentSources, quality_values
from .where import TEXT_NAMES, Where, parse_where, preset_expression


@dataclass(frozen=True)
class ExportFilter:
    """Which segments an export keeps. A confidence bound drops a segment without that field's confidence."""

    min_duration: float | None = None  # seconds
    max_duration: float | None = None
    languages: frozenset[str] = frozenset()  # empty: all
    speakers: frozenset[str] = frozenset()  # speaker_id (spk_01) or <recording id>:<speaker_id>
    min_confidence: dict[str, float] = field(default_factory=dict)  # field -> lowest confidence kept
    where: str | None = None  # an expression over the segment columns (export/where.py)
    preset: str | None = None  # a named expression (where.PRESETS), combined with `where` by and

    def check(self) -> None:
        """Settings that can never keep a segment are errors naming the setting (ValueError)."""
        lo, hi = self.min_duration, self.max_duration
        if lo is not None and hi is not None and lo > hi:
            raise ValueError(f"--min-duration {lo:g} is above --max-duration {hi:g}: no segment can match")
        if (lo is not None and lo < 0) or (hi is not None and hi < 0):
            raise ValueError("durations are seconds >= 0")
        for name, value in self.min_confidence.items():
            if name not in FIELDS:
                raise ValueError(
                    f"--min-confidence {name}={value:g}: {name!r} is not an annotated field "
                    f"(fields: {', '.join(FIELDS)}; quality columns such as snr_db go in --where)"
                )
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"--min-confidence {name}={value:g}: confidences lie between 0 and 1")
        _compiled(self.where, self.preset)

    def check_against(self, languages: set[str], speakers: set[str]) -> None:
        """Values that name nothing in this corpus (`--language english` where it says `en`)."""
        have = ", ".join(sorted(languages)) or "none"
        for lang in sorted(self.languages - languages):
            raise ValueError(f"--language {lang}: no segment has this language (the corpus has: {have})")
        for spk in sorted(self.speakers):
            if spk not in speakers:
                raise ValueError(
                    f"--speaker {spk}: no such speaker in the corpus (e.g. {', '.join(sorted(speakers)[:3])})"
                )

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
        where = _compiled(self.where, self.preset)
        return where is None or where.keeps(seg.columns)


@lru_cache(maxsize=32)
def _compiled(where: str | None, preset: str | None) -> Where | None:
    texts = ([f"({preset_expression(preset)})"] if preset else []) + ([f"({where})"] if where else [])
    return parse_where(" and ".join(texts)) if texts else None


@dataclass(frozen=True)
class ExportSegment:
    rec: str
    index: int  # position in the recording's output
    key: str  # the segment key in the state ("" when the state has none for this position)
    record: dict[str, Any]  # the output object, as in OUT/<id>.json
    confidence: dict[str, float]  # field -> the confidence of the value shown (output.confidence)
    quality: dict[str, Any] = field(default_factory=dict)  # export/quality.py: the quality columns
    corpus_speaker: str | None = None  # the voice's id across the corpus (OUT/speakers.jsonl)

    @property
    def columns(self) -> dict[str, Any]:
        """What --where sees: the quality columns and the record's text fields."""
        text = {k: self.record.get(k) for k in TEXT_NAMES if k in self.record}
        return {**text, "recording": self.rec, "corpus_speaker_id": self.corpus_speaker, **self.quality}

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
    filters.check()
    manifest = read_manifest(out)
    voices = read_speaker_map(out)
    view = []
    languages: set[str] = set()
    speakers: set[str] = set()
    store = StateStore(out / STATE_FILE)
    try:
        for rec in store.recordings():
            path = out / f"{rec['rec']}.json"
            if rec["status"] != "complete" or not path.exists():
                continue
            data = json.loads(path.read_text(encoding="utf-8"))
            # The JSON's rows are the reviewed ones: a deleted, split or added segment shifts positions.
            keys = [k for k, _ in corrections.reviewed_items(store, rec["rec"])]
            table = {seg.key: seg.to_json() for seg in corrections.review_segments(store, rec["rec"])}
            raw = store.evidence(rec["rec"])
            evidence = {k: {n: e.value for n, e in by_name.items()} for k, by_name in raw.items()}
            placed = corrections.placed_decisions(store, rec["rec"]).placed
            conf = confidences_of(store.segments(rec["rec"]), store.predictions(rec["rec"]), raw, placed)
            segs = []
            for i, d in enumerate(data):
                key = keys[i] if i < len(keys) else ""
                c = conf.get(key, {})
                duration = max(0.0, (d["end_time"] - d["start_time"]) / 1000.0)
                sources = SegmentSources(duration, d, table.get(key, {"key": key}), evidence, c)
                seg = ExportSegment(
                    rec=rec["rec"],
                    index=i,
                    key=key,
                    record=d,
                    confidence=c,
                    quality=quality_values(sources),
                    corpus_speaker=voices.get(f"{rec['rec']}:{d.get('speaker_id')}"),
                )
                languages.add(str(d.get("language", "")))
                speakers.update((str(d.get("speaker_id", "")), seg.speaker))
                if filters.keeps(seg):
                    segs.append(seg)
            view.append(
                ExportRecording(
                    id=rec["rec"], item=_item_for(rec, manifest), duration=float(rec["duration"] or 0.0), segments=segs
                )
            )
    finally:
        store.close()
    filters.check_against(languages, speakers)
    return sorted(view, key=lambda r: r.id)
