"""End to end on the CPU default with the real shipped models."""

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
from click.testing import CliRunner

from speechannotator.cli import main
from speechannotator.schema import OUTPUT_KEYS, canonical_closed, validate_records
from synth import SR, join, librivox, speak

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "dialogue.flac"
REFERENCE = ROOT / "examples" / "dialogue.seglst.json"


@pytest.fixture(scope="module")
def example_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("example")
    res = CliRunner().invoke(main, ["annotate", str(EXAMPLE), "-o", str(out), "-q"])
    return out, res


def test_example_round_trips(example_run):
    out, res = example_run
    assert res.exit_code == 0, res.output
    data = json.loads((out / "dialogue.json").read_text())
    records = validate_records(data)  # schema, key order, time order
    assert all(tuple(d) == OUTPUT_KEYS for d in data)
    assert all(isinstance(d["start_time"], int) and isinstance(d["end_time"], int) for d in data)
    assert {r.speaker_id for r in records} == {"spk_01", "spk_02"}
    assert records[0].speaker_id == "spk_01"  # ids by first appearance
    # Each reference speaker maps to one id with the right gender.
    ref = json.loads(REFERENCE.read_text())
    for seg in ref:
        mid = 500 * (seg["start_time"] + seg["end_time"])
        hyp = min(
            records,
            key=lambda r: (
                0 if r.start_time <= mid <= r.end_time else min(abs(mid - r.start_time), abs(mid - r.end_time))
            ),
        )
        assert canonical_closed("gender", hyp.gender) == seg["gender"], (seg, hyp)
    # The readable table is printed.
    assert "spk_01" in res.output and "caption" in res.output


def test_rerun_of_complete_output_is_skipped(example_run):
    out, _ = example_run
    before = (out / "dialogue.json").read_bytes()
    res = CliRunner().invoke(main, ["annotate", str(EXAMPLE), "-o", str(out), "-q"])
    assert res.exit_code == 0 and "skipped" in res.output
    assert (out / "dialogue.json").read_bytes() == before


def _bad_inputs(d: Path, speech: np.ndarray) -> dict[str, str]:
    (d / "empty.wav").write_bytes(b"")
    (d / "notes.wav").write_text("just some text, not audio\n" * 10)
    sf.write(d / "trunc.wav", speech, SR, subtype="PCM_16")
    (d / "trunc.wav").write_bytes((d / "trunc.wav").read_bytes()[:30])
    nan = speech.copy()
    nan[100:200] = np.nan
    sf.write(d / "nan.wav", nan, SR, subtype="FLOAT")
    sf.write(d / "tiny.wav", speech[: int(0.2 * SR)], SR)
    return {"empty.wav": "empty", "notes.wav": "not", "trunc.wav": "", "nan.wav": "NaN", "tiny.wav": "too short"}


