"""The annotation schema: the 15 attributes, their groups, vocabularies and the output record.

This module is the contract between every stage and SA-Eval. The output key order and the
field vocabularies follow the released SpeechAnnotator demo format (see docs/DESIGN.md).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from enum import Enum, StrEnum
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, field_validator
from pydantic import Field as Bounds

if TYPE_CHECKING:
    from .records import Segment

LabelLanguage = Literal["zh", "en"]

# Keys of one output segment, in the exact order of the demo JSON.
OUTPUT_KEYS: tuple[str, ...] = (
    "speaker_id",
    "speaker_name",
    "text",
    "text_and_paralanguage",
    "start_time",
    "end_time",
    "language",
    "background_sound",
    "environment",
    "gender",
    "age",
    "pitch",
    "speed",
    "emotion",
    "accent",
    "tone",
    "rhythm",
    "texture",
    "pronunciation",
    "paralinguistic",
    "contextual_inference",
    "caption",
)


class Group(str, Enum):  # noqa: UP042 (StrEnum would change what str() of a member gives)
    SEMANTIC = "semantic_understanding"
    SPEAKER = "speaker_profile"
    PROSODY = "prosody_and_delivery"
    VOICE = "voice_quality_and_articulation"
    AFFECT = "affective_and_paralinguistic"
    SCENE = "acoustic_scene"


class Field(StrEnum):
    """The 15 evaluated attributes (paper, section 3.2); str-valued, so they are the JSON keys."""

    CAPTION = "caption"
    CONTEXTUAL_INFERENCE = "contextual_inference"
    GENDER = "gender"
    AGE = "age"
    ACCENT = "accent"
    PITCH = "pitch"
    SPEED = "speed"
    RHYTHM = "rhythm"
    TONE = "tone"
    TEXTURE = "texture"
    PRONUNCIATION = "pronunciation"
    EMOTION = "emotion"
    PARALINGUISTIC = "paralinguistic"
    ENVIRONMENT = "environment"
    BACKGROUND_SOUND = "background_sound"


# Each attribute's schema group.
FIELD_GROUPS: dict[Field, Group] = {
    Field.CAPTION: Group.SEMANTIC,
    Field.CONTEXTUAL_INFERENCE: Group.SEMANTIC,
    Field.GENDER: Group.SPEAKER,
    Field.AGE: Group.SPEAKER,
    Field.ACCENT: Group.SPEAKER,
    Field.PITCH: Group.PROSODY,
    Field.SPEED: Group.PROSODY,
    Field.RHYTHM: Group.PROSODY,
    Field.TONE: Group.PROSODY,
    Field.TEXTURE: Group.VOICE,
    Field.PRONUNCIATION: Group.VOICE,
    Field.EMOTION: Group.AFFECT,
    Field.PARALINGUISTIC: Group.AFFECT,
    Field.ENVIRONMENT: Group.SCENE,
    Field.BACKGROUND_SOUND: Group.SCENE,
}
FIELDS: tuple[Field, ...] = tuple(Field(k) for k in OUTPUT_KEYS if k in FIELD_GROUPS)
CLOSED_FIELDS: tuple[Field, ...] = (Field.GENDER, Field.AGE)
OPEN_FIELDS: tuple[Field, ...] = tuple(f for f in FIELDS if f not in CLOSED_FIELDS)
# Fields composed after review from the reviewed state (not labeled directly).
COMPOSED_FIELDS: tuple[Field, ...] = (Field.CAPTION, Field.CONTEXTUAL_INFERENCE)
LABELED_FIELDS: tuple[Field, ...] = tuple(f for f in FIELDS if f not in COMPOSED_FIELDS)

GROUP_NAMES: dict[Group, dict[str, str]] = {
    Group.SEMANTIC: {"en": "Semantic Understanding", "zh": "语义理解"},
    Group.SPEAKER: {"en": "Speaker Profile", "zh": "说话人画像"},
    Group.PROSODY: {"en": "Prosody and Delivery", "zh": "韵律与表达"},
    Group.VOICE: {"en": "Voice Quality and Articulation", "zh": "音质与发音"},
    Group.AFFECT: {"en": "Affective and Paralinguistic Cues", "zh": "情感与副语言"},
    Group.SCENE: {"en": "Acoustic Scene", "zh": "声学场景"},
}


class Gender(StrEnum):
    """A gender as the labeler and the review carry it: the canonical id (the state's and the votes'
    word); rendered in the label language (GENDER_VALUES) only when a record is written."""

    MALE = "male"
    FEMALE = "female"

    @property
    def other(self) -> Gender:
        return Gender.FEMALE if self is Gender.MALE else Gender.MALE

    @classmethod
    def of_p_male(cls, p: float) -> Gender:
        """The gender a probability of male names (0.5 is male).

        >>> Gender.of_p_male(0.26)
        <Gender.FEMALE: 'female'>
        """
        return cls.MALE if p >= 0.5 else cls.FEMALE

    @classmethod
    def with_probability(cls, p_male: float) -> tuple[Gender, float]:
        """The gender a probability of male names, and the probability of that side.

        >>> Gender.with_probability(0.2)
        (<Gender.FEMALE: 'female'>, 0.8)
        """
        g = cls.of_p_male(p_male)
        return g, (p_male if g is cls.MALE else 1.0 - p_male)

    def render(self, lang: str) -> str:
        return GENDER_VALUES["zh" if lang == "zh" else "en"][tuple(Gender).index(self)]

    def voice(self, lang: str) -> str:
        """The caption's words for it ("male voice" / "男性声音")."""
        return GENDER_VOICE["zh" if lang == "zh" else "en"][tuple(Gender).index(self)]


