"""The `openai` backend: the agents' reasoning on any OpenAI-compatible endpoint.

A labeler endpoint (e.g. Qwen3-Omni behind vLLM, which hears the segment audio) labels; a
reviewer endpoint (any text model; the labeler when none is configured) writes the caption
where the user opted in (the review itself is the rules' evidence checks, openai/routed.py).
One chat call per segment and task, asking only for the task's fields. Every answer is
schema-constrained, validated per field, repaired where that is safe, and retried a bounded
number of times for the fields still missing; what cannot be obtained becomes a failed
prediction (label) or the rules' composer's caption (compose).
No fault of the endpoint raises out of this class.
"""

from __future__ import annotations

import base64
import logging
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from ...config import Config, EndpointConfig
from ...llm_client import AudioRejected, BackendStats, CallError, ChatClient, FormatRejected
from ...records import Contract, Evidence, Prediction, Status
from ...schema import LABELED_FIELDS
from ..backend import ComposeTask, LabelTask
from ..compose import compose_task, contradiction, values_text
from ..levels import typed_answer
from ..phrases import phrases
from . import prompts
from .json_schemas import (
    AnswerError,
    compose_schema,
    extract_json_object,
    label_schema,
    parse_compose_answer,
    parse_label_answer,
)

log = logging.getLogger(__name__)

# Model names that take audio input when EndpointConfig.audio is None.
_AUDIO_MODEL = re.compile(
    r"omni|audio|voxtral|ultravox|gemma-?3n|phi-?4-?multimodal|minicpm-?o|salmonn|step-?audio|kimi-?audio", re.I
)
_MAX_NEGOTIATIONS = 4  # format downgrades (2) + audio drop (1) + slack; never loops


def accepts_audio(endpoint: EndpointConfig) -> bool:
    if endpoint.audio is not None:
        return endpoint.audio
    return bool(endpoint.model and _AUDIO_MODEL.search(endpoint.model))


@dataclass
class OpenAIOptions:
    """Output bounds and retry pacing (EndpointConfig holds the endpoint itself)."""

    max_value_chars: int = 240  # open-field value length in the schema
    max_cited: int = 4  # evidence names one field may cite
    max_compose_chars: int = 600  # caption / contextual inference length
    retry_backoff_s: float = 0.5  # first pause after a fault; doubles, capped at 8 s
    retry_temperature: float = 0.3  # floor for re-asking after an invalid answer (temperature 0 repeats it)
    # The caption written by the endpoint from the reviewed values (`agents.llm_caption`, off by
    # default: no model measured so far beat the rules' composer, docs/agents-llm.md); the
    # contextual inference is always the rules'.
    llm_caption: bool = False


def options_from(labeler: EndpointConfig) -> OpenAIOptions:
    """The output bounds an endpoint section sets."""
    return OpenAIOptions(
        max_value_chars=labeler.max_value_chars,
        max_compose_chars=labeler.max_compose_chars,
    )


def field_choices(fields: list[str], lang: str) -> dict[str, list[str]]:
    """The values a labeler chooses among, per field with a vocabulary (a JSON-schema enum):
    the rules' own phrases, which their review reads. Told a format without choices, the 0.5B
    copied evidence numbers ("0.656 z (moderate)") or the prompt's example (docs/agents-llm.md).
    Accent, rhythm and pronunciation stay short text (no check reads them back)."""
    P = phrases(lang)
    table: dict[str, list[str]] = {
        "pitch": [P.PITCH_LEVEL[k] for k in sorted(P.PITCH_LEVEL)],
        "speed": [P.SPEED_LEVEL[k] for k in sorted(P.SPEED_LEVEL)],
        "emotion": [P.emotion(e, i).render(lang) for e in P.EMOTIONS for i in range(len(P.INTENSITY))],
        "tone": [P.tone(q, a) for q in P.TONE_QUALITY for a in P.TONE_ACT],
        "texture": list(P.TEXTURE.values()),
        "paralinguistic": [P.NONE, *P.PARA.values()],
        "background_sound": [P.NONE, *P.BACKGROUND.values()],
        "environment": [P.NONE, *P.ENVIRONMENT.values()],
    }
    return {f: table[f] for f in fields if f in table}


def citable(
    field: str, contracts: dict[str, Contract], evidence: dict[str, Evidence], *, audio: bool, context: bool
) -> list[str]:
    """Evidence names a field may cite: its contract's admitted evidence plus the raw inputs."""
    names = sorted(evidence)
    contract = contracts.get(field)
    if contract is not None and contract.admissible_evidence:
        admitted = [n for n in names if contract.admits(n)]
        # A contract written in other terms than the evidence names: the task's evidence is
        # already admitted by the agent, so keep all of it rather than none.
        names = admitted or names
    base = ["transcript"] + (["audio"] if audio else []) + (["context"] if context else [])
    return base + [n for n in names if n not in base]


_OVERFLOW_MARKERS = ("context size", "context length", "context window", "maximum context", "too many tokens")


def _context_overflow(error: str) -> bool:
    e = (error or "").lower()
    return any(m in e for m in _OVERFLOW_MARKERS)


