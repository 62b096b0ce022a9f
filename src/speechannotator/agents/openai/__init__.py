"""The `openai` backend: the agents' reasoning on any OpenAI-compatible chat endpoint."""

from .backend import OpenAIBackend, OpenAIOptions

__all__ = ["OpenAIBackend", "OpenAIOptions"]