class AgeGroup(StrEnum):
    """An age group, carried like Gender: the canonical id, rendered from AGE_VALUES."""

    CHILD = "child"
    TEENAGER = "teenager"
    YOUNG_ADULT = "young adult"
    MIDDLE_AGED = "middle-aged"
    ELDERLY = "elderly"

    def render(self, lang: str) -> str:
        return AGE_VALUES["zh" if lang == "zh" else "en"][tuple(AgeGroup).index(self)]


# Closed vocabularies, index-aligned with the enums above (whose ids are the English words): the one
# home of the gender and age words (records, captions' "male voice", prompts' lists and SA-Eval's
# alias parsing all read these).
GENDER_VALUES: dict[str, tuple[str, ...]] = {"zh": ("男声", "女声"), "en": tuple(g.value for g in Gender)}
GENDER_VOICE: dict[str, tuple[str, ...]] = {"zh": ("男性声音", "女性声音"), "en": ("male voice", "female voice")}
AGE_VALUES: dict[str, tuple[str, ...]] = {
    "zh": ("儿童", "少年", "青年", "中年", "老年"),
    "en": tuple(a.value for a in AgeGroup),
}
EMOTION_INTENSITY: dict[str, tuple[str, ...]] = {
    "zh": ("极弱", "较弱", "中等", "较强", "极强"),
    "en": ("very weak", "weak", "moderate", "strong", "very strong"),
}
NONE_VALUE: dict[str, str] = {"zh": "无", "en": "none"}

_EMO_FORM = re.compile(r"^(.*?)\s*[（(]\s*(.*?)\s*[）)]\s*$")


@dataclass(frozen=True)
class Emotion:
    """An emotion: its label (label-language words) and its step on EMOTION_INTENSITY (0..4).
    Carried typed from the labeler through review; rendered once, when the record is written."""

    label: str
    intensity: int = 2  # moderate: what a label without a readable intensity means

    def render(self, lang: str) -> str:
        scale = EMOTION_INTENSITY["zh" if lang == "zh" else "en"]
        step = scale[max(0, min(len(scale) - 1, self.intensity))]
        return f"{self.label}（{step}）" if lang == "zh" else f"{self.label} ({step})"

    @classmethod
    def parse(cls, text: str) -> Emotion:
        """External text only (an LLM's answer, a person's edit): 'label（强度）' / 'label (intensity)'
        with the intensity in either language."""
        text = re.sub(r"\s+", " ", text).strip()
        m = _EMO_FORM.match(text)
        label, step = (m.group(1).strip(), m.group(2).strip()) if m else (text, "")
        for scale in EMOTION_INTENSITY.values():
            if step in scale:
                return cls(label, scale.index(step))
        return cls(label)


