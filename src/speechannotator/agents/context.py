"""Context the agents draw on: recording summary, speaker histories, neighbours, speaker
aggregates, and the contract-governed selection of evidence and context for one task.

Scope names used in contracts: "segment", "speaker_history", "neighbours", "recording".
"""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Any

from ..records import RECORDING_KEY, Contract, Evidence, Prediction, Segment, speaker_key
from ..schema import CLOSED_TYPES, LABELED_FIELDS, normalize_text

AGGREGATOR = "planning.aggregate"  # extractor name of the planner's speaker aggregates
SUMMARY = "context.summary"  # Evidence name of the recording summary (key "recording")
HISTORY = "context.history"  # Evidence name of a speaker history (key "speaker:<label>")
NEIGHBOURS = 1  # turns on each side
SPEAKER_TRAITS = ("gender", "age", "accent")

# Self-identification that reveals a role ("我是记者", "I'm the host"); the role must be in
# the lexicon so that a transcript cannot inject an arbitrary name.
_ROLES_ZH = (
    "主持人 记者 老师 医生 律师 主播 解说员 解说 旁白 导游 教练 警察 法官 经理 客服 销售 嘉宾 主席 校长 教授 学生 司机 "
    "领航员 赛车手 队长"
)
_ROLES_EN = (
    "host reporter teacher doctor lawyer anchor commentator narrator guide coach officer judge manager agent guest "
    "chair professor student driver captain moderator"
)
_ZH_ROLE = re.compile(r"我是(?:这里的|你们的|本台|一名|一位|一个)?(" + "|".join(_ROLES_ZH.split()) + ")")
_EN_ROLE = re.compile(r"\b(?:i am|i'm)\s+(?:your|the|a|an)\s+(" + "|".join(_ROLES_EN.split()) + r")\b", re.I)


def detect_role(texts: list[str]) -> str | None:
    """A role the speaker states about themself, from a closed lexicon; None otherwise."""
    for t in texts:
        m = _ZH_ROLE.search(t or "")
        if m:
            return m.group(1)
        m = _EN_ROLE.search(t or "")
        if m:
            return m.group(1).lower().capitalize()
    return None


def speaker_histories(segments: list[Segment]) -> dict[str, dict[str, Any]]:
    by: dict[str, list[Segment]] = defaultdict(list)
    for s in segments:
        by[s.speaker].append(s)
    out = {}
    for spk, segs in by.items():
        langs: dict[str, float] = defaultdict(float)
        for s in segs:
            if s.language:
                langs[s.language] += s.duration
        out[spk] = {
            "speaker": spk,
            "n_segments": len(segs),
            "duration_s": round(sum(s.duration for s in segs), 3),
            "keys": [s.key for s in segs],
            "languages": {k: round(v, 3) for k, v in langs.items()},
            "role": detect_role([s.text for s in segs]),
            "sample_texts": [s.text[:80] for s in segs[:3] if s.text],
        }
    return out


# A speaker label whose segments hold confident male and confident female voices is two voices
# at least, whatever the timeline's clustering found (the gender extractor's segment values).
MIXED_GENDER_P = 0.15
MIXED_GENDER_MIN_RELIABILITY = 0.5


def mixed_voices(segments: list[Segment], evidence: dict[str, dict[str, Evidence]] | None) -> list[str]:
    """Speaker labels whose segments include both a confidently male and a confidently female voice."""
    if not evidence:
        return []
    seen: dict[str, set[str]] = defaultdict(set)
    for s in segments:
        e = evidence.get(s.key, {}).get("gender.p_male")
        if e is None or not isinstance(e.value, (int, float)) or e.reliability < MIXED_GENDER_MIN_RELIABILITY:
            continue
        if e.value >= 1 - MIXED_GENDER_P:
            seen[s.speaker].add("male")
        elif e.value <= MIXED_GENDER_P:
            seen[s.speaker].add("female")
    return sorted(spk for spk, g in seen.items() if len(g) == 2)


