"""Agent backends: `rules` (deterministic, the CPU default) and `openai` (any OpenAI-compatible endpoint)."""

from __future__ import annotations

from ...config import Config
from .base import Backend, ComposeTask, LabelTask, ReviewTask

__all__ = ["Backend", "ComposeTask", "LabelTask", "ReviewTask", "make_backend"]


def make_backend(config: Config) -> Backend:
    if config.agents.backend == "openai":
        from .openai_backend import OpenAIBackend

        if not config.labeler.url or not config.labeler.model:
            raise ValueError("the openai backend needs a labeler url and model (--llm-url, --llm-model)")
        reviewer = config.reviewer if config.reviewer.url and config.reviewer.model else None
        return OpenAIBackend(config.labeler, reviewer)
    from .rules import RulesBackend

    return RulesBackend()
