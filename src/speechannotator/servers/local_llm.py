"""The project's own local LLM: a shipped Qwen2.5 GGUF served by llama.cpp on 127.0.0.1.

`--llm local[:0.5b|:1.5b]` runs the agents on this server through the ordinary OpenAI-compatible
backend. The server lives exactly as long as the `LocalLLMServer` (context manager or close()):
it is stopped on success, on error and on Ctrl-C, and it dies with its parent process.

Threads are chosen for the load: llama.cpp's OpenMP workers spin-wait on each other, so on
cores that other processes keep busy two threads fall to ~1 token/s while one thread keeps
7-15 tokens/s. The server gets as many threads as there are idle cores (at least one),
sampled from /proc/stat just before it starts.
"""

from __future__ import annotations

import logging
import os
import time
from dataclasses import dataclass

from ..assets import LocalLLM, local_llm_gguf, resolve_local_llm
from ..config import EndpointConfig, LocalLLMConfig
from .llamacpp import LlamaServer

log = logging.getLogger(__name__)


def usable_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _cpu_times() -> tuple[int, int] | None:
    """(idle, total) jiffies over all CPUs, or None where /proc/stat is unavailable."""
    try:
        with open("/proc/stat", encoding="ascii") as f:
            fields = [int(x) for x in f.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
    return idle, sum(fields[:8])


def idle_cores(sample_s: float = 0.5) -> float:
    """How many cores were idle over a short sample (all of them when it cannot be measured)."""
    n = usable_cpus()
    a = _cpu_times()
    time.sleep(sample_s)
    b = _cpu_times()
    if a is None or b is None or b[1] <= a[1]:
        return float(n)
    return n * (b[0] - a[0]) / (b[1] - a[1])


def choose_threads(requested: int = 0, *, idle: float | None = None, cpus: int | None = None) -> int:
    """`requested` when positive, else one thread per idle core (rounded, at least 1)."""
    if requested > 0:
        return requested
    cpus = cpus or usable_cpus()
    idle = idle_cores() if idle is None else idle
    # 0.3 of slack: a core that is 70 % idle still serves a thread well.
    return max(1, min(cpus, int(idle + 0.3)))


@dataclass
class LocalModelInfo:
    model: LocalLLM
    threads: int
    parallel: int
    chosen_by: str  # "named" or "best installed"


class LocalLLMServer:
    """Prepare the joined GGUF and serve it; `.endpoint(base)` is the agents' endpoint."""

    def __init__(self, settings: LocalLLMConfig) -> None:
        self.settings = settings
        self.model = resolve_local_llm(settings.model)
        self.info: LocalModelInfo | None = None
        self._server: LlamaServer | None = None

    def start(self) -> LocalLLMServer:
        if self._server is not None and self._server.running:
            return self
        gguf = local_llm_gguf(self.model.name)
        threads = choose_threads(self.settings.threads)
        self.info = LocalModelInfo(
            self.model, threads, self.settings.parallel, "best installed" if self.settings.model == "auto" else "named"
        )
        self._server = LlamaServer(
            gguf,
            n_ctx=self.settings.n_ctx,
            n_parallel=self.settings.parallel,
            n_threads=threads,
            startup_timeout_s=self.settings.startup_timeout_s,
        )
        self._server.start()
        log.info(
            "local LLM %s on %s (%d thread(s), %d slot(s), pid %s)",
            self.model.title,
            self._server.url,
            threads,
            self.settings.parallel,
            self._server.pid,
        )
        return self

    @property
    def url(self) -> str:
        if self._server is None:
            raise RuntimeError("local LLM server is not started")
        return self._server.url

    def endpoint(self, base: EndpointConfig) -> EndpointConfig:
        """`base` (bounds, retries, temperature) pointed at this server; the local models hear no audio."""
        return base.model_copy(
            update={
                "url": self.url,
                "model": self.model.title,
                "audio": False,
                "api_key_env": "SPEECHANNOTATOR_LOCAL_LLM_KEY",
                "timeout_s": max(base.timeout_s, self.settings.timeout_s),
            }
        )

    def describe(self) -> str:
        i = self.info
        if i is None:
            return f"{self.model.title} (not started)"
        return f"{i.model.title} ({i.chosen_by}; {i.threads} thread(s), {i.parallel} slot(s))"

    def close(self) -> None:
        server, self._server = self._server, None
        if server is not None:
            server.stop()

    def __enter__(self) -> LocalLLMServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()
