"""Planning Agent (stage 8): one typed contract per segment and labeled field.

Routing follows the paper: speaker-profile fields may use same-speaker history; prosody and
voice quality prioritise local audio and acoustic statistics; emotion may use nearby turns as
weak support; scene fields stay grounded in acoustic/event evidence. The planner also adapts a
contract to the segment's evidence (an unreliable F0, an undecided gender classifier, a segment
without scene evidence) and writes the recording summary and speaker histories it drew on.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..records import RECORDING_KEY, Contract, Evidence, Segment, speaker_key
from ..schema import AGE_VALUES, GENDER_VALUES, LABELED_FIELDS, LabelLanguage
from ..stages import StageContext, StageName
from .context import HISTORY, NEIGHBOURS, SUMMARY, recording_summary, speaker_aggregates, speaker_histories

SEG, SPK, NB, REC = "segment", "speaker_history", "neighbours", "recording"


@dataclass(frozen=True)
class Route:
    admissible: tuple[str, ...]
    priority: tuple[str, ...]
    scope: tuple[str, ...]
    conflict: str


# fmt: off
ROUTES: dict[str, Route] = {
    "gender": Route(
        ("gender.", "pitch.median_hz", "pitch.mean_hz"),
        ("gender.p_male", "gender.label", "speaker.gender.p_male", "pitch.median_hz"),
        (SEG, SPK, REC),
        "the speaker's other turns win unless local evidence is strong (p >= 0.9) or the pooled p_male backs it",
    ),
    "age": Route(
        ("age.", "gender.", "pitch.median_hz", "pitch.mean_hz", "voice."),
        ("age.band", "speaker.age.band", "speaker.pitch.median_hz", "voice.jitter", "voice.shimmer"),
        (SEG, SPK, REC),
        "keep the speaker's age stable; without an age model answer cautiously with low confidence",
    ),
    "accent": Route(
        (),
        ("transcript language", "speaker history languages"),
        (SEG, SPK, REC),
        "the speaker's accent is stable across turns; the transcript language decides between varieties",
    ),
    "pitch": Route(
        ("pitch.", "gender."),
        ("pitch.median_hz", "pitch.std_semitones", "pitch.final_slope_semitones", "gender.p_male",
         "speaker.pitch.median_hz"),
        (SEG, SPK),
        "local F0 statistics decide, judged against the gender norm; speaker history only for relative wording",
    ),
    "speed": Route(
        ("rate.", "pause."),
        ("rate.units_per_s", "pause.ratio", "speaker.rate.units_per_s"),
        (SEG, SPK),
        "local rate decides against the language's rate bins",
    ),
    "rhythm": Route(
        ("rate.", "pause.", "energy.std_db", "pitch.final_slope_semitones", "events.long_pause"),
        ("rate.units_per_s", "pause.count", "pause.longest_s", "energy.std_db"),
        (SEG,),
        "local timing evidence only",
    ),
    "tone": Route(
        ("pitch.", "energy.", "loudness.", "rate.", "emotion.arousal", "emotion.valence_text"),
        ("emotion.arousal", "pitch.final_slope_semitones", "rate.units_per_s", "transcript"),
        (SEG, NB, REC),
        "local prosody decides; neighbouring turns only clarify the speech act; loudness against the recording's",
    ),
    "texture": Route(
        ("voice.", "pitch.", "gender.", "energy.", "scene.dnsmos_sig", "quality.mos", "channel.origin", "snr.db",
         "emotion.arousal", "events.breath"),
        ("voice.hnr_db", "voice.jitter", "voice.shimmer", "pitch.median_hz", "speaker.voice.hnr_db"),
        (SEG, SPK),
        "local voice-quality statistics; a voice trait (hoarse) also needs the speaker's turns",
    ),
    "pronunciation": Route(
        ("rate.", "voice.", "scene.dnsmos_sig", "quality.mos", "snr.db", "pause."),
        ("ASR word probabilities", "rate.units_per_s", "snr.db"),
        (SEG,),
        "local articulation evidence; noise lowers confidence, not clarity",
    ),
    "emotion": Route(
        ("emotion.", "pitch.", "energy.", "loudness.", "rate.", "events.laughter"),
        ("emotion.model_label", "emotion.arousal", "emotion.valence_text", "neighbour arousal (weak)"),
        (SEG, NB, SPK),
        "local model and prosody decide; nearby turns are weak support only; "
        "an emotion must not contradict prosodic arousal",
    ),
    "paralinguistic": Route(
        ("events.", "pause."),
        ("events.laughter", "events.breath", "events.long_pause", "word gaps"),
        (SEG,),
        "claim an event only with event evidence",
    ),
    "environment": Route(
        ("scene.", "snr.db", "channel.", "events."),
        ("channel.origin", "scene.reverb", "scene.noise_type", "scene.dnsmos_bak"),
        (SEG,),
        "acoustic scene evidence only; never infer the place from the transcript; none when absent",
    ),
    "background_sound": Route(
        ("scene.", "events.", "snr.db"),
        ("scene.background", "events.music", "scene.music_prob", "scene.noise_type", "scene.dnsmos_bak", "snr.db"),
        (SEG,),
        "acoustic/event evidence only; none when absent",
    ),
}
# fmt: on

_OBJECTIVE = {
    "zh": {
        "gender": "判断说话人的感知性别",
        "age": "判断说话人的感知年龄段",
        "accent": "描述说话人的口音",
        "pitch": "描述整体音高水平、起伏与句尾走向",
        "speed": "描述语速快慢与音节推进",
        "rhythm": "描述节奏、停顿与轻重",
        "tone": "描述语气与言语行为",
        "texture": "描述音色与嗓音质感",
        "pronunciation": "描述咬字与发音清晰度",
        "emotion": "判断情绪类别与强度",
        "paralinguistic": "列出副语言事件（笑声、叹气、停顿等）",
        "environment": "判断录音所处环境",
        "background_sound": "描述背景声",
    },
    "en": {
        "gender": "perceived gender of the speaker",
        "age": "perceived age band of the speaker",
        "accent": "the speaker's accent",
        "pitch": "overall pitch level, variation and final contour",
        "speed": "speaking rate and syllable pacing",
        "rhythm": "rhythm, pauses and stress",
        "tone": "tone of voice and speech act",
        "texture": "timbre and voice quality",
        "pronunciation": "articulation and clarity",
        "emotion": "emotion category and intensity",
        "paralinguistic": "paralinguistic events (laughter, sigh, pause ...)",
        "environment": "the recording environment",
        "background_sound": "the background sound",
    },
}
_FORMAT = {
    "zh": {
        "gender": " 或 ".join(GENDER_VALUES["zh"]),
        "age": "/".join(AGE_VALUES["zh"]) + " 之一",
        "emotion": "情绪（强度），强度为 极弱/较弱/中等/较强/极强",
        "paralinguistic": "事件名，无则为“无”",
        "environment": "简短场景短语，无证据时为“无”",
        "background_sound": "简短声音短语，无证据时为“无”",
        "accent": "如“标准普通话”",
    },
    "en": {
        "gender": " or ".join(GENDER_VALUES["en"]),
        "age": "one of " + "/".join(AGE_VALUES["en"]),
        "emotion": "label (intensity), intensity in very weak/weak/moderate/strong/very strong",
        "paralinguistic": "event names, or 'none'",
        "environment": "a short scene phrase, or 'none' without evidence",
        "background_sound": "a short sound phrase, or 'none' without evidence",
        "accent": "e.g. 'standard American English'",
    },
}
_SENTENCE = {"zh": "一句简洁的中文描述", "en": "one concise English phrase"}


def _adapt(field: str, route: Route, ev: dict[str, Evidence]) -> tuple[list[str], str]:
    """Priority and conflict rule adjusted to what this segment's evidence can carry."""
    priority, rule = list(route.priority), route.conflict

    def num(name: str) -> float | None:
        x = ev.get(name)
        return (
            float(x.value)
            if x is not None and isinstance(x.value, (int, float)) and not isinstance(x.value, bool)
            else None
        )

    if field in ("pitch", "texture") and (
        (num("pitch.voiced_ratio") or 1.0) < 0.2
        or (ev.get("pitch.median_hz") and ev["pitch.median_hz"].reliability < 0.4)
    ):
        rule += "; local F0 is unreliable on this segment (few voiced frames): lower confidence"
    if field == "gender" and (p := num("gender.p_male")) is not None and 0.25 < p < 0.75:
        priority = ["speaker.gender.p_male"] + [x for x in priority if x != "speaker.gender.p_male"]
        rule += "; the local classifier is undecided here: the speaker's history comes first"
    if field in ("environment", "background_sound") and not any(n.startswith(("scene.", "snr.")) for n in ev):
        rule += "; no scene evidence for this segment: answer none with low confidence"
    if field == "emotion" and "emotion.model_label" not in ev:
        priority = [x for x in priority if x != "emotion.model_label"]
    return priority, rule


