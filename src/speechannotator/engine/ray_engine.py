"""The Ray engine: the same per-recording work as the local engine, run by Ray Data.

Ray Data reads the run's manifest, makes one block per recording and maps it with a fixed pool of
actors (`ActorPoolStrategy`); each actor builds one Annotator, so each model loads once per actor.
Actors write OUT/<id>.json and the shared state as each recording finishes, exactly as the local
engine does; the driver only streams back the small per-recording results for progress and the
summary. Scheduling, retries and placement are Ray's.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..config import Config
from ..corpus.item import CorpusItem
from .item_run import ItemResult

log = logging.getLogger("speechannotator.engine")

RUN_MANIFEST = ".ray-input.jsonl"  # this run's items, in OUT: what ray.data reads
# The manifest read and the repartition are Ray tasks that want a whole CPU each; actors holding
# every CPU would leave them waiting forever (a deadlock on 2 cores). Actors share what is left.
READ_CPUS = 1.0


@dataclass(frozen=True)
class RayOptions:
    address: str | None = None  # join an existing cluster ("auto" or host:port); None: start a local one
    workers: int | None = None  # actors in the pool; None: one per CPU of the cluster
    cpus_per_worker: float | None = None  # None: share the cluster's CPUs (less what reading needs)
    gpus_per_worker: float | None = None  # None: 1 when the ASR device is cuda, else 0
    num_cpus: int | None = None  # CPUs of a local runtime started here (None: all)


def _actor_env() -> dict[str, str]:
    """Environment the actor processes start with. OMP_NUM_THREADS must be right at process start
    (setting it later in the actor did not help): Ray's value for a fractional CPU share (1) made
    Whisper decode differently from the local engine, so actors get the driver's value, or the
    thread count a plain process here would use."""
    env = {"OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS") or str(len(os.sched_getaffinity(0)))}
    if os.environ.get("PYTHONPATH"):
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    return env


class _AnnotateBatch:
    """A Ray Data actor: one Annotator for its lifetime, one recording per batch."""

    def __init__(self, out_dir: str, config_json: str, log_level: int = logging.WARNING):
        from ..pipeline import Annotator

        # Per-stage lines (-v) reach the driver through Ray's forwarding of worker output.
        logging.basicConfig(level=log_level, format="%(levelname)s %(name)s: %(message)s")
        log.setLevel(log_level)

        self.annotator = Annotator(out_dir, Config.model_validate_json(config_json))

    def __call__(self, batch: dict[str, Any]) -> dict[str, list[str]]:
        from .item_run import annotate_item

        results = []
        for raw in batch["item"]:
            item = CorpusItem.from_json(json.loads(str(raw)))
            results.append(json.dumps(annotate_item(self.annotator, item).to_json()))
        return {"result": results}


def _connect(opts: RayOptions) -> bool:
    """Connect to (or start) Ray; True when this call started the runtime (and must stop it)."""
    import ray

    if ray.is_initialized():
        return False
    env = {"env_vars": {"PYTHONPATH": os.environ.get("PYTHONPATH", "")}} if os.environ.get("PYTHONPATH") else None
    if opts.address:
        ray.init(address=opts.address, runtime_env=env, logging_level=logging.WARNING, log_to_driver=True)
        return True
    ray.init(num_cpus=opts.num_cpus, include_dashboard=False, logging_level=logging.WARNING, runtime_env=env)
    return True


def plan_resources(cluster_cpus: float, n_items: int, config: Config, opts: RayOptions) -> tuple[int, float, float]:
    """(workers, CPUs per worker, GPUs per worker). Fractional CPUs leave room for the read tasks."""
    workers = opts.workers or max(1, int(cluster_cpus))
    workers = max(1, min(workers, n_items))
    cpus = opts.cpus_per_worker
    if cpus is None:
        cpus = min(1.0, max(0.05, (cluster_cpus - READ_CPUS) / workers))
    gpus = opts.gpus_per_worker
    if gpus is None:
        gpus = 1.0 if config.asr.device.startswith("cuda") else 0.0
    return workers, round(cpus, 3), gpus


def run_ray(
    items: list[CorpusItem],
    out_dir: str | Path,
    config: Config,
    opts: RayOptions = RayOptions(),
    on_plan: Callable[[int, float, float], None] | None = None,
) -> Iterator[ItemResult]:
    """Annotate `items` into `out_dir` on Ray Data, yielding each result as its recording finishes."""
    if not items:
        return
    import ray
    import ray.data
    from ray.data import ActorPoolStrategy

    out = Path(out_dir).resolve()
    out.mkdir(parents=True, exist_ok=True)
    manifest = out / RUN_MANIFEST
    tmp = manifest.with_name(f"{manifest.name}.tmp-{os.getpid()}")
    tmp.write_text("".join(json.dumps({"item": i.dumps()}) + "\n" for i in items), encoding="utf-8")
    os.replace(tmp, manifest)

    logging.getLogger("ray.data").setLevel(logging.WARNING)  # its plan and progress lines would break our bar
    started = _connect(opts)
    try:
        ctx = ray.data.DataContext.get_current()
        ctx.enable_progress_bars = False  # the corpus bar is ours
        ctx.execution_options.preserve_order = False  # results stream back as recordings finish
        workers, cpus, gpus = plan_resources(ray.cluster_resources().get("CPU", 1.0), len(items), config, opts)
        log.info("ray: %d worker(s), %.3g CPU and %.3g GPU each", workers, cpus, gpus)
        if on_plan is not None:
            on_plan(workers, cpus, gpus)
        ds = ray.data.read_json(str(manifest))
        ds = ds.repartition(len(items))  # one block per recording: the pool balances recordings
        ds = ds.map_batches(
            _AnnotateBatch,
            batch_size=1,
            batch_format="numpy",
            compute=ActorPoolStrategy(size=workers),
            fn_constructor_kwargs={
                "out_dir": str(out),
                "config_json": config.model_dump_json(),
                "log_level": log.getEffectiveLevel(),
            },
            num_cpus=cpus,
            num_gpus=gpus,
            runtime_env={"env_vars": _actor_env()},
        )
        for row in ds.iter_rows():
            yield ItemResult.from_json(json.loads(str(row["result"])))
    finally:
        if started:
            ray.shutdown()
