"""Stage 11: deterministic output processing of the reviewed state.

Standard speaker ids (spk_01.. by first appearance), speaker-level regularization of speaker
traits (duration- and confidence-weighted majority, for gender the side of the speaker's pooled
evidence where there is one; a turn keeps a different value only with strong evidence),
canonical vocabularies, speaker names, the transcript with inline paralanguage tags, then caption
and contextual inference from the backend's compose, integer milliseconds in time order. Records
are written to the state with the stage mark.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..agents.backend import Backend, ComposeTask
from ..agents.context import (
    HISTORY,
    ContextIndex,
    admitted_evidence,
    keeps_own_label,
    task_context,
    vote_weight,
)
from ..agents.phrases import phrases
from ..calibration import DEFAULT
from ..priors.speaker_names import speaker_names_from_text
from ..records import Prediction, Segment, speaker_key
from ..schema import (
    CLOSED_TYPES,
    LABELED_FIELDS,
    NONE_VALUE,
    OUTPUT_KEYS,
    AgeGroup,
    Emotion,
    Gender,
    SegmentRecord,
    Typed,
    Value,
    is_empty_marker,
    shown,
    validate_records,
)
from ..stages import StageContext, StageName

if TYPE_CHECKING:
    from ..state import StateStore

SPEAKER_FIELDS = ("gender", "age", "accent")
_PUNCT = set("，。！？、；：,.!?;:…—")


def _canon(field: str, value: Value | None) -> Value | None:
    """The value a speaker trait votes for: a typed closed value, an accent's text; None for none."""
    if field in CLOSED_TYPES:
        return value if isinstance(value, CLOSED_TYPES[field]) else None
    if not isinstance(value, str) or not value.strip() or is_empty_marker(value):
        return None
    return value.strip()


@dataclass(frozen=True)
class SpeakerValue:
    """A speaker trait as one turn shows it, with the confidence of that value on that turn: the
    turn's own prediction's where the value is its own label, else the speaker-level one."""

    value: Value | None
    confidence: float | None


def regularize(
    segments: list[Segment],
    preds: dict[tuple[str, str], Prediction],
    pooled: dict[tuple[str, str], tuple[Value, float]] | None = None,
) -> dict[tuple[str, str], SpeakerValue]:
    """Speaker-level values for gender, age and accent: {(key, field): what the turn shows}.

    The speaker's value is the weighted majority of its turns' labels, with the confidence its
    vote share times the weighted mean confidence of the turns that voted for it; or, where given,
    ``pooled[(speaker, field)]``: a value from the speaker's pooled evidence with its probability,
    which the review's drift check also defers to (labels are decisions; the evidence weighs each
    turn by its reliability). A turn showing its own label keeps its own confidence; one whose own,
    different label the speaker's value replaces gets the speaker's confidence times one minus its
    own (the two taken as independent), so the turns that disagree with their speaker, where a
    voice is most likely misassigned, sort first in a review by confidence.
    """
    out: dict[tuple[str, str], SpeakerValue] = {}
    by_spk: dict[str, list[Segment]] = defaultdict(list)
    for s in segments:
        by_spk[s.speaker].append(s)
    for segs in by_spk.values():
        for field in SPEAKER_FIELDS:
            votes: dict[Value, float] = defaultdict(float)
            sure: dict[Value, float] = defaultdict(float)  # vote-weighted confidence sums
            for s in segs:
                p = preds.get((s.key, field))
                c = _canon(field, p.value) if p else None
                if p is not None and c is not None:
                    w = vote_weight(s.duration, p.confidence)
                    votes[c] += w
                    sure[c] += w * p.confidence
            total = sum(votes.values())
            major = max(votes, key=lambda k: votes[k]) if votes else None
            share = votes.get(major, 0.0) / total if major is not None and total > 0 else 0.0
            major_conf = share * sure[major] / votes[major] if major is not None and votes[major] > 0 else None
            if votes and (segs[0].speaker, field) in (pooled or {}):
                # a speaker none of whose turns was labelled keeps none (a failed backend)
                major, major_conf = (pooled or {})[(segs[0].speaker, field)]
                share = votes.get(major, 0.0) / total if total > 0 else 0.0
            for s in segs:
                p = preds.get((s.key, field))
                own = _canon(field, p.value) if p else None
                keep = p is not None and own is not None and own != major and keeps_own_label(p.confidence, share)
                if p is not None and p.status != "failed" and (keep or own == major):
                    out[(s.key, field)] = SpeakerValue(own, p.confidence)  # its own label (or abstention)
                elif major is None or major_conf is None:
                    out[(s.key, field)] = SpeakerValue(major, None)
                elif p is not None and own is not None:
                    # right only if the speaker's value is and the turn's own, other label is not
                    out[(s.key, field)] = SpeakerValue(major, major_conf * (1.0 - p.confidence))
                else:
                    out[(s.key, field)] = SpeakerValue(major, major_conf)
    return out


