"""The `openai` backend: the agents' reasoning on any OpenAI-compatible endpoint.

A labeler endpoint (e.g. Qwen3-Omni behind vLLM, which hears the segment audio) labels; a
reviewer endpoint (any text model; the labeler when none is configured) reviews and composes.
One chat call per segment and task, asking only for the task's fields. Every answer is
schema-constrained, validated per field, repaired where that is safe, and retried a bounded
number of times for the fields still missing; what cannot be obtained becomes a failed
prediction (label), an accepted-with-reason verdict (review) or a fallback text (compose).
No fault of the endpoint raises out of this class.
"""

from __future__ import annotations

import base64
import logging
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from ...config import Config, EndpointConfig
from ...llm_client import AudioRejected, BackendStats, CallError, ChatClient, FormatRejected
from ...records import Contract, Evidence, Prediction, Verdict
from ...schema import COMPOSED_FIELDS, LABELED_FIELDS
from .. import free_text, supported
from ..backend import Backend, ComposeTask, LabelTask, ReviewTask
from ..caption_examples import examples_for
from ..facts import distinctive_facts, lead_words, reviewed_sentence
from ..phrases import phrases
from . import prompts
from .json_schemas import (
    AnswerError,
    compose_schema,
    extract_json_object,
    label_schema,
    parse_compose_answer,
    parse_label_answer,
    parse_review_answer,
    review_schema,
)

log = logging.getLogger(__name__)

# Model names that take audio input when EndpointConfig.audio is None.
_AUDIO_MODEL = re.compile(
    r"omni|audio|voxtral|ultravox|gemma-?3n|phi-?4-?multimodal|minicpm-?o|salmonn|step-?audio|kimi-?audio", re.I
)
# The seeds of the sampled caption candidates, one per candidate (llama.cpp's `seed`, per request).
SAMPLE_SEEDS = (11, 23, 37, 53, 71, 89, 107, 131)
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
    max_reason_chars: int = 240  # review reason / request length
    max_compose_chars: int = 600  # caption / contextual inference length
    retry_backoff_s: float = 0.5  # first pause after a fault; doubles, capped at 8 s
    retry_temperature: float = 0.3  # floor for re-asking after an invalid answer (temperature 0 repeats it)
    # Pitch and speed answered as one of the level phrases instead of a free sentence: small
    # models copy the prompt's example or an evidence number instead (docs/agents-llm.md).
    level_choices: bool = False
    # llama.cpp slots to pin speakers to (0: none): a speaker's calls then reuse the cached
    # prompt prefix of that speaker's previous call even when the turns alternate.
    cache_slots: int = 0
    # Extra sampler settings for the compose calls (the local server's anti-repetition sampler:
    # the 0.5B looped one sentence until the length cap; docs/agents-llm.md).
    compose_sampling: dict[str, Any] = field(default_factory=dict)
    # Compose from the reviewed voice facts phrased as one sentence (agents/facts.py), to be said
    # again in the model's own words, instead of from the field values and the evidence: the
    # small local models listed the values or wrote sentences wrong in meaning (docs/agents-llm.md).
    compose_from_facts: bool = False
    # The composed fields this model writes; the fallback (the rules) writes the others without
    # a call (the 0.5B's contextual inferences failed the checks for 8 of 8 turns: docs/agents-llm.md).
    compose_keys: tuple[str, ...] = COMPOSED_FIELDS
    # From facts: the caption must begin with the facts sentence's first words (facts.lead_words),
    # a `pattern` in its json_schema that llama.cpp samples under as a grammar: the 1.5B moved the
    # speaker back to the front whatever the sentence's order (docs/agents-llm.md).
    caption_lead: bool = False
    # Show worked rewrites of other voices' facts sentences beside the caption's (from facts only;
    # agents/caption_examples.py): the small models otherwise kept the facts sentence's frame.
    caption_examples: bool = False
    # Sample the caption under a grammar of the reviewed facts' vocabulary (from facts only;
    # agents/supported.py `vocabulary_pattern`): a word nobody reviewed cannot be written.
    caption_vocabulary: bool = False
    # From facts: a caption the checks reject is not asked to be rewritten with the reason; the same
    # prompt is sampled again `caption_samples` times (temperature `sample_temperature`, the fixed
    # seeds SAMPLE_SEEDS, so a rerun gives the same bytes) and the first candidate that passes every
    # check is kept (0: the rewrite loop). Before the added-word and form checks, 8 samples at 0.8
    # on the 0.5B took the fallbacks from 5 to 0, but 6 of the 8 captions then invented facts, spoke
    # of "the voice description" or were ungrammatical (docs/agents-llm.md).
    caption_samples: int = 0
    inference_samples: int = 0  # the same for the contextual inference
    sample_temperature: float = 0.8


