"""Review Agent: the per-segment review task and a fault-tolerant backend call.

The task carries the predictions under review, their contracts, admitted evidence and the
context the contracts allow, where neighbours and the speaker history now include the latest
predictions of the other segments (what cross-segment consistency is checked against).
"""

from __future__ import annotations

from ..records import Contract, Evidence, Prediction, Segment, Verdict
from .backend import Backend, ReviewTask
from .context import ContextIndex, admitted_evidence, task_context


def build_review_task(
    seg: Segment,
    fields: list[str],
    contracts: dict[tuple[str, str], Contract],
    segments: list[Segment],
    evidence: dict[str, dict[str, Evidence]],
    latest: dict[tuple[str, str], Prediction],
    label_lang: str,
    round: int,
    index: ContextIndex | None = None,
) -> ReviewTask:
    mine = {f: contracts[(seg.key, f)] for f in fields if (seg.key, f) in contracts}
    return ReviewTask(
        segment=seg,
        predictions={f: latest[(seg.key, f)] for f in fields if (seg.key, f) in latest},
        contracts=mine,
        evidence=admitted_evidence(seg, mine, evidence),
        context=task_context(seg, mine, segments, evidence, preds=latest, index=index),
        label_language=label_lang,
        round=round,
    )


def call_review(backend: Backend, task: ReviewTask) -> dict[str, Verdict]:
    """One verdict per prediction under review. A reviewer fault accepts the prediction with
    the fault as the reason (a relabel without a request could not do better)."""
    try:
        got = backend.review(task) or {}
        err = "reviewer returned no verdict"
    except Exception as exc:  # noqa: BLE001 - any backend fault is recorded per field
        got, err = {}, f"review unavailable ({type(exc).__name__}: {exc})"
    out = {}
    for f in task.predictions:
        v = got.get(f)
        if not isinstance(v, Verdict):
            v = Verdict(task.segment.key, f, task.round, True, reason=err)
        v.key, v.field, v.round = task.segment.key, f, task.round
        if not v.accepted and not v.request:
            v.request = v.reason or "revise this field from the admitted evidence"
        out[f] = v
    return out
