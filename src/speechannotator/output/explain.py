"""The audit trail of one field of one segment: evidence, contract, every round's
prediction and verdict, human decisions, and the final value.

``field_trail`` gathers the trail as data (the review page shows it); ``explain`` prints it, and
``explain_command`` is `speechannotator explain OUT/<stem>.json --segment N --field F`.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from dataclasses import field as dc_field
from pathlib import Path
from typing import Any

import click

from ..agents.context import admitted_evidence
from ..corrections import ADDED_FIELD, EDITABLE_FIELDS, SPEAKER_FIELD, placed_decisions, review_segments, reviewed_items
from ..records import RECORDING_KEY, Contract, Decision, Evidence, Prediction, Segment, Verdict, speaker_key
from ..schema import COMPOSED_FIELDS, FIELDS, Value, shown
from ..stages import StageName
from ..state import StateStore
from ..terminal import echo


@dataclass
class RecordingTrails:
    """Everything the trails of one recording read from the state, loaded once."""

    rec: str
    segments: list[Segment]
    contracts: dict[tuple[str, str], Contract]
    evidence: dict[str, dict[str, Evidence]]
    predictions: dict[tuple[str, str], list[Prediction]]
    verdicts: dict[tuple[str, str], list[Verdict]]
    final: dict[str, dict[str, Any]]  # segment key -> output row (human decisions applied)
    machine: dict[str, dict[str, Any]]  # segment key -> the machine's record (no decision applied)
    decisions: list[Decision]  # placed on the current segments (``corrections.place_decisions``)
    orphaned: list[Decision]  # made on segments that no longer exist; applied to none
    review_skipped: bool
    lang: str = "en"  # the recording's label language: typed values are shown in it

    @classmethod
    def load(cls, store: StateStore, rec: str) -> RecordingTrails:
        info = store.stage_info(rec, StageName.REVIEW)
        final = dict(reviewed_items(store, rec))
        # In output JSON order, which a human boundary correction may have changed.
        order = {key: i for i, key in enumerate(final)}
        placement = placed_decisions(store, rec)
        segments = sorted(review_segments(store, rec, placement), key=lambda s: order.get(s.key, len(order)))
        if final:  # a segment a person deleted is not in the output, so it has no index there
            segments = [s for s in segments if s.key in order]
        return cls(
            rec=rec,
            segments=segments,
            contracts=store.contracts(rec),
            evidence=store.evidence(rec),
            predictions=store.predictions(rec, all_rounds=True),
            verdicts=store.verdicts(rec),
            final=final,
            machine=dict(store.records(rec)),
            decisions=placement.placed,
            orphaned=placement.orphaned,
            review_skipped=bool(info and info.get("skipped")),
            lang=_label_language(store, rec),
        )


def _label_language(store: StateStore, rec: str) -> str:
    try:
        return store.label_language(rec)
    except ValueError:  # none before the timeline stage has run
        return "en"


@dataclass
class Round:
    prediction: Prediction
    verdict: Verdict | None


@dataclass
class FieldTrail:
    rec: str
    index: int
    segment: Segment
    field: str
    composed: bool
    segment_field: bool = False  # transcript, speaker or a boundary: from the segment table, not a label
    machine: Any = None  # the segment table's value of a segment field
    contract: Contract | None = None
    admitted: dict[str, Evidence] = dc_field(default_factory=dict)
    speaker_history: dict[str, Any] | None = None
    recording_summary: dict[str, Any] | None = None
    rounds: list[Round] = dc_field(default_factory=list)
    review_skipped: bool = False
    decisions: list[Decision] = dc_field(default_factory=list)
    orphaned: list[Decision] = dc_field(default_factory=list)  # this field's, on the whole recording
    made: Decision | None = None  # the decision that made this segment (split or added on the page)
    final: Any = None  # None: not finalized yet
    lang: str = "en"  # the label language typed values are shown in

    @property
    def latest(self) -> Prediction | None:
        return self.rounds[-1].prediction if self.rounds else None


def evidence_source(name: str) -> str:
    if name.startswith("speaker."):
        return "speaker aggregate"
    return "recording" if name.startswith("recording.") else "segment"


def _output_value(row: dict[str, Any], field: str) -> Any:
    if field == SPEAKER_FIELD:
        return f"{row['speaker_id']} ({row['speaker_name']})" if row else None
    return row.get(field)


def field_trail(data: RecordingTrails, segment_index: int, field: str) -> FieldTrail:
    """The trail of ``field`` on the segment at ``segment_index`` (0-based, output JSON order).
    ``field`` is one of the 15 attributes or a segment field (transcripts, speaker, boundaries)."""
    if field not in EDITABLE_FIELDS:
        raise ValueError(f"unknown field {field!r}; fields are: {', '.join(EDITABLE_FIELDS)}")
    if not data.segments:
        raise ValueError(f"recording {data.rec!r} has no segments in the state")
    if not 0 <= segment_index < len(data.segments):
        raise ValueError(
            f"segment {segment_index} is out of range: {data.rec} has {len(data.segments)} segments (0-based)"
        )
    seg = data.segments[segment_index]
    t = FieldTrail(
        rec=data.rec,
        index=segment_index,
        segment=seg,
        field=field,
        composed=field in COMPOSED_FIELDS,
        segment_field=field not in FIELDS,
        review_skipped=data.review_skipped,
        lang=data.lang,
        final=_output_value(data.final.get(seg.key, {}), field),
        decisions=[d for d in data.decisions if d.key == seg.key and d.field == field],
        # An orphaned reviewer-made segment is told with the transcript, the field it carried.
        orphaned=[d for d in data.orphaned if d.field == field or (field == "text" and d.field == ADDED_FIELD)],
        made=next((d for d in data.decisions if d.key == seg.key and d.field == ADDED_FIELD), None),
    )
    if t.made is not None:  # no machine record, contract or prediction: a person made it
        return t
    if t.segment_field:
        t.machine = seg.speaker if field == SPEAKER_FIELD else data.machine.get(seg.key, {}).get(field)
        return t
    if t.composed:
        return t
    t.contract = data.contracts.get((seg.key, field))
    if t.contract is not None:
        t.admitted = admitted_evidence(seg, {field: t.contract}, data.evidence)
        if "speaker_history" in t.contract.context_scope:
            hist = data.evidence.get(speaker_key(seg.speaker), {}).get("context.history")
            if hist is not None:
                t.speaker_history = {k: hist.value.get(k) for k in ("n_segments", "duration_s", "role")}
        summary = data.evidence.get(RECORDING_KEY, {}).get("context.summary")
        if "recording" in t.contract.context_scope and summary is not None:
            t.recording_summary = {k: summary.value.get(k) for k in ("n_speakers", "interaction", "language")}
    verdicts = {v.round: v for v in data.verdicts.get((seg.key, field), [])}
    t.rounds = [Round(p, verdicts.get(p.round)) for p in data.predictions.get((seg.key, field), [])]
    return t


def _fmt(value: object) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 160 else text[:157] + "..."


def format_trail(t: FieldTrail) -> str:
    seg = t.segment
    lines = [
        f"recording {t.rec}, segment {t.index} ({seg.key}) {seg.start:.3f}-{seg.end:.3f} s, "
        f"speaker {seg.speaker}: {seg.text}",
        f"field: {t.field}",
    ]
    final = t.final if t.final is not None else "(not finalized yet)"
    if t.made is not None:
        lines.append(f"made on the review page by {format_made(t.made)}")
    elif t.segment_field:
        source = "the reference timeline" if seg.source == "reference" else "transcription and diarization"
        what = "raw speaker label" if t.field == SPEAKER_FIELD else "value"
        lines.append(f"from the segment table ({source}); the machine's {what}: {_fmt(t.machine)}")
    elif t.composed:
        lines.append("composed in finalize from the reviewed fields, transcript and admitted context")
    elif t.contract is None:
        lines.append("contract: none (the plan stage has not run)")
    else:
        lines += _contract_lines(t)
    if not t.composed and not t.segment_field and not t.rounds and t.made is None:
        lines.append("predictions: none (the label stage has not run)")
    for r in t.rounds:
        lines += _round_lines(r, t.lang)
    if not t.composed and not t.segment_field and t.review_skipped and t.made is None:
        lines.append("review: skipped (--no-review)")
    for d in t.decisions:
        lines.append(
            f"human decision #{d.id} by {d.who} at {_iso(d.at)}: {d.old!r} -> {d.new!r}"
            + (f" ({d.note})" if d.note else "")
        )
    for d in t.orphaned:
        lines.append(f"orphaned {format_orphan(d)}")
    lines.append(f"final: {final}")
    return "\n".join(lines)


def _contract_lines(t: FieldTrail) -> list[str]:
    """The contract, the evidence it admitted and the context it was given."""
    c = t.contract
    assert c is not None
    lines = [
        "contract:",
        f"  objective: {c.objective}",
        f"  value format: {c.value_format}",
        f"  admissible evidence: {', '.join(c.admissible_evidence) or '(none)'}",
        f"  priority: {', '.join(c.priority) or '(none)'}",
        f"  context scope: {', '.join(c.context_scope)}",
        f"  conflict rule: {c.conflict_rule}",
        "evidence admitted:" if t.admitted else "evidence admitted: (none)",
    ]
    for name in sorted(t.admitted):
        e = t.admitted[name]
        lines.append(
            f"  {name} = {_fmt(e.value)} {e.unit}".rstrip()
            + f"  [{evidence_source(name)}; {e.extractor or '?'}; reliability {e.reliability:.2f}]"
        )
    if t.speaker_history is not None:
        lines.append(f"speaker history: {_fmt(t.speaker_history)}")
    if t.recording_summary is not None:
        lines.append(f"recording summary: {_fmt(t.recording_summary)}")
    return lines


def _value_text(value: Value | None, lang: str) -> str:
    """A prediction's value as the record would say it (a typed value rendered in the label language)."""
    return repr(value if value is None else shown(value, lang))


