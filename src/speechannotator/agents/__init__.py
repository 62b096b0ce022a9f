"""The three agents (planning, labeling, review loop) and their backends (agents.rules, agents.openai).

Entry points the pipeline calls, each writing its outputs and its stage mark in one
transaction: ``plan`` (stage 8), ``label`` (stage 9), ``review`` (stage 10, bounded loop).
Note: the name ``review`` here is the loop's entry point; the per-task helpers are in the
module ``speechannotator.agents.review`` (import them with ``from ... import``).
"""

from ..config import Config
from .backend import Backend
from .labeling import label
from .loop import review
from .planning import plan

__all__ = ["plan", "label", "review", "make_backend"]


def make_backend(config: Config) -> Backend:
    """The backend ``config.agents.backend`` names (built lazily: the openai one needs its SDK)."""
    if config.agents.backend == "openai":
        from .openai import OpenAIBackend
        from .rules import RulesBackend

        if not config.labeler.url or not config.labeler.model:
            raise ValueError("the openai backend needs a labeler url and model (--llm-url, --llm-model)")
        # The rules backend composes caption / contextual inference when a compose call fails.
        return OpenAIBackend.from_config(config, fallback=RulesBackend(config.calibration))
    from .rules import RulesBackend

    return RulesBackend(config.calibration)
