"""Rules for speaker profile, affect and scene fields, and the per-field dispatcher.

Speaker traits combine local evidence with the speaker's aggregate (only when the contract
admits same-speaker history); scene fields stay on acoustic/event evidence and say 无/none,
with low confidence, when there is none; emotion reads the plugged-in model, prosodic arousal
and transcript valence, with same-speaker neighbours as weak support. A reviewer's suggested
value (``LabelTask.suggested``, from ``Verdict.suggested``) is applied when it is valid for the field;
otherwise the field is re-derived in strict mode (speaker-consistent, model labels ignored).
"""

from __future__ import annotations

from ...calibration import DEFAULT, Calibration
from ...priors.acoustic import LONG_PAUSE_S
from ...records import Prediction, Segment, Status
from ...schema import AgeGroup, Gender, Value, is_empty_marker, typed_value
from ..backend import LabelTask
from ..phrases import phrases
from ..transcript import internal_gaps
from .certainty import trusted
from .evidence import FieldView, speaker_gender
from .prosody import (
    AROUSAL_HIGH,
    AROUSAL_LOW,
    AROUSAL_NEUTRAL,
    Outcome,
    arousal_certainty,
    label_pitch,
    label_pronunciation,
    label_rhythm,
    label_speed,
    label_texture,
    label_tone,
)

# The emotion model's labels ("开心/happy" or "happy") it can name; others (e.g. "other") are no label.
_MODEL_EMOTIONS = frozenset({"angry", "disgusted", "fearful", "happy", "neutral", "sad", "surprised"})


def local_gender(v: FieldView) -> tuple[Gender | None, float]:
    g, p = speaker_gender(v.num, v.text)
    if g is not None:
        return g, p
    hz = v.num("pitch.median_hz") or v.num("pitch.mean_hz")
    if hz is None:
        return None, 0.0
    # Pitch alone separates adult voices only outside their overlap (150-185 Hz by default).
    cal = v.cal
    if hz < cal.pitch_male_below_hz:
        return Gender.MALE, 0.75 if hz < cal.pitch_male_confident_hz else 0.6
    if hz > cal.pitch_female_above_hz:
        return Gender.FEMALE, 0.75 if hz > cal.pitch_female_confident_hz else 0.6
    return None, 0.5


def label_gender(v: FieldView, seg: Segment, P, strict: bool) -> Outcome:
    g, p = local_gender(v)
    sp = v.num("speaker.gender.p_male", cite=False)  # cited below only when it decides
    sg, sprob = (None, 0.0) if sp is None else Gender.with_probability(sp)
    if sg is not None and sprob >= 0.7 and (strict or g is None or p < 0.75):
        v.num("speaker.gender.p_male")
        why = "speaker-consistent (strict)" if strict else "local evidence weak: speaker aggregate"
        return Outcome(sg, round(min(0.85, sprob), 2), "ok", why)
    if g is not None:
        return Outcome(g, round(p, 2), "ok" if p >= 0.6 else "abstain", f"local gender evidence p={p:.2f}")
    return Outcome(P.NONE, 0.0, "abstain", "no gender evidence")


