"""The Ray engine: the same per-recording work as the local engine, run by Ray Data.

Ray Data reads the run's manifest, makes one block per recording and maps it with a fixed pool of
actors (`ActorPoolStrategy`); each actor builds one Annotator, so each model loads once per actor.
Actors write OUT/<id>.json and the shared state as each recording finishes, exactly as the local
engine does; the driver only streams back the small per-recording results for progress and the
summary. Scheduling and placement are Ray's; retries are bounded (`RayOptions.max_attempts`): a
recording whose worker crashes that many times fails with one line naming it and the others go on.

Without an address the engine always starts its own runtime, bound to 127.0.0.1 (never a cluster
that `ray start` recorded, never listening on the network). With an address it joins that cluster,
sending the Ray auth token when one is available (Ray >= 2.5x heads enable token auth by default).
"""

from __future__ import annotations

import json
import logging
import os
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..atomic import write_text_atomic
from ..config import Config
from ..corpus.item import CorpusItem
from .item_run import ItemResult

log = logging.getLogger("speechannotator.engine")

RUN_MANIFEST = ".ray-input.jsonl"  # this run's items, in OUT: what ray.data reads
# The manifest read and the repartition are Ray tasks that want a whole CPU each; actors holding
# every CPU would leave them waiting forever (a deadlock on 2 cores). Actors share what is left.
READ_CPUS = 1.0
# Tries per recording: a recording whose worker process dies (a native crash, the OOM killer) this
# many times fails, instead of being retried forever (Ray Data's default for actor tasks).
MAX_ATTEMPTS = 3


@dataclass(frozen=True)
class RayOptions:
    address: str | None = None  # join an existing cluster ("auto" or host:port); None: start a local one
    workers: int | None = None  # actors in the pool; None: one per CPU of the cluster
    cpus_per_worker: float | None = None  # None: share the cluster's CPUs (less what reading needs)
    gpus_per_worker: float | None = None  # None: 1 when the ASR device is cuda, else 0
    num_cpus: int | None = None  # CPUs of a local runtime started here (None: all)
    max_attempts: int = MAX_ATTEMPTS  # tries per recording before it fails (its worker crashed each time)


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


class _RayLogToOurs(logging.Handler):
    """Ray's own log lines (start-up notices, retry warnings) go to our log, not through the bar:
    debug level for what Ray warns about itself, errors as errors."""

    def emit(self, record: logging.LogRecord) -> None:
        level = record.levelno if record.levelno >= logging.ERROR else logging.DEBUG
        log.log(level, "ray: %s", record.getMessage())


def _route_ray_logs() -> None:
    """Every Ray logger that prints on its own (Ray and Ray Data configure their handlers at
    import and at execution) writes through _RayLogToOurs instead."""
    names = ["ray"] + [n for n in logging.root.manager.loggerDict if n.startswith("ray.")]
    for name in names:
        logger = logging.getLogger(name)
        if name == "ray" or logger.handlers:
            logger.handlers = [_RayLogToOurs()]
            logger.propagate = False


def _token_available() -> bool:
    """An auth token Ray would send: RAY_AUTH_TOKEN, RAY_AUTH_TOKEN_PATH or ~/.ray/auth_token."""
    if os.environ.get("RAY_AUTH_TOKEN"):
        return True
    path = os.environ.get("RAY_AUTH_TOKEN_PATH") or str(Path.home() / ".ray" / "auth_token")
    return Path(path).is_file()


def _enable_token_mode() -> None:
    """RAY_AUTH_MODE=token for this process and its children. Ray caches its settings at import,
    so they are reloaded too (what `ray start` itself does when it finds a token)."""
    os.environ["RAY_AUTH_MODE"] = "token"
    try:
        # A private, compiled module whose stub does not list Config (hence the AttributeError below).
        from ray._raylet import Config  # type: ignore[attr-defined]

        Config.initialize("")
    except (ImportError, AttributeError):  # another Ray: it reads the variable when it connects
        pass


@contextmanager
def _loopback_only() -> Iterator[None]:
    """Start a runtime whose every server binds 127.0.0.1. Ray turns a node address of 127.0.0.1
    into the machine's reachable address unless clusters are off (as on macOS, the
    RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0 switch); the switch is read at call time from this module."""
    from ray._private import ray_constants

    saved = ray_constants.ENABLE_RAY_CLUSTER
    ray_constants.ENABLE_RAY_CLUSTER = False
    try:
        yield
    finally:
        ray_constants.ENABLE_RAY_CLUSTER = saved


