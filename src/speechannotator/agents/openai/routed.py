"""Per-field routing: an LLM thinks about some fields, the rules about the others.

`agents.llm_fields` names the labeled fields the LLM answers; the rules backend labels the
rest. The review is the rules' evidence checks (a value the acoustic evidence or the speaker's
history contradicts) on every prediction, whoever made it; a request they write for an LLM field
carries the evidence values it was checked against and the suggested value as an allowed one.
Composition is the LLM backend's: the rules' composer, or an endpoint's caption where the user
opted in (`agents.llm_caption`).
"""

from __future__ import annotations

import json
from dataclasses import replace

from ...records import Evidence, Prediction, Verdict
from ...schema import Emotion, Level, shown
from ..backend import Backend, ComposeTask, LabelTask, ReviewTask
from ..levels import INTENSITY_EXCESS_STEPS, levels_disagree
from ..phrases import phrases
from .backend import OpenAIBackend, citable, field_choices
from .prompts import evidence_json


def _fields_evidence(
    fields: list[str], contracts, evidence: dict[str, Evidence], compact: bool = False
) -> dict[str, Evidence]:
    """The evidence the contracts of `fields` admit; `compact`: only the names in their
    priority lists (and those names at speaker level), a prompt a small model reads quickly."""
    names: set[str] = set()
    for f in fields:
        if compact and contracts.get(f) is not None and contracts[f].priority:
            for n in contracts[f].priority:
                names.update((n, n if n.startswith("speaker.") else f"speaker.{n}"))
        else:
            names.update(citable(f, contracts, evidence, audio=False, context=False))
    return {n: e for n, e in evidence.items() if n in names}


_REQUEST_WORDS = {
    "en": ("The value {v} was rejected: ", " Suggested value: {s}."),
    "zh": ("取值{v}未通过审核：", "建议取值：{s}。"),
}


def allowed_suggestion(suggested: str | None, choices: list[str] | None) -> str | None:
    """The suggestion as one of the allowed values: the longest choice it starts with (the
    rules' descriptions start with the level phrase: "low pitch, some rise and fall")."""
    if not suggested or not choices:
        return suggested
    fits = [c for c in choices if suggested.lower().startswith(c.lower())]
    return max(fits, key=len) if fits else suggested


def request_with_evidence(
    verdict: Verdict,
    field: str,
    contracts,
    evidence: dict[str, Evidence],
    limit: int = 6,
    *,
    previous: str | None = None,
    choices: list[str] | None = None,
    lang: str = "en",
) -> str:
    """The request plus the values of the field's admitted evidence in priority order; with
    `previous` it names the rejected value, with `choices` the suggestion as an allowed value
    (a small model kept its rejected value when the suggestion was not literally a choice)."""
    contract = contracts.get(field)
    names = [n for n in (contract.priority if contract else []) if n in evidence]
    names += [
        n for n in citable(field, contracts, evidence, audio=False, context=False) if n in evidence and n not in names
    ]
    quoted = evidence_json({n: evidence[n] for n in names[:limit]})
    text = verdict.request
    rejected, suggest = _REQUEST_WORDS["zh" if lang == "zh" else "en"]
    if previous:
        text = rejected.format(v=json.dumps(previous, ensure_ascii=False)) + text
    fit = allowed_suggestion(None if verdict.suggested is None else shown(verdict.suggested, lang), choices)
    if fit:
        text += suggest.format(s=json.dumps(fit, ensure_ascii=False))
    if not quoted:
        return text
    facts = "; ".join(f"{k} = {v}" for k, v in quoted.items())
    return f"{text} Evidence: {facts}."


class RoutedBackend:
    """Backend protocol: `llm` labels `llm_fields` (and composes), `rules` labels the other fields
    and reviews them all."""

    def __init__(
        self,
        llm: OpenAIBackend,
        rules: Backend,
        llm_fields: list[str],
        *,
        compact: bool = False,
    ) -> None:
        self.llm, self.rules = llm, rules
        self.compact = compact  # send only the contracts' priority evidence (small local models)
        self.llm_fields = frozenset(llm_fields)
        self.name = f"{llm.name}+rules"
        self.stats = llm.stats

    @property
    def wants_audio(self) -> bool:
        return self.llm.wants_audio

    def label(self, task: LabelTask) -> dict[str, Prediction]:
        mine = [f for f in task.fields if f in self.llm_fields]
        theirs = [f for f in task.fields if f not in self.llm_fields]
        out: dict[str, Prediction] = {}
        if theirs:
            out.update(self.rules.label(replace(task, fields=theirs, audio_wav=None)))
        if mine:
            evidence = _fields_evidence(mine, task.contracts, task.evidence, self.compact)
            contracts = {f: c for f, c in task.contracts.items() if f in mine}
            allowed = self._allowed_levels(task, mine)
            sub = replace(task, fields=mine, evidence=evidence, contracts=contracts, allowed_values=allowed)
            out.update(self.llm.label(sub))
        return out

    def _choices(self, field: str, lang: str) -> list[str] | None:
        """The values the LLM chooses `field` among (None: short text)."""
        return field_choices([field], lang).get(field)

    def _allowed_levels(self, task: LabelTask, fields: list[str]) -> dict[str, list[str]]:
        """For a relabel of a level field: the levels the reviewer's suggestion allows (the
        evidence's side of medium, within one step). Measured: the 0.5B kept a rejected
        "medium pitch" when the request named "low pitch" as the suggested value."""
        lang = task.label_language if task.label_language in ("zh", "en") else "en"
        out: dict[str, list[str]] = {}
        for f in fields:
            if f == "emotion":  # any emotion, at most one step more intense than the suggestion's
                bounded = self._emotion_choices(task, lang)
                if bounded:
                    out[f] = bounded
                continue
            want, P = task.suggested.get(f), phrases(lang)
            if f in ("pitch", "speed") and isinstance(want, Level):
                table = P.PITCH_LEVEL if f == "pitch" else P.SPEED_LEVEL
                out[f] = [table[k] for k in sorted(table) if not levels_disagree(want.step, k)]
        return out

    def _emotion_choices(self, task: LabelTask, lang: str) -> list[str]:
        """For an emotion relabel: the "label (intensity)" pairs no more intense than the review's
        rule allows over the suggestion. Measured: told the suggestion in words, the 0.5B answered
        the rejected "happy (very strong)" again on 5 of 8 turns."""
        want, P = task.suggested.get("emotion"), phrases(lang)
        if self._choices("emotion", lang) is None or not isinstance(want, Emotion):
            return []
        steps = range(min(len(P.INTENSITY), want.intensity + INTENSITY_EXCESS_STEPS))
        return [P.emotion(e, i).render(lang) for e in P.EMOTIONS for i in steps]

    def review(self, task: ReviewTask) -> dict[str, Verdict]:
        verdicts = dict(self.rules.review(task))
        lang = task.label_language if task.label_language in ("zh", "en") else "en"
        for f, v in verdicts.items():
            if f in self.llm_fields and not v.accepted:
                pred = task.predictions.get(f)
                choices = self._choices(f, lang)
                v.request = request_with_evidence(
                    v,
                    f,
                    task.contracts,
                    task.evidence,
                    previous=None if pred is None or pred.value is None else shown(pred.value, lang),
                    choices=choices,
                    lang=lang,
                )
        return verdicts

    def compose(self, task: ComposeTask) -> dict[str, str]:
        return self.llm.compose(task)

    def close(self) -> None:
        closer = getattr(self.llm, "close", None)
        if callable(closer):
            closer()