@dataclass(frozen=True)
class Level:
    """A described level (pitch, speed): its step on the five-level scale (-2..2) and the
    label-language description, which starts with that step's phrase. The review reads the step,
    the record the description."""

    step: int
    text: str

    def render(self, lang: str) -> str:
        return self.text


# A prediction's value: text, or a typed value rendered when the record is written.
Value = str | Emotion | Level | Gender | AgeGroup
Typed = Emotion | Level | Gender | AgeGroup
CLOSED_TYPES: dict[str, type[Gender] | type[AgeGroup]] = {"gender": Gender, "age": AgeGroup}


def typed_value(value: Value | dict[str, object] | None, field: str | None = None) -> Value | None:
    """A typed value read back from the state as its type (an emotion or level from its JSON
    object; a gender or age group from its id, or from the label-language word a state written
    before they were typed holds); others as they are."""
    if isinstance(value, dict):
        return Emotion(**value) if "label" in value else Level(**value)  # type: ignore[arg-type]
    if field in CLOSED_TYPES and isinstance(value, str) and not isinstance(value, Gender | AgeGroup):
        canon = canonical_closed(field, value)
        return value if canon in (None, "none") else CLOSED_TYPES[field](canon)
    return value


def shown(value: Value, lang: str) -> str:
    """A prediction value as label-language text (a typed value rendered)."""
    return value.render(lang) if isinstance(value, Typed) else value


# Aliases for the closed fields; keys are canonical English ids.
_GENDER_ALIASES: dict[str, tuple[str, ...]] = {
    g: (*(GENDER_VALUES[lang][i] for lang in ("en", "zh")), *(GENDER_VOICE[lang][i] for lang in ("en", "zh")), *more)
    for i, (g, more) in enumerate(
        (
            ("male", ("m", "man", "men", "boy", "男", "男性", "男生", "男人", "男聲")),
            ("female", ("f", "woman", "women", "girl", "女", "女性", "女生", "女人", "女聲")),
        )
    )
}
_AGE_ALIASES: dict[str, tuple[str, ...]] = {
    "child": ("child", "kid", "children", "儿童", "小孩", "孩子", "幼儿", "童声", "兒童"),
    "teenager": ("teenager", "teen", "adolescent", "youth", "少年", "青少年"),
    "young adult": ("young adult", "young", "adult", "青年", "年轻", "年轻人", "成年"),
    "middle-aged": ("middle-aged", "middle aged", "middle age", "middleaged", "中年", "中年人"),
    "elderly": ("elderly", "old", "senior", "aged", "老年", "老人", "老年人"),
}
_EMPTY_MARKERS = {
    "",
    "无",
    "没有",
    "無",
    "none",
    "null",
    "n/a",
    "na",
    "nan",
    "no",
    "nothing",
    "-",
    "—",
    "空",
    "unknown",
    "不详",
    "未知",
}


def normalize_text(value: object) -> str:
    """Canonical surface form: NFKC, lower case, punctuation and whitespace removed.

    Used by the closed-field canonicalizer and by Open-Eval before encoding, so that
    full-width vs half-width punctuation or spacing never changes a score.
    """
    if value is None:
        return ""
    text = unicodedata.normalize("NFKC", str(value)).strip().lower()
    return "".join(ch for ch in text if not (unicodedata.category(ch)[0] in "PZC" or ch.isspace()))


def _alias_table(aliases: dict[str, tuple[str, ...]]) -> dict[str, str]:
    return {normalize_text(a): canon for canon, names in aliases.items() for a in names}


_GENDER_TABLE = _alias_table(_GENDER_ALIASES)
_AGE_TABLE = _alias_table(_AGE_ALIASES)
_EMPTY_TABLE = {normalize_text(m) for m in _EMPTY_MARKERS}


def is_empty_marker(value: object) -> bool:
    return normalize_text(value) in _EMPTY_TABLE


