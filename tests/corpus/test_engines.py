"""Engines: Ray Data gives byte-identical results to the local loop; kill -9 and rerun loses nothing."""

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from corpus_helpers import output_bytes, timeline_manifest, tree_corpus

from speechannotator.config import load_config
from speechannotator.engine import RayOptions, annotate_corpus

# Priors on (real acoustic, gender, scene and emotion models), DeepFilterNet off: a few seconds a recording.
SETTINGS = "[priors]\nenhance = false\n"


def _settings(tmp: Path) -> Path:
    p = tmp / "settings.toml"
    p.write_text(SETTINGS)
    return p


def test_ray_engine_equals_local_on_the_real_pipeline(ray_runtime, tmp_path):
    """Diarization, Whisper, priors and agents through Ray actors: the same bytes as in-process."""
    tree_corpus(tmp_path / "in", 2)  # a/x (espeak) and b/x (LibriVox): the same file name
    (tmp_path / "in" / "c").mkdir()
    (tmp_path / "in" / "c" / "bad.wav").write_text("not audio\n")
    cfg = load_config(_settings(tmp_path))
    local = annotate_corpus([tmp_path / "in"], tmp_path / "local", cfg)
    ray = annotate_corpus([tmp_path / "in"], tmp_path / "ray", cfg, engine="ray", ray_options=RayOptions(workers=2))
    assert local.done == ["a/x", "b/x"] and sorted(ray.done) == ["a/x", "b/x"] and ray.workers == 2
    assert list(local.failed) == list(ray.failed) == ["c/bad"]
    assert local.failed["c/bad"] == ray.failed["c/bad"] and "not an audio file" in local.failed["c/bad"]
    a, b = output_bytes(tmp_path / "local"), output_bytes(tmp_path / "ray")
    assert sorted(a) == ["a/x.json", "b/x.json"]
    assert a == b
    assert all(json.loads(v) for v in a.values())  # real segments, not empty lists
    # The corpus step joins the same voices with the same ids after either engine.
    voices = (tmp_path / "local" / "speakers.jsonl").read_bytes()
    assert voices and voices == (tmp_path / "ray" / "speakers.jsonl").read_bytes()
    summary = json.loads((tmp_path / "ray" / "summary.json").read_text())
    assert summary["engine"] == "ray" and summary["failed"] == [{"id": "c/bad", "cause": local.failed["c/bad"]}]
    assert summary["audio_hours"] == pytest.approx(local.audio_seconds / 3600, abs=1e-6) and summary["wall_time_s"] > 0


def _complete(db: Path) -> list[tuple[str, float]]:
    try:
        with sqlite3.connect(db, timeout=1) as c:
            return c.execute("SELECT rec, done_at FROM stages WHERE stage='finalize' ORDER BY rec").fetchall()
    except sqlite3.OperationalError:  # not created yet
        return []


def _written(db: Path) -> set[str]:
    """Recordings marked complete: finalized and their output file written (stage 12)."""
    with sqlite3.connect(db, timeout=1) as c:
        return {rec for (rec,) in c.execute("SELECT rec FROM recordings WHERE status='complete'")}


@pytest.fixture(scope="module")
def kill_corpus(tmp_path_factory):
    """Five recordings on reference timelines plus a missing one, and their uninterrupted local run."""
    root = tmp_path_factory.mktemp("kill")
    manifest = timeline_manifest(root / "c", 5)
    with manifest.open("a") as f:  # a recording that fails: recorded with its cause, the rest go on
        f.write(json.dumps({"audio_filepath": "missing.wav", "id": "gone"}) + "\n")
    settings = _settings(root)
    ref = root / "ref"
    ref_summary = annotate_corpus([manifest], ref, load_config(settings))
    assert len(ref_summary.done) == 5 and list(ref_summary.failed) == ["gone"]
    return manifest, settings, ref


@pytest.mark.parametrize("engine", ["local", "ray"])
def test_kill_9_and_rerun_loses_nothing_and_does_nothing_twice(ray_runtime, kill_corpus, tmp_path, engine):
    manifest, settings, ref = kill_corpus

    out = tmp_path / "out"
    cmd = [
        sys.executable,
        "-m",
        "speechannotator.cli",
        "annotate",
        str(manifest),
        "-o",
        str(out),
        "-q",
        "--no-print",
        "--config",
        str(settings),
        "--engine",
        engine,
    ]
    if engine == "ray":
        cmd += ["--ray-address", ray_runtime, "--workers", "2"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.time() + 400
    try:
        while time.time() < deadline and proc.poll() is None and not _complete(out / "state.sqlite"):
            time.sleep(0.05)
        os.killpg(proc.pid, signal.SIGKILL)  # as by a crash: no cleanup of any kind
    finally:
        proc.wait()
    before = dict(_complete(out / "state.sqlite"))
    assert 1 <= len(before) < 5, f"kill came too late or never: {before}"
    assert not (out / "summary.json").exists()
    # A kill between a recording's finalize and its file write (stage 12) leaves it finalized but
    # not complete: the rerun writes it (counted done) without finalizing it again (below).
    written = _written(out / "state.sqlite")

    res = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert res.returncode == 1, res.stderr  # the missing file
    assert "missing.wav: file does not exist" in res.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert set(summary["skipped"]) >= written and len(summary["done"]) + len(summary["skipped"]) == 5
    assert summary["failed"] == [{"id": "gone", "cause": "file does not exist"}]
    after = dict(_complete(out / "state.sqlite"))
    assert all(after[rec] == t for rec, t in before.items())  # finished work was kept, not redone
    assert output_bytes(out) == output_bytes(ref)  # byte-identical to the uninterrupted run
    assert (out / "corpus.jsonl").read_bytes() == (ref / "corpus.jsonl").read_bytes()
    with sqlite3.connect(out / "state.sqlite") as c:
        n_records = dict(c.execute("SELECT rec, count(*) FROM records GROUP BY rec").fetchall())
    for rel, data in output_bytes(out).items():
        assert n_records[rel[: -len(".json")]] == len(json.loads(data))  # nothing twice