def recording_summary(
    segments: list[Segment],
    histories: dict[str, dict[str, Any]],
    evidence: dict[str, dict[str, Evidence]] | None = None,
) -> dict[str, Any]:
    langs: dict[str, float] = defaultdict(float)  # seconds per language
    for s in segments:
        if s.language:
            langs[s.language] += s.duration
    n_spk = len(histories)
    changes = sum(1 for a, b in zip(segments, segments[1:]) if a.speaker != b.speaker)
    mixed = mixed_voices(segments, evidence)
    # a monologue only when one voice is heard: one label holding two voices is not one
    interaction = (
        "several voices"
        if n_spk <= 1 and mixed
        else "monologue"
        if n_spk <= 1
        else "dialogue"
        if n_spk == 2
        else "multi-party"
    )
    return {
        "duration_s": round(
            max((s.end for s in segments), default=0.0) - min((s.start for s in segments), default=0.0), 3
        ),
        "n_segments": len(segments),
        "n_speakers": n_spk,
        "speaker_changes": changes,
        "interaction": interaction,
        "mixed_voice_labels": mixed,
        "language": max(langs, key=lambda k: langs[k]) if langs else "",
        "speakers": [
            {"speaker": h["speaker"], "n_segments": h["n_segments"], "duration_s": h["duration_s"], "role": h["role"]}
            for h in histories.values()
        ],
        "roles": {h["speaker"]: h["role"] for h in histories.values() if h["role"]},
    }


def speaker_aggregates(segments: list[Segment], evidence: dict[str, dict[str, Evidence]]) -> list[Evidence]:
    """Duration-weighted means of numeric segment evidence per speaker, for names the prior
    extractors did not already aggregate under the speaker key."""
    sums: dict[tuple[str, str], list[float]] = defaultdict(lambda: [0.0, 0.0])
    for s in segments:
        for name, ev in evidence.get(s.key, {}).items():
            if isinstance(ev.value, bool) or not isinstance(ev.value, (int, float)) or name.startswith("context."):
                continue
            w = max(0.05, s.duration) * max(0.05, float(ev.reliability or 0.0))
            acc = sums[(s.speaker, name)]
            acc[0] += w * float(ev.value)
            acc[1] += w
    out = []
    for (spk, name), (num, den) in sums.items():
        have = evidence.get(speaker_key(spk), {}).get(name)
        if den > 0 and (have is None or have.extractor == AGGREGATOR):  # ours are recomputed on a rerun
            out.append(Evidence(speaker_key(spk), name, round(num / den, 4), extractor=AGGREGATOR))
    return out


def admitted_evidence(
    seg: Segment, contracts: dict[str, Contract], evidence: dict[str, dict[str, Evidence]]
) -> dict[str, Evidence]:
    """Evidence admitted by any of the given contracts: segment names as is, speaker
    aggregates as "speaker.<name>", recording statistics as "recording.<name>"."""
    out: dict[str, Evidence] = {}
    sources = (
        (seg.key, "", "segment"),
        (speaker_key(seg.speaker), "speaker.", "speaker_history"),
        (RECORDING_KEY, "recording.", "recording"),
    )
    for c in contracts.values():
        for key, prefix, scope in sources:
            if scope not in c.context_scope:
                continue
            for name, ev in evidence.get(key, {}).items():
                if not name.startswith("context.") and c.admits(prefix + name):
                    out[prefix + name] = ev
    return out


def _turn(
    s: Segment,
    me: Segment,
    evidence: dict[str, dict[str, Evidence]],
    with_arousal: bool,
    preds: dict[tuple[str, str], Prediction] | None,
) -> dict[str, Any]:
    item: dict[str, Any] = {
        "key": s.key,
        "speaker": s.speaker,
        "same_speaker": s.speaker == me.speaker,
        "text": s.text,
        "start": s.start,
        "end": s.end,
    }
    ev = evidence.get(s.key, {})
    if with_arousal and "emotion.arousal" in ev and isinstance(ev["emotion.arousal"].value, (int, float)):
        item["arousal"] = float(ev["emotion.arousal"].value)
    if preds is not None:
        item["predictions"] = {f: preds[(s.key, f)].value for f in LABELED_FIELDS if (s.key, f) in preds}
    return item


VOTE_VALUES = 5  # distinct values of a speaker trait shown in a task's context (the heaviest)


def vote_value(field: str, value: Any) -> str | None:
    """The value a speaker-trait prediction votes for: the id of a closed field's typed value
    (gender, age), the text of an open one; None for empty or "none"."""
    if field in CLOSED_TYPES:
        return str(value) if isinstance(value, CLOSED_TYPES[field]) else None
    canon = normalize_text(value)
    return None if not canon or canon == "none" else str(value)


def vote_weight(duration: float, confidence: float | None) -> float:
    return max(0.1, float(duration or 1.0)) * max(0.05, float(confidence or 0.1))


STRONG_CONFIDENCE = 0.85  # a turn may show a speaker trait other than its speaker's only this sure ...
OVERWHELMING_SHARE = 0.8  # ... and only while the speaker's value is not this much of its turns' votes