def pooled_gender(speakers: list[str], evidence: dict) -> dict[tuple[str, str], tuple[Value, float]]:
    """{(speaker, "gender"): the gender its pooled evidence (``speaker.gender.p_male``) leans to, and
    the probability of that side}."""
    out: dict[tuple[str, str], tuple[Value, float]] = {}
    for spk in speakers:
        e = evidence.get(speaker_key(spk), {}).get("gender.p_male")
        if e is not None and isinstance(e.value, int | float):
            out[(spk, "gender")] = Gender.with_probability(float(e.value))
    return out


def canonical_value(field: str, value: Value | None, lang: str) -> str:
    """The record's text of a reviewed value: typed values are rendered here, once."""
    if isinstance(value, Typed):
        return value.render(lang)
    if value is None or field in CLOSED_TYPES or is_empty_marker(value):
        return NONE_VALUE[lang]
    value = re.sub(r"\s+", " ", str(value)).strip()
    # an emotion that is not typed came from outside (a person's or an old state's text)
    return Emotion.parse(value).render(lang) if field == "emotion" else value


def tag_transcript(
    seg: Segment,
    paralinguistic: str,
    lang: str,
    pause_s: float = DEFAULT.tag_pause_s,
    laughter_times: list | None = None,
) -> str:
    """Insert pause tags at long internal pauses (word timestamps) and event tags for
    laughter/sigh that the reviewed paralinguistic value names. A laughter tag goes where the
    laugh was heard (``laughter_times``, recording seconds: before the first word that starts
    after the laugh's onset), else at the end."""
    P, text = phrases(lang), seg.text or ""
    low = text.lower()
    words = sorted(seg.words, key=lambda w: w.start)
    pos: list[int | None] = []
    cursor = 0
    for w in words:
        t = w.text.strip().lower()
        i = low.find(t, cursor) if t else -1
        pos.append(i if i >= 0 else None)
        if i >= 0:
            cursor = i + len(t)
    inserts: list[int] = []
    for i in range(1, len(words)):
        gap = words[i].start - words[i - 1].end
        here, before = pos[i], pos[i - 1]
        if gap < pause_s or here is None or before is None:
            continue
        between = text[before + len(words[i - 1].text.strip()) : here]
        if any(ch in _PUNCT for ch in between) and gap < 1.0:
            continue  # punctuation already marks a natural phrase break
        inserts.append(here)
    sp = "" if lang == "zh" else " "
    tags = [(at, P.PARA_TAGS["pause"] + sp) for at in sorted(set(inserts))]
    said = {kind for word, kind in P.PARA_PARSE if word in (paralinguistic or "").lower()}
    placed = set()
    if "laughter" in said and laughter_times:
        for onset in sorted({float(t[0]) for t in laughter_times if isinstance(t, (list, tuple)) and t}):
            after = [at for at, w in zip(pos, words) if w.start >= onset and at is not None]
            if after and (after[0], P.PARA_TAGS["laughter"] + sp) not in tags:
                tags.append((after[0], P.PARA_TAGS["laughter"] + sp))
                placed.add("laughter")
    for at, tag in sorted(tags, key=lambda t: t[0], reverse=True):
        text = text[:at] + tag + text[at:]
    for kind in ("sigh", "laughter"):
        if kind in said and kind not in placed:
            text = text + ("" if lang == "zh" or not text else " ") + P.PARA_TAGS[kind]
    return text


def _value(evidence: dict, key: str, name: str):
    e = evidence.get(key, {}).get(name)
    return e.value if e is not None else None


def speaker_names(
    order: list[str],
    ages: dict[str, Value | None],
    roles: dict[str, str | None],
    lang: str,
    given: dict[str, str] | None = None,
) -> dict[str, str]:
    """A name per speaker: the name they introduce themselves with (``given``), else their
    role or "SpeakerN", with the speaker's age band."""
    names: dict[str, str] = {}
    per_role: dict[str, int] = defaultdict(int)
    given = given or {}
    for n, spk in enumerate(order, start=1):
        role = roles.get(spk)
        if spk in given:
            base = given[spk]
        elif role:
            per_role[role] += 1
            base = f"{role}{per_role[role]}"
        else:
            base = f"说话人{n}" if lang == "zh" else f"Speaker{n}"
        age = ages.get(spk)
        names[spk] = f"{base}_{age.render(lang)}" if isinstance(age, AgeGroup) else base
    return names


