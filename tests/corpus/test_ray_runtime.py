"""Ray done right: a private runtime on loopback only, joining a token-auth head, bounded retries."""

import json
import os
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest
from corpus_helpers import timeline_manifest

from speechannotator.config import load_config
from speechannotator.engine import RayOptions, annotate_corpus

SRC = str(Path(__file__).resolve().parents[2] / "src")


def _env(home: Path) -> dict[str, str]:
    """A child environment as a user's shell would give it: no token mode set, its own HOME."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
    env.update(HOME=str(home), PYTHONPATH=SRC + os.pathsep + env.get("PYTHONPATH", ""), OMP_NUM_THREADS="1")
    return env


def _tree(pid: int) -> set[int]:
    """pid and its descendants, from /proc."""
    parent = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parent[int(stat.parent.name)] = int(fields[1])
    found, todo = {pid}, [pid]
    while todo:
        p = todo.pop()
        kids = [c for c, pp in parent.items() if pp == p and c not in found]
        found.update(kids)
        todo += kids
    return found


def _listening(pids: set[int]) -> list[str]:
    out = subprocess.run(["ss", "-ltnpH"], capture_output=True, text=True, check=True).stdout
    return [line.split()[3] for line in out.splitlines() if any(f"pid={p}," in line for p in pids)]


LOOPBACK_PROBE = """
import json, os, sys, ray, subprocess
from tree import tree
from speechannotator.engine.ray_engine import RayOptions, _connect
_connect(RayOptions(num_cpus=1))
@ray.remote
def one():
    return 1
assert ray.get(one.remote()) == 1  # a worker runs
pids = tree(os.getpid())
out = subprocess.run(["ss", "-ltnpH"], capture_output=True, text=True, check=True).stdout
ports = [l.split()[3] for l in out.splitlines() if any(f"pid={p}," in l for p in pids)]
print(json.dumps({"gcs": ray.get_runtime_context().gcs_address, "listening": ports}))
ray.shutdown()
"""


def test_the_own_runtime_listens_on_loopback_only_and_never_joins_a_recorded_cluster(tmp_path):
    env = _env(tmp_path)
    env["RAY_ADDRESS"] = "127.0.0.1:1"  # what a stale `ray start` would leave: must be ignored
    import inspect

    (tmp_path / "tree.py").write_text(
        "from pathlib import Path\n\n" + inspect.getsource(_tree).replace("_tree", "tree")
    )
    env["PYTHONPATH"] = f"{tmp_path}{os.pathsep}{env['PYTHONPATH']}"
    res = subprocess.run(
        [sys.executable, "-c", LOOPBACK_PROBE], env=env, capture_output=True, text=True, timeout=300, cwd=tmp_path
    )
    assert res.returncode == 0, res.stderr[-2000:]
    probe = json.loads(res.stdout.strip().splitlines()[-1])
    assert probe["gcs"].startswith("127.0.0.1:")
    assert len(probe["listening"]) >= 3, probe  # GCS, raylet, the driver's core worker at least
    hosts = {addr.rsplit(":", 1)[0] for addr in probe["listening"]}
    assert hosts <= {"127.0.0.1", "[::ffff:127.0.0.1]", "[::1]"}, probe


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _stop(proc: subprocess.Popen, tree: set[int]) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=40)
    except subprocess.TimeoutExpired:
        proc.kill()
    deadline = time.time() + 20
    for pid in sorted(tree - {proc.pid}):  # what the head started, by pid (never `ray stop`: it stops every Ray here)
        while Path(f"/proc/{pid}").exists() and time.time() < deadline:
            time.sleep(0.5)
        try:
            os.kill(pid, 9)
        except (ProcessLookupError, PermissionError):
            pass


def test_ray_address_joins_a_token_auth_head(tmp_path):
    """The docs/scale.md recipe: a token, `ray start --head`, then --ray-address; no RAY_AUTH_MODE set."""
    home = tmp_path / "home"
    home.mkdir()
    env = _env(home)
    ray_bin = str(Path(sys.executable).parent / "ray")
    subprocess.run([ray_bin, "get-auth-token", "--generate"], env=env, capture_output=True, check=True, timeout=120)
    assert (home / ".ray" / "auth_token").is_file()
    port = _free_port()
    temp = tempfile.mkdtemp(prefix="rh", dir="/tmp")  # Ray's socket paths must stay short
    head = subprocess.Popen(
        [ray_bin, "start", "--head", "--block", f"--port={port}", "--num-cpus=2", "--include-dashboard=false"]
        + [f"--temp-dir={temp}", "--disable-usage-stats"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    tree: set[int] = {head.pid}
    try:
        deadline = time.time() + 120
        while not any(a.endswith(f":{port}") for a in _listening(tree)):
            assert head.poll() is None and time.time() < deadline, "ray start --head did not come up"
            time.sleep(1)
            tree = _tree(head.pid)
        time.sleep(2)
        # Without the token mode a plain driver is refused: the case the engine handles.
        plain = f"import ray; ray.init(address='127.0.0.1:{port}')"
        refused = subprocess.run([sys.executable, "-c", plain], env=env, capture_output=True, text=True, timeout=120)
        assert refused.returncode != 0 and "InvalidAuthToken" in refused.stderr
        manifest = timeline_manifest(tmp_path / "corpus", 1)
        out = tmp_path / "out"
        cmd = [sys.executable, "-m", "speechannotator.cli", "annotate", str(manifest), "-o", str(out)]
        cmd += ["--engine", "ray", "--ray-address", f"127.0.0.1:{port}", "--workers", "1", "--no-priors", "-q"]
        res = subprocess.run(cmd + ["--no-print"], env=env, capture_output=True, text=True, timeout=400)
        assert res.returncode == 0, res.stderr[-3000:]
        summary = json.loads((out / "summary.json").read_text())
        assert summary["engine"] == "ray" and summary["done"] == ["audio/a/x"]
        assert "InvalidAuthToken" not in res.stderr
        tree = _tree(head.pid)
    finally:
        _stop(head, tree)


CRASH_HOOK = """
import os
try:
    import speechannotator.engine.item_run as _m
except Exception:
    _m = None
if _m is not None:
    _load = _m.load_item_audio

    def load_item_audio(item):
        if item.id == {crash!r}:
            os._exit(1)  # the worker process dies, as in a native crash
        return _load(item)

    _m.load_item_audio = load_item_audio
"""


@pytest.mark.usefixtures("ray_runtime")
def test_a_recording_that_crashes_its_worker_fails_after_n_tries_and_the_rest_go_on(tmp_path, monkeypatch):
    manifest = timeline_manifest(tmp_path / "corpus", 2)  # audio/a/x and audio/b/x
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(textwrap.dedent(CRASH_HOOK.format(crash="audio/b/x")))
    # The actors start with the driver's PYTHONPATH: the hook loads in them only.
    monkeypatch.setenv("PYTHONPATH", f"{hook}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    cfg = load_config(overrides={"agents": {"priors": False}})
    s = annotate_corpus(
        [manifest], tmp_path / "out", cfg, engine="ray", ray_options=RayOptions(workers=1, max_attempts=2)
    )
    assert s.done == ["audio/a/x"]
    assert list(s.failed) == ["audio/b/x"]
    assert "crashed on each of 2 tries" in s.failed["audio/b/x"]