def label_age(v: FieldView, seg: Segment, P, strict: bool) -> Outcome:
    for name in ("age.band", "speaker.age.band"):
        band = v.text(name)
        if isinstance(group := typed_value(band, "age"), AgeGroup):  # the model's band, any alias
            return Outcome(group, 0.7 if name == "age.band" else 0.6, "ok", f"age model band {band}")
    years = v.num("age.years")
    if years is not None and 0 < years < 110:  # a plugged-in age regressor without a band
        bands = ((13, AgeGroup.CHILD), (18, AgeGroup.TEENAGER), (36, AgeGroup.YOUNG_ADULT), (60, AgeGroup.MIDDLE_AGED))
        group = next((band for top, band in bands if years < top), AgeGroup.ELDERLY)
        return Outcome(group, 0.6, "ok", f"age model estimate {years:.0f} years")
    # No age model: a cautious guess from pitch and voice quality, stated with low confidence.
    hz = v.num("speaker.pitch.median_hz") or v.num("pitch.median_hz") or v.num("pitch.mean_hz")
    g, _ = local_gender(v)
    if g is None and (sp := v.num("speaker.gender.p_male")) is not None:
        g, _ = Gender.with_probability(sp)
    hnr, jit, shim = v.num("voice.hnr_db"), v.num("voice.jitter"), v.num("voice.shimmer")
    if hz is None and g is None:
        return Outcome(P.NONE, 0.0, "abstain", "no age model and no pitch/gender evidence")
    if hz is not None and hz >= 300:
        group, why = AgeGroup.CHILD, f"very high F0 {hz:.0f} Hz"
    elif (
        (jit or 0) > v.cal.jitter_high and (shim or 0) > v.cal.shimmer_high and (hnr is None or hnr < v.cal.hnr_low_db)
    ):
        group, why = AgeGroup.ELDERLY, "high jitter and shimmer"
    elif g == Gender.MALE and hz is not None and v.cal.pitch_class(hz, g) <= -1:
        group, why = AgeGroup.MIDDLE_AGED, "low male F0"
    else:
        group, why = AgeGroup.YOUNG_ADULT, "adult voice without age cues"
    return Outcome(group, 0.3, "abstain", f"no age model; cautious guess: {why}")


def label_accent(v: FieldView, seg: Segment, P, strict: bool) -> Outcome:
    lang = (seg.language or "").split("-")[0].lower()
    hist = v.ctx("speaker_history", "speaker_history") or {}
    langs = hist.get("languages") if isinstance(hist, dict) else None
    if isinstance(langs, dict) and langs:
        # Code-switched or mis-identified short turns take the speaker's main language.
        main = max(langs, key=lambda k: langs[k])
        if langs[main] >= 0.6 * sum(langs.values()):
            lang = main
    # No accent model: the standard variety of the language spoken is all the evidence supports;
    # the confidence is the language identification's (a short, code-switched turn is less sure).
    conf = round(0.3 + 0.3 * float(seg.language_probability or 0.0), 2)
    if lang in P.ACCENT and lang != "other":
        return Outcome(P.ACCENT[lang], conf, "ok", f"no accent model: standard variety of '{lang}'")
    if lang in P.ACCENT_LANGUAGE:
        return Outcome(P.ACCENT_LANGUAGE[lang], conf, "ok", f"no accent model: standard variety of '{lang}'")
    if not lang:
        return Outcome(P.ACCENT["zh" if P.LANG == "zh" else "en"], 0.3, "abstain", "no language identified")
    return Outcome(P.NONE, 0.2, "abstain", f"no accent model and no variety named for '{lang}'")


def _intensity(strength: float) -> int:
    return 1 if strength < 0.2 else 2 if strength < 0.45 else 3 if strength < 0.75 else 4


def _model_emotion(v: FieldView) -> tuple[str, float] | None:
    label = v.text("emotion.model_label")
    if not label:
        return None
    lid = label.lower().split("/")[-1]
    if lid not in _MODEL_EMOTIONS:
        return None
    scores = v.raw("emotion.model_scores")
    score = 0.6
    if isinstance(scores, dict):
        try:
            score = float(max(scores.values()))
        except (TypeError, ValueError):
            pass
    return (lid, score) if score >= 0.5 else None


def _neighbour_support(v: FieldView) -> float | None:
    """Strongest same-speaker neighbour arousal (weak support for an ambiguous segment)."""
    best = None
    for side in ("previous", "next"):
        for item in v.ctx("neighbours", side) or []:
            if isinstance(item, dict) and item.get("same_speaker") and isinstance(item.get("arousal"), (int, float)):
                a = float(item["arousal"])
                best = a if best is None or abs(a) > abs(best) else best
    return best


def emotion_of(a: float, valence: float) -> str:
    """The emotion that arousal z and transcript valence name (without an emotion model)."""
    if a >= AROUSAL_HIGH:
        return "angry" if valence <= -0.3 else "excited" if valence >= 0.3 else "tense"
    if a >= AROUSAL_NEUTRAL:
        return "happy" if valence >= 0.3 else "tense" if valence <= -0.3 else "neutral"
    if a <= AROUSAL_LOW:
        return "sad" if valence <= -0.3 else "calm"
    # Negative words name no one emotion (sad, angry, afraid): a lowered voice picks sad; over a
    # usual voice they are the topic (AMI trn03's 'crashes', 'stupid Java thing' were "sad").
    return "happy" if valence >= 0.5 else "sad" if valence <= -0.5 and a <= -AROUSAL_NEUTRAL else "neutral"