def keeps_own_label(confidence: float, share: float) -> bool:
    """Whether a turn shows its own label of a speaker trait (gender, age, accent) rather than its
    speaker's value, which holds ``share`` of the speaker's weighted votes: finalize's rule, which
    the review's gender norm for pitch and texture follows, so a turn is worded by the gender it shows."""
    return confidence >= STRONG_CONFIDENCE and share < OVERWHELMING_SHARE


class ContextIndex:
    """Lookups built once per stage (or review round) so that one task's context costs the
    size of that context, not of the recording: segment positions, and per speaker and trait
    the weighted votes of the latest predictions (a task sees them without its own segment)."""

    def __init__(self, segments: list[Segment], preds: dict[tuple[str, str], Prediction] | None = None):
        self.position = {s.key: i for i, s in enumerate(segments)}
        self.votes: dict[tuple[str, str], dict[str, list[float]]] = defaultdict(dict)
        self.own: dict[tuple[str, str], tuple[str, float]] = {}
        if preds is None:
            return
        for s in segments:
            for f in SPEAKER_TRAITS:
                p = preds.get((s.key, f))
                value = vote_value(f, p.value) if p is not None else None
                if value is None or p is None:
                    continue
                w = vote_weight(s.duration, p.confidence)
                tally = self.votes[(s.speaker, f)].setdefault(value, [0.0, 0])
                tally[0] += w
                tally[1] += 1
                self.own[(s.key, f)] = (value, w)
        self._ranked = {kf: sorted(t.items(), key=lambda kv: (-kv[1][0], kv[0])) for kf, t in self.votes.items()}

    def speaker_votes(self, seg: Segment, field: str) -> dict[str, Any]:
        """{"values": [{"value", "weight", "segments"}, ...] heaviest first, "total_weight",
        "segments"} over the speaker's other segments."""
        ranked = self._ranked.get((seg.speaker, field), [])
        own_value, own_w = self.own.get((seg.key, field), (None, 0.0))
        total = sum(t[0] for _, t in ranked) - own_w
        count = sum(t[1] for _, t in ranked) - (own_value is not None)
        top: list[dict[str, Any]] = []
        for value, (w, n) in ranked[: VOTE_VALUES + 1]:  # leaving one segment out reorders at most one value
            if value == own_value:
                w, n = w - own_w, n - 1
            if n > 0:
                top.append({"value": value, "weight": round(w, 6), "segments": n})
        top.sort(key=lambda v: (-v["weight"], v["value"]))
        return {"values": top[:VOTE_VALUES], "total_weight": round(max(total, 0.0), 6), "segments": max(count, 0)}


def task_context(
    seg: Segment,
    contracts: dict[str, Contract],
    segments: list[Segment],
    evidence: dict[str, dict[str, Evidence]],
    preds: dict[tuple[str, str], Prediction] | None = None,
    index: ContextIndex | None = None,
) -> dict[str, Any]:
    """Context admitted by the contracts' scopes (union over the task's fields). With
    ``preds`` (review), neighbours carry the latest predictions and the speaker history the
    votes of the speaker's other segments on each trait. Pass an ``index`` built once for
    all tasks of a stage; without one it is built here (cost: the whole recording)."""
    scopes = {s for c in contracts.values() for s in c.context_scope}
    ctx: dict[str, Any] = {}
    if "recording" in scopes and SUMMARY in evidence.get(RECORDING_KEY, {}):
        ctx["recording_summary"] = evidence[RECORDING_KEY][SUMMARY].value
    if ("speaker_history" in scopes or "neighbours" in scopes) and index is None:
        index = ContextIndex(segments, preds)
    if "speaker_history" in scopes:
        hist = dict(evidence.get(speaker_key(seg.speaker), {}).get(HISTORY, Evidence("", "", {})).value or {})
        hist.pop("keys", None)  # grows with the recording and tells a task nothing
        if preds is not None and index is not None:
            # speaker traits are what cross-segment consistency is checked on
            hist["votes"] = {f: index.speaker_votes(seg, f) for f in SPEAKER_TRAITS}
        ctx["speaker_history"] = hist
    if "neighbours" in scopes and index is not None:
        with_arousal = any("neighbours" in c.context_scope and c.admits("emotion.arousal") for c in contracts.values())
        idx = index.position.get(seg.key)
        if idx is not None:
            ctx["previous"] = [
                _turn(s, seg, evidence, with_arousal, preds) for s in segments[max(0, idx - NEIGHBOURS) : idx]
            ]
            ctx["next"] = [
                _turn(s, seg, evidence, with_arousal, preds) for s in segments[idx + 1 : idx + 1 + NEIGHBOURS]
            ]
    return ctx
