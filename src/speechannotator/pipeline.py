"""Stage order, resume and ablations: one recording through the twelve stages.

Stages read and write the shared state; none calls another. Each stage commits its
outputs together with its completion mark, so a killed run resumes at the first stage
that is not marked done, and a recording whose output is complete is skipped.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from .audio import Audio, AudioError, fingerprint, load_audio
from .config import Config
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

    @property
    def ok(self) -> bool:
        return self.error is None


def label_language(segments: list[Segment], forced: str = "auto") -> str:
    """Chinese labels when most speech (by duration) is Chinese, English otherwise."""
    if forced in ("zh", "en"):
        return forced
    weight: Counter = Counter()
    for s in segments:
        lang = s.language or ("zh" if has_cjk(s.text) else "en")
        weight["zh" if lang in ("zh", "yue") else "other"] += s.duration
    return "zh" if weight["zh"] > weight["other"] else "en"


def _write_json_atomic(path: Path, records: list[SegmentRecord]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    tmp.write_text(json.dumps([r.ordered() for r in records], ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, path)  # readers never see a half-written file


class Annotator:
    """Annotates recordings into `out_dir`, keeping the shared state in out_dir/state.sqlite."""

    def __init__(self, out_dir: str | Path, config: Config | None = None, *, backend=None):
        self.config = config or Config()
        self.out_dir = Path(out_dir)
        self.out_dir.mkdir(parents=True, exist_ok=True)
        self.store = StateStore(self.out_dir / STATE_FILE)
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
        load: Callable[[], Audio] | None = None,
    ) -> AnnotationResult:
        """Annotate one recording; errors are returned in the result, never raised.

        `rec` (default: the file stem) names the output, OUT/<rec>.json, and may hold folders;
        `load` replaces reading `path` (a corpus item stored in a dataset or cut from a longer file).
        """
        from . import agents
        from .output.finalize import finalize

        path = Path(path)
        rec = rec or path.stem
        result = AnnotationResult(path=path, rec=rec)
        out_path = self.out_dir / f"{rec}.json"
        notify = on_stage or (lambda stage: None)
        timeline_path = Path(timeline) if timeline is not None else None
        t0 = time.perf_counter()
        try:
            notify("load")
            audio = load() if load is not None else load_audio(path)
            result.duration = audio.duration
            result.timings["load"] = time.perf_counter() - t0
            fp = self._fingerprint(audio, timeline_path)
            self.store.begin_recording(rec, str(path), fp, audio.duration)
            status = self.store.status(rec)
            if status and status[0] == "complete" and out_path.exists():
                result.skipped = True
                result.output = out_path
                result.records = [SegmentRecord.model_validate(d) for _, d in self.store.records(rec)]
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
            records = finalize(self.store, rec, self.backend, self.config, lang)
            _write_json_atomic(out_path, records)
            result.timings["finalize"] = time.perf_counter() - t
            self.store.set_status(rec, "complete")
            result.records, result.output = records, out_path
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