def label_emotion(v: FieldView, seg: Segment, P, strict: bool) -> Outcome:
    model = None if strict else _model_emotion(v)
    if model is not None:
        lid, score = model
        inten = 2 if lid == "neutral" else (3 if score >= 0.9 else 2 if score >= 0.7 else 1)
        return Outcome(P.emotion(lid, inten), round(min(0.85, score), 2), "ok", f"emotion model {lid} {score:.2f}")
    a, val = v.num("emotion.arousal"), v.num("emotion.valence_text")
    if a is None and val is None:
        return Outcome(P.emotion("neutral", 2), 0.25, "abstain", "no emotion or prosody evidence")
    a0, v0 = a or 0.0, val or 0.0
    laugh = v.num("events.laughter")
    if laugh is not None and laugh >= v.cal.laughter_prob and a0 > -AROUSAL_NEUTRAL and v0 > -0.3:
        # a laugh heard in the segment is support for amusement, weak on its own
        return Outcome(
            P.emotion("happy", 2 if a0 >= AROUSAL_NEUTRAL else 1), 0.45, "ok", f"laughter heard ({laugh:.2f})"
        )
    lid = emotion_of(a0, v0)
    sure = arousal_certainty(v, a0, lambda x: emotion_of(x, v0)) if a is not None else None
    conf = round(0.55 * sure, 2) if sure is not None else 0.4
    # the words alone carry it (a calm voice does not make words happier): weak, low confidence
    if lid == "happy" and a0 < AROUSAL_NEUTRAL:
        conf = round(0.35 * sure, 2) if sure is not None else 0.35
        return Outcome(P.emotion(lid, 1), conf, "ok", f"transcript valence {v0:.2f} only")
    why = f"arousal {a0:.2f}, valence {v0:.2f}"
    if lid in ("neutral", "calm"):
        support = _neighbour_support(v)
        if lid == "neutral" and abs(a0) < AROUSAL_NEUTRAL and support is not None and support >= 1.2:
            return Outcome(P.emotion("tense", 1), 0.4, "ok", why + f"; same-speaker neighbours aroused ({support:.2f})")
        return Outcome(P.emotion(lid, 2 if abs(a0) < 0.5 else 1), conf, "ok", why)
    # transcript valence is a weaker intensity cue than prosody (lexicon scores run high)
    return Outcome(P.emotion(lid, _intensity(max(abs(a0) / 2.5, 0.6 * abs(v0)))), conf, "ok", why)


def label_paralinguistic(v: FieldView, seg: Segment, P, strict: bool) -> Outcome:
    items, seen, rels = [], False, []
    events = (("events.laughter", v.cal.laughter_prob, "laughter"), ("events.breath", v.cal.breath_prob, "breath"))
    for name, thr, key in events:
        x = v.num(name)
        seen = seen or x is not None
        if x is not None and x >= thr:
            items.append(key)
            rels.append(v.reliability(name))
    lp, longest = v.num("events.long_pause"), v.num("pause.longest_s")
    gap = max(internal_gaps(seg), default=0.0)
    seen = seen or lp is not None or longest is not None
    if (lp or 0) >= 1 or (longest or 0) >= LONG_PAUSE_S or gap >= LONG_PAUSE_S:
        items.append("pause")
    if not items:
        # none heard: as sure as the detectors are that nothing was there (1 - their strongest score)
        strongest = max((v.num(name, cite=False) or 0.0 for name, _, _ in events), default=0.0)
        return Outcome(
            P.NONE,
            round(0.6 * (1.0 - min(1.0, strongest)), 2) if seen else 0.4,
            "ok" if seen else "abstain",
            "no event evidence" if not seen else "events below thresholds",
        )
    # a heard event is as sure as its detector on this segment; a pause from timestamps is plain
    conf = round(0.4 + 0.4 * min(rels), 2) if rels else 0.65
    return Outcome(P.join([P.PARA[i] for i in items]), conf, "ok", "events: " + ", ".join(items))


