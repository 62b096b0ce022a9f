"""Caption and contextual inference composed again after a human correction.

Finalize composes both from the reviewed fields, the transcript and the admitted context; a
correction of gender, emotion, the transcript or the speaker leaves them describing the old
values. ``recomposed`` composes them again from the segment's corrected row with the
deterministic composer (``agents.compose``): the page has no model backend, and a
correction must give the same text on every machine.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ..agents.backend import ComposeTask
from ..agents.compose import compose_task
from ..agents.context import ContextIndex, admitted_evidence, task_context
from ..corrections import review_segments
from ..schema import COMPOSED_FIELDS, LABELED_FIELDS, typed_value
from ..state import StateStore

# Corrections that change what the caption and contextual inference describe.
RECOMPOSE_AFTER: tuple[str, ...] = (*LABELED_FIELDS, "text", "speaker")
RECOMPOSER = "speechannotator (recomposed)"  # the `who` of a recomposition in the decision trail


def recomposed(store: StateStore, rec: str, key: str, row: dict[str, Any]) -> dict[str, str]:
    """{"caption": ..., "contextual_inference": ...} for segment ``key`` whose output row, with
    the corrections in force, is ``row``."""
    segments = review_segments(store, rec)  # reviewer-made segments too
    seg = next(s for s in segments if s.key == key)
    seg = replace(seg, text=row["text"])  # a corrected transcript is what the text now says
    contracts = {f: c for (k, f), c in store.contracts(rec).items() if k == key}
    evidence = store.evidence(rec)
    task = ComposeTask(
        segment=seg,
        values={**{f: typed_value(row[f], f) or "" for f in LABELED_FIELDS}, "speaker_name": row["speaker_name"]},
        evidence=admitted_evidence(seg, contracts, evidence),
        context=task_context(seg, contracts, segments, evidence, index=ContextIndex(segments)),
        label_language=store.label_language(rec),
    )
    got = compose_task(task)
    return {f: " ".join(got[f].split()) for f in COMPOSED_FIELDS}
