"""Stage order, resume and ablations: one recording through the twelve stages.

``STAGES`` is the ordered stage table; each stage is a function of a ``StageContext``.
Stages read and write the shared state; none calls another. Each marked stage commits its
outputs together with its completion mark, so a killed run resumes at the first stage
that is not marked done, and a recording whose output is complete is skipped.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from . import agents
from .audio import Audio, AudioError, fingerprint, load_audio
from .config import Config
from .corrections import reviewed_records
from .output.finalize import finalize
from .output.write import output_path, stored_records, write
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

    @property
    def ok(self) -> bool:
        return self.error is None


# -- stage functions the agents and the output package do not already provide --------------


def run_timeline(ctx: StageContext) -> None:
    """Stages 3-6: a reference timeline (fixed-timeline setting) or recovery from the audio;
    the label language is chosen here, once, from the segment table."""
    cfg, info = ctx.config, {}
    if ctx.timeline is not None:
        from .frontend.reference import load_reference_timeline

        segments = load_reference_timeline(ctx.timeline, ctx.rec, duration=ctx.audio.duration)
        for s in segments:
            s.language = "zh" if has_cjk(s.text) else (cfg.asr.language or "en")
            s.language_probability = 1.0
        info.update(source=str(ctx.timeline), num_speakers=len({s.speaker for s in segments}))
    else:
        from .frontend.timeline import recover_timeline

        result = recover_timeline(ctx.audio.samples, ctx.audio.sample_rate, cfg, ctx.on_stage)
        segments = result.segments
        ctx.timings.update(result.timings)  # vad, diarize, transcribe, refine
        info.update(result.info, timings=result.timings)
    with ctx.store.transaction() as c:
        ctx.store.write_segments(c, ctx.rec, segments)
        ctx.store.set_label_language(c, ctx.rec, choose_label_language(segments, cfg.labels))
        ctx.store.mark_stage(c, ctx.rec, StageName.TIMELINE, info)


def run_priors(ctx: StageContext) -> None:
    """Stages 2 and 7: enhancement feeds the acoustic statistics of the prior extractors."""
    from .priors import extract_priors

    store, rec, cfg = ctx.store, ctx.rec, ctx.config
    segments = store.segments(rec)
    evidence = []
    if cfg.agents.priors and segments:
        enhanced = None
        if cfg.priors.enhance:
            from .enhance import enhance

            t = time.perf_counter()
            enhanced = enhance(ctx.audio, cfg.priors)
            ctx.timings["enhance"] = time.perf_counter() - t
        t = time.perf_counter()
        evidence = extract_priors(ctx.audio, segments, enhanced=enhanced, settings=cfg.priors,
                                  calibration=cfg.calibration)
        ctx.timings["extract_priors"] = time.perf_counter() - t
    with store.transaction() as c:
        store.write_evidence(c, rec, evidence)
        store.mark_stage(c, rec, StageName.PRIORS, {"count": len(evidence), "ablated": not cfg.agents.priors})


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
        self.config = config or Config()
        self.out_dir = Path(out_dir)
        self.out_dir.mkdir(parents=True, exist_ok=True)
        self.store = StateStore(self.out_dir / STATE_FILE)
        self._backend = backend

    @property
    def backend(self) -> Backend:
        if self._backend is None:
            from .agents import make_backend

            self._backend = make_backend(self.config)
        return self._backend

    def close(self) -> None:
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
        try:
            notify("load")
            audio = load() if load is not None else load_audio(path)
            result.duration = audio.duration
            result.timings["load"] = time.perf_counter() - t0
            timeline_path = Path(timeline) if timeline is not None else None
            fp = self._fingerprint(audio, timeline_path)
            self.store.begin_recording(rec, str(path.resolve()), fp, audio.duration)  # the viewer finds it later
            status = self.store.status(rec)
            if status and status[0] == "complete" and out_path.exists():
                result.skipped = True
                result.output = out_path
                result.records = reviewed_records(self.store, rec)
                return result
            ctx = StageContext(self.store, rec, self.config, audio=audio, make_backend=lambda: self.backend,
                               timeline=timeline_path, output=out_path, on_stage=notify, timings=result.timings)
            for stage in STAGES:
                if stage.marked and self.store.stage_done(rec, stage.name):
                    continue
                notify(stage.name)
                t = time.perf_counter()
                stage.run(ctx)
                result.timings[stage.name] = time.perf_counter() - t
            self.store.set_status(rec, "complete")
            result.records, result.output = stored_records(ctx), out_path
        except AudioError as exc:
            result.error = str(exc)
        except Exception as exc:  # one bad recording must not stop a batch
            log.debug("annotation of %s failed", path, exc_info=True)
            result.error = f"{exc.__class__.__name__}: {exc}"
            try:
                self.store.set_status(rec, "failed", result.error)
            except Exception:
                pass
        result.timings["total"] = time.perf_counter() - t0
        return result
