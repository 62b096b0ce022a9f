"""annotate_corpus: read a corpus, run it on an engine, keep a summary. The CLI's `annotate` forwards here."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from contextlib import nullcontext
from pathlib import Path
from typing import Literal

from tqdm.contrib.logging import logging_redirect_tqdm

from ..config import Config
from ..corpus import CorpusItem, attach_timelines, read_corpus, write_manifest
from ..output.files import prepare_out_dir
from .item_run import ItemResult
from .progress import CorpusProgress
from .ray_engine import RayOptions
from .summary import CorpusSummary

Engine = Literal["local", "ray"]
log = logging.getLogger("speechannotator.engine")


def annotate_corpus(
    inputs: list[str | Path],
    out_dir: str | Path,
    config: Config | None = None,
    *,
    engine: Engine = "local",
    timeline: str | Path | None = None,
    ray_options: RayOptions | None = None,
    progress: bool = False,
    on_result: Callable[[CorpusItem | None, ItemResult], None] | None = None,
    speaker_ids: bool = True,
    enroll: str | Path | None = None,
) -> CorpusSummary:
    """Annotate every recording named by `inputs` into OUT/<id>.json and write OUT/summary.json.

    `inputs` are audio files, folders (recursive), JSONL/CSV manifests, Lhotse RecordingSet/CutSet
    manifests or Hugging Face datasets folders (see speechannotator.corpus). A rerun of the same
    command skips complete recordings and resumes the others at their first unfinished stage; a
    recording that fails is recorded with its cause and the others go on. `on_result(item, result)`
    sees each recording as it finishes (item is None for an input that named no usable recording).
    Then, as a corpus step (`speaker_ids`), the voices are joined across every recording in OUT
    into OUT/speakers.jsonl (corpus/speakers.py; `enroll`: a folder of named example clips).
    """
    config = config or Config()
    out = Path(out_dir)
    prepare_out_dir(out)  # an unwritable OUT fails in its first second (OutputError)
    t0 = time.perf_counter()
    corpus = read_corpus(list(inputs))
    if timeline is not None:
        corpus = attach_timelines(corpus, Path(timeline))
    summary = CorpusSummary(engine=engine)
    for where, cause in corpus.errors:
        failure = ItemResult(id=where, status="failed", error=cause)
        summary.add(failure)
        if on_result:
            on_result(None, failure)
    items = corpus.items
    by_id = {i.id: i for i in items}
    if items:
        write_manifest(out, items)
    bar = CorpusProgress(len(items), corpus.known_seconds, disable=not progress)
    if engine == "ray":
        from .ray_engine import run_ray

        def planned(workers: int, cpus: float, gpus: float) -> None:
            summary.workers = workers

        results = run_ray(items, out, config, ray_options or RayOptions(), on_plan=planned)
    else:
        from .local import run_local

        results = run_local(items, out, config, on_stage=bar.stage)
    # With a bar on screen, log lines (-v: every stage) are written above it, not through it.
    logs_above_bar = logging_redirect_tqdm() if progress else nullcontext()
    try:
        with logs_above_bar:
            for r in results:
                item = by_id.get(r.id)
                summary.add(r)
                bar.update(r, item.duration if item else None)
                if on_result:
                    bar.clear()
                    on_result(item, r)
    finally:
        bar.close()
    if speaker_ids and (summary.done or summary.skipped):
        from ..corpus.speakers import build_speaker_registry

        try:
            voices = build_speaker_registry(out, enroll, device=config.asr.device)
            summary.voices = len(set(voices.values()))
        except Exception as exc:  # the per-recording outputs stand; the corpus step says why it could not run
            log.warning("corpus speaker ids not joined: %s: %s", exc.__class__.__name__, exc)
            summary.speaker_error = f"{exc.__class__.__name__}: {exc}"
    summary.wall_time_s = time.perf_counter() - t0
    summary.write(out)
    return summary
