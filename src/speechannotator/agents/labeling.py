"""Labeling Agent (stage 9, round 0) and the relabel call the review loop reuses.

A task per segment carries only contract-admitted evidence and context, the segment's WAV
bytes when the backend asks for audio (``Backend.wants_audio``), and for a relabel only the
flagged fields with their revision requests.
"""

from __future__ import annotations

import io
import wave

import numpy as np

from ..audio import Audio
from ..records import Contract, Evidence, Prediction, Segment, Status
from ..schema import Value
from ..stages import StageContext, StageName
from .backend import Backend, LabelTask
from .context import ContextIndex, admitted_evidence, task_context


def segment_wav(audio: Audio | None, seg: Segment) -> bytes | None:
    """16-bit PCM WAV bytes of the segment span (None without audio or for an empty span)."""
    if audio is None:
        return None
    x = np.clip(np.nan_to_num(audio.span(seg.start, seg.end)), -1.0, 1.0)
    if x.size == 0:
        return None
    buf = io.BytesIO()
    with wave.open(buf, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(audio.sample_rate)
        w.writeframes((x * 32767.0).astype("<i2").tobytes())
    return buf.getvalue()


def build_task(
    seg: Segment,
    fields: list[str],
    contracts: dict[tuple[str, str], Contract],
    segments: list[Segment],
    evidence: dict[str, dict[str, Evidence]],
    label_lang: str,
    audio_wav: bytes | None = None,
    requests: dict[str, str] | None = None,
    round: int = 0,
    suggested: dict[str, Value] | None = None,
    index: ContextIndex | None = None,
) -> LabelTask:
    mine = {f: contracts[(seg.key, f)] for f in fields if (seg.key, f) in contracts}
    missing = [f for f in fields if f not in mine]
    if missing:
        raise ValueError(f"{seg.key}: no contract for {', '.join(missing)}; run the plan stage first")
    return LabelTask(
        segment=seg,
        fields=list(fields),
        contracts=mine,
        evidence=admitted_evidence(seg, mine, evidence),
        context=task_context(seg, mine, segments, evidence, index=index),
        label_language=label_lang,
        revision_requests=dict(requests or {}),
        suggested=dict(suggested or {}),
        round=round,
        audio_wav=audio_wav,
    )


def call_label(backend: Backend, task: LabelTask) -> dict[str, Prediction]:
    """Run the backend and make sure every requested field comes back as a Prediction of this
    round; a backend fault becomes a failed prediction, never a crashed run."""
    try:
        got = backend.label(task) or {}
    except Exception as exc:  # noqa: BLE001 - any backend fault is recorded per field
        got, err = {}, f"{type(exc).__name__}: {exc}"
    else:
        err = "backend returned no prediction for this field"
    out = {}
    for f in task.fields:
        p = got.get(f)
        if not isinstance(p, Prediction):
            p = Prediction(task.segment.key, f, None, 0.0, [], round=task.round, backend=backend.name, error=err)
            p.status = Status.FAILED
        p.key, p.field, p.round = task.segment.key, f, task.round
        out[f] = p
    return out


def label(ctx: StageContext) -> None:
    """Round 0: predict every contracted field of every segment; one transaction with the mark."""
    store, rec, backend, audio = ctx.store, ctx.rec, ctx.backend, ctx.audio
    segments = store.segments(rec)
    evidence = store.evidence(rec)
    contracts = store.contracts(rec)
    if segments and not contracts:
        raise ValueError(f"{rec}: no contracts in the state; run the plan stage first")
    lang = ctx.label_language
    preds: list[Prediction] = []
    fields_of: dict[str, set[str]] = {}
    for k, f in contracts:
        fields_of.setdefault(k, set()).add(f)
    index = ContextIndex(segments)
    for seg in segments:
        fields = sorted(fields_of.get(seg.key, ()))
        if not fields:
            continue
        wav = segment_wav(audio, seg) if backend.wants_audio else None
        task = build_task(seg, fields, contracts, segments, evidence, lang, audio_wav=wav, index=index)
        preds.extend(call_label(backend, task).values())
    with store.transaction() as c:
        store.clear_predictions(c, rec)
        store.write_predictions(c, rec, preds)
        failed = sum(p.status == "failed" for p in preds)
        store.mark_stage(
            c, rec, StageName.LABEL, {"predictions": len(preds), "failed": failed, "backend": backend.name}
        )
