"""The `local` backend: the openai backend on the project's own llama.cpp server.

The server (servers/local_llm.py) starts with the backend and stops with close(); the
Annotator closes its backend when it closes, also after an error or Ctrl-C.
"""

from __future__ import annotations

import logging
from dataclasses import replace

from ...config import Config
from ...servers.local_llm import LocalLLMServer
from .backend import OpenAIBackend, options_from

log = logging.getLogger(__name__)


class LocalBackend(OpenAIBackend):
    name = "local"

    def __init__(self, config: Config, *, server: LocalLLMServer | None = None) -> None:
        # A caller-owned server (tests share one per session) is left running on close().
        self._owns_server = server is None
        self.server = server or LocalLLMServer(config.local_llm)
        self.server.start()
        try:
            endpoint = self.server.endpoint(config.labeler)
            # Two evidence names per field: the citations were most of a small model's output tokens.
            # The caption and the contextual inference stay the rules' (OpenAIOptions.llm_caption).
            options = replace(options_from(endpoint), max_cited=2)
            super().__init__(endpoint, None, options=options)
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        st = self.stats.as_dict() if getattr(self, "stats", None) is not None else {}
        if st.get("requests"):  # the run's LLM cost, for the measurements in docs/agents-llm.md
            keep = "label_calls compose_calls requests retries text_rejections prompt_tokens"
            keep += " cached_tokens completion_tokens prompt_ms predicted_ms"
            log.info("local LLM usage: %s", ", ".join(f"{k}={st[k]}" for k in keep.split()))
        if self._owns_server:
            self.server.close()
