"""The `local` backend: the openai backend on the project's own llama.cpp server.

The server (servers/local_llm.py) starts with the backend and stops with close(); the
Annotator closes its backend when it closes, also after an error or Ctrl-C.
"""

from __future__ import annotations

from dataclasses import replace

from ...config import Config
from ...servers.local_llm import LocalLLMServer
from ..backend import Backend
from .backend import OpenAIBackend, options_from


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
            options = replace(options_from(endpoint), level_choices=True, max_cited=2, cache_slots=slots)
            super().__init__(endpoint, None, options=options, fallback=fallback)
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        if self._owns_server:
            self.server.close()
