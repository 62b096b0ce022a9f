"""Review checks of the rules backend: evidence support and cross-segment consistency.

The checks read predictions as free text (they may come from any backend), parse the concept
they claim (a pitch level, an emotion, a background sound, a closed value) and compare it with
the admitted evidence and with the same speaker's other segments. A rejected prediction gets a
field-specific request, with a suggested value ("建议：…" / "suggested: …") whenever the
evidence or the speaker's history determines one.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cached_property

from ...calibration import DEFAULT, Calibration
from ...records import Prediction, Status, Verdict
from ...schema import CLOSED_TYPES, AgeGroup, Emotion, Field, Gender, Level, Value, is_empty_marker, shown
from ..backend import ReviewTask
from ..context import keeps_own_label, vote_weight
from ..levels import INTENSITY_EXCESS_STEPS, levels_disagree
from ..phrases import parse_emotion, phrases
from .evidence import FieldView, resolve_gender
from .label import background_kind, label_emotion, label_paralinguistic, local_gender, scene_facts
from .prosody import label_pitch, label_speed, label_texture, pitch_level, rate_level

HIGH_AROUSAL = {"excited", "angry", "tense", "surprised", "fearful"}
LOW_AROUSAL = {"sad", "calm", "neutral"}
# Words of an environment value that claim a noisy place (checked against the scene evidence).
_ENV_CLAIMS = (
    "嘈杂 噪 街 马路 车 户外 室外 餐厅 商场 机场 车站 noisy street crowd outdoor traffic car restaurant station airport"
)
_MSG = {
    "zh": {
        "missing": "该字段没有有效取值，请依据已采纳证据重新标注。",
        "drift": "与该说话人其他{n}个片段的一致判断（{v}）不符，且本段证据不足以支持变化。",
        "bg_unsupported": "背景声“{v}”缺少声学/事件证据支持（可能来自文本内容），请仅依据声学证据标注。",
        "bg_missed": "场景证据显示存在明显背景声，而标注为“{v}”。",
        "env_unsupported": "环境“{v}”缺少声学场景证据支持（可能来自文本内容）。",
        "env_wideband": "环境“{v}”指电话，但信道带宽达{bw:.0f} Hz（宽带录音，电话信道止于约4 kHz）。",
        "emo_arousal": "情绪“{v}”与韵律唤醒度（{a:+.2f}）矛盾。",
        "emo_intensity": "情绪“{v}”的强度高于韵律唤醒度（{a:+.2f}）和文本情感所支持的强度。",
        "pitch": "音高描述与基频证据的等级不符（高低方向相反或相差两级以上）。",
        "pitch_gender": "音高等级应按该说话人一致的性别（{v}）的常模判断。",
        "texture_gender": "“{v}”按另一性别的音高常模描述音色，与该说话人的性别（{g}）矛盾。",
        "speed": "语速描述与语速证据的等级不符（快慢方向相反或相差两级以上）。",
        "no_level": "描述没有给出可核对的{what}等级（如“{ex}”），而证据能确定它。",
        "no_emotion": "取值没有给出情绪类别（可能抄写了证据数值），请从情绪类别中选择并给出强度。",
        "no_words": "取值是数字而不是描述（可能抄写了证据数值），请用文字描述。",
        "para": "副语言标注与事件证据不符。",
        "accent": "口音与该片段的语言（{lang}）矛盾。",
        "empty_open": "该字段不应为空，请依据证据描述。",
    },
    "en": {
        "missing": "The field has no valid value; label it from the admitted evidence.",
        "drift": "Differs from the consistent judgement ({v}) over the speaker's {n} other segments, "
        "and the local evidence is too weak for a change.",
        "bg_unsupported": "Background sound '{v}' has no acoustic/event support (possibly taken from the "
        "transcript); label from acoustic evidence only.",
        "bg_missed": "Scene evidence shows a clear background sound, but the label is '{v}'.",
        "env_unsupported": "Environment '{v}' has no acoustic scene support (possibly taken from the transcript).",
        "env_wideband": "Environment '{v}' names a telephone, but the channel reaches {bw:.0f} Hz (wideband; a "
        "telephone channel stops near 4 kHz).",
        "emo_arousal": "Emotion '{v}' contradicts the prosodic arousal ({a:+.2f}).",
        "emo_intensity": "Emotion '{v}' is more intense than the prosodic arousal ({a:+.2f}) and the "
        "transcript's valence carry.",
        "pitch": "The pitch description disagrees with the F0 evidence's level (other side of medium, "
        "or two or more levels away).",
        "pitch_gender": "Judge the pitch level against the norm of the speaker's consistent gender ({v}).",
        "texture_gender": "'{v}' judges the voice by the other gender's norm; the speaker's voice is {g}.",
        "speed": "The speed description disagrees with the rate evidence's level (other side of medium, "
        "or two or more levels away).",
        "no_level": "The description names no {what} level that can be checked (such as '{ex}'), "
        "while the evidence determines one.",
        "no_emotion": "The value names no emotion (perhaps an evidence number copied); give an emotion "
        "label with its intensity.",
        "no_words": "The value is a number, not a description (perhaps an evidence number copied); describe it "
        "in words.",
        "para": "The paralinguistic label disagrees with the event evidence.",
        "accent": "The accent contradicts the segment's language ({lang}).",
        "empty_open": "This field must not be empty; describe it from the evidence.",
    },
}


_UNIT_WORDS = {"st", "hz", "db", "z", "reliability", "units", "s", "prob", "score", "ratio"}


def _has_words(text: str) -> bool:
    """Whether a value says something in words: not a number, with or without the units and
    reliability the evidence block writes beside it ("0.656 z (moderate)", "-0.605 st")."""
    words = [w for w in re.findall(r"[^\W\d_]+", text) if w.lower() not in _UNIT_WORDS]
    intensity = {w for level in phrases("en").INTENSITY for w in level.split()}
    if re.search(r"\d", text) and all(w.lower() in intensity for w in words):
        return False
    return bool(words)


def _claims(text: str, table) -> set[str]:
    low = (text or "").lower()
    return {kind for word, kind in table if word in low}


def _speaker_votes(task: ReviewTask, field: str) -> dict:
    """The votes over the speaker's other segments that the review context carries
    (``agents.context.ContextIndex.speaker_votes``); empty without them."""
    hist = task.context.get("speaker_history") or {}
    votes = (hist.get("votes") or {}).get(field) if isinstance(hist, dict) else None
    return votes if isinstance(votes, dict) else {}


def speaker_majority(task: ReviewTask, field: str) -> tuple[str | None, float, int]:
    """(majority value, weighted share, other segments) over the speaker's other segments."""
    votes = _speaker_votes(task, field)
    if not votes.get("values"):
        return None, 0.0, 0
    best, total = votes["values"][0], float(votes.get("total_weight") or 0.0)
    if total <= 0:
        return None, 0.0, 0
    return str(best["value"]), float(best["weight"]) / total, int(votes.get("segments") or 0)


