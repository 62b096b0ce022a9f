"""The confidence of each value a recording's output shows, per segment and labeled field.

A field's confidence is its latest prediction's, except where the record shows another value:
a speaker trait that finalize's regularization set from the speaker (the speaker-level
confidence, ``finalize.regularize``), and a value a person decided (1.0: a decision, not an
estimate). Exports, their ``--min-confidence`` filters and the review page read this, so a
confidence always belongs to the value beside it.
"""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING

from ..corrections import in_force, placed_decisions
from ..records import Decision, Evidence, Prediction, Segment
from ..schema import LABELED_FIELDS
from .finalize import SPEAKER_FIELDS, pooled_gender, regularize

if TYPE_CHECKING:
    from ..state import StateStore

DECIDED = 1.0  # the confidence of a value a person set


def shown_confidences(store: StateStore, rec: str) -> dict[str, dict[str, float]]:
    """``confidences_of`` the recording as the state holds it."""
    return confidences_of(
        store.segments(rec), store.predictions(rec), store.evidence(rec), placed_decisions(store, rec).placed
    )


def confidences_of(
    segments: list[Segment],
    preds: dict[tuple[str, str], Prediction],
    evidence: dict[str, dict[str, Evidence]],
    decisions: list[Decision],
) -> dict[str, dict[str, float]]:
    """{segment key: {labeled field: the confidence of the value the output shows}} from the
    machine's segments, the latest predictions, the evidence and the decisions placed on the
    segments (for a caller that has them loaded already); a field without one (a failed
    prediction, a speaker with no labelled turn) is left out."""
    speakers = list(dict.fromkeys(s.speaker for s in segments))
    reg = regularize(segments, preds, pooled_gender(speakers, evidence))
    out: dict[str, dict[str, float]] = defaultdict(dict)
    for (key, field), p in preds.items():
        if field in LABELED_FIELDS and field not in SPEAKER_FIELDS and p.status != "failed":
            out[key][field] = float(p.confidence)
    for (key, field), v in reg.items():
        if v.confidence is not None:
            out[key][field] = float(v.confidence)
    for key, field in in_force(decisions):
        if field in LABELED_FIELDS:
            out[key][field] = DECIDED
    return {k: dict(sorted(v.items())) for k, v in sorted(out.items())}
