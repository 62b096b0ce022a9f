"""Closed-Eval and Open-Eval over segment records (the fixed-timeline setting).

Per (reference segment, field): closed fields (gender, age) score 1 when the canonicalized
values match; open fields score max(0, cos(e(c(pred)), e(c(ref)))). A reference value that is
blank is "not annotated" and leaves that field's denominator; a missing, blank, unparsable or
failed prediction stays in the denominator with 0. Field means pool all reference segments of
all recordings; category means average their fields; the macro averages the field means.
"""

from __future__ import annotations

import bisect
import logging
import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from ..schema import CLOSED_FIELDS, FIELD_GROUPS, FIELDS, OPEN_FIELDS, Group, canonical_closed, is_empty_marker
from .encoders import Encoder

log = logging.getLogger(__name__)

OPEN_NONE = "none"  # canonical form of every empty marker (无, none, n/a ...) in open fields


def canonical_open(value: object) -> str | None:
    """Open-field canonicalizer: NFKC (full/half width), case, spacing, edge punctuation,
    empty markers. Inner punctuation and word spaces stay: encoders read sentences."""
    if not isinstance(value, str) or not value.strip():
        return None
    if is_empty_marker(value):
        return OPEN_NONE
    text = re.sub(r"\s+", " ", unicodedata.normalize("NFKC", value).lower()).strip()
    text = text.strip("".join(ch for ch in set(text) if unicodedata.category(ch)[0] == "P") + " ")
    # Spaces between CJK characters carry nothing.
    text = re.sub(r"(?<=[\u3400-\u9fff]) (?=[\u3400-\u9fff])", "", text)
    return text or OPEN_NONE