def make_contract(
    seg: Segment,
    field: str,
    ev: dict[str, Evidence],
    lang: LabelLanguage,
    *,
    context: bool,
    priors: bool,
    neighbours: dict[str, list[str]],
) -> Contract:
    route = ROUTES[field]
    scope = [s for s in route.scope if context or s == SEG]
    priority, rule = _adapt(field, route, ev if priors else {})
    if not priors:
        # Keep only non-evidence cues (transcript, word probabilities, history languages).
        priority = [p for p in priority if "." not in p and "arousal" not in p]
    ctx: dict = {"speaker": seg.speaker} if SPK in scope else {}
    if NB in scope:
        ctx.update(neighbours)
    return Contract(
        key=seg.key,
        field=field,
        objective=_OBJECTIVE[lang][field],
        value_format=_FORMAT[lang].get(field, _SENTENCE[lang]),
        admissible_evidence=list(route.admissible) if priors else [],
        priority=priority,
        context_scope=scope,
        conflict_rule=rule,
        context=ctx,
    )


def plan(ctx: StageContext) -> None:
    """Write contracts for every segment x labeled field, plus the context they draw on."""
    store, rec, config, label_lang = ctx.store, ctx.rec, ctx.config, ctx.label_language
    segments = store.segments(rec)
    evidence = store.evidence(rec)
    use_ctx, use_priors = config.agents.context, config.agents.priors
    histories = speaker_histories(segments)
    summary = recording_summary(segments, histories, evidence)
    context_items = [Evidence(RECORDING_KEY, SUMMARY, summary, extractor="planning")]
    context_items += [Evidence(speaker_key(spk), HISTORY, h, extractor="planning") for spk, h in histories.items()]
    aggregates = speaker_aggregates(segments, evidence)
    contracts = []
    for i, seg in enumerate(segments):
        nb = {
            "previous": [s.key for s in segments[max(0, i - NEIGHBOURS) : i]],
            "next": [s.key for s in segments[i + 1 : i + 1 + NEIGHBOURS]],
        }
        ev = evidence.get(seg.key, {})
        for field in LABELED_FIELDS:
            contracts.append(
                make_contract(seg, field, ev, label_lang, context=use_ctx, priors=use_priors, neighbours=nb)
            )
    with store.transaction() as c:
        store.write_evidence(c, rec, context_items + aggregates)
        store.write_contracts(c, rec, contracts)
        store.mark_stage(
            c,
            rec,
            StageName.PLAN,
            {"contracts": len(contracts), "context": use_ctx, "priors": use_priors, "label_lang": label_lang},
        )
