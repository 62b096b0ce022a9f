"""Stage order, resume and ablations: one recording through the twelve stages.

Stages read and write the shared state; none calls another. Each stage commits its
outputs together with its completion mark, so a killed run resumes at the first stage
that is not marked done, and a recording whose output is complete is skipped.
"""

from __future__ import annotations

import hashlib
import logging
import os
import sqlite3
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from .audio import Audio, AudioError, fingerprint, load_audio
from .config import Config
from .frontend.reference import ReferenceError
from .locks import RecordingBusy, RecordingLock
from .output.files import OutputError, check_output_name, prepare_out_dir, state_error, write_json_atomic
from .records import Segment
from .schema import SegmentRecord, has_cjk
from .state import StateStore

log = logging.getLogger("speechannotator")

STATE_FILE = "state.sqlite"
TIMELINE_STAGES = ("timeline",)
ANNOTATION_STAGES = ("priors", "plan", "label", "review", "finalize")


@dataclass
class AnnotationResult:
    path: Path
    rec: str
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


def label_language(segments: list[Segment], forced: str = "auto") -> str:
    """Chinese labels when most speech (by duration) is Chinese, English otherwise."""
    if forced in ("zh", "en"):
        return forced
    weight: Counter = Counter()
    for s in segments:
        lang = s.language or ("zh" if has_cjk(s.text) else "en")
        weight["zh" if lang in ("zh", "yue") else "other"] += s.duration
    return "zh" if weight["zh"] > weight["other"] else "en"


def owner_conflict(store: StateStore, rec: str, path: Path, fp: str) -> str | None:
    """Outputs are named by stem: refuse a different file whose output an earlier run wrote."""
    known = store.recording(rec)
    if known is None or known["fingerprint"] == fp:
        return None
    if os.path.abspath(known["path"]) == os.path.abspath(path):
        return None  # the same file with new content or settings: annotate it afresh
    return (f"{rec}.json in this output folder was written from {known['path']}, another file with the same "
            f"name; rename this input or use another -o")


class Annotator:
    """Annotates recordings into `out_dir`, keeping the shared state in out_dir/state.sqlite."""

    def __init__(self, out_dir: str | Path, config: Config | None = None, *, backend=None):
        self.config = config or Config()
        self.out_dir = Path(out_dir)
        prepare_out_dir(self.out_dir)
        try:
            self.store = StateStore(self.out_dir / STATE_FILE)
        except sqlite3.Error as exc:
            raise state_error(exc, self.out_dir / STATE_FILE) from exc
        self._backend = backend

    @property
    def backend(self):
        if self._backend is None:
            from .agents.backends import make_backend

            self._backend = make_backend(self.config)
        return self._backend

    def close(self) -> None:
        self.store.close()

    # -- stages ------------------------------------------------------------------------

    def _timeline(self, rec: str, audio: Audio, timeline: Path | None, on_stage: Callable[[str], None], timings: dict[str, float]) -> None:
        """Stages 3-6: a reference timeline (fixed-timeline setting) or recovery from the audio."""
        cfg = self.config
        info: dict = {}
        if timeline is not None:
            from .frontend.reference import load_reference_timeline

            segments = load_reference_timeline(timeline, rec, duration=audio.duration)
            for s in segments:
                s.language = "zh" if has_cjk(s.text) else (cfg.asr.language or "en")
                s.language_probability = 1.0
            info.update(source=str(timeline), num_speakers=len({s.speaker for s in segments}))
        else:
            from .frontend.timeline import recover_timeline

            result = recover_timeline(audio.samples, audio.sample_rate, cfg, on_stage)
            segments = result.segments
            timings.update(result.timings)  # vad, diarize, transcribe, refine
            info.update(result.info, timings=result.timings)
        with self.store.transaction() as c:
            self.store.write_segments(c, rec, segments)
            self.store.mark_stage(c, rec, "timeline", info)

    def _priors(self, rec: str, audio: Audio, timings: dict[str, float]) -> None:
        from .priors import extract_priors

        segments = self.store.segments(rec)
        evidence = []
        if self.config.agents.priors and segments:
            enhanced = None
            if self.config.priors.enhance:
                from .frontend.enhance import enhance

                t = time.perf_counter()
                enhanced = enhance(audio, self.config)
                timings["enhance"] = time.perf_counter() - t
            t = time.perf_counter()
            evidence = extract_priors(audio, segments, enhanced=enhanced, config=self.config)
            timings["extract_priors"] = time.perf_counter() - t
        with self.store.transaction() as c:
            self.store.write_evidence(c, rec, evidence)
            self.store.mark_stage(c, rec, "priors", {"count": len(evidence), "ablated": not self.config.agents.priors})

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
    ) -> AnnotationResult:
        """Annotate one recording; errors are returned in the result, never raised."""
        from . import agents
        from .output.finalize import StageInputError, finalize

        path = Path(path)
        rec = rec or path.stem
        result = AnnotationResult(path=path, rec=rec)
        out_path = self.out_dir / f"{rec}.json"
        notify = on_stage or (lambda stage: None)
        timeline_path = Path(timeline) if timeline is not None else None
        t0 = time.perf_counter()
        lock = RecordingLock(self.out_dir, rec)
        try:
            check_output_name(out_path)
            lock.acquire()  # before anything reads or resets the recording's state
            notify("load")
            audio = load_audio(path)
            result.duration = audio.duration
            result.timings["load"] = time.perf_counter() - t0
            fp = self._fingerprint(audio, timeline_path)
            conflict = owner_conflict(self.store, rec, path, fp)
            if conflict:
                raise OutputError(conflict)
            self.store.begin_recording(rec, os.path.abspath(path), fp, audio.duration)
            status = self.store.status(rec)
            stored = self.store.records(rec)
            if status and status[0] == "complete" and out_path.is_file() and stored:
                result.skipped = True
                result.output = out_path
                result.records = [SegmentRecord.model_validate(d) for _, d in stored]
                self._count_failed(rec, result)
                return result
            lang = None
            steps: list[tuple[str, Callable[[], None]]] = [
                ("timeline", lambda: self._timeline(rec, audio, timeline_path, notify, result.timings)),
                ("priors", lambda: self._priors(rec, audio, result.timings)),
                ("plan", lambda: agents.plan(self.store, rec, self.config, lang)),
                ("label", lambda: agents.label(self.store, rec, self.backend, self.config, audio)),
                ("review", lambda: agents.review(self.store, rec, self.backend, self.config, audio)),
            ]
            for stage, run in steps:
                if stage == "plan":
                    lang = label_language(self.store.segments(rec), self.config.labels)
                if self.store.stage_done(rec, stage):
                    continue
                notify(stage)
                t = time.perf_counter()
                run()
                result.timings[stage] = time.perf_counter() - t
            notify("finalize")
            t = time.perf_counter()
            try:
                records = finalize(self.store, rec, self.backend, self.config, lang)
            except StageInputError:
                self.store.clear_stages(rec, ("plan", "label", "review", "finalize"))
                raise
            write_json_atomic(out_path, records)
            result.timings["finalize"] = time.perf_counter() - t
            self.store.set_status(rec, "complete")
            result.records, result.output = records, out_path
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
