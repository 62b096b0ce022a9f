"""What an agent backend receives and returns.

Agents (planning, labeling, review) decide *what* is observed and written to the state; a
backend decides *how* to think about it. Agents never import a concrete backend; they
receive one. Each task covers one segment so that a model backend needs one call per
segment, and carries only the fields to (re)label, so that relabeling touches nothing else.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from ..records import Contract, Evidence, Prediction, Segment, Verdict
from ..schema import Value


@dataclass
class LabelTask:
    segment: Segment
    fields: list[str]
    contracts: dict[str, Contract]
    # Admitted evidence only: {evidence name: Evidence}; speaker-level evidence appears
    # under names prefixed "speaker." when the contract admits same-speaker history.
    evidence: dict[str, Evidence]
    # Context admitted by the contracts: e.g. {"previous": [...], "next": [...],
    # "speaker_history": {...}, "recording_summary": "..."}; empty under --no-context.
    context: dict[str, Any]
    label_language: str  # "zh" or "en"
    revision_requests: dict[str, str] = field(default_factory=dict)
    suggested: dict[str, Value] = field(default_factory=dict)  # {field: the reviewer's Verdict.suggested}
    round: int = 0
    audio_wav: bytes | None = None  # 16 kHz mono WAV bytes of the segment, for audio models
    # {field: the values a relabel may answer} where a reviewer's verdict narrowed them
    # (agents/openai/routed.py: the levels the evidence allows); empty: the field's own.
    allowed_values: dict[str, list[str]] = field(default_factory=dict)


@dataclass
class ReviewTask:
    segment: Segment
    predictions: dict[str, Prediction]
    contracts: dict[str, Contract]
    evidence: dict[str, Evidence]
    context: dict[str, Any]
    label_language: str
    round: int = 0


@dataclass
class ComposeTask:
    """Caption and contextual inference from the reviewed state."""

    segment: Segment
    values: dict[str, Value]  # reviewed values of the labeled fields, typed ones as their type
    evidence: dict[str, Evidence]
    context: dict[str, Any]
    label_language: str


@runtime_checkable
class Backend(Protocol):
    name: str

    @property
    def wants_audio(self) -> bool:
        """Whether label tasks should carry the segment's audio (``LabelTask.audio_wav``). A
        backend may turn it off during a run, e.g. when its endpoint rejects audio input."""
        ...

    def label(self, task: LabelTask) -> dict[str, Prediction]:
        """Predict every field in task.fields. Never raises for model faults: a field
        that cannot be predicted comes back with status "failed" and the error."""
        ...

    def review(self, task: ReviewTask) -> dict[str, Verdict]:
        """Accept each prediction or return a field-specific revision request."""
        ...

    def compose(self, task: ComposeTask) -> dict[str, str]:
        """Return {"caption": ..., "contextual_inference": ...}."""
        ...
