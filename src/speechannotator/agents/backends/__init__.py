"""Agent backends: `rules` (deterministic, the CPU default) and `openai` (any OpenAI-compatible endpoint)."""

from __future__ import annotations

from ...config import Config
from ...schema import LABELED_FIELDS
from .base import Backend, ComposeTask, LabelTask, ReviewTask

__all__ = ["LOCAL_LLM_FIELDS", "Backend", "ComposeTask", "LabelTask", "ReviewTask", "llm_fields", "make_backend"]


# What the shipped 0.5B/1.5B models think about by default under `--llm local`: measured in
# docs/agents-llm.md (the acoustic fields stay with the rules, which read the same evidence better).
LOCAL_LLM_FIELDS: tuple[str, ...] = ("emotion", "tone")


def llm_fields(config: Config) -> list[str]:
    fields = config.agents.llm_fields
    if fields is None:
        fields = list(LOCAL_LLM_FIELDS) if config.agents.backend == "local" else list(LABELED_FIELDS)
    unknown = [f for f in fields if f not in LABELED_FIELDS]
    if unknown:
        raise ValueError(f"agents.llm_fields: not labeled fields: {', '.join(unknown)}")
    return list(fields)


def make_backend(config: Config) -> Backend:
    """The configured backend; a `local` one owns a llama.cpp server: call its close()."""
    from .rules import RulesBackend

    if config.agents.backend == "rules":
        return RulesBackend()
    fields = llm_fields(config)  # checked before a server starts
    if config.agents.backend == "local":
        from .local_backend import LocalBackend

        llm = LocalBackend(config, fallback=RulesBackend())
    else:
        from .openai_backend import OpenAIBackend

        if not config.labeler.url or not config.labeler.model:
            raise ValueError("the openai backend needs a labeler url and model (--llm-url, --llm-model)")
        # The rules backend composes caption / contextual inference when a compose call fails.
        llm = OpenAIBackend.from_config(config, fallback=RulesBackend())
    if set(fields) == set(LABELED_FIELDS) and not config.agents.llm_review and config.agents.backend != "local":
        return llm
    from .routed import RoutedBackend

    return RoutedBackend(llm, RulesBackend(), fields, llm_review=config.agents.llm_review,
                         compact=config.agents.backend == "local")
