"""`--llm local:0.5b` end to end: the project serves the shipped Qwen2.5-0.5B itself and stops it.

setup.sh installs the 0.5B parts, so a missing model is a failure, not a skip. One server per
test (each CLI run owns its own); the file is short to keep the 0.5B's CPU time small.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import soundfile as sf

from speechannotator.agents.phrases import phrases
from speechannotator.schema import OUTPUT_KEYS, canonical_closed, typed_value, validate_records

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "dialogue.flac"
REFERENCE = ROOT / "examples" / "dialogue.seglst.json"
_PID = re.compile(r"local LLM \S+ on http://127\.0\.0\.1:\d+/v1 .*pid (\d+)\)")


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT / "src") + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split()[2] != "Z"
    except OSError:
        return False


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "speechannotator.cli", "-v", "annotate", *args]


def test_a_short_file_is_annotated_end_to_end_by_the_local_05b(tmp_path):
    audio, sr = sf.read(EXAMPLE)
    short = tmp_path / "short.flac"
    sf.write(short, audio[: int(3.0 * sr)], sr)  # the first turn: "Tell me about mister John Dashwood."
    out = tmp_path / "out"
    # Threads are left to the server's choice: one per idle core.
    proc = subprocess.run(
        _cli(str(short), "-o", str(out), "--llm", "local:0.5b", "--no-print", "-q"),
        capture_output=True,
        text=True,
        env=_env(),
        timeout=850,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "agents: local LLM Qwen2.5-Coder-0.5B-Instruct-Q4_K_M (as named" in proc.stderr
    pid = int(_PID.search(proc.stderr).group(1))
    assert not _alive(pid), "the llama.cpp server outlived the run"
    data = json.loads((out / "short.json").read_text())
    records = validate_records(data)
    assert all(tuple(d) == OUTPUT_KEYS for d in data) and len(records) >= 1
    assert "john" in records[0].text.lower()  # Whisper base on 3 s: "Mr John Dashwood" or near it
    # The acoustic fields stay with the rules: the voice's gender is right.
    assert canonical_closed("gender", records[0].gender) == "female"
    # The LLM's field (emotion) came from the model, as one of the typed choices (label and
    # intensity); tone and the acoustic fields are the rules' (docs/agents-llm.md).
    rows = _predictions(out / "state.sqlite")
    llm_rows = [r for r in rows if r["field"] == "emotion"]
    assert llm_rows and all(r["backend"] == "local" for r in llm_rows if r["round"] == 0), llm_rows
    P = phrases("en")
    pairs = {P.emotion(e, i) for e in P.EMOTIONS for i in range(len(P.INTENSITY))}
    assert all(typed_value(r["value"]) in pairs for r in llm_rows if r["status"] != "failed"), llm_rows
    assert sum(r["status"] == "ok" for r in llm_rows) >= len(llm_rows) // 2, llm_rows
    assert all(r["backend"] == "rules" for r in rows if r["field"] in ("gender", "tone"))
    # The caption and the contextual inference are the rules' composer's.
    captions = [r.caption for r in records]
    assert all(len(c) > 20 and not re.search(r"[\u4e00-\u9fff]", c) for c in captions), captions
    assert records[0].language == "en"  # from the ASR, never from the model


def _predictions(db: Path) -> list[dict]:
    import sqlite3

    with sqlite3.connect(db) as c:
        return [dict(json.loads(d), field=f) for f, d in c.execute("SELECT field, data FROM predictions")]


def test_ctrl_c_stops_the_local_server(tmp_path):
    ref = json.loads(REFERENCE.read_text())[:2]
    timeline = tmp_path / "dialogue.seglst.json"
    timeline.write_text(json.dumps(ref))
    settings = tmp_path / "settings.toml"
    settings.write_text("[priors]\ndnsmos = false\nenhance = false\n")
    proc = subprocess.Popen(
        _cli(
            str(EXAMPLE),
            "-o",
            str(tmp_path / "out"),
            "--timeline",
            str(timeline),
            "--llm",
            "local:0.5b",
            "--config",
            str(settings),
            "--no-print",
            "-q",
        ),
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
        env=_env(),
    )
    pid = None
    deadline = time.monotonic() + 600
    try:
        for line in proc.stderr:  # type: ignore[union-attr]
            m = _PID.search(line)
            if m:
                pid = int(m.group(1))
                break
            assert time.monotonic() < deadline, "the local server never started"
        assert pid is not None and _alive(pid)
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode != 0
    for _ in range(100):  # the server gets SIGTERM and exits at once
        if not _alive(pid):
            break
        time.sleep(0.1)
    assert not _alive(pid), "the llama.cpp server outlived an interrupted run"