class _Reviewer:
    def __init__(self, task: ReviewTask, cal: Calibration):
        self.task, self.lang, self.cal = task, task.label_language, cal
        self.P, self.M = phrases(self.lang), _MSG[self.lang]

    def view(self, field: str) -> FieldView:
        return FieldView(field, self.task.contracts.get(field), self.task.evidence, self.task.context, self.cal)

    def reject(self, field: str, reason: str, sug: Value | None) -> Verdict:
        return Verdict(
            self.task.segment.key, field, self.task.round, False, reason=reason, request=reason, suggested=sug
        )

    def accept(self, field: str, reason: str) -> Verdict:
        return Verdict(self.task.segment.key, field, self.task.round, True, reason=reason)

    def check(self, field: str, p: Prediction) -> Verdict:
        if p.status == Status.FAILED or p.value is None or not str(p.value).strip():
            return self.reject(field, self.M["missing"], None)
        if field in _DESCRIBED:
            return self._open_nonempty(field, p)
        check = _CHECKS.get(field)  # type: ignore[call-overload]  # a Field is its str name
        return check(self, p) if check else self.accept(field, "no check applies")

    def _drift(self, field: str, p: Prediction, local_strong: bool) -> Verdict | None:
        if "speaker_history" not in (self.view(field).scope):
            return None
        maj, share, n = speaker_majority(self.task, field)
        if maj is None or n < 2 or share < 0.7 or local_strong:
            return None
        if str(p.value) == maj:  # a vote is a closed value's id, an open one's text
            return None
        sug = CLOSED_TYPES[field](maj) if field in CLOSED_TYPES else maj
        return self.reject(field, self.M["drift"].format(n=n, v=shown(sug, self.lang)), sug)

    def _gender(self, p: Prediction) -> Verdict:
        if not isinstance(p.value, Gender) and not is_empty_marker(p.value):
            return self.reject("gender", self.M["missing"], None)
        view = self.view("gender")
        g, prob = local_gender(view)
        strong = g is not None and g == p.value and prob >= 0.9
        # The speaker's pooled evidence (every turn's log-odds, by duration and reliability) outranks a
        # majority of the other turns' labels: those are decisions, not evidence, and a relabel feeds
        # the next round's majority. On AMI trn06 a woman's 11 s turn (p female 0.89) was outvoted by
        # her overlapped and her quietest turns, and the rest followed, while her pooled p_male was 0.26.
        pooled = view.num("speaker.gender.p_male", cite=False) if "speaker_history" in view.scope else None
        if pooled is not None and p.value == Gender.of_p_male(pooled):
            return self.accept("gender", "consistent with the speaker's pooled evidence")
        return self._drift("gender", p, strong) or self.accept("gender", "consistent with evidence and speaker")

    def _age(self, p: Prediction) -> Verdict:
        if not isinstance(p.value, AgeGroup) and not is_empty_marker(p.value):
            return self.reject("age", self.M["missing"], None)
        strong = self.view("age").text("age.band") is not None and p.confidence >= 0.8
        return self._drift("age", p, strong) or self.accept("age", "consistent with the speaker")

    def _accent(self, p: Prediction) -> Verdict:
        lang = (self.task.segment.language or "").split("-")[0].lower()
        said_zh = any(w in str(p.value) for w in ("普通话", "Mandarin", "mandarin", "粤语", "Cantonese"))
        said_en = "english" in str(p.value).lower() or "英语" in str(p.value)
        if (lang == "en" and said_zh and not said_en) or (lang == "zh" and said_en and not said_zh):
            return self.reject("accent", self.M["accent"].format(lang=lang), self.P.ACCENT.get(lang))
        return self._drift("accent", p, False) or self.accept("accent", "consistent with language and speaker")

    def _background_sound(self, p: Prediction) -> Verdict:
        v = self.view("background_sound")
        facts = scene_facts(v)
        claimed = not is_empty_marker(p.value)
        kind = background_kind(facts, self.cal) if facts else None
        text = (self.task.segment.text or "").lower()
        if claimed:
            kinds = _claims(str(p.value), self.P.BACKGROUND_PARSE) | _claims(
                str(p.value), phrases("en").BACKGROUND_PARSE
            )
            lexical = any(
                w in text
                for w, _ in self.P.BACKGROUND_PARSE + phrases("en").BACKGROUND_PARSE
                if w in str(p.value).lower()
            )
            if facts and kind is None:
                return self.reject("background_sound", self.M["bg_unsupported"].format(v=p.value), self.P.NONE)
            if not facts and lexical:
                return self.reject("background_sound", self.M["bg_unsupported"].format(v=p.value), self.P.NONE)
            if kind in ("music", "singing") and kinds and not kinds & {"music", "singing"}:
                return self.reject("background_sound", self.M["bg_missed"].format(v=p.value), self.P.BACKGROUND[kind])
            why = "supported by scene evidence" if facts else "no scene evidence to check"
            return self.accept("background_sound", why)
        if kind is not None and (
            facts.get("scene.music_prob", 0) >= 0.7
            or facts.get("snr.db", 99) < 8
            or facts.get("scene.dnsmos_bak", 5) < 2.5
        ):
            return self.reject("background_sound", self.M["bg_missed"].format(v=p.value), self.P.BACKGROUND[kind])
        return self.accept("background_sound", "none, consistent with scene evidence")

    def _environment(self, p: Prediction) -> Verdict:
        if is_empty_marker(p.value):
            return self.accept("environment", "none claimed")
        v = self.view("environment")
        facts = scene_facts(v)
        value = str(p.value).lower()
        claims_noise = any(w in value for w in _ENV_CLAIMS.split())
        lexical = any(w in (self.task.segment.text or "").lower() for w in _ENV_CLAIMS.split() if w in value)
        clean = facts and background_kind(facts, self.cal) is None and facts.get("scene.reverb", 0) < 0.3
        if (not facts and lexical) or (claims_noise and clean):
            return self.reject("environment", self.M["env_unsupported"].format(v=p.value), self.P.NONE)
        phone = any(w in value for w in ("telephone", "phone", "电话"))
        if phone and v.text("channel.origin") == "wideband":  # a telephone band stops near 4 kHz
            bw = v.num("channel.bandwidth_hz") or 0.0
            return self.reject("environment", self.M["env_wideband"].format(v=p.value, bw=bw), self.P.NONE)
        return self.accept("environment", "not contradicted by scene evidence")

    def _emotion(self, p: Prediction) -> Verdict:
        v = self.view("emotion")
        a = v.num("emotion.arousal")
        said = p.value if isinstance(p.value, Emotion) else Emotion.parse(str(p.value))
        lid = parse_emotion(said.label, self.lang)
        if lid is None and not _has_words(said.label):  # e.g. "0.656 z (moderate)" copied from evidence
            sug = label_emotion(self.view("emotion"), self.task.segment, self.P, True).value
            return self.reject("emotion", self.M["no_emotion"], sug)
        if a is None or lid is None:
            return self.accept("emotion", "no prosodic evidence or unparsed label")
        if (lid in HIGH_AROUSAL and a <= -0.5) or (lid in LOW_AROUSAL and a >= 1.5):
            sug = label_emotion(self.view("emotion"), self.task.segment, self.P, True).value
            return self.reject("emotion", self.M["emo_arousal"].format(v=said.render(self.lang), a=a), sug)
        sug = label_emotion(self.view("emotion"), self.task.segment, self.P, True).value
        if isinstance(sug, Emotion) and said.intensity - sug.intensity >= INTENSITY_EXCESS_STEPS:
            return self.reject("emotion", self.M["emo_intensity"].format(v=said.render(self.lang), a=a), sug)
        return self.accept("emotion", f"compatible with arousal {a:+.2f}")

    def _pitch(self, p: Prediction) -> Verdict:
        v = self.view("pitch")
        said = p.value.step if isinstance(p.value, Level) else None
        ref = self._norm_gender
        level, _ = pitch_level(v, ref)
        used, _, _ = resolve_gender(self.view("pitch"))
        if ref is not None and used != ref and level is not None and level != said:
            sug = label_pitch(self.view("pitch"), self.task.segment, self.P, ref).value
            return self.reject("pitch", self.M["pitch_gender"].format(v=ref.render(self.lang)), sug)
        if level is not None and said is not None and levels_disagree(level, said):
            sug = label_pitch(self.view("pitch"), self.task.segment, self.P, ref).value
            return self.reject("pitch", self.M["pitch"], sug)
        if level is not None and said is None:  # e.g. a number copied from the evidence
            sug = label_pitch(self.view("pitch"), self.task.segment, self.P, ref).value
            return self.reject(
                "pitch", self.M["no_level"].format(what=self._word("pitch"), ex=shown(sug, self.lang)), sug
            )
        return self.accept("pitch", "matches the F0 class" if level is not None else "no F0 evidence")

    def _speed(self, p: Prediction) -> Verdict:
        v = self.view("speed")
        level, conf, _ = rate_level(v, self.task.segment)
        said = p.value.step if isinstance(p.value, Level) else None
        if level is not None and said is not None and conf >= 0.5 and levels_disagree(level, said):
            suggested = label_speed(self.view("speed"), self.task.segment, self.P).value
            return self.reject("speed", self.M["speed"], suggested)
        if level is not None and said is None and conf >= 0.5:
            suggested = label_speed(self.view("speed"), self.task.segment, self.P).value
            return self.reject(
                "speed", self.M["no_level"].format(what=self._word("speed"), ex=shown(suggested, self.lang)), suggested
            )
        return self.accept("speed", "matches the rate class" if level is not None else "no rate evidence")

    def _paralinguistic(self, p: Prediction) -> Verdict:
        v = self.view("paralinguistic")
        said = _claims(str(p.value), self.P.PARA_PARSE) | _claims(str(p.value), phrases("en").PARA_PARSE)
        laugh = v.num("events.laughter")
        # a laughter tag needs a laugh heard (the event's calibrated threshold); a clear laugh needs a tag
        if laugh is not None and (
            ("laughter" in said and laugh < self.cal.laughter_prob) or ("laughter" not in said and laugh >= 0.8)
        ):
            sug = label_paralinguistic(self.view("paralinguistic"), self.task.segment, self.P, True).value
            return self.reject("paralinguistic", self.M["para"], sug)
        return self.accept("paralinguistic", "not contradicted by event evidence")

    def _texture(self, p: Prediction) -> Verdict:
        """A related field: a voice low for its norm is "deep" for a man and "full" for a woman; the
        other gender's word means the texture was judged against the wrong norm (the Mandarin
        lecturer, a man, was "full, rounded" where his local evidence leaned female)."""
        gender = self.task.predictions.get("gender")
        own = Gender(gender.value) if gender is not None and gender.value in tuple(Gender) else None
        g = self._norm_gender or own  # the norm the pitch is judged by, which finalize keeps
        if g is not None and self.P.TEXTURE["deep" if g == Gender.FEMALE else "full"] in str(p.value):
            sug = label_texture(self.view("texture"), self.task.segment, self.P, g).value
            return self.reject("texture", self.M["texture_gender"].format(v=p.value, g=g.render(self.lang)), sug)
        return self._open_nonempty("texture", p)

    @cached_property  # pitch and texture both read it; it runs the gender check once more
    def _norm_gender(self) -> Gender | None:
        """Related field: the F0 norm of pitch and texture, when the pitch contract admits speaker
        history and the speaker's other turns agree (70 % of at least 2): the gender finalize will
        show on this turn, i.e. the side of the speaker's pooled evidence (else that majority),
        unless the turn keeps its own strongly heard gender (``keeps_own_label``) and this review
        accepts it."""
        v = self.view("pitch")
        if "speaker_history" not in v.scope:
            return None
        maj, share, n = speaker_majority(self.task, "gender")
        if maj not in tuple(Gender) or share < 0.7 or n < 2:
            return None
        pooled = v.num("speaker.gender.p_male", cite=False)
        speaker = Gender(maj) if pooled is None else Gender.of_p_male(pooled)
        own = self.task.predictions.get("gender")
        # a turn's own gender counts only if this review accepts it (a rejected one is relabeled)
        if own is not None and isinstance(own.value, Gender) and own.value != speaker and self._gender(own).accepted:
            # the speaker's value's share of all its turns' votes, this one's included, as finalize counts
            votes = _speaker_votes(self.task, "gender")
            others = {str(x["value"]): float(x["weight"]) for x in votes.get("values") or []}
            own_weight = vote_weight(self.task.segment.duration, own.confidence)
            total = float(votes.get("total_weight") or 0.0) + own_weight
            if keeps_own_label(own.confidence, others.get(speaker.value, 0.0) / total):
                return own.value
        return speaker

    def _word(self, field: str) -> str:
        words = {"zh": {"pitch": "音高", "speed": "语速"}, "en": {"pitch": "pitch", "speed": "speed"}}
        return words[self.lang][field]

    def _open_nonempty(self, field: str, p: Prediction) -> Verdict:
        if is_empty_marker(p.value):
            return self.reject(field, self.M["empty_open"], None)
        if not _has_words(str(p.value)):
            return self.reject(field, self.M["no_words"], None)
        return self.accept(field, "well-formed description")


