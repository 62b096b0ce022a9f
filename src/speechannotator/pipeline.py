"""Stage order, resume and ablations: one recording through the twelve stages.

``STAGES`` is the ordered stage table; each stage is a function of a ``StageContext``.
Stages read and write the shared state; none calls another. Each marked stage commits its
outputs together with its completion mark, so a killed run resumes at the first stage
that is not marked done, and a recording whose output is complete is skipped.
"""

from __future__ import annotations

import hashlib
import logging
import os
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import agents
from .audio import Audio, AudioError, fingerprint, load_audio
from .config import Config
from .corrections import reviewed_records
from .frontend.reference import ReferenceError
from .heap import between_stages, configure, large_buffers_mapped, release
from .locks import RecordingBusy, RecordingLock
from .output.files import OutputError, check_output_name, prepare_out_dir, state_error
from .output.finalize import StageInputError, finalize
from .output.write import output_path, stored_records, write
from .records import Evidence
from .schema import SegmentRecord, choose_label_language, has_cjk
from .stages import StageContext, StageName

if TYPE_CHECKING:
    from .agents.backend import Backend
from .state import STATE_FILE, StateStore

log = logging.getLogger("speechannotator")


@dataclass
class AnnotationResult:
    """One recording's outcome, with the settings it ran with (as a transcription result carries its options)."""

    path: Path
    rec: str
    config: Config
    output: Path | None = None
    records: list[SegmentRecord] = field(default_factory=list)
    skipped: bool = False
    error: str | None = None
    duration: float = 0.0
    timings: dict[str, float] = field(default_factory=dict)
    failed_fields: int = 0  # field predictions the backend could not make (written as empty)
    total_fields: int = 0
    first_failure: str = ""

    @property
    def ok(self) -> bool:
        return self.error is None

    def failed_summary(self) -> str:
        cause = f": {self.first_failure}" if self.first_failure else ""
        return f"{self.failed_fields} of {self.total_fields} field predictions failed and were left empty{cause}"


# -- stage functions the agents and the output package do not already provide --------------


def resolve_local_model(config: Config) -> Config:
    """`local_llm.model = "auto"` becomes the best installed model before anything is
    fingerprinted, so a resume never mixes answers of two models."""
    if config.agents.backend != "local" or config.local_llm.model != "auto":
        return config
    from .assets import resolve_local_llm

    name = resolve_local_llm("auto").name
    return config.model_copy(update={"local_llm": config.local_llm.model_copy(update={"model": name})})


def owner_conflict(store: StateStore, rec: str, path: Path, fp: str) -> str | None:
    """Outputs are named by stem: refuse a different file whose output an earlier run wrote."""
    known = store.recording(rec)
    if known is None or known["fingerprint"] == fp:
        return None
    if os.path.realpath(known["path"]) == os.path.realpath(path):
        return None  # the same file with new content or settings: annotate it afresh
    return (
        f"{rec}.json in this output folder was written from {known['path']}, another file with the same "
        f"name; rename this input or use another -o"
    )


def run_timeline(ctx: StageContext) -> None:
    """Stages 3-6: a reference timeline (fixed-timeline setting) or recovery from the audio;
    the label language is chosen here, once, from the segment table."""
    cfg, audio = ctx.config, ctx.require_audio()
    info: dict[str, Any] = {}
    if ctx.timeline is not None:
        from .frontend.reference import load_reference_timeline

        segments = load_reference_timeline(ctx.timeline, ctx.rec, duration=audio.duration)
        for s in segments:
            s.language = "zh" if has_cjk(s.text) else (cfg.asr.language or "en")
            s.language_probability = 1.0
        info.update(source=str(ctx.timeline), num_speakers=len({s.speaker for s in segments}))
    else:
        from .frontend.timeline import recover_timeline

        result = recover_timeline(audio.samples, audio.sample_rate, cfg, ctx.on_stage)
        segments = result.segments
        ctx.timings.update(result.timings)  # vad, diarize, transcribe, refine
        info.update(result.info, timings=result.timings)
    with ctx.store.transaction() as c:
        ctx.store.write_segments(c, ctx.rec, segments)
        ctx.store.set_label_language(c, ctx.rec, choose_label_language(segments, cfg.labels))
        ctx.store.mark_stage(c, ctx.rec, StageName.TIMELINE, info)