def _round_lines(r: Round, lang: str) -> list[str]:
    """One round's prediction and its verdict."""
    p, v = r.prediction, r.verdict
    said = f"confidence {p.confidence:.2f}, {p.status}, backend {p.backend or '?'}"
    lines = [f"round {p.round}: {_value_text(p.value, lang)} ({said})"]
    lines += [
        f"  {k}: {x}"
        for k, x in (("cites", ", ".join(p.evidence)), ("rationale", p.rationale), ("error", p.error))
        if x
    ]
    if v is not None:
        lines.append(f"  review round {v.round}: {'accepted' if v.accepted else 'REJECTED'} - {v.reason}")
        if not v.accepted:
            lines.append(f"  revision request: {v.request}")
    return lines


def format_made(d: Decision) -> str:
    """The decision that made a segment no machine record holds: a split part or an added one."""
    head = f"human decision #{d.id} by {d.who} at {_iso(d.at)}"
    span = f"{d.new['start_time']}-{d.new['end_time']} ms, speaker {d.new['speaker']}"
    if d.new.get("split_of"):
        p = d.new["split_of"]
        return (
            f"{head} ({d.note}): {span}, the second part of the segment at {p['start']:.3f}-{p['end']:.3f} s, "
            f"speaker {p['speaker']}, its labels copied from that segment's"
        )
    return f"{head} ({d.note}): {span}, added on a stretch no machine segment of that speaker held"