# The checks per field; the described fields (_DESCRIBED) need only words.
_CHECKS: dict[Field, Callable[[_Reviewer, Prediction], Verdict]] = {
    Field.GENDER: _Reviewer._gender,
    Field.AGE: _Reviewer._age,
    Field.ACCENT: _Reviewer._accent,
    Field.BACKGROUND_SOUND: _Reviewer._background_sound,
    Field.ENVIRONMENT: _Reviewer._environment,
    Field.EMOTION: _Reviewer._emotion,
    Field.PITCH: _Reviewer._pitch,
    Field.SPEED: _Reviewer._speed,
    Field.PARALINGUISTIC: _Reviewer._paralinguistic,
    Field.TEXTURE: _Reviewer._texture,
}
_DESCRIBED = frozenset({Field.PRONUNCIATION, Field.TONE, Field.RHYTHM})


def review_task(task: ReviewTask, cal: Calibration = DEFAULT) -> dict[str, Verdict]:
    r = _Reviewer(task, cal)
    out: dict[str, Verdict] = {}
    for field, pred in task.predictions.items():
        try:
            out[field] = r.check(field, pred)
        except (ValueError, TypeError, KeyError) as exc:  # untrusted values: never crash the loop
            out[field] = Verdict(task.segment.key, field, task.round, True, reason=f"check skipped ({exc})")
    return out