def run_priors(ctx: StageContext) -> None:
    """Stages 2 and 7 on the speech spans: enhancement feeds the acoustic statistics of the extractors."""
    from .priors import extract_priors
    from .priors.spans import PriorsWork, enhance_speech

    store, rec, cfg = ctx.store, ctx.rec, ctx.config
    segments = store.segments(rec)
    evidence: list[Evidence] = []
    work = PriorsWork()
    if cfg.agents.priors and segments:
        audio = ctx.require_audio()
        enhanced = None
        with large_buffers_mapped():  # many models' buffers of many sizes: one heap kept them as holes
            if cfg.priors.enhance:
                t = time.perf_counter()
                enhanced = enhance_speech(audio, [(s.start, s.end) for s in segments], cfg.priors, work)
                ctx.timings["enhance"] = time.perf_counter() - t
                between_stages()
            t = time.perf_counter()
            evidence = extract_priors(
                audio, segments, enhanced=enhanced, settings=cfg.priors, calibration=cfg.calibration, work=work
            )
            ctx.timings["extract_priors"] = time.perf_counter() - t
    info = {
        "count": len(evidence),
        "ablated": not cfg.agents.priors,
        "speech_spans_s": round(work.spans_s, 3),
        "enhanced_s": round(work.enhanced_s, 3),
        "gated_s": round(work.gated_s, 3),
        "restored_s": round(work.restored_s, 3),
        "aed_s": round(work.aed_s, 3),
    }
    with store.transaction() as c:
        store.write_evidence(c, rec, evidence)
        store.mark_stage(c, rec, StageName.PRIORS, info)


@dataclass(frozen=True)
class Stage:
    """One row of the stage table: its name in the state, what runs it, the paper's stages it covers."""

    name: StageName
    run: Callable[[StageContext], object]
    paper: tuple[int, ...]
    marked: bool = True  # a done mark in the state lets a resumed run skip it


# Stage 1 (load) happens before the table: the audio's fingerprint decides what can be resumed.
STAGES: tuple[Stage, ...] = (
    Stage(StageName.TIMELINE, run_timeline, (3, 4, 5, 6)),
    Stage(StageName.PRIORS, run_priors, (2, 7)),
    Stage(StageName.PLAN, agents.plan, (8,)),
    Stage(StageName.LABEL, agents.label, (9,)),
    Stage(StageName.REVIEW, agents.review, (10,)),
    Stage(StageName.FINALIZE, finalize, (11,)),
    Stage(StageName.WRITE, write, (12,), marked=False),  # the file is rewritten whenever it is missing
)