def canonical_closed(field: str, value: object) -> str | None:
    """Map a gender or age value in any alias / language to its canonical English id.

    Returns ``"none"`` for an explicit empty marker and None for an unparsable value.
    """
    table = {"gender": _GENDER_TABLE, "age": _AGE_TABLE}[field]
    key = normalize_text(value)
    if key in _EMPTY_TABLE:
        return "none"
    if key in table:
        return table[key]
    # Tolerate decorated values such as "男声（较确定）" or "female voice": Latin aliases must
    # match whole words (so "female" is not also read as "male"), CJK ones any substring;
    # the longest alias found wins.
    words = re.findall(r"[a-z]+", unicodedata.normalize("NFKC", str(value)).lower())
    phrases = {"".join(words[i : i + n]) for n in (1, 2, 3) for i in range(len(words) - n + 1)}
    hits = sorted(
        (
            (len(alias), canon)
            for alias, canon in table.items()
            if len(alias) >= 2 and (alias in phrases if alias.isascii() else alias in key)
        ),
        reverse=True,
    )
    best = {canon for n, canon in hits if n == hits[0][0]} if hits else set()
    return best.pop() if len(best) == 1 else None


_PRONOUNS = {"male": ("he", "his", "him", "himself"), "female": ("she", "her", "hers", "herself")}


def genders_named(text: str) -> set[Gender]:
    """The genders a sentence names: its words among the gender aliases and pronouns (Latin
    words whole, CJK characters anywhere: "男" / "女")."""
    words = set(re.findall(r"[a-z]+", unicodedata.normalize("NFKC", text or "").lower()))
    named: set[Gender] = set()
    for canon, aliases in _GENDER_ALIASES.items():
        latin = {a for a in aliases if a.isascii() and len(a) > 1} | set(_PRONOUNS[canon])
        if words & latin or any(a in (text or "") for a in aliases if not a.isascii()):
            named.add(Gender(canon))
    return named


def closed_value(field: str, canon: str, lang: str) -> str:
    """The label-language surface form of a canonical closed value ("none" included)."""
    return NONE_VALUE["zh" if lang == "zh" else "en"] if canon == "none" else CLOSED_TYPES[field](canon).render(lang)


_MS = Bounds(ge=0, description="integer milliseconds from the recording start")


class SegmentRecord(BaseModel):
    """One output segment in the demo JSON format (keys in OUTPUT_KEYS order)."""

    model_config = ConfigDict(extra="forbid")

    speaker_id: str = Bounds(pattern=r"^spk_\d{2,}$")
    speaker_name: str
    text: str
    text_and_paralanguage: str
    start_time: int = _MS
    end_time: int = _MS
    language: str
    background_sound: str
    environment: str
    gender: str
    age: str
    pitch: str
    speed: str
    emotion: str
    accent: str
    tone: str
    rhythm: str
    texture: str
    pronunciation: str
    paralinguistic: str
    contextual_inference: str
    caption: str

    @field_validator("end_time")
    @classmethod
    def _end_after_start(cls, v: int, info) -> int:
        start = info.data.get("start_time")
        if start is not None and v < start:
            raise ValueError(f"end_time {v} is before start_time {start}")
        return v

    def ordered(self) -> dict[str, object]:
        return {k: getattr(self, k) for k in OUTPUT_KEYS}


def validate_records(items: list[dict]) -> list[SegmentRecord]:
    """Validate a decoded output JSON array: schema, key order and time order."""
    records = []
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            raise ValueError(f"segment {i} is not an object")
        if tuple(item) != OUTPUT_KEYS:
            raise ValueError(f"segment {i} keys are not the demo format keys in order")
        records.append(SegmentRecord.model_validate(item))
    for i in range(1, len(records)):
        if (records[i].start_time, records[i].end_time) < (records[i - 1].start_time, records[i - 1].end_time):
            raise ValueError(f"segment {i} is out of time order")
    return records


def has_cjk(text: str) -> bool:
    return bool(re.search(r"[\u3400-\u9fff\uf900-\ufaff]", text or ""))


def choose_label_language(segments: Iterable[Segment], forced: str = "auto") -> LabelLanguage:
    """Chinese labels when most speech (by duration) is Chinese, English otherwise."""
    if forced in ("zh", "en"):
        return forced  # type: ignore[return-value]
    weight = {"zh": 0.0, "other": 0.0}
    for s in segments:
        lang = s.language or ("zh" if has_cjk(s.text) else "en")
        weight["zh" if lang in ("zh", "yue") else "other"] += s.duration
    return "zh" if weight["zh"] > weight["other"] else "en"