def _ms(rec: Mapping, key: str) -> int | None:
    v = rec.get(key)
    return int(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def match_segments(ref: Sequence[Mapping], hyp: Sequence[Mapping], min_iou: float = 0.5) -> list[int | None]:
    """For each reference segment, the index of its hypothesis segment or None.

    Exact (start, end) matches first (the fixed-timeline setting keeps reference times);
    then, one to one, the unused hypothesis segment with the largest overlap (IoU >= min_iou).
    """
    out: list[int | None] = [None] * len(ref)
    exact: dict[tuple[int, int], list[int]] = {}
    spans = []
    for j, h in enumerate(hyp):
        s, e = _ms(h, "start_time"), _ms(h, "end_time")
        if s is not None and e is not None:
            exact.setdefault((s, e), []).append(j)
            spans.append((s, e, j))
    used: set[int] = set()
    for i, r in enumerate(ref):
        s, e = _ms(r, "start_time"), _ms(r, "end_time")
        cands = [j for j in exact.get((s, e), []) if j not in used] if s is not None and e is not None else []
        if cands:
            out[i] = cands[0]
            used.add(cands[0])
    spans.sort()
    starts = [s for s, _, _ in spans]
    longest = max((e - s for s, e, _ in spans), default=0)
    for i, r in enumerate(ref):
        rs, re_ = _ms(r, "start_time"), _ms(r, "end_time")
        if out[i] is not None or rs is None or re_ is None:
            continue
        best, best_iou = None, min_iou
        # Candidates start after rs - longest (else they end before rs) and before re_.
        for k in range(bisect.bisect_left(starts, rs - longest), bisect.bisect_right(starts, re_)):
            s, e, j = spans[k]
            if j in used:
                continue
            inter = min(e, re_) - max(s, rs)
            union = max(e, re_) - min(s, rs)
            iou = inter / union if union > 0 else float(s == rs and e == re_)
            if iou >= best_iou and (best is None or iou > best_iou):
                best, best_iou = j, iou
        if best is not None:
            out[i] = best
            used.add(best)
    return out


@dataclass
class FieldTally:
    scored: int = 0  # reference segments annotated for this field (the denominator)
    total: float = 0.0
    missing: int = 0  # predictions missing, blank, unparsable or failed (scored 0)

    @property
    def mean(self) -> float | None:
        return 100.0 * self.total / self.scored if self.scored else None


@dataclass
class AttributeScores:
    encoder: str
    fields: dict[str, FieldTally] = field(default_factory=lambda: {f: FieldTally() for f in FIELDS})
    per_recording: dict[str, dict[str, FieldTally]] = field(default_factory=dict)
    segments: int = 0
    unmatched_segments: int = 0
    ref_unparsable: int = 0

    def field_means(self, tallies: Mapping[str, FieldTally] | None = None) -> dict[str, float | None]:
        t = tallies or self.fields
        return {f: t[f].mean for f in FIELDS}

    def category_means(self, tallies: Mapping[str, FieldTally] | None = None) -> dict[str, float | None]:
        means = self.field_means(tallies)
        out = {}
        for g in Group:
            vals = [m for f, fg in FIELD_GROUPS.items() if fg == g and (m := means[f]) is not None]
            out[g.value] = float(np.mean(vals)) if vals else None
        return out

    def macro(self, tallies: Mapping[str, FieldTally] | None = None) -> float | None:
        vals = [v for v in self.field_means(tallies).values() if v is not None]
        return float(np.mean(vals)) if vals else None

    def to_dict(self) -> dict:
        return {
            "fields": self.field_means(),
            "categories": self.category_means(),
            "macro": self.macro(),
            "encoder": self.encoder,
            "segments": self.segments,
            "unmatched_segments": self.unmatched_segments,
            "counts": {f: {"scored": t.scored, "missing": t.missing} for f, t in self.fields.items()},
            "per_recording": {
                name: {"fields": self.field_means(t), "macro": self.macro(t)} for name, t in self.per_recording.items()
            },
        }


Records = Sequence[Mapping]


def _by_recording(
    ref: Mapping[str, Records] | Records, hyp: Mapping[str, Records] | Records
) -> tuple[Mapping[str, Records], Mapping[str, Records]]:
    """{name: records} for both sides; two record lists are one recording."""
    if isinstance(ref, Mapping) and isinstance(hyp, Mapping):
        return ref, hyp
    if not isinstance(ref, Mapping) and not isinstance(hyp, Mapping):
        return {"recording": ref}, {"recording": hyp}
    raise TypeError("give the reference and the hypothesis both as record lists or both as {name: records}")


def score_attributes(
    ref_records: Mapping[str, Sequence[Mapping]] | Sequence[Mapping],
    hyp_records: Mapping[str, Sequence[Mapping]] | Sequence[Mapping],
    encoder: Encoder | None,
) -> AttributeScores:
    """Score hypothesis records against reference records (one recording as lists, or
    several as {name: records}; a recording without hypothesis scores 0 throughout)."""
    refs_by, hyps_by = _by_recording(ref_records, hyp_records)
    scores = AttributeScores(encoder.name if encoder is not None else "none")
    # (recording, field, ref text, hyp text) for open fields, encoded in one pass below.
    pending: list[tuple[str, str, str, str]] = []
    for name in sorted(refs_by):
        refs, hyps = refs_by[name], hyps_by.get(name, [])
        tallies = scores.per_recording.setdefault(name, {f: FieldTally() for f in FIELDS})
        matches = match_segments(refs, hyps)
        scores.segments += len(refs)
        scores.unmatched_segments += sum(m is None for m in matches)
        for r, m in zip(refs, matches):
            h = hyps[m] if m is not None else {}
            for f in FIELDS:
                rv, hv = r.get(f), h.get(f)
                if not isinstance(rv, str) or not rv.strip():
                    continue  # not annotated in the reference
                if f in CLOSED_FIELDS:
                    rc = canonical_closed(f, rv)
                    if rc is None:
                        scores.ref_unparsable += 1
                        log.warning("%s: reference %s %r is not a known value; not scored", name, f, rv)
                        continue
                    hc = canonical_closed(f, hv) if isinstance(hv, str) and hv.strip() else None
                    s = float(hc == rc)
                    for t in (scores.fields[f], tallies[f]):
                        t.scored += 1
                        t.total += s
                        t.missing += hc is None
                    continue
                ho = canonical_open(hv)
                if ho is None:
                    for t in (scores.fields[f], tallies[f]):
                        t.scored += 1
                        t.missing += 1
                    continue
                pending.append((name, f, canonical_open(rv) or OPEN_NONE, ho))
    if pending:
        if encoder is None:
            raise ValueError("open fields need an encoder")
        texts = list(dict.fromkeys(t for _, _, r, h in pending for t in (r, h)))
        vecs = encoder.encode(texts)
        index = {t: i for i, t in enumerate(texts)}
        ri = np.fromiter((index[r] for _, _, r, _ in pending), dtype=np.int64, count=len(pending))
        hi = np.fromiter((index[h] for _, _, _, h in pending), dtype=np.int64, count=len(pending))
        sims = np.maximum(0.0, np.einsum("ij,ij->i", vecs[ri], vecs[hi]))
        # Identical canonical texts are a perfect match whatever float rounding says.
        sims = np.where(ri == hi, 1.0, np.minimum(sims, 1.0))
        for (name, scored_field, _, _), s in zip(pending, sims):
            for t in (scores.fields[scored_field], scores.per_recording[name][scored_field]):
                t.scored += 1
                t.total += float(s)
    return scores


assert set(OPEN_FIELDS) | set(CLOSED_FIELDS) == set(FIELDS)
