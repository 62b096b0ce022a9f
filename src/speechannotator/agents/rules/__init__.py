"""The `rules` backend: deterministic, evidence-grounded reasoning (the CPU default, no model)."""

from .backend import RulesBackend

__all__ = ["RulesBackend"]