class Annotator:
    """Annotates recordings into `out_dir`, keeping the shared state in out_dir/state.sqlite."""

    def __init__(self, out_dir: str | Path, config: Config | None = None, *, backend: Backend | None = None):
        configure()  # before the models start their threads: their buffers reused, not refaulted
        self.config = resolve_local_model(config or Config())
        self.out_dir = Path(out_dir)
        prepare_out_dir(self.out_dir)
        try:
            self.store = StateStore(self.out_dir / STATE_FILE)
        except sqlite3.Error as exc:
            raise state_error(exc, self.out_dir / STATE_FILE) from exc
        self._backend = backend
        self._owns_backend = backend is None  # a caller's backend is the caller's to close

    @property
    def backend(self) -> Backend:
        if self._backend is None:
            from .agents import make_backend

            self._backend = make_backend(self.config)
        return self._backend

    def close(self) -> None:
        """Close the state and the backend (stopping a local LLM server the backend owns)."""
        release()  # the batch's freed buffers back to the system (heap.py)
        backend = self._backend
        if self._owns_backend:
            self._backend = None
        try:
            closer = getattr(backend, "close", None) if self._owns_backend else None
            if callable(closer):
                closer()
        finally:
            self.store.close()

    # -- driver -----------------------------------------------------------------------

    def _fingerprint(self, audio: Audio, timeline: Path | None) -> str:
        h = hashlib.sha1(fingerprint(audio).encode())
        h.update(self.config.fingerprint_fields().encode())
        if timeline is not None:
            h.update(Path(timeline).read_bytes())
        return h.hexdigest()[:20]

    def annotate(
        self,
        path: str | Path,
        *,
        timeline: str | Path | None = None,
        rec: str | None = None,
        on_stage: Callable[[str], None] | None = None,
        load: Callable[[], Audio] | None = None,
    ) -> AnnotationResult:
        """Annotate one recording; errors are returned in the result, never raised.

        `rec` (default: the file stem) names the output, OUT/<rec>.json, and may hold folders;
        `load` replaces reading `path` (a corpus item stored in a dataset or cut from a longer file).
        """
        path = Path(path)
        rec = rec or path.stem
        result = AnnotationResult(path=path, rec=rec, config=self.config)
        out_path = output_path(self.out_dir, rec)
        notify = on_stage or (lambda stage: None)
        t0 = time.perf_counter()
        lock = RecordingLock(self.out_dir, rec)
        try:
            check_output_name(out_path)
            lock.acquire()  # before anything reads or resets the recording's state
            notify("load")
            audio = load() if load is not None else load_audio(path)
            result.duration = audio.duration
            result.timings["load"] = time.perf_counter() - t0
            timeline_path = Path(timeline) if timeline is not None else None
            fp = self._fingerprint(audio, timeline_path)
            conflict = owner_conflict(self.store, rec, path, fp)
            if conflict:
                raise OutputError(conflict)
            self.store.begin_recording(rec, str(path.resolve()), fp, audio.duration)  # the viewer finds it later
            status = self.store.status(rec)
            stored = self.store.records(rec)
            if status and status[0] == "complete" and out_path.is_file() and stored:
                result.skipped = True
                result.output = out_path
                result.records = reviewed_records(self.store, rec)
                self._count_failed(rec, result)
                return result
            ctx = StageContext(
                self.store,
                rec,
                self.config,
                audio=audio,
                make_backend=lambda: self.backend,
                timeline=timeline_path,
                output=out_path,
                on_stage=notify,
                timings=result.timings,
            )
            for stage in STAGES:
                if stage.marked and self.store.stage_done(rec, stage.name):
                    continue
                notify(stage.name)
                t = time.perf_counter()
                try:
                    stage.run(ctx)
                except StageInputError:  # e.g. another writer reset them: redo the agent stages next time
                    self.store.clear_stages(
                        rec, (StageName.PLAN, StageName.LABEL, StageName.REVIEW, StageName.FINALIZE)
                    )
                    raise
                result.timings[stage.name] = time.perf_counter() - t
                between_stages()  # the stage's freed buffers: kept for the next stage, or back (heap.py)
            self.store.set_status(rec, "complete")
            result.records, result.output = stored_records(ctx), out_path
            self._count_failed(rec, result)
        except (AudioError, OutputError, RecordingBusy, ReferenceError, StageInputError) as exc:
            result.error = str(exc)  # the cause in one line; the recording's state is left as it was
        except sqlite3.Error as exc:
            result.error = str(state_error(exc, self.store.path))
        except Exception as exc:  # one bad recording must not stop a batch
            log.debug("annotation of %s failed", path, exc_info=True)
            result.error = f"{exc.__class__.__name__}: {exc}"
            try:
                self.store.set_status(rec, "failed", result.error)
            except Exception:
                pass
        finally:
            lock.release()
        result.timings["total"] = time.perf_counter() - t0
        return result

    def _count_failed(self, rec: str, result: AnnotationResult) -> None:
        latest = self.store.predictions(rec)
        failed = [p for p in latest.values() if p.status == "failed"]
        result.failed_fields, result.total_fields = len(failed), len(latest)
        result.first_failure = (failed[0].error or "")[:160] if failed else ""
