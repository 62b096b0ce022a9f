"""Issue 15: concurrent runs, unwritable outputs, review scale and edge cases, each as seen.

Runs use a reference timeline and no priors (no model loads) on short espeak speech; the
processes that must be real (a second writer, kill -9, Ctrl-C) are real.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import struct
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
from click.testing import CliRunner

from speechannotator.atomic import TEMP_PREFIX
from speechannotator.audio import AudioError, load_audio
from speechannotator.cli import main
from speechannotator.frontend.reference import ReferenceError, load_reference_timeline
from speechannotator.servers.httpkit import Reply, ScriptedServer, chat_reply
from synth import SR, join, speak

ROOT = Path(__file__).resolve().parents[1]
FAST = ["--no-priors", "-q", "--labels", "en"]


@pytest.fixture(scope="module")
def talk(tmp_path_factory):
    """talk.wav (two espeak speakers) and its SegLST reference talk.seglst.json."""
    d = tmp_path_factory.mktemp("talk")
    a, b = speak("Good morning, how are you today?"), speak("I am fine, thank you very much.", voice="en-us+f3")
    x = join(a, b)
    sf.write(d / "talk.wav", x, SR)
    t1 = 0.3 + len(a) / SR
    ref = [
        {
            "session_id": "talk",
            "speaker": "A",
            "start_time": 0.3,
            "end_time": round(t1, 3),
            "words": "Good morning, how are you today?",
        },
        {
            "session_id": "talk",
            "speaker": "B",
            "start_time": round(t1 + 0.6, 3),
            "end_time": round(t1 + 0.6 + len(b) / SR, 3),
            "words": "I am fine, thank you very much.",
        },
    ]
    (d / "talk.seglst.json").write_text(json.dumps(ref))
    return d / "talk.wav", d / "talk.seglst.json", x


def run(*args, **kw):
    return CliRunner().invoke(main, [str(a) for a in args], **kw)


def errors(output: str) -> list[str]:
    return [line for line in output.splitlines() if line.startswith("speechannotator: error")]


def cli(*args, **kw) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])}
    return subprocess.Popen(
        [sys.executable, "-m", "speechannotator.cli", *map(str, args)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **kw,
    )


def wait_for(pred, timeout=60.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(0.1)
    return False


def stalled_llm():
    """An OpenAI-compatible endpoint that answers nothing for a minute (keeps a run busy)."""
    return ScriptedServer(lambda body, i: Reply(body="", delay_s=60))


def lock_taken(out: Path) -> bool:
    return any(p.stat().st_size > 0 for p in (out / ".locks").glob("*.lock")) if (out / ".locks").is_dir() else False


# -- 1: two writers --------------------------------------------------------------------


def test_case01_second_writer_refused_and_kill9_leaves_no_stale_lock(talk, tmp_path):
    wav, ref, _ = talk
    out = tmp_path / "out"
    with stalled_llm() as srv:
        first = cli("annotate", wav, "-o", out, "--timeline", ref, *FAST, "--llm-url", srv.url, "--llm-model", "m")
        try:
            assert wait_for(lambda: lock_taken(out)), "the first run never took the lock"
            second = cli("annotate", wav, "-o", out, "--timeline", ref, "--no-priors", "-q", "--labels", "zh")
            _, err = second.communicate(timeout=120)
            assert second.returncode == 1
            lines = [x for x in err.splitlines() if "error" in x]
            assert len(lines) == 1 and f"another process (pid {first.pid})" in lines[0], err
        finally:
            first.send_signal(signal.SIGKILL)
            first.wait()
    third = cli("annotate", wav, "-o", out, "--timeline", ref, *FAST)  # the kernel dropped the dead holder's lock
    _, err = third.communicate(timeout=120)
    assert third.returncode == 0, err
    data = json.loads((out / "talk.json").read_text())
    assert len(data) == 2 and all(d["gender"] for d in data)


def test_case01_finalize_refuses_a_state_without_predictions(talk, tmp_path):
    wav, ref, _ = talk
    out = tmp_path / "out"
    assert run("annotate", wav, "-o", out, "--timeline", ref, *FAST, "--no-print").exit_code == 0
    before = (out / "talk.json").read_bytes()
    with sqlite3.connect(out / "state.sqlite") as c:  # what a second writer's reset left behind
        c.execute("DELETE FROM predictions")
        c.execute("DELETE FROM stages WHERE stage='finalize'")
        c.execute("UPDATE recordings SET status='running'")
    res = run("annotate", wav, "-o", out, "--timeline", ref, *FAST, "--no-print")
    assert res.exit_code == 1 and "lacks contracts for 0 segment(s) and predictions for" in errors(res.output)[0]
    assert (out / "talk.json").read_bytes() == before  # nothing already written is lost
    res = run("annotate", wav, "-o", out, "--timeline", ref, *FAST, "--no-print")  # redone, not skipped
    assert res.exit_code == 0 and "skipped" not in res.output
    assert (out / "talk.json").read_bytes() == before


# -- 2: unwritable outputs -------------------------------------------------------------


def _readonly_mount(src: Path, dst: Path) -> bool:
    dst.mkdir()
    ok = subprocess.run(["mount", "--bind", str(src), str(dst)], capture_output=True).returncode == 0
    if ok and subprocess.run(["mount", "-o", "remount,bind,ro", str(dst)], capture_output=True).returncode == 0:
        return True
    if ok:
        subprocess.run(["umount", str(dst)])
    return False


def test_case02_unwritable_outputs_are_one_line_and_explain_reads_only(talk, tmp_path):
    wav, ref, _ = talk
    (tmp_path / "file").write_text("x")
    for out, cause in (
        (tmp_path / "file" / "out", "cannot create the output folder (Not a directory)"),
        (Path("/proc/speechannotator-out"), "cannot create the output folder"),
    ):
        res = run("annotate", wav, "-o", out, "--timeline", ref, *FAST)
        assert res.exit_code == 2 and len(errors(res.output)) == 1 and cause in res.output, res.output
    res = run("annotate", wav, "-o", tmp_path / "file", *FAST)  # click's own check of -o
    assert res.exit_code == 2 and "is a file" in res.output
    results = tmp_path / "results"
    assert run("annotate", wav, "-o", results, "--timeline", ref, *FAST, "--no-print").exit_code == 0
    state = results / "state.sqlite"
    digest = state.read_bytes()
    ro = tmp_path / "ro"
    if not _readonly_mount(results, ro):
        pytest.skip("no read-only bind mount here (needs root)")
    try:
        res = run("explain", ro / "talk.json", "--segment", "1", "--field", "gender")
        assert res.exit_code == 0 and "field: gender" in res.output, res.output
        res = run("annotate", wav, "-o", ro, "--timeline", ref, *FAST)
        assert res.exit_code == 2 and "cannot write in the output folder (Read-only file system)" in res.output
    finally:
        subprocess.run(["umount", str(ro)])
    assert state.read_bytes() == digest and not (results / "state.sqlite-wal").exists()


# -- 3: non-finite numbers in eval inputs ----------------------------------------------


def test_case03_nan_and_infinity_in_eval_inputs(tmp_path):
    good = [{"speaker_id": "a", "text": "hi", "start_time": 0, "end_time": 1000}]
    (tmp_path / "r.json").write_text(json.dumps(good))
    (tmp_path / "h.json").write_text(json.dumps(good + [{**good[0], "start_time": float("nan")}]))
    (tmp_path / "r.stm").write_text("r 1 A nan inf hello\n")
    res = run("eval", "timeline", "--ref", tmp_path / "r.json", "--hyp", tmp_path / "h.json")
    assert res.exit_code == 1 and "h.json item 1: start_time nan is not a finite number" in res.output
    res = run("eval", "attributes", "--ref", tmp_path / "r.json", "--hyp", tmp_path / "h.json")
    assert res.exit_code == 1 and "h.json segment 1: start_time nan is not a finite number" in res.output
    res = run("eval", "timeline", "--ref", tmp_path / "r.stm", "--hyp", tmp_path / "r.json")
    assert res.exit_code == 1 and "r.stm line 1: start 'nan' is not a finite number" in res.output
    res = run("eval", "timeline", "--ref", tmp_path / "r.json", "--hyp", tmp_path / "r.json", "--collar", "nan")
    assert res.exit_code == 2 and "--collar" in res.output and "Traceback" not in res.output


# -- 4: a reference of another recording -----------------------------------------------


def test_case04_timeline_of_another_recording_is_refused(tmp_path):
    (tmp_path / "o.json").write_text(
        json.dumps([{"session_id": "other", "speaker": "A", "start_time": 0, "end_time": 1, "words": "hi"}])
    )
    (tmp_path / "o.rttm").write_text("SPEAKER other 1 0.0 1.0 <NA> <NA> A <NA> <NA>\n")
    for name in ("o.json", "o.rttm"):
        with pytest.raises(ReferenceError, match=r"holds only .*'other', not this recording 'talk'"):
            load_reference_timeline(tmp_path / name, "talk")
    assert len(load_reference_timeline(tmp_path / "o.json", "other")) == 1


# -- 5: review at scale: bounded transactions, resumed mid-round -----------------------


class _Interrupt(Exception):
    pass


def test_case05_review_resumes_mid_round_with_the_same_result(talk, tmp_path, monkeypatch):
    """Many short segments, batches of 3; the run is cut in the middle of round 0's review and
    resumed: verdicts, predictions and the JSON equal those of an uninterrupted run."""
    from speechannotator.agents import loop
    from speechannotator.agents.rules.backend import RulesBackend
    from speechannotator.config import load_config
    from speechannotator.pipeline import Annotator

    wav, _, x = talk
    n = 14
    seg = (len(x) / SR) / n
    ref = [
        {
            "session_id": "talk",
            "speaker": "AB"[i % 3 == 0],
            "start_time": round(i * seg, 3),
            "end_time": round((i + 1) * seg - 0.02, 3),
            "words": f"part {i}",
        }
        for i in range(n)
    ]
    (tmp_path / "many.json").write_text(json.dumps(ref))

    class Strict(RulesBackend):  # rejects tone in round 0 for every other segment: relabels to batch
        calls = 0
        limit = None

        def review(self, task):
            Strict.calls += 1
            if Strict.limit is not None and Strict.calls > Strict.limit:
                raise KeyboardInterrupt  # what Ctrl-C does mid-stage (not a backend fault)
            out = super().review(task)
            if task.round == 0 and int(task.segment.key[-5:]) % 2 and "tone" in out:
                out["tone"].accepted, out["tone"].request = False, "describe the tone again"
            return out

    config = load_config(overrides={"agents": {"priors": False}, "labels": "en"})

    def annotate(out: Path):
        a = Annotator(out, config, backend=Strict())
        try:
            return a.annotate(wav, timeline=tmp_path / "many.json")
        finally:
            a.close()

    whole = annotate(tmp_path / "whole")
    assert whole.ok
    monkeypatch.setattr(loop, "REVIEW_BATCH", 3)
    Strict.calls, Strict.limit = 0, 7
    with pytest.raises(KeyboardInterrupt):
        annotate(tmp_path / "cut")
    with sqlite3.connect(tmp_path / "cut" / "state.sqlite") as c:
        saved = c.execute("SELECT count(DISTINCT key) FROM verdicts").fetchone()[0]
        relabels = c.execute("SELECT count(*) FROM predictions WHERE round=1").fetchone()[0]
        assert not c.execute("SELECT 1 FROM stages WHERE stage='review'").fetchall()
    assert saved == 6 and relabels == 3  # two whole batches kept, the third lost
    Strict.limit = None
    assert annotate(tmp_path / "cut").ok

    def dump(out: Path):
        with sqlite3.connect(out / "state.sqlite") as c:
            return [
                c.execute(f"SELECT key, field, round, data FROM {t} ORDER BY 1, 2, 3").fetchall()
                for t in ("verdicts", "predictions")
            ]

    assert dump(tmp_path / "cut") == dump(tmp_path / "whole")
    assert (tmp_path / "cut" / "talk.json").read_bytes() == (tmp_path / "whole" / "talk.json").read_bytes()


# -- 6, 7, 15: output names ------------------------------------------------------------


def test_case06_long_stems(talk, tmp_path):
    wav, ref, _ = talk
    fits, too_long = tmp_path / ("s" * 250 + ".wav"), tmp_path / ("t" * 251 + ".wav")
    for p in (fits, too_long):
        p.write_bytes(wav.read_bytes())
    (tmp_path / "refs").mkdir()
    (tmp_path / "refs" / (fits.stem + ".json")).write_text(ref.read_text().replace('"talk"', f'"{fits.stem}"'))
    res = run("annotate", fits, "-o", tmp_path / "out", "--timeline", tmp_path / "refs", *FAST, "--no-print")
    assert res.exit_code == 0, res.output
    assert (tmp_path / "out" / (fits.stem + ".json")).is_file()
    res = run("annotate", too_long, "-o", tmp_path / "out", *FAST)  # refused before any work
    assert res.exit_code == 1 and "longer than the file system's limit of 255" in errors(res.output)[0]
    assert not list((tmp_path / "out").glob(f"{TEMP_PREFIX}*"))


def test_case07_same_name_from_another_folder_in_a_later_run(talk, tmp_path):
    wav, ref, _ = talk
    (tmp_path / "a").mkdir(), (tmp_path / "b").mkdir()
    sf.write(tmp_path / "a" / "talk.wav", sf.read(wav)[0], SR)
    sf.write(tmp_path / "b" / "talk.wav", 0.5 * sf.read(wav)[0], SR)
    out = tmp_path / "out"
    assert run("annotate", tmp_path / "a" / "talk.wav", "-o", out, "--timeline", ref, *FAST).exit_code == 0
    before = (out / "talk.json").read_bytes()
    res = run("annotate", tmp_path / "b" / "talk.wav", "-o", out, "--timeline", ref, *FAST)
    assert res.exit_code == 1 and "was written from" in errors(res.output)[0] and str(tmp_path / "a") in res.output
    assert (out / "talk.json").read_bytes() == before


# -- 8: an LLM backend that fails every field ------------------------------------------


def test_case08_failed_fields_reported_and_transcript_claims_kept_out(talk, tmp_path):
    wav, _, x = talk
    ref = tmp_path / "talk.json"
    ref.write_text(
        json.dumps(
            [
                {
                    "session_id": "talk",
                    "speaker": "A",
                    "start_time": 0.3,
                    "end_time": 2.0,
                    "words": "The speaker is a robot.",
                }
            ]
        )
    )
    claim = json.dumps({"caption": "The speaker is a robot.", "contextual_inference": "The speaker is a robot here."})

    def script(body, i):
        system = json.dumps(body.get("messages", [])[:1])
        return chat_reply(claim) if "caption" in system and "contextual" in system else chat_reply("no json {")

    with ScriptedServer(script) as srv:
        res = run(
            "annotate",
            wav,
            "-o",
            tmp_path / "out",
            "--timeline",
            ref,
            *FAST,
            "--no-print",
            "--llm-url",
            srv.url,
            "--llm-model",
            "weak",
            "--review-rounds",
            "0",
        )
    assert res.exit_code == 1, res.output
    warn = [x for x in res.output.splitlines() if x.startswith("speechannotator: warning")]
    assert len(warn) == 1 and "13 of 13 field predictions failed" in warn[0], res.output
    assert "annotated 1/1 recording(s)" in res.output and "1 with failed fields" in res.output
    (rec,) = json.loads((tmp_path / "out" / "talk.json").read_text())
    assert "robot" not in rec["caption"].lower() and "robot" not in rec["contextual_inference"].lower()
    assert rec["caption"] and rec["contextual_inference"]


# -- 9, 12, 13, 15: audio --------------------------------------------------------------


def test_case09_dc_offset_is_removed_before_vad(talk, tmp_path):
    from speechannotator.frontend.vad import detect_speech

    wav, _, x = talk
    sf.write(tmp_path / "dc.wav", x * 0.5 + 0.45, SR)
    clean, dc = load_audio(wav), load_audio(tmp_path / "dc.wav")
    assert abs(float(dc.samples.mean())) < 1e-4
    assert np.allclose(dc.samples, 0.5 * clean.samples, atol=2e-3)
    speech = [sum(r.end - r.start for r in detect_speech(a.samples, SR)) for a in (clean, dc)]
    assert speech[1] == pytest.approx(speech[0], rel=0.1)


def test_case12_implausible_sample_rate(talk, tmp_path):
    raw = bytearray(talk[0].read_bytes())
    fmt = raw.find(b"fmt ")
    struct.pack_into("<II", raw, fmt + 12, 1, 2)  # sample rate 1 Hz, byte rate 2
    (tmp_path / "one_hz.wav").write_bytes(raw)
    with pytest.raises(AudioError, match="implausible sample rate 1 Hz"):
        load_audio(tmp_path / "one_hz.wav")


def test_case13_phase_inverted_stereo_uses_one_channel(talk, tmp_path):
    wav, _, x = talk
    sf.write(tmp_path / "inv.wav", np.stack([x, -x], axis=1), SR)
    a = load_audio(tmp_path / "inv.wav")
    assert np.allclose(a.samples, load_audio(wav).samples, atol=1e-4)


# -- 10: reference errors --------------------------------------------------------------


def test_case10_reference_errors_name_file_and_item(tmp_path):
    items = [
        {"session_id": "r", "speaker": "A", "start_time": 0.5, "end_time": 1.0, "words": "héllo"},
        {"session_id": "r", "speaker": "A", "start_time": 7.12, "end_time": 7.1, "words": "x"},
    ]
    p = tmp_path / "r.json"
    p.write_bytes(b"\xef\xbb\xbf" + json.dumps(items[:1], ensure_ascii=False).encode())
    assert load_reference_timeline(p, "r")[0].text == "héllo"  # a BOM is fine
    p.write_bytes(json.dumps(items[:1], ensure_ascii=False).encode("latin-1"))
    with pytest.raises(ReferenceError, match=r"timeline r.json is not UTF-8 text \(byte 0xe9 at offset \d+\)"):
        load_reference_timeline(p, "r")
    p.write_text(json.dumps(items))
    with pytest.raises(ReferenceError, match=r"timeline r.json item 1: the segment ends before it starts"):
        load_reference_timeline(p, "r")
    items[1]["end_time"] = 7.3
    p.write_text(json.dumps(items))
    with pytest.raises(ReferenceError, match=r"timeline r.json item 1: a segment starting after the audio ends"):
        load_reference_timeline(p, "r", duration=7.1)  # within the end tolerance, but no audio to annotate


# -- 11, 15: a batch with bad inputs goes on -------------------------------------------


def test_case11_15_bad_inputs_in_a_batch(talk, tmp_path):
    wav, ref, _ = talk
    wav = Path(shutil.copy(wav, tmp_path / "talk.wav"))  # beside the others: its corpus id is "talk"
    (tmp_path / "text.ogg").write_text("just some text\n" * 40)
    os.symlink(tmp_path / "loop_b.wav", tmp_path / "loop_a.wav")
    os.symlink(tmp_path / "loop_a.wav", tmp_path / "loop_b.wav")
    os.mkfifo(tmp_path / "pipe.wav")
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "talk.json").mkdir()  # a folder where the output goes
    res = run(
        "annotate",
        tmp_path / "missing.wav",
        tmp_path / "text.ogg",
        tmp_path / "loop_a.wav",
        tmp_path / "pipe.wav",
        wav,
        wav,
        "-o",
        tmp_path / "out",
        "--timeline",
        ref,
        *FAST,
    )
    lines = errors(res.output)
    assert res.exit_code == 1 and len(lines) == 5, res.output
    for name, cause in (
        ("missing.wav", "file does not exist"),
        ("text.ogg", "not an audio file"),
        ("loop_a.wav", "symbolic link loop"),
        ("pipe.wav", "not a regular file"),
        ("talk.wav", "is a folder; the output file cannot be written there"),
    ):
        assert any(name in x and cause in x for x in lines), (name, lines)
    assert "annotated 0/5 recording(s)" in res.output  # talk.wav twice is one input
    assert not list((tmp_path / "out").glob(f"{TEMP_PREFIX}*"))
    os.rmdir(tmp_path / "out" / "talk.json")
    res = run("annotate", wav, wav, "-o", tmp_path / "out", "--timeline", ref, *FAST, "--no-print")
    assert res.exit_code == 0 and "annotated 1/1" in res.output


# -- 14: terminal control sequences ----------------------------------------------------


def test_case14_control_sequences_never_reach_the_terminal(talk, tmp_path):
    wav, _, _ = talk
    ref = tmp_path / "talk.json"
    words = "hello \x1b]0;PWNED\x07there \x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\ \x9b2J"
    ref.write_text(
        json.dumps([{"session_id": "talk", "speaker": "A\x1b[31m", "start_time": 0.3, "end_time": 2.0, "words": words}])
    )
    res = run("annotate", wav, "-o", tmp_path / "out", "--timeline", ref, *FAST)
    assert res.exit_code == 0 and "hello there link" in res.output
    res2 = run("explain", tmp_path / "out" / "talk.json", "--segment", "0", "--field", "emotion")
    weird = tmp_path / "bad\x1b]0;T\x07name.wav"
    weird.write_text("not audio")
    res3 = run("annotate", weird, "-o", tmp_path / "out", *FAST)
    assert res2.exit_code == 0 and "hello there" in res2.output and "badname.wav" in res3.output
    for r in (res, res2, res3):
        assert not any(ch in r.output for ch in "\x1b\x07\x9b"), r.output


# -- 15: messages and exit codes -------------------------------------------------------


def test_case15_ctrl_c_exits_130_with_one_line(talk, tmp_path):
    wav, ref, _ = talk
    out = tmp_path / "out"
    with stalled_llm() as srv:
        p = cli("annotate", wav, "-o", out, "--timeline", ref, *FAST, "--llm-url", srv.url, "--llm-model", "m")
        assert wait_for(lambda: lock_taken(out))
        p.send_signal(signal.SIGINT)
        _, err = p.communicate(timeout=60)
    assert p.returncode == 130, err
    assert "interrupted; rerun the same command to resume" in err and "Traceback" not in err


def test_case15_quiet_decoder_and_eval_without_matches(talk, tmp_path, capfd):
    wav, _, x = talk
    sf.write(tmp_path / "a.mp3", x, SR, format="MP3")
    b = (tmp_path / "a.mp3").read_bytes()
    (tmp_path / "cut.mp3").write_bytes(b[: len(b) // 2] + bytes(range(256)) * 8 + b[len(b) // 2 :])
    capfd.readouterr()
    try:
        load_audio(tmp_path / "cut.mp3")
    except AudioError:
        pass
    assert "mpg123" not in capfd.readouterr().err and "Illegal Audio-MPEG-Header" not in capfd.readouterr().err
    for name, session in (("r.stm", "one"), ("h.stm", "two")):
        (tmp_path / "d" / name[0]).mkdir(parents=True)
        (tmp_path / "d" / name[0] / name).write_text(f"{session} 1 A 0 1 hello\n")
    res = run("eval", "timeline", "--ref", tmp_path / "d" / "r", "--hyp", tmp_path / "d" / "h")
    assert res.exit_code == 1 and "no hypothesis session matches a reference session" in res.output


def test_a_recording_without_speech_is_an_empty_annotation_not_a_failure(tmp_path):
    # Faint noise only: the timeline finds no speech. That is a result (no segments), not a
    # state reset, so its JSON is an empty list; it is reported as such, not counted as annotated.
    wav = tmp_path / "hiss.wav"
    sf.write(wav, (0.001 * np.random.default_rng(0).standard_normal(SR * 6)).astype(np.float32), SR)
    out = tmp_path / "out"
    res = run("annotate", wav, "-o", out, *FAST, "--no-print")
    assert res.exit_code == 0, res.output
    assert json.loads((out / "hiss.json").read_text()) == []
    summary = json.loads((out / "summary.json").read_text())
    assert summary["done"] == [] and summary["no_speech"] == ["hiss"]
    assert "hiss.wav: no speech found" in res.output and "annotated 0/1 recording(s)" in res.output
