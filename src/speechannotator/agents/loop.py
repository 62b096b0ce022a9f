"""Stage 10: the bounded review loop.

Round r reviews the predictions that are pending (round 0: all; later: those relabeled in
round r-1), writes the verdicts and, while the budget allows, relabels only the flagged
fields with their revision requests as round r+1. Each round is one transaction; the last
one carries the stage mark. A killed run resumes at the first round without verdicts.
"""

from __future__ import annotations

from collections import defaultdict

from ..records import Prediction, Verdict
from ..stages import StageContext, StageName
from ..state import StateStore
from .labeling import build_task, call_label, segment_wav
from .review import build_review_task, call_review


def _resume_point(store: StateStore, rec: str) -> tuple[int, set[tuple[str, str]]]:
    """(next review round, pending (key, field)) from what earlier rounds left in the state."""
    trails = store.predictions(rec, all_rounds=True)
    rounds = [v.round for vs in store.verdicts(rec).values() for v in vs]
    if not rounds:
        return 0, set(trails)
    last = max(rounds)
    return last + 1, {kf for kf, trail in trails.items() if trail[-1].round == last + 1}


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
    by_key = {s.key: s for s in segments}
    r, pending = _resume_point(store, rec)
    while pending:
        latest = store.predictions(rec)
        per_seg: dict[str, list[str]] = defaultdict(list)
        for k, f in sorted(pending):
            if k in by_key:
                per_seg[k].append(f)
        verdicts: list[Verdict] = []
        for seg in segments:
            if seg.key in per_seg:
                task = build_review_task(seg, per_seg[seg.key], contracts, segments, evidence, latest, lang, r)
                verdicts.extend(call_review(backend, task).values())
        relabeled: list[Prediction] = []
        if r < budget:
            flagged: dict[str, dict[str, str]] = defaultdict(dict)
            for v in verdicts:
                if not v.accepted:
                    flagged[v.key][v.field] = v.request
            for seg in segments:
                if seg.key not in flagged:
                    continue
                wav = segment_wav(audio, seg) if backend.wants_audio else None
                task = build_task(seg, sorted(flagged[seg.key]), contracts, segments, evidence, lang,
                                  audio_wav=wav, requests=flagged[seg.key], round=r + 1)
                relabeled.extend(call_label(backend, task).values())
        with store.transaction() as c:
            store.write_verdicts(c, rec, verdicts)
            store.write_predictions(c, rec, relabeled)
            if not relabeled:
                store.mark_stage(c, rec, StageName.REVIEW, _summary(store, rec, verdicts, r))
        pending = {(p.key, p.field) for p in relabeled}
        r += 1
    if not store.stage_done(rec, StageName.REVIEW):  # nothing to review at all
        with store.transaction() as c:
            store.mark_stage(c, rec, StageName.REVIEW, {"rounds": 0, "flagged": []})


def _summary(store: StateStore, rec: str, last: list[Verdict], last_round: int) -> dict:
    # Runs inside the round's transaction, so the state already holds this round's verdicts.
    counts: dict[int, int] = defaultdict(int)
    for vs in store.verdicts(rec).values():
        for v in vs:
            counts[v.round] += not v.accepted
    return {"rounds": last_round + 1, "flagged": [counts[i] for i in range(last_round + 1)],
            "unresolved": sum(not v.accepted for v in last)}
