"""Per-field routing: an LLM thinks about some fields, the rules about the others.

`agents.llm_fields` names the labeled fields the LLM answers; the rules backend labels the
rest. Review is evidence-grounded first: the rules' checks (a value the acoustic evidence or
the speaker's history contradicts) run on every prediction, whoever made it, and a request
they write for an LLM field carries the evidence values it was checked against, so the model
relabels against numbers rather than a bare "revise". With `agents.llm_review` the LLM also
reviews its own fields (consistency with transcript and context), after the rules accepted them.
Composition (caption, contextual inference) is the LLM's.
"""

from __future__ import annotations

import json
from dataclasses import replace

from ...records import Evidence, Prediction, Verdict
from .. import free_text
from ..backend import Backend, ComposeTask, LabelTask, ReviewTask
from ..levels import INTENSITY_EXCESS_STEPS, intensity_of, levels_disagree, parse_level, suggestion_of
from ..phrases import phrases
from .backend import OpenAIBackend, citable, level_choices
from .prompts import evidence_json, instruction_text

# Open fields whose value is the LLM's own phrase (not a level, a closed value or an emotion
# label the rules' checks parse): the free-text checks read them as text.
FREE_TEXT_FIELDS = frozenset({"tone", "rhythm", "texture", "pronunciation", "environment", "background_sound"})

# Evidence a compact compose call keeps beside the reviewed values (pitch, rate, arousal, scene).
COMPOSE_EVIDENCE = frozenset(
    {
        "pitch.median_hz",
        "rate.units_per_s",
        "pause.ratio",
        "emotion.arousal",
        "emotion.valence_text",
        "scene.background",
        "snr.db",
    }
)


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


def level_of(field: str, text: str | None, lang: str) -> int | None:
    """The level a pitch or speed text names, read as the review checks read it."""
    if not text or field not in ("pitch", "speed"):
        return None
    P = phrases(lang)
    return parse_level(text, P.PITCH_PARSE if field == "pitch" else P.SPEED_PARSE)


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
    shown = evidence_json({n: evidence[n] for n in names[:limit]})
    text = verdict.request
    rejected, suggest = _REQUEST_WORDS["zh" if lang == "zh" else "en"]
    if previous:
        text = rejected.format(v=json.dumps(previous, ensure_ascii=False)) + text
    suggested = suggestion_of(verdict.request)
    fit = allowed_suggestion(suggested, choices)
    if fit and fit != suggested:
        text += suggest.format(s=json.dumps(fit, ensure_ascii=False))
    if not shown:
        return text
    facts = "; ".join(f"{k} = {v}" for k, v in shown.items())
    return f"{text} Evidence: {facts}."


class RoutedBackend:
    """Backend protocol: `llm` for `llm_fields` (and compose), `rules` for the other fields."""

    def __init__(
        self,
        llm: OpenAIBackend,
        rules: Backend,
        llm_fields: list[str],
        *,
        llm_review: bool = False,
        compact: bool = False,
    ) -> None:
        self.llm, self.rules = llm, rules
        self.compact = compact  # send only the contracts' priority evidence (small local models)
        self.llm_fields = frozenset(llm_fields)
        self.llm_review = llm_review
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
            if task.round > 0:
                out.update(self._still_failing(task, out))
        return out

    def text_problem(self, field: str, value: object, lang: str, transcript: str = "") -> str | None:
        """Why an LLM's open-field phrase is not a description (copied instructions, a value
        list, a repeated sentence), or None."""
        if field not in FREE_TEXT_FIELDS or field not in self.llm_fields or not isinstance(value, str):
            return None
        facts = free_text.TextFacts(values={}, lang=lang, transcript=transcript, instructions=instruction_text(lang))
        found = free_text.problem(field, value, facts)
        return found[1] if found and found[0] in ("copied", "list", "repeat", "bare", "quote") else None

    def _still_failing(self, task: LabelTask, out: dict[str, Prediction]) -> dict[str, Prediction]:
        """A relabel whose phrase the free-text checks still reject gives way to the rules'
        value (the request already told the LLM why; the loop's budget is for level fields)."""
        lang = task.label_language if task.label_language in ("zh", "en") else "en"
        text = task.segment.text
        bad = [f for f, p in out.items() if p.status != "failed" and self.text_problem(f, p.value, lang, text)]
        if not bad:
            return {}
        got = self.rules.label(replace(task, fields=bad, audio_wav=None))
        for f, p in got.items():
            p.rationale = f"rules' value: the LLM's relabel still failed the text check ({out[f].value!r})"[:500]
        return got

    def _choices(self, field: str, lang: str) -> list[str] | None:
        """The level phrases the LLM answers `field` in, when it answers in levels."""
        if not getattr(getattr(self.llm, "options", None), "level_choices", False):
            return None
        return level_choices([field], lang).get(field)

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
            choices = self._choices(f, lang)
            want = level_of(f, suggestion_of(task.revision_requests.get(f, "")), lang)
            if choices is None or want is None:
                continue
            ok = [c for c in choices if (lv := level_of(f, c, lang)) is not None and not levels_disagree(want, lv)]
            if ok:
                out[f] = ok
        return out

    def _emotion_choices(self, task: LabelTask, lang: str) -> list[str]:
        """For an emotion relabel: the "label (intensity)" pairs no more intense than the review's
        rule allows over the suggestion. Measured: told the suggestion in words, the 0.5B answered
        the rejected "happy (very strong)" again on 5 of 8 turns."""
        choices = self._choices("emotion", lang)
        P = phrases(lang)
        want = intensity_of(suggestion_of(task.revision_requests.get("emotion", "")) or "", P)
        if choices is None or want is None:
            return []
        return [c for c in choices if (i := intensity_of(c, P)) is not None and i - want < INTENSITY_EXCESS_STEPS]

    def review(self, task: ReviewTask) -> dict[str, Verdict]:
        verdicts = dict(self.rules.review(task))
        lang = task.label_language if task.label_language in ("zh", "en") else "en"
        for f, v in list(verdicts.items()):
            pred = task.predictions.get(f)
            why = self.text_problem(f, pred.value, lang, task.segment.text) if v.accepted and pred else None
            if why:
                verdicts[f] = v = Verdict(task.segment.key, f, task.round, False, reason=why, request=why)
        for f, v in verdicts.items():
            if f in self.llm_fields and not v.accepted:
                pred = task.predictions.get(f)
                choices = self._choices(f, lang)
                v.request = request_with_evidence(
                    v,
                    f,
                    task.contracts,
                    task.evidence,
                    previous=None if pred is None or pred.value is None else str(pred.value),
                    choices=choices,
                    lang=lang,
                )
        if self.llm_review:
            passed = {
                f: p
                for f, p in task.predictions.items()
                if f in self.llm_fields and verdicts.get(f) and verdicts[f].accepted
            }
            if passed:
                evidence = _fields_evidence(list(passed), task.contracts, task.evidence, self.compact)
                sub = replace(
                    task,
                    predictions=passed,
                    evidence=evidence,
                    contracts={f: c for f, c in task.contracts.items() if f in passed},
                )
                for f, v in self.llm.review(sub).items():
                    if not v.accepted:
                        verdicts[f] = v
        return verdicts

    def compose(self, task: ComposeTask) -> dict[str, str]:
        if self.compact:  # the reviewed values say it all; keep the few numbers a caption may use
            task = replace(task, evidence={n: e for n, e in task.evidence.items() if n in COMPOSE_EVIDENCE})
        return self.llm.compose(task)

    def close(self) -> None:
        closer = getattr(self.llm, "close", None)
        if callable(closer):
            closer()
