"""The `local` backend: the openai backend on the project's own llama.cpp server.

The server (servers/local_llm.py) starts with the backend and stops with close(); the
Annotator closes its backend when it closes, also after an error or Ctrl-C.
"""

from __future__ import annotations

import logging
from dataclasses import replace

from ...config import Config
from ...servers.local_llm import LocalLLMServer
from ..backend import Backend
from .backend import OpenAIBackend, options_from

log = logging.getLogger(__name__)

# llama.cpp's DRY ("don't repeat yourself") sampler over the last 256 tokens (the prompt's end
# included): a repeat longer than 6 tokens costs 0.8 * 1.75^(length - 6) in logits; quotes and
# colons (JSON) break a sequence. With 3 tokens allowed the 0.5B wrote "AmericanEnglish" rather
# than repeat the reviewed accent's three tokens.
COMPOSE_SAMPLING = {"dry_multiplier": 0.8, "dry_base": 1.75, "dry_allowed_length": 6, "dry_penalty_last_n": 256}
# How each model writes the composed fields (OpenAIOptions; measured with benchmarks/caption_bench.py
# on the bundled example's reviewed state, docs/agents-llm.md), from the reviewed facts as one
# sentence (agents/facts.py); the rules write the fields a model does not.
# - 0.5B: the caption only: its contextual inferences quoted the transcript or the other speaker's
#   turn on 8 of 8 turns. Rewrites asked with the checker's reason fixed 0 of 4 turns; 8 seeded
#   samples of the same prompt: 5 of 8 captions its own (3 the facts sentence), none adding a word.
#   Worked examples made it copy their facts and structure (6 of 8 garbled), so they are off.
# - 1.5B: both fields. Made to begin with the facts sentence's lead words it kept the sentence's
#   frame; shown worked rewrites of other voices (agents/caption_examples.py), sampled under its
#   facts' vocabulary (agents/supported.py) and sampled 4 more times when rejected, 8 of 8 captions
#   were its own, with 8 distinct openings, and 8 of 8 contextual inferences (0 before).
LOCAL_COMPOSE_OPTIONS: dict[str, dict[str, object]] = {
    "0.5b": {"compose_keys": ("caption",), "caption_samples": 8},
    "1.5b": {
        "compose_keys": ("caption", "contextual_inference"),
        "caption_examples": True,
        "caption_vocabulary": True,
        "caption_samples": 4,
        "inference_samples": 4,
    },
}
LOCAL_COMPOSE_CHARS = 480  # 2-3 sentences; the looped answers ran to the 600-character cap


class LocalBackend(OpenAIBackend):
    name = "local"

    def __init__(
        self, config: Config, *, fallback: Backend | None = None, server: LocalLLMServer | None = None
    ) -> None:
        # A caller-owned server (tests share one per session) is left running on close().
        self._owns_server = server is None
        self.server = server or LocalLLMServer(config.local_llm)
        self.server.start()
        try:
            endpoint = self.server.endpoint(config.labeler)
            # Small models answer pitch and speed as a level phrase (OpenAIOptions.level_choices),
            # and cite two evidence names per field: the citations were most of the output tokens.
            # Each speaker keeps to one server slot when there are several ([local_llm] parallel).
            slots = config.local_llm.parallel if config.local_llm.parallel > 1 else 0
            # Compose: llama.cpp's DRY sampler penalizes extending a sequence already written, the
            # loop the 0.5B fell into; a shorter cap bounds the time a loop can still take.
            options = replace(
                options_from(endpoint),
                level_choices=True,
                max_cited=2,
                cache_slots=slots,
                compose_sampling=dict(COMPOSE_SAMPLING),
                compose_from_facts=True,
                **LOCAL_COMPOSE_OPTIONS.get(self.server.model.name, {}),
                max_compose_chars=min(options_from(endpoint).max_compose_chars, LOCAL_COMPOSE_CHARS),
            )
            super().__init__(endpoint, None, options=options, fallback=fallback)
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        st = self.stats.as_dict() if getattr(self, "stats", None) is not None else {}
        if st.get("requests"):  # the run's LLM cost, for the measurements in docs/agents-llm.md
            keep = ("label_calls", "review_calls", "compose_calls", "requests", "retries", "text_rejections")
            keep += ("prompt_tokens", "cached_tokens", "completion_tokens", "prompt_ms", "predicted_ms")
            log.info("local LLM usage: %s", ", ".join(f"{k}={st[k]}" for k in keep))
        if self._owns_server:
            self.server.close()
