"""Typed records that stages exchange through the shared state.

Every record is keyed by (recording, segment key). Segment keys are stable strings
("seg_00012") assigned by the segment table; speaker-level records use the key
``speaker:<raw speaker label>`` and recording-level ones the key ``recording``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from dataclasses import field as dataclass_field
from enum import StrEnum
from typing import Any

from .schema import Value, typed_value

RECORDING_KEY = "recording"


def speaker_key(speaker: str) -> str:
    return f"speaker:{speaker}"


def segment_key(index: int) -> str:
    return f"seg_{index:05d}"


@dataclass(frozen=True)
class Word:
    """A word (English) or character (Chinese) with times in seconds."""

    text: str
    start: float
    end: float
    probability: float = 1.0


@dataclass
class Turn:
    """A speaker-homogeneous interval from diarization (seconds)."""

    start: float
    end: float
    speaker: str
    overlap: bool = False
    overlap_s: float = 0.0  # seconds of it where another voice talks too


@dataclass
class Segment:
    """A canonical segment of the segment table (times in seconds)."""

    key: str
    start: float
    end: float
    speaker: str
    text: str = ""
    language: str = ""
    language_probability: float = 0.0
    words: list[Word] = dataclass_field(default_factory=list)
    source: str = "pipeline"  # "pipeline" or "reference" (fixed timeline)
    overlap_s: float = 0.0  # seconds of it where another voice talks too (diarization)
    # Whisper's statistics of the decoded pieces behind the words (frontend/transcribe.py);
    # None where no ASR ran on the segment (a reference timeline, a reviewer's segment).
    avg_logprob: float | None = None
    no_speech_prob: float | None = None
    # The unit mean of the diarizer's CAM++ window vectors of this speaker that lie inside the
    # segment (frontend/diarize.SpeakerWindows): the gender vote reads it instead of embedding the
    # segment again (priors/gender.py). None where no window lies inside or no diarizer ran.
    voice: list[float] | None = None

    @property
    def duration(self) -> float:
        return max(0.0, self.end - self.start)

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["words"] = [asdict(w) for w in self.words]
        return d

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Segment:
        d = dict(d)
        d["words"] = [Word(**w) for w in d.get("words", [])]
        return cls(**d)


@dataclass
class Evidence:
    """One prior-evidence value attached to a segment, speaker or recording key.

    ``reliability`` in [0, 1] says how far the extractor trusts the value on this input
    (e.g. pitch on a mostly unvoiced segment is unreliable).
    """

    key: str
    name: str
    value: Any
    unit: str = ""
    extractor: str = ""
    model: str = ""
    version: str = ""
    reliability: float = 1.0


@dataclass
class Contract:
    """The Planning Agent's contract for one segment and field."""

    key: str
    field: str
    objective: str
    value_format: str
    admissible_evidence: list[str]
    priority: list[str]
    context_scope: list[str]
    conflict_rule: str
    context: dict[str, Any] = dataclass_field(default_factory=dict)

    def admits(self, name: str) -> bool:
        """Whether this contract lets its field use the evidence called ``name``.

        The one admission rule both backends and the context builder apply: an admissible entry
        is an evidence name or a prefix ending in "." ("pitch." admits every pitch statistic). A
        speaker aggregate ("speaker.<name>") also needs the speaker_history scope, a recording
        statistic ("recording.<name>") the recording scope.
        """
        for prefix, scope in (("speaker.", "speaker_history"), ("recording.", "recording")):
            if name.startswith(prefix):
                if scope not in self.context_scope:
                    return False
                name = name[len(prefix) :]
                break
        return any(name == p or (p.endswith(".") and name.startswith(p)) for p in self.admissible_evidence)


class Status(StrEnum):
    """How a prediction came out: a value, a value the labeler abstains on, or none (failed)."""

    OK = "ok"
    ABSTAIN = "abstain"
    FAILED = "failed"


@dataclass
class Prediction:
    """A labeled value for one segment and field in one review round."""

    key: str
    field: str
    value: Value | None
    confidence: float
    evidence: list[str]
    round: int = 0
    backend: str = ""
    status: Status = Status.OK
    error: str = ""
    rationale: str = ""

    def __post_init__(self) -> None:
        self.status = Status(self.status)  # read back from the state as a plain string
        self.value = typed_value(self.value, self.field)  # a typed value comes back from the state as JSON


@dataclass
class Verdict:
    """The Review Agent's decision on one prediction."""

    key: str
    field: str
    round: int
    accepted: bool
    reason: str = ""
    request: str = ""  # the field-specific revision request when not accepted
    # The value the reviewer read from the evidence (in the form of Prediction.value), or None:
    # a relabel takes it as it is, never parsed back out of the request's words.
    suggested: Value | None = None

    def __post_init__(self) -> None:
        self.suggested = typed_value(self.suggested, self.field)


@dataclass(frozen=True)
class Anchor:
    """The machine segment a human decision was made on: its span (seconds), raw speaker and
    transcript. Keys are positions in the segment table, so after a rerun the decision follows
    this span and speaker, not the key (``corrections.place_decisions``)."""

    start: float
    end: float
    speaker: str
    text: str = ""


@dataclass
class Decision:
    """A human correction of one segment's field, transcript, speaker or boundary.

    Decisions are appended, never updated: the latest one per (key, field) is in force and
    the earlier ones stay as the audit trail. ``old`` and ``new`` are output-JSON values
    (strings, or integer milliseconds for a boundary; a raw speaker label for ``speaker``).
    ``key`` is the segment it was made on; ``anchor`` (None for decisions recorded before
    anchors existed) that segment's span, speaker and text then.
    """

    id: int
    key: str
    field: str
    old: Any
    new: Any
    who: str
    at: float
    note: str = ""
    anchor: Anchor | None = None


@dataclass
class VoiceDecision:
    """A human correction of the corpus voice registry (OUT/speakers.jsonl), appended, never updated.

    ``action`` "merge": ``voice`` absorbs the voice named in ``data["from"]``; ``data["members"]``
    are both voices' members ("<rec>:<speaker_id>") then, so the merge holds when the registry is
    clustered again. "split": ``data["member"]`` leaves its voice and becomes voice ``voice``.
    """

    id: int
    action: str
    voice: str
    data: dict[str, Any]
    who: str
    at: float
    note: str = ""