_SCENE_NUMBERS = (
    "scene.music_prob events.music_over_speech scene.singing_prob scene.noise_db scene.dnsmos_bak scene.reverb "
    "snr.db events.music events.singing"
)


def scene_facts(v: FieldView) -> dict:
    """Acoustic scene facts from admitted evidence (empty when there is none)."""
    f: dict = {}
    for name in _SCENE_NUMBERS.split():
        x = v.num(name)
        if x is not None:
            f[name] = x
    for name in ("scene.background", "scene.noise_type", "scene.sound_source"):
        said = v.text(name)
        if said is not None:
            f[name] = said.lower()
    # The noise-type heuristic confuses low rumble with babble (priors README: reliability
    # 0.6); name a source only when its extractor trusts it, else say "noise".
    if f.get("scene.noise_type") == "babble" and v.reliability("scene.noise_type") < v.cal.noise_type_min_reliability:
        f["scene.noise_type"] = "noise"
    return f


def background_kind(f: dict, cal: Calibration = DEFAULT) -> str | None:
    # The extractor's decision fuses the detectors (a babble check overrules a music score);
    # the raw scores decide only where no decision was recorded.
    decided = f.get("scene.background")
    music = (
        decided == "music"
        if decided is not None
        else (f.get("scene.music_prob", 0) >= cal.music_prob or f.get("events.music", 0) >= cal.music_prob)
    )
    singing = max(f.get("scene.singing_prob", 0), f.get("events.singing", 0)) >= cal.music_prob
    noisy = (
        f.get("scene.background") == "noise"
        or f.get("scene.dnsmos_bak", 5) < cal.dnsmos_bak_noisy
        or f.get("snr.db", 99) < cal.snr_noisy_db
    )
    ntype = f.get("scene.noise_type", "")
    if singing:
        return "singing"
    if music and noisy and ntype not in ("music", "none", ""):
        return "music_noise"
    if music:
        return "music"
    if noisy:
        if f.get("scene.sound_source") in ("traffic", "crowd"):  # YAMNet heard it (calibrated, priors/events.py)
            return str(f["scene.sound_source"])
        if f.get("snr.db", 0) >= cal.snr_faint_db and f.get("scene.dnsmos_bak", 5) >= cal.dnsmos_bak_faint:
            return "faint"  # audible but far below the speech: do not name a source
        return ntype if ntype in ("stationary", "babble", "impulsive") else "noise"
    return None


def label_background(v: FieldView, seg: Segment, P, strict: bool) -> Outcome:
    f = scene_facts(v)
    if not f:
        return Outcome(P.NONE, 0.3, "abstain", "no scene evidence: nothing is claimed")
    kind = background_kind(f, v.cal)
    # confidence: how far the deciding extractors trust their values on this segment
    rel = max(v.reliability("scene.background"), v.reliability("events.music"))
    if kind is None:
        return Outcome(P.NONE, round(0.4 + 0.4 * rel, 2), "ok", "scene evidence shows a clean background")
    return Outcome(P.BACKGROUND[kind], round(0.4 + 0.4 * rel, 2), "ok", f"scene evidence: {kind}")


