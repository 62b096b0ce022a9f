"""The three agents (planning, labeling, review loop); backends live in agents.backends.

Entry points the pipeline calls, each writing its outputs and its stage mark in one
transaction: ``plan`` (stage 8), ``label`` (stage 9), ``review`` (stage 10, bounded loop).
Note: the name ``review`` here is the loop's entry point; the per-task helpers are in the
module ``speechannotator.agents.review`` (import them with ``from ... import``).
"""

from .labeling import label
from .loop import review
from .planning import plan

__all__ = ["plan", "label", "review"]