def _compose(backend: Backend, task: ComposeTask) -> dict[str, str]:
    try:
        got = backend.compose(task) or {}
    except Exception:  # noqa: BLE001 - a model fault must not lose the recording
        got = {}
    if not all(isinstance(got.get(k), str) and got[k].strip() for k in ("caption", "contextual_inference")):
        from ..agents.compose import compose_task  # deterministic fallback

        got = {**compose_task(task), **{k: v for k, v in got.items() if isinstance(v, str) and v.strip()}}
    return {k: re.sub(r"\s+", " ", got[k]).strip() for k in ("caption", "contextual_inference")}


class StageInputError(Exception):
    """A stage found its inputs missing in the state (e.g. another process reset them)."""


def check_annotation_inputs(store: StateStore, rec: str) -> None:
    """Finalize only a state that holds every segment's contracts and predictions: a
    recording is never marked complete without them."""
    segments = store.segments(rec)
    if not segments:
        if store.stage_done(rec, StageName.TIMELINE):
            return  # the timeline found no speech (silence, music, or every piece dropped): an empty annotation
        raise StageInputError(f"{rec}: the state holds no segments")
    contracts, preds = store.contracts(rec), store.predictions(rec)
    planned = {k for k, _ in contracts}
    missing_plan = sum(s.key not in planned for s in segments)
    missing_pred = sum(kf not in preds for kf in contracts)
    if missing_plan or missing_pred:
        raise StageInputError(
            f"{rec}: the state lacks contracts for {missing_plan} segment(s) and predictions for "
            f"{missing_pred} field(s); its agent stages will be redone on the next run"
        )


def finalize(ctx: StageContext) -> list[SegmentRecord]:
    store, rec, backend, config, label_lang = ctx.store, ctx.rec, ctx.backend, ctx.config, ctx.label_language
    check_annotation_inputs(store, rec)
    segments = sorted(store.segments(rec), key=lambda s: (s.start, s.end, s.key))
    pause_s = config.calibration.tag_pause_s
    preds, contracts, evidence = store.predictions(rec), store.contracts(rec), store.evidence(rec)
    order: list[str] = []
    for s in segments:
        if s.speaker not in order:
            order.append(s.speaker)
    ids = {spk: f"spk_{i:02d}" for i, spk in enumerate(order, start=1)}
    reg = regularize(segments, preds, pooled_gender(order, evidence))
    ages = {s.speaker: reg[(s.key, "age")].value for s in segments}
    roles: dict[str, str | None] = {}
    if config.agents.context:
        for spk in order:
            hist = evidence.get(speaker_key(spk), {}).get(HISTORY)
            roles[spk] = hist.value.get("role") if hist is not None and isinstance(hist.value, dict) else None
    given = speaker_names_from_text((s.speaker, s.text, s.language or label_lang) for s in segments)
    names = speaker_names(order, ages, roles, label_lang, given)
    items: list[tuple[str, dict]] = []
    contracts_of: dict[str, dict] = defaultdict(dict)
    for (k, f), contract in contracts.items():
        contracts_of[k][f] = contract
    index = ContextIndex(segments)
    for s in segments:
        typed: dict[str, Value] = {}  # the record's values, typed ones rendered only into the record
        for f in LABELED_FIELDS:
            p = preds.get((s.key, f))
            raw = reg[(s.key, f)].value if f in SPEAKER_FIELDS else (p.value if p and p.status != "failed" else None)
            typed[f] = raw if isinstance(raw, Typed) else canonical_value(f, raw, label_lang)
        values = {f: shown(v, label_lang) for f, v in typed.items()}
        mine = contracts_of.get(s.key, {})
        task = ComposeTask(
            segment=s,
            values={**typed, "speaker_name": names[s.speaker]},
            evidence=admitted_evidence(s, mine, evidence),
            context=task_context(s, mine, segments, evidence, index=index),
            label_language=label_lang,
        )
        composed = _compose(backend, task)
        start = int(round(s.start * 1000))
        row = {
            "speaker_id": ids[s.speaker],
            "speaker_name": names[s.speaker],
            "text": s.text,
            "text_and_paralanguage": tag_transcript(
                s, values["paralinguistic"], label_lang, pause_s, _value(evidence, s.key, "events.laughter_times")
            ),
            "start_time": start,
            "end_time": max(start, int(round(s.end * 1000))),
            "language": s.language or label_lang,
            **values,
            **composed,
        }
        items.append((s.key, {k: row[k] for k in OUTPUT_KEYS}))
    records = validate_records([d for _, d in items])
    with store.transaction() as c:
        store.write_records(c, rec, items)
        store.mark_stage(c, rec, StageName.FINALIZE, {"records": len(items), "speakers": len(order)})
    return records