def label_environment(v: FieldView, seg: Segment, P, strict: bool) -> Outcome:
    f = scene_facts(v)
    origin = v.text("channel.origin")
    if origin == "telephone":  # nothing above ~4 kHz: an 8 kHz (telephone) channel
        return Outcome(
            P.ENVIRONMENT["telephone"],
            round(0.4 + 0.4 * v.reliability("channel.origin"), 2),
            "ok",
            f"effective bandwidth {v.num('channel.bandwidth_hz')} Hz",
        )
    if not f:
        return Outcome(P.NONE, 0.3, "abstain", "no scene evidence: nothing is claimed")
    # Each claim is as sure as the extractor behind it trusts its value here (certainty.trusted);
    # the reverberation proxy counts only where its extractor trusts it.
    reverb_rel, scene_rel = v.reliability("scene.reverb"), v.reliability("scene.background")
    if f.get("scene.reverb", 0) >= v.cal.reverb_high and reverb_rel >= v.cal.reverb_min_reliability:
        return Outcome(P.ENVIRONMENT["reverberant"], round(trusted(0.55, reverb_rel), 2), "ok", "strong reverberation")
    kind = background_kind(f, v.cal)
    if kind in ("traffic", "crowd"):
        conf = round(0.4 + 0.4 * v.reliability("scene.sound_source"), 2)
        return Outcome(P.ENVIRONMENT["street" if kind == "traffic" else "crowd"], conf, "ok", f"YAMNet heard {kind}")
    if kind == "babble" and f.get("snr.db", 99) < v.cal.snr_noisy_db:
        return Outcome(P.ENVIRONMENT["crowd"], round(trusted(0.5, scene_rel), 2), "ok", "babble noise")
    if kind in ("stationary", "noise") and f.get("snr.db", 99) < 10:
        return Outcome(P.ENVIRONMENT["noisy"], round(trusted(0.45, scene_rel), 2), "ok", "loud steady noise")
    # no cue: neither a room nor a background source, as sure as the less trusted of the two readings
    conf = round(trusted(0.55, min(scene_rel, reverb_rel) if "scene.reverb" in f else scene_rel), 2)
    return Outcome(P.NONE, conf, "ok", "no identifiable environment cue")


_WRAPPED = {
    "pitch": label_pitch,
    "speed": label_speed,
    "rhythm": label_rhythm,
    "tone": label_tone,
    "texture": label_texture,
    "pronunciation": label_pronunciation,
}
_RULES = {
    "gender": label_gender,
    "age": label_age,
    "accent": label_accent,
    "emotion": label_emotion,
    "paralinguistic": label_paralinguistic,
    "background_sound": label_background,
    "environment": label_environment,
}


def _valid_suggestion(field: str, given: Value, lang: str) -> Value | None:
    text = typed_value(given, field)  # a closed value given by its word (any alias) read as its type
    if not isinstance(text, str) or isinstance(text, Gender | AgeGroup):  # typed: the reviewer's own reading
        return text
    if field in ("gender", "age") and not is_empty_marker(text):  # not a closed value
        return None
    if is_empty_marker(text):
        return phrases(lang).NONE
    text = text.strip().strip("。.")
    return text if 0 < len(text) <= 120 else None


def label_task(task: LabelTask, backend_name: str, cal: Calibration = DEFAULT) -> dict[str, Prediction]:
    P = phrases(task.label_language)
    out: dict[str, Prediction] = {}
    for field in task.fields:
        view = FieldView(field, task.contracts.get(field), task.evidence, task.context, cal)
        request = task.revision_requests.get(field, "")
        try:
            given = task.suggested.get(field)
            sug = _valid_suggestion(field, given, task.label_language) if given else None
            if sug is not None:
                oc = Outcome(sug, 0.6, "ok", f"the reviewer's suggested value; request: {request}")
                if field in ("gender", "age"):  # re-derive to cite the evidence behind the speaker value
                    _RULES[field](view, task.segment, P, True)
            elif field in _WRAPPED:
                oc = _WRAPPED[field](view, task.segment, P)
            elif field in _RULES:
                oc = _RULES[field](view, task.segment, P, bool(request))
            else:
                raise ValueError(f"the rules backend has no rule for field {field!r}")
            if request and sug is None:
                oc.rationale = f"relabeled in strict mode per request ({request}); {oc.rationale}"
            status, error, rationale = Status(oc.status), "", oc.rationale
            value, confidence = oc.value, oc.confidence
        except (ValueError, KeyError, TypeError, ZeroDivisionError) as exc:
            status, error, rationale = Status.FAILED, f"{type(exc).__name__}: {exc}", ""
            value, confidence = None, 0.0
        key, rnd, cited = task.segment.key, task.round, list(view.cited)
        out[field] = Prediction(key, field, value, confidence, cited, rnd, backend_name, status, error, rationale)
    return out
