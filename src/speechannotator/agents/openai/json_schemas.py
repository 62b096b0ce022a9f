"""JSON schemas the model must answer in, and the validation / repair of its answers.

Each call asks for one JSON object keyed by field name. Closed fields (gender, age) are enums
in the label language (plus the language's "none" marker, which means abstain); open fields
are bounded strings; every field carries a confidence and the names of the evidence it cites,
restricted to what the call admitted. Answers are untrusted: they are parsed leniently
(fenced text, prose around the object), validated with pydantic per field, and canonicalized,
so that one bad field never discards the good ones.
"""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ...schema import AGE_VALUES, CLOSED_FIELDS, GENDER_VALUES, NONE_VALUE, canonical_closed, closed_value

CLOSED_VOCAB: dict[str, dict[str, tuple[str, ...]]] = {"gender": GENDER_VALUES, "age": AGE_VALUES}


class AnswerError(ValueError):
    """The model's answer is not usable (no JSON object, wrong shape, invalid value)."""


def closed_choices(field: str, lang: str) -> list[str]:
    return [*CLOSED_VOCAB[field][lang], NONE_VALUE[lang]]


def _string(max_chars: int) -> dict[str, Any]:
    return {"type": "string", "minLength": 1, "maxLength": max_chars}


def label_schema(
    fields: list[str],
    lang: str,
    cited: dict[str, list[str]],
    max_value_chars: int,
    max_cited: int = 4,
    choices: dict[str, list[str]] | None = None,
) -> dict[str, Any]:
    """Schema of a label answer: {field: {value, confidence, evidence[]}} for exactly `fields`.

    ``cited[field]`` lists the evidence names the field may cite (never empty). Confidence is
    an integer percentage: a bounded number of digits, where a free JSON number lets a small
    model emit digits until max_tokens. ``choices[field]`` turns an open field into an enum
    (the level phrases a small model answers pitch and speed in).
    """
    choices = choices or {}
    props: dict[str, Any] = {}
    for f in fields:
        if f in CLOSED_FIELDS:
            value = {"type": "string", "enum": closed_choices(f, lang)}
        elif f in choices:
            value = {"type": "string", "enum": list(choices[f])}
        else:
            value = _string(max_value_chars)
        props[f] = {
            "type": "object",
            "properties": {
                "value": value,
                "confidence": {"type": "integer", "minimum": 0, "maximum": 100},
                "evidence": {"type": "array", "items": {"type": "string", "enum": cited[f]}, "maxItems": max_cited},
            },
            "required": ["value", "confidence", "evidence"],
            "additionalProperties": False,
        }
    return {"type": "object", "properties": props, "required": list(fields), "additionalProperties": False}


def compose_schema(keys: list[str], max_chars: int) -> dict[str, Any]:
    """The compose answer's schema: {key: bounded string}."""
    props = {k: _string(max_chars) for k in keys}
    return {"type": "object", "properties": props, "required": list(keys), "additionalProperties": False}


# ---- parsing -------------------------------------------------------------------------------

_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.S)


def extract_json_object(text: str | None) -> dict[str, Any]:
    """The first JSON object in a model answer: bare, inside a ``` fence, or amid prose."""
    if text is None or not str(text).strip():
        raise AnswerError("empty answer")
    text = str(text).strip()
    candidates = [text] + [m.group(1).strip() for m in _FENCE.finditer(text)]
    decoder = json.JSONDecoder()
    for cand in candidates:
        try:
            obj = json.loads(cand)
            if isinstance(obj, dict):
                return obj
        except json.JSONDecodeError:
            pass
    # Scan for the first '{' that starts a decodable object (prose before or after it).
    for m in re.finditer(r"\{", text):
        try:
            obj, _ = decoder.raw_decode(text, m.start())
        except json.JSONDecodeError:
            continue
        if isinstance(obj, dict):
            return obj
    raise AnswerError(f"no JSON object in the answer ({_snippet(text)})")


def _snippet(text: str, n: int = 80) -> str:
    one = " ".join(text.split())
    return repr(one[:n] + ("..." if len(one) > n else ""))


def _unwrap(obj: dict[str, Any], fields: list[str]) -> dict[str, Any]:
    """Accept {"fields": {...}} / {"labels": {...}} wrappers that small models like to add."""
    if not any(f in obj for f in fields) and len(obj) == 1:
        inner = next(iter(obj.values()))
        if isinstance(inner, dict):
            return inner
    return obj


# ---- label answers ---------------------------------------------------------------------------