class OpenAIBackend:
    """Backend protocol implementation for OpenAI-compatible endpoints."""

    name = "openai"

    def __init__(
        self,
        labeler: EndpointConfig,
        reviewer: EndpointConfig | None = None,
        *,
        options: OpenAIOptions | None = None,
    ) -> None:
        self.options = options or OpenAIOptions()
        self.stats = BackendStats()
        self.labeler = ChatClient(labeler, role="labeler", stats=self.stats)
        if reviewer is None or not reviewer.url:
            self.reviewer = self.labeler
        else:
            self.reviewer = ChatClient(reviewer, role="reviewer", stats=self.stats)
        self.audio_enabled = accepts_audio(labeler)

    @property
    def wants_audio(self) -> bool:
        return self.audio_enabled

    @classmethod
    def from_config(cls, config: Config) -> OpenAIBackend:
        """Build from the pipeline Config ([labeler] and [reviewer] sections)."""
        options = replace(options_from(config.labeler), llm_caption=config.agents.llm_caption)
        return cls(config.labeler, config.reviewer, options=options)

    # ---- the bounded attempt loop shared by label, review and compose ----------------------

    def _run(
        self,
        client: ChatClient,
        keys: list[str],
        *,
        schema_name: str,
        build: Callable[[list[str], bool, bool], tuple[str, str, dict[str, Any]]],
        parse: Callable[[dict[str, Any], list[str], bool], tuple[dict[str, Any], dict[str, str], int]],
        max_tokens: Callable[[int], int],
        audio_wav: bytes | None = None,
    ) -> tuple[dict[str, Any], dict[str, str], bool]:
        """Ask until every key is answered or the retry budget is spent.

        ``build(remaining, with_audio, schema_in_prompt)`` gives (system, user, schema);
        ``parse(obj, remaining, with_audio)`` gives (good, {key: error}, repairs).
        Returns (good, {key: last error} for the keys given up, whether audio was used).
        """
        remaining, good = list(keys), {}
        errors: dict[str, str] = {}
        attempt = negotiations = 0
        used_audio = False
        raise_temperature = False
        b64 = base64.b64encode(audio_wav).decode("ascii") if audio_wav else None
        max_retries = max(0, client.endpoint.max_retries)
        while remaining:
            with_audio = b64 is not None and self.audio_enabled and client is self.labeler
            system, user, schema = build(remaining, with_audio, client.format_mode != "json_schema")
            temperature = (
                max(client.endpoint.temperature, self.options.retry_temperature) if raise_temperature else None
            )
            try:
                text = client.chat(
                    system,
                    user,
                    schema,
                    schema_name=schema_name,
                    audio_wav_b64=b64 if with_audio else None,
                    temperature=temperature,
                    max_tokens=max_tokens(len(remaining)),
                )
                obj = extract_json_object(text)
            except (AudioRejected, FormatRejected) as exc:
                negotiations += 1
                if isinstance(exc, AudioRejected):
                    self._disable_audio(str(exc))
                if negotiations <= _MAX_NEGOTIATIONS:
                    continue  # a capability fallback, not a retry
                errors = dict.fromkeys(remaining, f"{exc.kind}: {exc}")
                break
            except CallError as exc:
                errors = dict.fromkeys(remaining, f"{exc.kind}: {exc}")
                if not exc.retryable or attempt >= max_retries:
                    break
                attempt += 1
                self.stats.add(retries=1)
                time.sleep(min(8.0, self.options.retry_backoff_s * 2 ** (attempt - 1)))
                raise_temperature = exc.kind == "invalid"
                continue
            except AnswerError as exc:
                errors = dict.fromkeys(remaining, f"invalid answer: {exc}")
                if attempt >= max_retries:
                    break
                attempt, raise_temperature = attempt + 1, True
                self.stats.add(retries=1)
                continue
            used_audio = used_audio or with_audio
            ok, bad, repairs = parse(obj, remaining, with_audio)
            good.update(ok)
            self.stats.add(repairs=repairs)
            errors = {k: f"invalid answer: {v}" for k, v in bad.items()}
            remaining = [k for k in remaining if k in bad]
            if remaining:
                if attempt >= max_retries:
                    break
                attempt, raise_temperature = attempt + 1, True
                self.stats.add(retries=1)
        return good, {k: errors.get(k, "no answer") for k in remaining}, used_audio

    def _disable_audio(self, reason: str) -> None:
        if self.audio_enabled:
            self.audio_enabled = False
            self.stats.audio_fallback = reason
            log.warning("labeler rejected audio input (%s): text evidence only for the rest of the run", reason)

    # ---- label ---------------------------------------------------------------------------

    def label(self, task: LabelTask) -> dict[str, Prediction]:
        """Label task.fields in one call; when the endpoint's context window cannot hold the
        request, split the fields in halves (each half carries less contract text) and retry."""
        out = self._label_once(task)
        overflow = [f for f, p in out.items() if p.status == "failed" and _context_overflow(p.error)]
        if len(overflow) > 1 and len(overflow) == len(out):
            half = len(overflow) // 2
            for part in (overflow[:half], overflow[half:]):
                out.update(self.label(replace(task, fields=part)))
        return out

    def _label_once(self, task: LabelTask) -> dict[str, Prediction]:
        lang = task.label_language if task.label_language in ("zh", "en") else "en"
        self.stats.note_segment(task.segment.key)
        out: dict[str, Prediction] = {}
        fields = []
        for f in dict.fromkeys(task.fields):
            if f in LABELED_FIELDS:
                fields.append(f)
            else:
                out[f] = self._failed(task, f, f"{f!r} is not a labeled field")
        if not fields:
            return out
        self.stats.add(label_calls=1)
        has_context = bool(task.context)
        opts = self.options

        def cited_for(keys: list[str], with_audio: bool) -> dict[str, list[str]]:
            return {f: citable(f, task.contracts, task.evidence, audio=with_audio, context=has_context) for f in keys}

        choices = field_choices(fields, lang)
        choices.update({f: v for f, v in task.allowed_values.items() if f in fields and v})

        def build(keys: list[str], with_audio: bool, schema_in_prompt: bool) -> tuple[str, str, dict[str, Any]]:
            cited = cited_for(keys, with_audio)
            schema = label_schema(keys, lang, cited, opts.max_value_chars, opts.max_cited, choices)
            system, user = prompts.label_messages(
                segment=task.segment,
                fields=keys,
                contracts=task.contracts,
                evidence=task.evidence,
                context=task.context,
                lang=lang,
                revision_requests=task.revision_requests,
                cited=cited,
                with_audio=with_audio,
                schema_in_prompt=schema if schema_in_prompt else None,
                choices=choices,
            )
            return system, user, schema

        def parse(obj: dict[str, Any], keys: list[str], with_audio: bool):
            good, bad = parse_label_answer(obj, keys, lang, cited_for(keys, with_audio), choices)
            return good, bad, sum(1 for g in good.values() if g.repaired)

        good, failed, used_audio = self._run(
            self.labeler,
            fields,
            schema_name="segment_labels",
            build=build,
            parse=parse,
            max_tokens=lambda n: 128 + n * (48 + 12 * opts.max_cited + 2 * opts.max_value_chars),
            audio_wav=task.audio_wav,
        )
        inputs = "audio, transcript, evidence" if used_audio else "transcript, evidence"
        for f in fields:
            if f in good:
                g, why = good[f], f"{self.labeler.model} from {inputs}"
                status = Status.ABSTAIN if g.abstain else Status.OK
                key, rnd = task.segment.key, task.round
                value = typed_answer(f, g.value, phrases(lang))  # the one place an answer's text is read
                out[f] = Prediction(key, f, value, round(g.confidence, 4), g.evidence, rnd, self.name, status, "", why)
            else:
                out[f] = self._failed(task, f, failed.get(f, "no answer"))
        n_failed = sum(1 for p in out.values() if p.status == "failed")
        if n_failed:
            self.stats.add(failures=1, failed_fields=n_failed)
        return out

    def _failed(self, task: LabelTask, field: str, error: str) -> Prediction:
        key, rnd = task.segment.key, task.round
        return Prediction(key, field, None, 0.0, [], rnd, self.name, Status.FAILED, error=error[:500])

    # ---- compose -------------------------------------------------------------------------

    def compose(self, task: ComposeTask) -> dict[str, str]:
        """The rules' composer (agents/compose.py); with `llm_caption` the endpoint writes the
        caption from the reviewed values, kept unless it contradicts one of them (then, or when
        no answer came, the composer's caption stays)."""
        out = compose_task(task)
        if not self.options.llm_caption:
            return out
        lang = task.label_language if task.label_language in ("zh", "en") else "en"
        self.stats.add(compose_calls=1)
        self.stats.note_segment(task.segment.key)
        opts = self.options

        def build(ks: list[str], _audio: bool, schema_in_prompt: bool) -> tuple[str, str, dict[str, Any]]:
            schema = compose_schema(ks, opts.max_compose_chars)
            system, user = prompts.compose_messages(
                segment=task.segment,
                values=values_text(task),
                evidence=task.evidence,
                context=task.context,
                lang=lang,
                schema_in_prompt=schema if schema_in_prompt else None,
            )
            return system, user, schema

        def parse(obj: dict[str, Any], ks: list[str], _audio: bool) -> tuple[dict[str, Any], dict[str, str], int]:
            good, bad = parse_compose_answer(obj, ks)
            for k in list(good):
                why = contradiction(good[k], task.values, lang)
                if why:
                    bad[k] = why
                    del good[k]
                    self.stats.add(text_rejections=1)
            return good, bad, 0

        good, failed, _ = self._run(
            self.reviewer,
            ["caption"],
            schema_name="segment_compose",
            build=build,
            parse=parse,
            max_tokens=lambda n: 64 + n * 3 * opts.max_compose_chars,
        )
        if failed:
            self.stats.add(failures=1, failed_fields=len(failed))
            log.warning("caption of %s: the composer's (%s)", task.segment.key, "; ".join(failed.values()))
        out.update(good)
        return out