def options_from(labeler: EndpointConfig) -> OpenAIOptions:
    """The output bounds an endpoint section sets."""
    return OpenAIOptions(
        max_value_chars=labeler.max_value_chars,
        max_reason_chars=labeler.max_value_chars,
        max_compose_chars=labeler.max_compose_chars,
    )


def level_choices(fields: list[str], lang: str) -> dict[str, list[str]]:
    """The level phrases pitch and speed are restricted to (the rules' own, which their checks
    parse), and emotion's "label (intensity)" pairs: told the format without an example, the
    0.5B answered a bare "happy" or "neutral"."""
    P = phrases(lang)
    table = {"pitch": P.PITCH_LEVEL, "speed": P.SPEED_LEVEL}
    out = {f: [table[f][k] for k in sorted(table[f])] for f in fields if f in table}
    if "emotion" in fields:
        out["emotion"] = [P.emotion(e, i) for e in P.EMOTIONS for i in range(len(P.INTENSITY))]
    return out


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
        fallback: Backend | None = None,
    ) -> None:
        self.options = options or OpenAIOptions()
        self.stats = BackendStats()
        self.labeler = ChatClient(labeler, role="labeler", stats=self.stats)
        if reviewer is None or not reviewer.url:
            self.reviewer = self.labeler
        else:
            self.reviewer = ChatClient(reviewer, role="reviewer", stats=self.stats)
        self.audio_enabled = accepts_audio(labeler)
        self.fallback = fallback  # used for compose texts the endpoint could not produce
        self._slot_of: dict[str, int] = {}  # speaker -> server slot (options.cache_slots)

    @property
    def wants_audio(self) -> bool:
        return self.audio_enabled

    @classmethod
    def from_config(cls, config: Config, *, fallback: Backend | None = None) -> OpenAIBackend:
        """Build from the pipeline Config ([labeler] and [reviewer] sections)."""
        return cls(config.labeler, config.reviewer, options=options_from(config.labeler), fallback=fallback)

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
        slot: int | None = None,
        hotter_retries: bool = True,
        sampling: dict[str, Any] | None = None,
    ) -> tuple[dict[str, Any], dict[str, str], bool]:
        """Ask until every key is answered or the retry budget is spent.

        ``build(remaining, with_audio, schema_in_prompt)`` gives (system, user, schema);
        ``parse(obj, remaining, with_audio)`` gives (good, {key: error}, repairs).
        Returns (good, {key: last error} for the keys given up, whether audio was used).
        ``hotter_retries=False``: a rejected answer is asked for again at the endpoint's own
        temperature (the caller's prompt says why it was rejected, so it changes; reproducible).
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
                    **({"cache_slot": slot} if slot is not None else {}),
                    **({"sampling": sampling} if sampling else {}),
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
                attempt, raise_temperature = attempt + 1, hotter_retries
                self.stats.add(retries=1)
        return good, {k: errors.get(k, "no answer") for k in remaining}, used_audio

    def _sample_candidates(
        self,
        keys: list[str],
        *,
        samples: int,
        build: Callable[[list[str], bool, bool], tuple[str, str, dict[str, Any]]],
        parse: Callable[[dict[str, Any], list[str], bool], tuple[dict[str, Any], dict[str, str], int]],
        forget: Callable[[], None],
        max_tokens: int,
        slot: int | None,
    ) -> tuple[dict[str, Any], dict[str, str]]:
        """Best of several answers to one unchanged prompt (OpenAIOptions.caption_samples, inference_samples): the
        endpoint's own answer first, then one per seed of SAMPLE_SEEDS at `sample_temperature`;
        the first that `parse` accepts is kept. ``forget`` clears what `parse` recorded of a
        rejected answer, so the next candidate's prompt is the first one again."""
        opts, client = self.options, self.reviewer
        errors: dict[str, str] = {}
        for i in range(1 + min(samples, len(SAMPLE_SEEDS))):
            forget()
            system, user, schema = build(keys, False, client.format_mode != "json_schema")
            sampling = dict(opts.compose_sampling)
            if i:
                sampling["seed"] = SAMPLE_SEEDS[i - 1]
                self.stats.add(retries=1)
            try:
                text = client.chat(
                    system,
                    user,
                    schema,
                    schema_name="segment_compose",
                    temperature=opts.sample_temperature if i else None,
                    max_tokens=max_tokens,
                    **({"cache_slot": slot} if slot is not None else {}),
                    **({"sampling": sampling} if sampling else {}),
                )
                obj = extract_json_object(text)
            except CallError as exc:
                errors = dict.fromkeys(keys, f"{exc.kind}: {exc}")
                if not exc.retryable:
                    break
                continue
            except AnswerError as exc:
                errors = dict.fromkeys(keys, f"invalid answer: {exc}")
                continue
            ok, bad, _ = parse(obj, keys, False)
            if ok and not bad:
                return ok, {}
            errors = {k: f"invalid answer: {v}" for k, v in bad.items()}
        return {}, {k: errors.get(k, "no answer") for k in keys}

    def _slot(self, speaker: str) -> int | None:
        """The server slot of `speaker`: assigned in order of first call, round robin."""
        n = self.options.cache_slots
        if n <= 0:
            return None
        if speaker not in self._slot_of:
            self._slot_of[speaker] = len(self._slot_of) % n
        return self._slot_of[speaker]

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

        def build(keys: list[str], with_audio: bool, schema_in_prompt: bool) -> tuple[str, str, dict[str, Any]]:
            cited = cited_for(keys, with_audio)
            choices = level_choices(keys, lang) if opts.level_choices else {}
            choices.update({f: v for f, v in task.allowed_values.items() if f in keys and v})
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
            good, bad = parse_label_answer(obj, keys, lang, cited_for(keys, with_audio))
            return good, bad, sum(1 for g in good.values() if g.repaired)

        good, failed, used_audio = self._run(
            self.labeler,
            fields,
            schema_name="segment_labels",
            build=build,
            parse=parse,
            max_tokens=lambda n: 128 + n * (48 + 12 * opts.max_cited + 2 * opts.max_value_chars),
            audio_wav=task.audio_wav,
            slot=self._slot(task.segment.speaker),
        )
        inputs = "audio, transcript, evidence" if used_audio else "transcript, evidence"
        for f in fields:
            if f in good:
                g = good[f]
                out[f] = Prediction(
                    key=task.segment.key,
                    field=f,
                    value=g.value,
                    confidence=round(g.confidence, 4),
                    evidence=g.evidence,
                    round=task.round,
                    backend=self.name,
                    status="abstain" if g.abstain else "ok",
                    rationale=f"{self.labeler.model} from {inputs}",
                )
            else:
                out[f] = self._failed(task, f, failed.get(f, "no answer"))
        n_failed = sum(1 for p in out.values() if p.status == "failed")
        if n_failed:
            self.stats.add(failures=1, failed_fields=n_failed)
        return out

    def _failed(self, task: LabelTask, field: str, error: str) -> Prediction:
        return Prediction(
            key=task.segment.key,
            field=field,
            value=None,
            confidence=0.0,
            evidence=[],
            round=task.round,
            backend=self.name,
            status="failed",
            error=error[:500],
        )

    # ---- review --------------------------------------------------------------------------

    def review(self, task: ReviewTask) -> dict[str, Verdict]:
        lang = task.label_language if task.label_language in ("zh", "en") else "en"
        self.stats.note_segment(task.segment.key)
        key, rnd = task.segment.key, task.round
        verdicts: dict[str, Verdict] = {}
        to_review = {}
        for f, p in task.predictions.items():
            if p.status == "failed":  # nothing to judge: ask for the label again
                verdicts[f] = Verdict(
                    key,
                    f,
                    rnd,
                    accepted=False,
                    reason=f"labeling failed: {p.error}",
                    request=f"label {f} again; the previous attempt failed",
                )
            else:
                to_review[f] = p
        if not to_review:
            return verdicts
        self.stats.add(review_calls=1)
        fields = list(to_review)
        opts = self.options

        def build(keys: list[str], _audio: bool, schema_in_prompt: bool) -> tuple[str, str, dict[str, Any]]:
            schema = review_schema(keys, opts.max_reason_chars)
            system, user = prompts.review_messages(
                segment=task.segment,
                predictions={k: to_review[k] for k in keys},
                contracts=task.contracts,
                evidence=task.evidence,
                context=task.context,
                lang=lang,
                schema_in_prompt=schema if schema_in_prompt else None,
            )
            return system, user, schema

        def parse(obj: dict[str, Any], keys: list[str], _audio: bool):
            good, bad = parse_review_answer(obj, keys)
            return good, bad, 0

        good, failed, _ = self._run(
            self.reviewer,
            fields,
            schema_name="segment_review",
            build=build,
            parse=parse,
            max_tokens=lambda n: 128 + n * (48 + 4 * opts.max_reason_chars),
            slot=self._slot(task.segment.speaker),
        )
        for f in fields:
            if f in good:
                r = good[f]
                if r.decision == "accept":
                    verdicts[f] = Verdict(key, f, rnd, accepted=True, reason=r.reason)
                else:
                    request = r.request or r.reason or f"re-examine {f} against its admitted evidence"
                    verdicts[f] = Verdict(key, f, rnd, accepted=False, reason=r.reason, request=request)
            else:
                # Accept so the review loop terminates; the reason keeps the failure on record.
                verdicts[f] = Verdict(key, f, rnd, accepted=True, reason=f"review unavailable: {failed[f]}"[:500])
        if failed:
            self.stats.add(failures=1, review_unavailable=len(failed))
            log.warning("review of %s unavailable for %s", key, ", ".join(failed))
        return verdicts

    # ---- compose -------------------------------------------------------------------------

    def compose(self, task: ComposeTask) -> dict[str, str]:
        """Caption and contextual inference, each checked as text (agents/free_text.py): a text
        the checks reject is asked for again with the reason and the rejected text (bounded by
        the endpoint's retries, at the same temperature: the prompt changed), then written by
        the fallback. Only a caption whose sole problem is an opening another caption already
        used is kept when no retry fixed it (the rules' captions open alike too)."""
        lang = task.label_language if task.label_language in ("zh", "en") else "en"
        self.stats.add(compose_calls=1)
        self.stats.note_segment(task.segment.key)
        opts = self.options
        keys = [k for k in COMPOSED_FIELDS if k in opts.compose_keys]
        revisions: dict[str, tuple[str, str]] = {}
        kept: dict[str, str] = {}  # texts with only a soft problem, in case no retry fixes it
        stuck: dict[str, tuple[str, str]] = {}  # {field: (text, kind)} answered again unchanged
        accepted: dict[str, str] = {}
        used = free_text.openings_of(task.earlier_captions)
        instructions = prompts.instruction_text(lang)
        described = reviewed_sentence(task.values, lang, task.earlier_captions) if opts.compose_from_facts else None
        lead = lead_words(described) if described and opts.caption_lead else ""
        closed = (
            supported.vocabulary_pattern(task.values, described, lead)
            if described and lang == "en" and opts.caption_vocabulary
            else ""
        )
        shown = (
            examples_for(task.values, len(task.earlier_captions), lang) if described and opts.caption_examples else []
        )
        turns = {
            where: tuple(str(t["text"]) for t in task.context.get(where) or [] if isinstance(t, dict) and t.get("text"))
            for where in ("previous", "next")
        }
        # What every answer is checked against; only the caption beside an inference changes.
        checked = free_text.TextFacts(
            values=task.values,
            lang=lang,
            transcript=task.segment.text,
            instructions=instructions,
            used_openings=used,
            earlier=tuple(task.earlier_captions),
            reviewed=described or "",
            neighbours=turns["previous"] + turns["next"],
            distinctive=tuple(distinctive_facts(task.values, lang)) if described else (),
            turn_before=bool(turns["previous"]),
            turn_after=bool(turns["next"]),
        )

        def build(ks: list[str], _audio: bool, schema_in_prompt: bool) -> tuple[str, str, dict[str, Any]]:
            schema = compose_schema(
                ks, opts.max_compose_chars, {"caption": lead} if lead else None, {"caption": closed} if closed else None
            )
            system, user = prompts.compose_messages(
                segment=task.segment,
                values=task.values,
                evidence=task.evidence,
                context=task.context,
                lang=lang,
                schema_in_prompt=schema if schema_in_prompt else None,
                keys=ks,
                revisions=revisions,
                used_openings=used,
                caption=accepted.get("caption"),
                facts=described,
                begin=lead,
                examples=shown,
            )
            return system, user, schema

        def parse(obj: dict[str, Any], ks: list[str], _audio: bool):
            good, bad = parse_compose_answer(obj, ks)
            for k in [k for k in keys if k in good]:
                caption = accepted.get("caption") or good.get("caption")
                facts = replace(checked, caption=caption if k == "contextual_inference" else None)
                most = free_text.INFERENCE_SENTENCES if k == "contextual_inference" and described else None
                mended = free_text.repaired(good[k], facts, most)
                if mended != good[k]:
                    log.info("composed %s of %s repaired: %r -> %r", k, task.segment.key, good[k], mended)
                    good[k] = mended
                    self.stats.add(repairs=1)
                found = free_text.problem(k, good[k], facts)
                if found and revisions.get(k, ("",))[0] == good[k]:
                    # The same text again: at this temperature every retry would repeat it (the
                    # 1.5B did, three times); stop asking and let the fallback decide.
                    stuck[k] = (good[k], found[0])
                    accepted.pop(k, None)
                    continue
                if found:
                    kind, why = found
                    log.info("composed %s of %s rejected (%s): %r", k, task.segment.key, kind, good[k])
                    bad[k] = why
                    revisions[k] = (good[k], why)
                    if kind in free_text.SOFT:
                        kept.setdefault(k, good[k])
                    del good[k]
                    self.stats.add(text_rejections=1)
                else:
                    accepted[k] = good[k]
            for k, why in bad.items():
                revisions.setdefault(k, ("", why))
            return good, bad, 0

        # From facts, one call per field: the caption's call carries the voice description, the
        # contextual inference's only the turns (given the description, the 0.5B described the voice again).
        good, failed = {}, {}
        for ask in [[k] for k in keys] if described else [keys]:
            samples = {"caption": opts.caption_samples, "contextual_inference": opts.inference_samples}
            if described and len(ask) == 1 and samples.get(ask[0], 0) > 0:
                got, lost = self._sample_candidates(
                    ask,
                    samples=samples[ask[0]],
                    build=build,
                    parse=parse,
                    forget=revisions.clear,
                    max_tokens=64 + 3 * opts.max_compose_chars,
                    slot=self._slot(task.segment.speaker),
                )
                good.update(got)
                failed.update(lost)
                continue
            got, lost, _ = self._run(
                self.reviewer,
                ask,
                schema_name="segment_compose",
                build=build,
                parse=parse,
                max_tokens=lambda n: 64 + n * 3 * opts.max_compose_chars,
                slot=self._slot(task.segment.speaker),
                hotter_retries=False,
                sampling=opts.compose_sampling,
            )
            good.update(got)
            failed.update(lost)
        for k, (_text, kind) in stuck.items():  # answered with the rejected text again: not a good one
            del good[k]
            failed[k] = f"the same text was rejected again ({kind})"
        for k in [k for k in failed if k in kept]:
            good[k] = kept[k]
            del failed[k]
        out = {k: good.get(k, "") for k in COMPOSED_FIELDS}
        need = [k for k in COMPOSED_FIELDS if k not in keys]  # the fallback's by design, not a failure
        if failed:
            self.stats.add(failures=1, failed_fields=len(failed))
            log.warning(
                "compose of %s failed for %s: %s", task.segment.key, ", ".join(failed), "; ".join(failed.values())
            )
            need += list(failed)
        if need and self.fallback is not None:
            try:
                backup = self.fallback.compose(task)
                out.update({k: backup.get(k, "") for k in need})
            except Exception as exc:  # the fallback is another backend: never let it crash us either
                log.warning("fallback compose failed: %s", exc)
        if described and "caption" in failed:
            # From facts, the description itself is a better caption than the rules' value list: the
            # same reviewed facts, one sentence opening with what is distinctive about this turn.
            out["caption"] = described
            log.info("caption of %s: the reviewed facts sentence (no model caption passed)", task.segment.key)
        return out
