"""The audit trail of one field of one segment: evidence, contract, every round's
prediction and verdict, and the final value."""

from __future__ import annotations

import json

from ..records import RECORDING_KEY, speaker_key
from ..schema import COMPOSED_FIELDS, FIELDS
from ..stages import StageName
from ..state import StateStore
from .context import admitted_evidence


def _fmt(value: object) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 160 else text[:157] + "..."


def explain(store: StateStore, rec: str, segment_index: int, field: str) -> str:
    """A readable trail; ``segment_index`` is the 0-based position in the output JSON array."""
    if field not in FIELDS:
        raise ValueError(f"unknown field {field!r}; fields are: {', '.join(FIELDS)}")
    segments = store.segments(rec)
    if not segments:
        raise ValueError(f"recording {rec!r} has no segments in the state")
    if not 0 <= segment_index < len(segments):
        raise ValueError(f"segment {segment_index} is out of range: {rec} has {len(segments)} segments (0-based)")
    seg = segments[segment_index]
    lines = [f"recording {rec}, segment {segment_index} ({seg.key}) {seg.start:.3f}-{seg.end:.3f} s, "
             f"speaker {seg.speaker}: {seg.text}", f"field: {field}"]
    records = dict(store.records(rec))
    if field in COMPOSED_FIELDS:
        lines.append("composed in finalize from the reviewed fields, transcript and admitted context")
        lines.append(f"final: {records.get(seg.key, {}).get(field, '(not finalized yet)')}")
        return "\n".join(lines)
    contract = store.contracts(rec).get((seg.key, field))
    evidence = store.evidence(rec)
    if contract is None:
        lines.append("contract: none (the plan stage has not run)")
    else:
        lines += ["contract:", f"  objective: {contract.objective}", f"  value format: {contract.value_format}",
                  f"  admissible evidence: {', '.join(contract.admissible_evidence) or '(none)'}",
                  f"  priority: {', '.join(contract.priority) or '(none)'}",
                  f"  context scope: {', '.join(contract.context_scope)}", f"  conflict rule: {contract.conflict_rule}"]
        admitted = admitted_evidence(seg, {field: contract}, evidence)
        lines.append("evidence admitted:" if admitted else "evidence admitted: (none)")
        for name in sorted(admitted):
            e = admitted[name]
            src = "speaker aggregate" if name.startswith("speaker.") else "recording" if name.startswith("recording.") else "segment"
            lines.append(f"  {name} = {_fmt(e.value)} {e.unit}".rstrip()
                         + f"  [{src}; {e.extractor or '?'}; reliability {e.reliability:.2f}]")
        if "speaker_history" in contract.context_scope:
            hist = evidence.get(speaker_key(seg.speaker), {}).get("context.history")
            if hist is not None:
                lines.append(f"speaker history: {_fmt({k: hist.value.get(k) for k in ('n_segments', 'duration_s', 'role')})}")
        if "recording" in contract.context_scope and "context.summary" in evidence.get(RECORDING_KEY, {}):
            s = evidence[RECORDING_KEY]["context.summary"].value
            lines.append(f"recording summary: {_fmt({k: s.get(k) for k in ('n_speakers', 'interaction', 'language')})}")
    trail = store.predictions(rec, all_rounds=True).get((seg.key, field), [])
    verdicts = {v.round: v for v in store.verdicts(rec).get((seg.key, field), [])}
    if not trail:
        lines.append("predictions: none (the label stage has not run)")
    for p in trail:
        lines.append(f"round {p.round}: {p.value!r} (confidence {p.confidence:.2f}, {p.status}, backend {p.backend or '?'})")
        if p.evidence:
            lines.append(f"  cites: {', '.join(p.evidence)}")
        if p.rationale:
            lines.append(f"  rationale: {p.rationale}")
        if p.error:
            lines.append(f"  error: {p.error}")
        v = verdicts.get(p.round)
        if v is not None:
            lines.append(f"  review round {v.round}: {'accepted' if v.accepted else 'REJECTED'} - {v.reason}")
            if not v.accepted:
                lines.append(f"  revision request: {v.request}")
    info = store.stage_info(rec, StageName.REVIEW)
    if info and info.get("skipped"):
        lines.append("review: skipped (--no-review)")
    lines.append(f"final: {records[seg.key][field] if seg.key in records else '(not finalized yet)'}")
    return "\n".join(lines)
