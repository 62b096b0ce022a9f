"""Annotate one corpus item with an Annotator: the unit of work both engines run."""

from __future__ import annotations

import logging
import os
import resource
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from typing import Any

from ..audio import Audio
from ..config import Config
from ..corpus.item import CorpusItem, load_item_audio
from ..pipeline import Annotator

log = logging.getLogger("speechannotator.engine")

# A recording that decodes but holds nothing to annotate: its output is an empty list, and it is not
# counted as annotated.
NO_SPEECH = "no speech found (the output is an empty list)"


def no_speech_cause(timeline_info: dict | None) -> str:
    """Why a recording's output is empty: no speech at all, or speech the ASR found no words in
    (AMI trn01: 0.5 s of quiet, far, overlapped talk), which a user may want to look at.

    >>> no_speech_cause({"asr_decoded_s": 0.49})
    'speech detected (0.5 s decoded) but no words transcribed (the output is an empty list)'
    """
    decoded = float((timeline_info or {}).get("asr_decoded_s") or 0.0)
    if decoded > 0:
        return f"speech detected ({decoded:.1f} s decoded) but no words transcribed (the output is an empty list)"
    return NO_SPEECH


def _peak_mb() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)  # Linux: KiB


@dataclass
class ItemResult:
    id: str
    # "done" (annotated now), "skipped" (already complete), "no_speech" (read, nothing to annotate) or "failed"
    status: str
    error: str = ""
    warning: str = ""  # field predictions a model could not make (written empty)
    notes: str = ""  # what reading the audio noticed (a truncated file): annotated all the same
    duration: float = 0.0  # audio seconds (0 when the audio could not be loaded)
    segments: int = 0
    timings: dict[str, float] = field(default_factory=dict)
    worker: int = 0  # the process that annotated it
    peak_mb: float = 0.0  # that process's peak resident memory so far

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> ItemResult:
        return cls(**d)


def item_config(config: Config, item: CorpusItem) -> Config:
    """What a manifest says of one recording overrides the corpus settings for it."""
    if item.num_speakers is None and item.language is None:
        return config
    update: dict[str, Any] = {}
    if item.num_speakers is not None:
        update["diarization"] = config.diarization.model_copy(update={"num_speakers": item.num_speakers})
    if item.language is not None:
        update["asr"] = config.asr.model_copy(update={"language": item.language})
    return config.model_copy(update=update)


@contextmanager
def _settings(annotator: Annotator, config: Config) -> Iterator[None]:
    # The Annotator's stages read annotator.config; swapping it keeps its loaded models and backend.
    saved = annotator.config
    annotator.config = config
    try:
        yield
    finally:
        annotator.config = saved


def annotate_item(annotator: Annotator, item: CorpusItem, on_stage: Callable[[str], None] | None = None) -> ItemResult:
    """Annotate `item` into annotator.out_dir/<id>.json; a failure is returned, never raised."""
    t0 = time.perf_counter()

    def stage(name: str) -> None:
        log.info("%s: %s", item.id, name)
        if on_stage is not None:
            on_stage(name)

    notes: list[str] = []

    def load() -> Audio:
        audio = load_item_audio(item)
        notes.extend(audio.notes)  # e.g. a truncated file: annotated, and the user is told
        return audio

    try:
        with _settings(annotator, item_config(annotator.config, item)):
            res = annotator.annotate(item.path, rec=item.id, timeline=item.timeline, on_stage=stage, load=load)
    except Exception as exc:  # the Annotator returns its errors; this guards the corpus against the rest
        log.debug("annotation of %s failed", item.id, exc_info=True)
        return ItemResult(id=item.id, status="failed", error=f"{exc.__class__.__name__}: {exc}")
    status = "failed" if not res.ok else "no_speech" if not res.records else "skipped" if res.skipped else "done"
    error = " ".join((res.error or "").split())  # one line
    if status == "no_speech":
        error = no_speech_cause(annotator.store.stage_info(item.id, "timeline"))
    timings = {k: round(v, 3) for k, v in res.timings.items()}
    timings["wall"] = round(time.perf_counter() - t0, 3)
    warn = res.failed_summary() if res.ok and res.failed_fields else ""
    return ItemResult(
        id=item.id,
        status=status,
        error=error,
        warning=warn,
        notes="; ".join(notes),
        duration=round(res.duration, 3),
        segments=len(res.records),
        timings=timings,
        worker=os.getpid(),
        peak_mb=_peak_mb(),
    )
