"""Agent backends: `rules` (deterministic, the CPU default) and `openai` (any OpenAI-compatible endpoint)."""

from __future__ import annotations

from ...config import Config
from .base import Backend, ComposeTask, LabelTask, ReviewTask

__all__ = ["Backend", "ComposeTask", "LabelTask", "ReviewTask", "make_backend"]


def make_backend(config: Config) -> Backend:
    """The configured backend; a `local` one owns a llama.cpp server: call its close()."""
    if config.agents.backend == "local":
        from .local_backend import LocalBackend
        from .rules import RulesBackend

        return LocalBackend(config, fallback=RulesBackend())
    if config.agents.backend == "openai":
        from .openai_backend import OpenAIBackend
        from .rules import RulesBackend

        if not config.labeler.url or not config.labeler.model:
            raise ValueError("the openai backend needs a labeler url and model (--llm-url, --llm-model)")
        # The rules backend composes caption / contextual inference when a compose call fails.
        return OpenAIBackend.from_config(config, fallback=RulesBackend())
    from .rules import RulesBackend

    return RulesBackend()