def format_orphan(d: Decision) -> str:
    """One orphaned decision: what it was made on and what it said; it applies to no segment."""
    if d.field == ADDED_FIELD:
        return (
            f"segment {d.key} made by {format_made(d)}, saying {_fmt(d.new['row']['text'])}; the segment it "
            "was split from is gone, or a machine segment of that speaker now covers its span, so it is in no output"
        )
    where = d.key
    if d.anchor is not None:
        a = d.anchor
        where += f" {a.start:.3f}-{a.end:.3f} s, speaker {a.speaker}: {_fmt(a.text)}"
    return (
        f"human decision #{d.id} by {d.who} at {_iso(d.at)} on {where}: {d.field} {d.old!r} -> {d.new!r}; "
        "no segment of that speaker overlaps that span now, so it is applied to none"
    )


def _iso(ts: float) -> str:
    import datetime as _dt

    return _dt.datetime.fromtimestamp(ts, _dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def explain(store: StateStore, rec: str, segment_index: int, field: str) -> str:
    """A readable trail; ``segment_index`` is the 0-based position in the output JSON array."""
    if field not in EDITABLE_FIELDS:  # before loading anything
        raise ValueError(f"unknown field {field!r}; fields are: {', '.join(EDITABLE_FIELDS)}")
    return format_trail(field_trail(RecordingTrails.load(store, rec), segment_index, field))


@click.command("explain")
@click.argument("json_path", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--segment", "segment", type=int, required=True, help="0-based index of the segment in the JSON array")
@click.option("--field", "field", required=True, help="attribute name, e.g. gender, emotion, background_sound")
def explain_command(json_path: Path, segment: int, field: str) -> None:
    """Print the evidence, contract, predictions and review verdicts behind one field."""
    from ..state import STATE_FILE

    state = json_path.parent / STATE_FILE
    if not state.is_file():
        raise click.ClickException(f"no state database {state} next to {json_path.name}")
    try:
        store = StateStore(state, readonly=True)
    except sqlite3.Error as exc:
        raise click.ClickException(f"cannot read the state database {state}: {exc}") from exc
    try:
        rec = json_path.stem
        if store.status(rec) is None and not store.segments(rec):
            raise click.ClickException(f"recording {rec!r} is not in {state}")
        try:
            echo(explain(store, rec, segment, field))
        except ValueError as exc:
            raise click.ClickException(str(exc)) from exc
    finally:
        store.close()