def test_batch_with_bad_inputs_reports_each_and_completes_the_rest(tmp_path):
    import soxr

    inputs = tmp_path / "in"
    inputs.mkdir()
    speech = join(speak("Hello there, this is a short test recording.", "en-us+f2", pitch=60), librivox()[1])
    expected = _bad_inputs(inputs, speech)
    # A good stereo 48 kHz file and a good 8 kHz file in the same batch.
    x48 = soxr.resample(speech, SR, 48000)
    sf.write(inputs / "stereo48k.wav", np.stack([x48, x48], axis=1), 48000)
    sf.write(inputs / "phone8k.wav", soxr.resample(speech, SR, 8000), 8000)
    out = tmp_path / "out"
    out.mkdir()
    (out / "keep.json").write_text('["already here"]')
    proc = subprocess.run(
        [sys.executable, "-m", "speechannotator.cli", "annotate", str(inputs), "-o", str(out), "-q", "--no-print"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 1
    errors = [line for line in proc.stderr.splitlines() if line.startswith("speechannotator: error:")]
    assert len(errors) == len(expected), proc.stderr
    assert "Traceback" not in proc.stderr
    for name, fragment in expected.items():
        line = next(e for e in errors if f"{name}:" in e)
        assert fragment in line
    for good in ("stereo48k", "phone8k"):
        records = validate_records(json.loads((out / f"{good}.json").read_text()))
        # The real reader's sentence (espeak's "test" is misheard by Whisper base at times).
        assert records and any("young man" in r.text.lower() for r in records), [r.text for r in records]
    assert (out / "keep.json").read_text() == '["already here"]'
    assert not any((out / f"{n.split('.')[0]}.json").exists() for n in expected)


def test_labels_follow_override(tmp_path):
    speech = join(speak("Good evening, and welcome to the news.", "en-us+m3", pitch=35))
    sf.write(tmp_path / "en.wav", speech, SR)
    res = CliRunner().invoke(
        main, ["annotate", str(tmp_path / "en.wav"), "-o", str(tmp_path / "o"), "-q", "--labels", "zh"]
    )
    assert res.exit_code == 0, res.output
    rec = json.loads((tmp_path / "o" / "en.json").read_text())[0]
    assert rec["gender"] in ("男声", "女声") and rec["language"] == "en"
    assert rec["speaker_name"].startswith("说话人")


def test_rerun_after_interrupted_run_completes_without_duplicates(tmp_path):
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "speechannotator.cli", "annotate", str(EXAMPLE), "-o", str(out), "-q", "--no-print"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    db = out / "state.sqlite"
    deadline = time.time() + 300
    timeline_done = None
    try:
        while time.time() < deadline and proc.poll() is None:
            if db.exists():
                try:
                    with sqlite3.connect(db, timeout=1) as c:
                        row = c.execute("SELECT done_at FROM stages WHERE stage='timeline'").fetchone()
                except sqlite3.OperationalError:
                    row = None
                if row:
                    timeline_done = row[0]
                    break
            time.sleep(0.05)
        os.killpg(proc.pid, signal.SIGKILL)  # killed mid-run, as by a crash or power loss
    finally:
        proc.wait()
    assert timeline_done is not None, "the timeline stage never completed"
    assert not (out / "dialogue.json").exists()
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr
    with sqlite3.connect(db) as c:
        # The finished stage was kept, not redone.
        assert c.execute("SELECT done_at FROM stages WHERE stage='timeline'").fetchone()[0] == timeline_done
        n_seg = c.execute("SELECT count(*) FROM segments").fetchone()[0]
        n_rec = c.execute("SELECT count(*) FROM records").fetchone()[0]
        dup = c.execute("SELECT count(*) FROM (SELECT key FROM records GROUP BY key HAVING count(*) > 1)").fetchone()[0]
    data = json.loads((out / "dialogue.json").read_text())
    assert len(data) == n_seg == n_rec and dup == 0
    validate_records(data)


def test_chinese_speech_gets_simplified_text_and_chinese_labels(tmp_path):
    from synth import mandarin_clip

    x, truth = mandarin_clip()
    sf.write(tmp_path / "zh.wav", join(x), SR)
    res = CliRunner().invoke(main, ["annotate", str(tmp_path / "zh.wav"), "-o", str(tmp_path / "o"), "-q"])
    assert res.exit_code == 0, res.output
    data = json.loads((tmp_path / "o" / "zh.json").read_text())
    validate_records(data)
    text = "".join(d["text"] for d in data)
    assert all(d["language"] == "zh" for d in data)
    import jiwer

    hyp = "".join(ch for ch in text if "\u4e00" <= ch <= "\u9fff")
    assert jiwer.cer(truth, hyp) <= 0.2, hyp
    rec = data[0]
    assert rec["gender"] in ("男声", "女声") and rec["age"] in ("儿童", "少年", "青年", "中年", "老年")
    assert rec["speaker_name"].startswith("说话人") and rec["paralinguistic"]
    assert any("\u4e00" <= ch <= "\u9fff" for ch in rec["caption"])