class FieldAnswer(BaseModel):
    model_config = ConfigDict(extra="ignore")

    value: str
    confidence: float = Field(ge=0.0, le=1.0)
    evidence: list[str] = Field(default_factory=list)

    @field_validator("value", mode="before")
    @classmethod
    def _value_text(cls, v: Any) -> str:
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            return str(v)
        if not isinstance(v, str):
            raise ValueError("value must be a string")
        v = v.strip()
        if not v:
            raise ValueError("value is empty")
        return v

    @field_validator("confidence", mode="before")
    @classmethod
    def _confidence(cls, v: Any) -> float:
        # The schema asks for an integer percentage; answers outside the schema (json_object or
        # text mode) may say 0.8, "0.8" or "80%". An integer is a percentage; out of range fails.
        if isinstance(v, str):
            s = v.strip()
            v = float(s.rstrip("%")) / 100 if s.endswith("%") else float(s)
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise ValueError("confidence must be a number")
        if isinstance(v, int) or 1.0 < v <= 100.0:
            v = v / 100.0
        return float(v)

    @field_validator("evidence", mode="before")
    @classmethod
    def _evidence(cls, v: Any) -> list[str]:
        if v is None:
            return []
        if isinstance(v, str):
            v = [v]
        if not isinstance(v, list):
            raise ValueError("evidence must be a list of names")
        return list(dict.fromkeys(str(x).strip() for x in v if str(x).strip()))


def _closed_canon(field: str, value: str) -> str | None:
    """canonical_closed, then word by word ("female voice": the whole string also contains
    "male", which makes the substring match ambiguous)."""
    canon = canonical_closed(field, value)
    if canon is not None:
        return canon
    words = {canonical_closed(field, w) for w in re.split(r"[\s,;/()（），、]+", value) if w}
    words.discard(None)
    words.discard("none")
    return words.pop() if len(words) == 1 else None


class LabelOutcome(BaseModel):
    """One validated field of a label answer (value in label-language surface form)."""

    value: str | None
    confidence: float
    evidence: list[str]
    abstain: bool = False
    repaired: bool = False


def parse_label_answer(
    obj: dict[str, Any],
    fields: list[str],
    lang: str,
    cited: dict[str, list[str]],
    choices: dict[str, list[str]] | None = None,
) -> tuple[dict[str, LabelOutcome], dict[str, str]]:
    """Validate each requested field; returns (good fields, {field: error}) for the rest. A
    field with ``choices`` must be one of them (the schema's enum; a json_object answer may not be)."""
    choices = choices or {}
    obj = _unwrap(obj, fields)
    good: dict[str, LabelOutcome] = {}
    bad: dict[str, str] = {}
    for f in fields:
        if f not in obj:
            bad[f] = "missing from the answer"
            continue
        raw = obj[f]
        if isinstance(raw, str):  # a bare value: accept it, with no stated confidence
            raw = {"value": raw, "confidence": 0.5, "evidence": []}
        try:
            ans = FieldAnswer.model_validate(raw)
        except ValidationError as exc:
            bad[f] = "invalid: " + "; ".join(
                f"{'.'.join(map(str, e['loc'])) or 'value'}: {e['msg']}" for e in exc.errors()
            )
            continue
        allowed = set(cited.get(f, []))
        evidence = [e for e in ans.evidence if e in allowed]
        repaired = len(evidence) != len(ans.evidence)
        if f in CLOSED_FIELDS:
            canon = _closed_canon(f, ans.value)
            if canon is None:
                bad[f] = f"value {ans.value!r} is not one of {closed_choices(f, lang)}"
                continue
            surface = closed_value(f, canon, lang)
            repaired = repaired or surface != ans.value
            if canon == "none":
                good[f] = LabelOutcome(
                    value=None, confidence=ans.confidence, evidence=evidence, abstain=True, repaired=repaired
                )
                continue
            good[f] = LabelOutcome(value=surface, confidence=ans.confidence, evidence=evidence, repaired=repaired)
        elif f in choices and ans.value not in choices[f]:
            bad[f] = f"value {ans.value!r} is not one of the {len(choices[f])} allowed values"
        else:
            good[f] = LabelOutcome(value=ans.value, confidence=ans.confidence, evidence=evidence, repaired=repaired)
    return good, bad


# ---- compose answers ------------------------------------------------------------


def parse_compose_answer(obj: dict[str, Any], keys: list[str]) -> tuple[dict[str, str], dict[str, str]]:
    """Validate the caption / contextual_inference texts that were asked for."""
    obj = _unwrap(obj, keys)
    good: dict[str, str] = {}
    bad: dict[str, str] = {}
    for k in keys:
        v = obj.get(k)
        if not isinstance(v, str) or not v.strip():
            bad[k] = "missing from the answer" if v is None else "must be a non-empty string"
        else:
            good[k] = v.strip()
    return good, bad
