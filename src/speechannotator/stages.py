"""The names of the persisted stages and the context every stage function receives.

The ordered stage table itself lives in ``pipeline.py`` (it imports every stage); this module
sits below the agents, the front end and the output so that each of them can name its stage
mark without a string literal and without importing the pipeline.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Generic, Protocol, TypeVar

from .config import Config
from .schema import LabelLanguage
from .state import StateStore

if TYPE_CHECKING:
    from .audio import Audio  # a lower layer; imported for annotations only


class StageName(StrEnum):
    """A stage's name as written in the state's ``stages`` table (a StrEnum: it is the string)."""

    TIMELINE = "timeline"
    PRIORS = "priors"
    PLAN = "plan"
    LABEL = "label"
    REVIEW = "review"
    FINALIZE = "finalize"
    WRITE = "write"


class AgentBackend(Protocol):
    """What this layer knows of an agent backend: its name and whether it takes audio.

    The full interface (label, review, compose and their task types) is the agents' own,
    ``agents.backend.Backend``, which satisfies this protocol; the context carries the backend
    without importing the layer above it.
    """

    @property
    def name(self) -> str: ...  # read-only here: an attribute or a property satisfies it

    @property
    def wants_audio(self) -> bool: ...


B = TypeVar("B", bound=AgentBackend)


def _quiet(stage: str) -> None:
    pass


class StageContext(Generic[B]):
    """What a stage works on: one recording's state, the settings, the backend and the audio.

    Generic in the backend's type: the agent stages read ``StageContext[Backend]``. The backend
    is built on first use (``make_backend``), so that a resumed run whose agent stages are done
    never contacts a model endpoint. The label language is read from the state, where the
    timeline stage stored it once for the recording.
    """

    def __init__(
        self,
        store: StateStore,
        rec: str,
        config: Config,
        *,
        audio: Audio | None = None,
        backend: B | None = None,
        make_backend: Callable[[], B] | None = None,
        timeline: Path | None = None,
        output: Path | None = None,
        on_stage: Callable[[str], None] | None = None,
        timings: dict[str, float] | None = None,
    ):
        self.store, self.rec, self.config = store, rec, config
        self.audio = audio
        self.timeline = timeline  # a reference timeline file (fixed-timeline setting) or None
        self.output = output  # the JSON the write stage produces
        self.on_stage = on_stage or _quiet
        self.timings = timings if timings is not None else {}
        self._backend, self._make_backend = backend, make_backend

    @property
    def backend(self) -> B:
        if self._backend is None:
            if self._make_backend is None:
                raise ValueError(f"{self.rec}: this stage needs an agent backend and none was given")
            self._backend = self._make_backend()
        return self._backend

    def require_audio(self) -> Audio:
        """The recording's audio, for a stage that reads samples (the write stage runs without)."""
        if self.audio is None:
            raise ValueError(f"{self.rec}: this stage needs the recording's audio and none was given")
        return self.audio

    @property
    def label_language(self) -> LabelLanguage:
        return self.store.label_language(self.rec)