def _connect(opts: RayOptions) -> bool:
    """Connect to (or start) Ray; True when this call started the runtime (and must stop it)."""
    import ray

    _route_ray_logs()
    if ray.is_initialized():
        return False
    env = {"env_vars": {"PYTHONPATH": os.environ.get("PYTHONPATH", "")}} if os.environ.get("PYTHONPATH") else None
    verbose = log.getEffectiveLevel() <= logging.INFO  # -v: the actors' per-stage lines reach the driver
    if opts.address:
        if "RAY_AUTH_MODE" not in os.environ and _token_available():
            # `ray start --head` enables token auth when a token exists, but a driver joining it sends
            # the token only in token mode: without this, "InvalidAuthToken".
            _enable_token_mode()
        ray.init(address=opts.address, runtime_env=env, logging_level=logging.WARNING, log_to_driver=verbose)
        return True
    with _loopback_only():
        # address="local": a new runtime, whatever RAY_ADDRESS or the last `ray start` recorded.
        ray.init(
            address="local",
            num_cpus=opts.num_cpus,
            include_dashboard=False,
            logging_level=logging.WARNING,
            log_to_driver=verbose,
            runtime_env=env,
        )
    _route_ray_logs()  # ray.init sets up its own handler again
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


def _annotate_stage(ds, out: Path, config: Config, opts: RayOptions, workers: int, cpus: float, gpus: float):
    """The map stage: a pool of `workers` annotating actors, one recording per batch."""
    from ray.data import ActorPoolStrategy

    return ds.map_batches(
        _AnnotateBatch,
        batch_size=1,
        batch_format="numpy",
        # One recording in flight per actor: a task queued behind one that crashes the actor
        # would fail with it and spend a try of its own (with 2 tries, a healthy recording
        # sharing the actor of a crashing one failed too).
        compute=ActorPoolStrategy(size=workers, max_tasks_in_flight_per_actor=1),
        fn_constructor_kwargs={
            "out_dir": str(out),
            "config_json": config.model_dump_json(),
            "log_level": log.getEffectiveLevel(),
        },
        num_cpus=cpus,
        num_gpus=gpus,
        runtime_env={"env_vars": _actor_env()},
        max_restarts=-1,  # a crashed actor comes back for the other recordings...
        max_task_retries=max(0, opts.max_attempts - 1),  # ...but a recording is tried max_attempts times
    )


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

    out = Path(out_dir).resolve()
    out.mkdir(parents=True, exist_ok=True)
    manifest = out / RUN_MANIFEST
    write_text_atomic(manifest, "".join(json.dumps({"item": i.dumps()}) + "\n" for i in items))

    logging.getLogger("ray.data").setLevel(logging.WARNING)  # its plan and progress lines would break our bar
    started = _connect(opts)
    try:
        ctx = ray.data.DataContext.get_current()
        ctx.enable_progress_bars = False  # the corpus bar is ours
        ctx.execution_options.preserve_order = False  # results stream back as recordings finish
        # A recording whose retries are spent loses its block; the rest of the corpus goes on and the
        # lost recording is reported failed below.
        ctx.max_errored_blocks = -1
        workers, cpus, gpus = plan_resources(ray.cluster_resources().get("CPU", 1.0), len(items), config, opts)
        log.info("ray: %d worker(s), %.3g CPU and %.3g GPU each", workers, cpus, gpus)
        if on_plan is not None:
            on_plan(workers, cpus, gpus)
        ds = ray.data.read_json(str(manifest))
        ds = ds.repartition(len(items))  # one block per recording: the pool balances recordings
        with warnings.catch_warnings(record=True) as caught:
            # Ray deprecates passing actor retry settings as remote args (they have no named parameter
            # in Ray 2.60); its warning belongs in the log, not on the user's terminal.
            warnings.simplefilter("always")
            ds = _annotate_stage(ds, out, config, opts, workers, cpus, gpus)
        for w in caught:
            log.debug("ray: %s", w.message)
        seen = set()
        _route_ray_logs()  # Ray Data's loggers exist now
        for row in ds.iter_rows():
            result = ItemResult.from_json(json.loads(str(row["result"])))
            seen.add(result.id)
            yield result
        for item in items:
            if item.id not in seen:
                cause = (
                    f"its worker process crashed on each of {opts.max_attempts} tries (a native crash or out of memory)"
                )
                yield ItemResult(id=item.id, status="failed", error=cause)
    finally:
        if started:
            ray.shutdown()
