"""The three agents (planning, labeling, review loop) and their backends (agents.rules, agents.openai).

Entry points the pipeline calls, each writing its outputs and its stage mark in one
transaction: ``plan`` (stage 8), ``label`` (stage 9), ``review`` (stage 10, bounded loop).
Note: the name ``review`` here is the loop's entry point; the per-task helpers are in the
module ``speechannotator.agents.review`` (import them with ``from ... import``).
"""

from ..config import Config
from ..schema import LABELED_FIELDS
from .backend import Backend
from .labeling import label
from .loop import review
from .planning import plan

__all__ = ["LOCAL_LLM_FIELDS", "plan", "label", "review", "llm_fields", "make_backend"]


# What the shipped 0.5B/1.5B models think about by default under `--llm local`: measured in
# docs/agents-llm.md (the acoustic fields stay with the rules, which read the same evidence better;
# tone too: the 0.5B answered "neutral", the 1.5B the transcript's content words or emotion's format).
LOCAL_LLM_FIELDS: tuple[str, ...] = ("emotion",)


def llm_fields(config: Config) -> list[str]:
    """The labeled fields the LLM answers (the rules label the rest)."""
    fields = config.agents.llm_fields
    if fields is None:
        fields = list(LOCAL_LLM_FIELDS) if config.agents.backend == "local" else list(LABELED_FIELDS)
    unknown = [f for f in fields if f not in LABELED_FIELDS]
    if unknown:
        raise ValueError(f"agents.llm_fields: not labeled fields: {', '.join(unknown)}")
    return list(fields)


def make_backend(config: Config) -> Backend:
    """The backend ``config.agents.backend`` names (built lazily: the openai one needs its SDK).
    A `local` one owns a llama.cpp server: call its close()."""
    from .rules import RulesBackend

    if config.agents.backend == "rules":
        return RulesBackend(config.calibration)
    from .openai import OpenAIBackend

    fields = llm_fields(config)  # checked before a server starts
    if config.agents.backend == "local":
        from .openai.local import LocalBackend

        if config.agents.llm_caption:
            raise ValueError("agents.llm_caption is for an openai endpoint: the local models' captions were worse")
        llm: OpenAIBackend = LocalBackend(config)
    else:
        if not config.labeler.url or not config.labeler.model:
            raise ValueError("the openai backend needs a labeler url and model (--llm-url, --llm-model)")
        llm = OpenAIBackend.from_config(config)
    from .openai.routed import RoutedBackend

    # The review is always the rules' evidence checks, whoever labeled (docs/agents-llm.md).
    return RoutedBackend(llm, RulesBackend(config.calibration), fields, compact=config.agents.backend == "local")
