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
# The composed fields each model writes (from the reviewed facts as one sentence, agents/facts.py);
# the rules write the rest. Measured on the bundled example (docs/agents-llm.md): the 0.5B's
# contextual inferences quoted the transcript or the other speaker's turn for 8 of 8 turns.
LOCAL_COMPOSE_KEYS: dict[str, tuple[str, ...]] = {"0.5b": ("caption",), "1.5b": ("caption", "contextual_inference")}
# The models whose captions must begin with the facts sentence's lead words (OpenAIOptions.caption_lead):
# the 1.5B put the speaker first whatever the order; the 0.5B follows the order, and made to begin
# with the description's words it copied the rest of it (7 of 8 captions fell back; docs/agents-llm.md).
LOCAL_CAPTION_LEAD = ("1.5b",)
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
                caption_lead=self.server.model.name in LOCAL_CAPTION_LEAD,
                compose_keys=LOCAL_COMPOSE_KEYS.get(self.server.model.name, ("caption", "contextual_inference")),
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
