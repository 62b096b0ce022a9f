"""Prior evidence extractors (stage 7): acoustic statistics, speaker traits, scene, emotion.

``extract_priors`` is imported lazily so that ``priors.names`` stays
cheap to import from config and agents.
"""

from __future__ import annotations

from typing import Any

__all__ = ["extract_priors"]


def __getattr__(name: str) -> Any:
    if name == "extract_priors":
        from speechannotator.priors.extract import extract_priors

        return extract_priors
    raise AttributeError(name)
