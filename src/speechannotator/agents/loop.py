"""Stage 10: the bounded review loop.

Round r reviews the predictions that are pending (round 0: all; later: those relabeled in
round r-1), writes the verdicts and, while the budget allows, relabels only the flagged
fields with their revision requests as round r+1. A round is saved in batches of
REVIEW_BATCH segments, each one transaction holding the batch's verdicts and relabels, so
the work a killed run did is kept and a rerun goes on with the first unsaved batch. Every
batch of round r sees the predictions as they stood when round r began, so the result does
not depend on the batch size or on where a run was interrupted.
"""

from __future__ import annotations

from collections import defaultdict

from ..audio import Audio
from ..records import Prediction, Segment, Verdict
from ..stages import StageContext, StageName
from ..state import StateStore
from .backend import Backend
from .context import ContextIndex
from .labeling import build_task, call_label, segment_wav
from .review import build_review_task, call_review

REVIEW_BATCH = 200  # segments per transaction: bounds the work an interruption can lose


def _as_of(trails: dict[tuple[str, str], list[Prediction]], r: int) -> dict[tuple[str, str], Prediction]:
    """The latest prediction of each field among rounds <= r (what round r reviews against)."""
    out = {}
    for kf, trail in trails.items():
        for p in trail:  # trails are in round order
            if p.round <= r:
                out[kf] = p
    return out


def review(ctx: StageContext) -> None:
    store, rec, config = ctx.store, ctx.rec, ctx.config
    if not config.agents.review:
        with store.transaction() as c:
            store.mark_stage(c, rec, StageName.REVIEW, {"skipped": True})
        return
    backend, audio = ctx.backend, ctx.audio
    segments = store.segments(rec)
    evidence = store.evidence(rec)
    contracts = store.contracts(rec)
    lang = ctx.label_language
    budget = config.agents.review_rounds
    trails: dict[tuple[str, str], list[Prediction]] = store.predictions(rec, all_rounds=True)
    reviewed = {(v.key, v.field, v.round) for vs in store.verdicts(rec).values() for v in vs}
    r = 0
    while True:
        in_round = {kf for kf, trail in trails.items() if any(p.round == r for p in trail)}
        if not in_round:
            break
        pending = {kf for kf in in_round if (*kf, r) not in reviewed}
        if pending:
            _review_round(
                store,
                rec,
                backend,
                audio,
                r,
                r < budget,
                pending,
                segments,
                evidence,
                contracts,
                lang,
                trails,
                reviewed,
            )
        r += 1
    with store.transaction() as c:
        store.mark_stage(c, rec, StageName.REVIEW, _summary(store, rec))


def _review_round(
    store: StateStore,
    rec: str,
    backend: Backend,
    audio: Audio | None,
    r: int,
    relabel: bool,
    pending: set[tuple[str, str]],
    segments: list[Segment],
    evidence,
    contracts,
    lang: str,
    trails: dict[tuple[str, str], list[Prediction]],
    reviewed: set[tuple[str, str, int]],
) -> None:
    latest = _as_of(trails, r)
    index = ContextIndex(segments, latest)
    per_seg: dict[str, list[str]] = defaultdict(list)
    for k, f in sorted(pending):
        per_seg[k].append(f)
    todo = [seg for seg in segments if seg.key in per_seg]
    for b in range(0, len(todo), REVIEW_BATCH):
        verdicts: list[Verdict] = []
        relabeled: list[Prediction] = []
        for seg in todo[b : b + REVIEW_BATCH]:
            task = build_review_task(seg, per_seg[seg.key], contracts, segments, evidence, latest, lang, r, index=index)
            mine = list(call_review(backend, task).values())
            verdicts.extend(mine)
            flagged = {v.field: v.request for v in mine if not v.accepted}
            if relabel and flagged:
                wav = segment_wav(audio, seg) if backend.wants_audio else None
                relabel_task = build_task(
                    seg,
                    sorted(flagged),
                    contracts,
                    segments,
                    evidence,
                    lang,
                    audio_wav=wav,
                    requests=flagged,
                    round=r + 1,
                    index=index,
                    suggested={v.field: v.suggested for v in mine if not v.accepted and v.suggested},
                )
                relabeled.extend(call_label(backend, relabel_task).values())
        with store.transaction() as c:
            store.write_verdicts(c, rec, verdicts)
            store.write_predictions(c, rec, relabeled)
        reviewed.update((v.key, v.field, v.round) for v in verdicts)
        for p in relabeled:
            trails.setdefault((p.key, p.field), []).append(p)


def _summary(store: StateStore, rec: str) -> dict:
    counts: dict[int, int] = defaultdict(int)
    last: dict[int, list[Verdict]] = defaultdict(list)
    for vs in store.verdicts(rec).values():
        for v in vs:
            counts[v.round] += not v.accepted
            last[v.round].append(v)
    if not counts:  # nothing to review at all
        return {"rounds": 0, "flagged": []}
    final = max(counts)
    return {
        "rounds": final + 1,
        "flagged": [counts[i] for i in range(final + 1)],
        "unresolved": sum(not v.accepted for v in last[final]),
    }
