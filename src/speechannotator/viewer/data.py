"""What the review page shows, read from the state (opened read-only) as plain JSON-able data.

The per-field trails come from ``output.explain`` (the same data ``speechannotator explain``
prints); this module only shapes them for the page.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

from ..corrections import (
    ADDED_FIELD,
    DELETED_FIELD,
    EDITABLE_FIELDS,
    MARK_FIELDS,
    REVIEWED_FIELD,
    in_force,
    placed_decisions,
    review_segments,
    reviewed_items,
)
from ..output.confidence import confidences_of, shown_confidences
from ..output.explain import RecordingTrails, evidence_source, field_trail
from ..priors.names import VOICE_SIMILARITY
from ..schema import AGE_VALUES, COMPOSED_FIELDS, FIELDS, GENDER_VALUES, NONE_VALUE, shown
from ..state import StateStore

PEAK_BUCKETS = 1600  # waveform columns sent to the page: enough for a wide screen, a few kB
FLAGS = ("flagged", "relabeled", "failed", "edited")


class NotFound(LookupError):
    """A recording or segment the state does not name."""


class Busy(RuntimeError):
    """The recording is being annotated (or its last run stopped): nothing final to show or correct."""


def _finished(row: dict[str, Any]) -> None:
    if row["status"] == "running":
        raise Busy(
            f"recording {row['rec']!r} is being annotated (or its last run stopped before finishing); "
            "it can be reviewed when a run completes"
        )


def recording_row(store: StateStore, rec: str) -> dict[str, Any]:
    for r in store.recordings():
        if r["rec"] == rec:
            return r
    raise NotFound(f"no recording {rec!r} in the state")


def field_flags(store: StateStore, rec: str) -> dict[tuple[str, str], set[str]]:
    """{(segment key, field): {"flagged", "relabeled", "failed", "edited"} that apply}."""
    out: dict[tuple[str, str], set[str]] = defaultdict(set)
    for kf, verdicts in store.verdicts(rec).items():
        if any(not v.accepted for v in verdicts):
            out[kf].add("flagged")
    for kf, rounds in store.predictions(rec, all_rounds=True).items():
        if len(rounds) > 1:
            out[kf].add("relabeled")
        if rounds and rounds[-1].status == "failed":
            out[kf].add("failed")
    for kf in in_force(placed_decisions(store, rec).placed):
        if kf[1] not in MARK_FIELDS:
            out[kf].add("edited")
    return dict(out)


def _bare_row(r: dict[str, Any], note: str) -> dict[str, Any]:
    """A recording whose details cannot be read now (a run is rewriting them): its status only."""
    return {
        "rec": r["rec"],
        "duration": r["duration"],
        "status": r["status"],
        "error": r["error"] or note,
        "segments": 0,
        "reviewed": 0,
        "speakers": 0,
        "decisions": 0,
        "orphaned": 0,
        **dict.fromkeys(FLAGS, 0),
        "per_field": {f: dict.fromkeys(FLAGS, 0) for f in EDITABLE_FIELDS},
    }


def _corpus_row(store: StateStore, r: dict[str, Any]) -> dict[str, Any]:
    rec = r["rec"]
    if r["status"] == "running":
        return _bare_row(r, "being annotated")
    items = reviewed_items(store, rec)
    flags = field_flags(store, rec)
    checked = reviewed_keys(store, rec)
    per_field: dict[str, dict[str, int]] = {f: dict.fromkeys(FLAGS, 0) for f in EDITABLE_FIELDS}
    totals = dict.fromkeys(FLAGS, 0)
    for (_, field), kinds in flags.items():
        for k in kinds:
            totals[k] += 1
            if field in per_field:
                per_field[field][k] += 1
    return {
        "rec": rec,
        "duration": r["duration"],
        "status": r["status"],
        "error": r["error"],
        "segments": len(items),
        "reviewed": sum(k in checked for k, _ in items),
        "speakers": len({row["speaker_id"] for _, row in items}),
        "decisions": len(store.decisions(rec)),
        "orphaned": len(placed_decisions(store, rec).orphaned),
        **totals,
        "per_field": per_field,
    }


def reviewed_keys(store: StateStore, rec: str) -> set[str]:
    """Segments a reviewer marked as checked (the latest mark in force is true)."""
    force = in_force(placed_decisions(store, rec).placed)
    return {k for (k, f), d in force.items() if f == REVIEWED_FIELD and d.new is True}


def confidences(store: StateStore, rec: str) -> dict[str, dict[str, float]]:
    """{segment key: {labeled field: the confidence of the value shown}} (``output.confidence``)."""
    return _rounded(shown_confidences(store, rec))


def voice_similarities(store: StateStore, rec: str) -> dict[str, float]:
    """{segment key: how like its speaker's other segments its voice is} (priors/voice_fit.py),
    for the segments the diarizer embedded."""
    return {
        key: round(float(by[VOICE_SIMILARITY].value), 3)
        for key, by in store.evidence(rec).items()
        if VOICE_SIMILARITY in by and isinstance(by[VOICE_SIMILARITY].value, int | float)
    }


def _rounded(conf: dict[str, dict[str, float]]) -> dict[str, dict[str, float]]:
    return {k: {f: round(c, 3) for f, c in by.items()} for k, by in conf.items()}


CORPUS_PAGE = 100  # recordings per page of the corpus list
CORPUS_SORT_KEYS = ("rec", "duration", "speakers", "segments", "status", "reviewed", *FLAGS, "match")


class CorpusRows:
    """The corpus list's summary rows, each computed once per version of its recording
    (``StateStore.recording_versions``): a corpus of thousands is read in full once, then
    only the recordings a run or a decision touched."""

    def __init__(self) -> None:
        # rec -> (its version when the row was made; None: a recording without a version yet, row)
        self._rows: dict[str, tuple[tuple | None, dict[str, Any]]] = {}

    def rows(self, store: StateStore) -> list[dict[str, Any]]:
        versions = store.recording_versions()
        out = []
        for r in store.recordings():
            version = versions.get(r["rec"])
            cached = self._rows.get(r["rec"])
            if cached is not None and cached[0] == version:
                out.append(cached[1])
                continue
            try:
                row = _corpus_row(store, r)
            except Exception as exc:  # noqa: BLE001 - one recording mid-rerun must not hide the corpus
                row = _bare_row(r, f"{exc.__class__.__name__}: {exc}")
            if r["status"] != "running":
                self._rows[r["rec"]] = (version, row)
            out.append(row)
        return out


def corpus_page(
    rows: list[dict[str, Any]],
    *,
    offset: int = 0,
    limit: int = CORPUS_PAGE,
    sort: str = "rec",
    asc: bool = True,
    name: str = "",
    field: str = "",
    flag: str = "relabeled",
) -> dict[str, Any]:
    """One page of the corpus list, filtered by name and by "segments where FIELD is FLAG",
    sorted by a column (then by name), with the totals of the whole filtered list."""
    if sort not in CORPUS_SORT_KEYS:
        raise NotFound(f"cannot sort by {sort!r}; columns: {', '.join(CORPUS_SORT_KEYS)}")
    if field and (field not in EDITABLE_FIELDS or flag not in FLAGS):
        raise NotFound(f"no filter {field!r} / {flag!r}")
    name = name.strip().lower()
    kept = []
    for r in rows:
        match = r["per_field"][field][flag] if field else r[flag]
        if (name and name not in r["rec"].lower()) or (field and not match):
            continue
        kept.append({**r, "match": match})
    kept.sort(key=lambda r: r["rec"])
    kept.sort(key=lambda r: (r[sort] is None, r[sort] if r[sort] is not None else 0), reverse=not asc)
    offset, limit = max(0, offset), max(1, min(limit, 1000))
    return {
        "recordings": kept[offset : offset + limit],
        "offset": offset,
        "limit": limit,
        "matched": len(kept),
        "total": len(rows),
        "segments": sum(r["segments"] for r in rows),
        "reviewed": sum(r["reviewed"] for r in rows),
        "duration": sum(r["duration"] or 0 for r in rows),
        "fields": list(EDITABLE_FIELDS),
        "flags": list(FLAGS),
    }


def corpus(store: StateStore) -> dict[str, Any]:
    """One summary row per recording the state names."""
    rows = CorpusRows().rows(store)
    return {"recordings": rows, "fields": list(EDITABLE_FIELDS), "flags": list(FLAGS)}


def recording(store: StateStore, rec: str) -> dict[str, Any]:
    """The recording view: segments in output order with their values and flags."""
    row = recording_row(store, rec)
    _finished(row)
    try:
        lang = store.label_language(rec)
    except ValueError:  # a recording that failed before its segment table: nothing to label
        lang = "en"
    placement = placed_decisions(store, rec)
    raw = {s.key: s.speaker for s in review_segments(store, rec, placement)}
    force = in_force(placement.placed)
    flags = field_flags(store, rec)
    checked, conf = reviewed_keys(store, rec), confidences(store, rec)
    fit = voice_similarities(store, rec)
    segments: list[dict[str, Any]] = []
    speakers: dict[str, dict[str, Any]] = {}
    for i, (key, out) in enumerate(reviewed_items(store, rec)):
        spk = force[(key, "speaker")].new if (key, "speaker") in force else raw.get(key, out["speaker_id"])
        speakers.setdefault(
            out["speaker_id"], {"speaker_id": out["speaker_id"], "speaker_name": out["speaker_name"], "raw": spk}
        )
        segments.append(
            {
                "index": i,
                "key": key,
                "raw_speaker": spk,
                **out,
                "flags": {f: sorted(flags.get((key, f), ())) for f in EDITABLE_FIELDS if flags.get((key, f))},
                "reviewed": key in checked,
                "confidence": conf.get(key, {}),
                "voice_similarity": fit.get(key),
            }
        )
    return {
        "rec": rec,
        "duration": row["duration"],
        "status": row["status"],
        "error": row["error"],
        "label_lang": lang,
        "fields": list(FIELDS),
        "composed": list(COMPOSED_FIELDS),
        "speakers": sorted(speakers.values(), key=lambda s: s["speaker_id"]),
        "segments": segments,
        "orphaned": [asdict(d) for d in placement.orphaned],
        "deleted": [
            {
                "key": k,
                "by": d.who,
                "at": d.at,
                "start_time": r["start_time"],
                "end_time": r["end_time"],
                "text": r["text"],
            }
            for k, r in [*store.records(rec), *_made_rows(placement)]
            if (d := force.get((k, DELETED_FIELD))) is not None and d.new is True
        ],
        "vocab": {"gender": [*GENDER_VALUES[lang], NONE_VALUE[lang]], "age": [*AGE_VALUES[lang], NONE_VALUE[lang]]},
    }


def _made_rows(placement) -> list[tuple[str, dict[str, Any]]]:
    """The segments a person made (split or added) that are in force, as (key, span and text)."""
    return [
        (d.key, {"start_time": d.new["start_time"], "end_time": d.new["end_time"], "text": d.new["row"]["text"]})
        for d in placement.placed
        if d.field == ADDED_FIELD
    ]


def _round(value: Any) -> Any:
    return round(value, 4) if isinstance(value, float) else value


def segment(store: StateStore, rec: str, key: str) -> dict[str, Any]:
    """One segment's panel: every field's trail (explain's data) and the segment's decisions."""
    _finished(recording_row(store, rec))
    data = RecordingTrails.load(store, rec)
    lang = store.label_language(rec)  # a typed value (an emotion) shown as its record text
    index = next((i for i, s in enumerate(data.segments) if s.key == key), None)
    if index is None:
        raise NotFound(f"no segment {key!r} in {rec!r}")
    # of the value shown, not of the last round; from the trails' predictions, evidence and decisions
    last_round = {kf: rounds[-1] for kf, rounds in data.predictions.items() if rounds}
    shown_conf = _rounded(confidences_of(store.segments(rec), last_round, data.evidence, data.decisions)).get(key, {})
    trails = {}
    for field in FIELDS:
        t = field_trail(data, index, field)
        latest = t.latest
        trails[field] = {
            "final": t.final,
            "composed": t.composed,
            "confidence": shown_conf.get(field),
            "cites": [] if latest is None else latest.evidence,
            "contract": None
            if t.contract is None
            else {k: v for k, v in asdict(t.contract).items() if k not in ("key", "field", "context")},
            "evidence": [
                {
                    "name": n,
                    "value": _round(e.value) if not isinstance(e.value, (dict, list)) else e.value,
                    "unit": e.unit,
                    "source": evidence_source(n),
                    "extractor": e.extractor,
                    "reliability": e.reliability,
                }
                for n, e in sorted(t.admitted.items())
            ],
            "speaker_history": t.speaker_history,
            "recording_summary": t.recording_summary,
            "rounds": [
                {
                    "round": r.prediction.round,
                    "value": None if r.prediction.value is None else shown(r.prediction.value, lang),
                    "confidence": r.prediction.confidence,
                    "status": r.prediction.status,
                    "backend": r.prediction.backend,
                    "cites": r.prediction.evidence,
                    "rationale": r.prediction.rationale,
                    "error": r.prediction.error,
                    "verdict": None
                    if r.verdict is None
                    else {"accepted": r.verdict.accepted, "reason": r.verdict.reason, "request": r.verdict.request},
                }
                for r in t.rounds
            ],
            "review_skipped": t.review_skipped,
        }
    decisions = [asdict(d) for d in data.decisions if d.key == key]
    return {"key": key, "row": data.final.get(key), "trails": trails, "decisions": decisions}


def peaks(samples: np.ndarray, buckets: int = PEAK_BUCKETS) -> list[list[float]]:
    """[min, max] per column of the waveform, rounded to keep the payload small."""
    n = len(samples)
    if n == 0:
        return []
    buckets = max(1, min(buckets, n))
    edges = np.linspace(0, n, buckets + 1).astype(int)
    out = []
    for a, b in zip(edges[:-1], edges[1:]):
        chunk = samples[a : max(b, a + 1)]
        out.append([round(float(chunk.min()), 3), round(float(chunk.max()), 3)])
    return out


def audio_path(store: StateStore, rec: str) -> Path:
    """The recording's input file as the state names it (the only audio the page may read)."""
    return Path(recording_row(store, rec)["path"])
