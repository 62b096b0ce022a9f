"""Whole pipeline vs bare faster-whisper on the CPU default: ratio, per-stage RTF, peak memory.

    nice -n 10 .venv/bin/python -m benchmarks.pipeline_bench [--cases short,long] [--before OLD/src]
    .venv/bin/python -m benchmarks.pipeline_bench --cases 2h --no-bare   # peak memory, 2 hours

Cases (real voices, nothing downloaded; built once into benchmarks/data/speed/): ``short`` =
eight recordings of 20-60 s (about 310 s: the bundled example, the LibriVox reader of Debian's
pocketsphinx-testdata, the Mandarin lecture shipped in the ``fasr`` wheel, some with noise or a
music bed) annotated by one Annotator in one process, as ``speechannotator annotate`` does with
several files; ``long`` = one 10-minute recording of the reader and the lecturer taking turns;
``silent`` = 5 minutes of faint room noise around one 3-second utterance; ``2h`` = two hours.
Bare faster-whisper is what a user runs without this project: the same shipped Whisper base
(int8), Silero VAD on, word timestamps, faster-whisper's default beam 5, one model for the
batch. Both run in fresh processes, one after the other on the same files, model loading
included; the ratio is pipeline time over bare time, wall and CPU (CPU time is what the code
costs; the machine's other load inflates wall time). The load average is printed beside it.
`--before OLD/src` also runs an older checkout's pipeline (PYTHONPATH) on the same files, beside the same bare run.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from functools import cache
from pathlib import Path

import numpy as np
import soundfile as sf

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "benchmarks" / "data" / "speed"
SR = 16000
STAGES = ("load", "vad", "diarize", "transcribe", "word_changes", "refine", "enhance", "extract_priors")
STAGES += ("plan", "label", "review", "finalize")  # the keys of AnnotationResult.timings, in stage order


def _recordings(module: str):
    """A recording-builder module of the package, imported only when a file is built: a --before
    child runs an older package, which may not have it."""
    return importlib.import_module(f"speechannotator.evaluation.recordings.{module}")


@cache
def mandarin_lecture() -> np.ndarray:
    """The fasr wheel's real 70 s Mandarin lecture (one man), 16 kHz mono."""
    spec = importlib.util.find_spec("fasr")  # located, not imported (its imports need extras)
    if spec is None or not spec.origin:
        raise SystemExit("the fasr wheel is not installed (scripts/setup.sh installs it)")
    x, sr = sf.read(Path(spec.origin).resolve().parent / "asset/example/vad_example.wav", dtype="float32")
    assert sr == SR and x.ndim == 1
    return x


def _lv(i: int) -> np.ndarray:
    clips = _recordings("known_truth").librivox()
    return clips[i % len(clips)][0]


def _zh(a: float, b: float) -> np.ndarray:
    return mandarin_lecture()[int(a * SR) : int(b * SR)]


def _join(pieces: list[np.ndarray], rng: np.random.Generator, pause: tuple[float, float] = (0.4, 1.4)) -> np.ndarray:
    out = [np.zeros(int(0.5 * SR), np.float32)]
    for p in pieces:
        out += [p.astype(np.float32), np.zeros(int(rng.uniform(*pause) * SR), np.float32)]
    return np.concatenate(out)


def _built(name: str, make) -> Path:
    """DATA/<name>.flac, built by `make()` the first time."""
    path = DATA / f"{name}.flac"
    if not path.exists():
        DATA.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp.flac")
        sf.write(tmp, np.clip(make(), -1, 1), SR, subtype="PCM_16")
        tmp.replace(path)
    return path


def short_batch() -> list[Path]:
    rng = np.random.default_rng(13)
    recipes = {
        "s1_example": lambda: sf.read(ROOT / "examples" / "dialogue.flac", dtype="float32")[0],
        "s2_reader": lambda: _join([_lv(i) for i in range(5)], rng),
        "s3_reader_long": lambda: _join([_lv(i) for i in (4, 2, 0, 3, 1, 0, 2, 4, 1)], rng, (0.6, 2.0)),
        "s4_lecture_a": lambda: _zh(0.0, 30.0),
        "s5_lecture_b": lambda: _zh(30.0, 70.5),
        "s6_reader_pink10": lambda: _recordings("espeak_conversations").add_noise(
            _join([_lv(i) for i in (1, 3, 0, 2, 4)], rng), "pink", 10.0, seed=6
        ),
        "s7_lecture_music": lambda: _recordings("espeak_conversations").add_noise(
            _zh(12.0, 58.0), "music", 15.0, seed=7
        ),
        "s8_reader_lecture": lambda: _join([_lv(0), _zh(5.0, 14.0), _lv(2), _zh(20.0, 27.0), _lv(3)], rng),
    }
    return [_built(name, make) for name, make in recipes.items()]


def long_recording(seconds: float) -> Path:
    """Reader and lecturer taking turns, with pauses and a few long silences, `seconds` long."""

    def make() -> np.ndarray:
        rng = np.random.default_rng(int(seconds))
        pieces, total = [], 0.5
        zh_len = len(mandarin_lecture()) / SR
        while total < seconds:
            r = rng.random()
            if r < 0.45:
                x = _lv(int(rng.integers(5)))
            elif r < 0.9:
                a = float(rng.uniform(0, zh_len - 12))
                x = _zh(a, a + float(rng.uniform(3, 12)))
            else:
                x = np.zeros(int(rng.uniform(3, 10) * SR), np.float32)  # a long silence
            pieces.append(x)
            total += len(x) / SR + 0.9
        y = _join(pieces, rng, (0.3, 1.5))[: int(seconds * SR)]
        return _recordings("espeak_conversations").add_noise(y, "pink", 30.0, seed=int(seconds))

    return _built(f"long_{int(seconds)}s", make)


def mostly_silent(seconds: float = 300.0, speech_at: float = 150.0) -> Path:
    """`seconds` of faint pink room noise (-66 dBFS) with one 3-second LibriVox utterance."""

    def make() -> np.ndarray:
        rng = np.random.default_rng(5)
        spec = np.fft.rfft(rng.normal(size=int(seconds * SR)))
        spec[1:] /= np.sqrt(np.arange(1, len(spec)))
        noise = np.fft.irfft(spec, int(seconds * SR))
        y = (noise / np.sqrt(np.mean(noise**2)) * 10 ** (-66 / 20)).astype(np.float32)
        x = _lv(1)  # "he was not an ill disposed young man", 3.0 s
        y[int(speech_at * SR) : int(speech_at * SR) + len(x)] += x
        return y

    return _built(f"silent_{int(seconds)}s", make)


CASES = {
    "short": short_batch,
    "long": lambda: [long_recording(600.0)],
    "silent": lambda: [mostly_silent()],
    "2h": lambda: [long_recording(7200.0)],
}


def child_pipeline(out_dir: str, files: list[str]) -> dict:
    from speechannotator.pipeline import Annotator

    annotator = Annotator(out_dir)
    runs = []
    for f in files:
        r = annotator.annotate(f)
        if not r.ok:
            raise SystemExit(f"{f}: {r.error}")
        runs.append({"file": Path(f).name, "duration": r.duration, "timings": r.timings})
    annotator.close()
    return {"runs": runs}


def child_bare(beam: int, files: list[str]) -> dict:
    from faster_whisper import WhisperModel

    from speechannotator.assets import whisper_base_dir

    threads = min(4, len(os.sched_getaffinity(0)))  # faster-whisper's defaults apart from the model
    model = WhisperModel(str(whisper_base_dir()), device="cpu", compute_type="int8", cpu_threads=threads)
    for f in files:
        segs, _ = model.transcribe(f, beam_size=beam, vad_filter=True, word_timestamps=True)
        list(segs)
    return {}


def child(mode: str, arg: str, files: list[str]) -> None:
    """One measured process: prints one JSON line with its wall and CPU time and peak RSS."""
    w, c, load0 = time.perf_counter(), time.process_time(), os.getloadavg()[0]
    res = child_pipeline(arg, files) if mode == "pipeline" else child_bare(int(arg), files)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    res.update(
        wall=time.perf_counter() - w, cpu=time.process_time() - c, peak_mb=peak, load=[load0, os.getloadavg()[0]]
    )
    print(json.dumps(res))


def run_child(mode: str, arg: str, files: list[Path], src: str | None = None) -> dict:
    cmd = [sys.executable, "-m", "benchmarks.pipeline_bench", "--child", mode, arg, *map(str, files)]
    env = {**os.environ, "PYTHONPATH": src} if src else None  # src: another checkout's package
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env=env)
    if proc.returncode != 0:
        raise SystemExit(f"{mode} run failed:\n{proc.stderr[-4000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def report(name: str, files: list[Path], bare: dict | None, pipe: dict) -> dict:
    dur = sum(r["duration"] for r in pipe["runs"])
    sums: dict[str, float] = defaultdict(float)
    for r in pipe["runs"]:
        for k, v in r["timings"].items():
            sums[k] += v
    print(f"\n## {name}: {len(files)} file(s), {dur:.0f} s of audio\n{'stage':<16}{'wall s':>9}{'RTF':>8}")
    for st in (*STAGES, "total"):
        if st in sums:
            print(f"{st if st != 'total' else 'sum of files':<16}{sums[st]:>9.2f}{sums[st] / dur:>8.3f}")
    row = {"case": name, "audio_s": dur, "stages": dict(sums)}
    for who, r in [("pipeline", pipe)] + ([("bare", bare)] if bare else []):
        row.update({f"{who}_{k}": r[k] for k in ("wall", "cpu", "peak_mb", "load")})
        print(
            f"{who + ':':<10} wall {r['wall']:.1f} s (RTF {r['wall'] / dur:.3f}), CPU {r['cpu']:.1f} s, "
            f"peak {r['peak_mb']:.0f} MB, load {r['load'][0]:.1f} -> {r['load'][1]:.1f}"
        )
    if bare is not None:
        row.update(ratio_wall=pipe["wall"] / bare["wall"], ratio_cpu=pipe["cpu"] / bare["cpu"])
        print(f"RATIO pipeline / bare faster-whisper: wall {row['ratio_wall']:.2f}x, CPU {row['ratio_cpu']:.2f}x")
    return row


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(sys.argv[2], sys.argv[3], sys.argv[4:])
        return
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", default="short,long", help=f"comma-separated: {', '.join(CASES)}")
    ap.add_argument("--repeat", type=int, default=1, help="alternate bare and pipeline runs this many times")
    ap.add_argument("--bare-beam", type=int, default=5)
    ap.add_argument("--no-bare", action="store_true", help="pipeline only (stage profile, the 2-hour memory check)")
    ap.add_argument("--files", type=int, help="only the first N files of each case (a quick check)")
    ap.add_argument("--json", type=Path, help="also write the rows here")
    ap.add_argument("--before", help="PYTHONPATH of an older checkout (its src): its pipeline runs beside, same files")
    args = ap.parse_args()
    rows = []
    for name in args.cases.split(","):
        if name not in CASES:
            raise SystemExit(f"unknown case {name!r} ({', '.join(CASES)})")
        files = CASES[name]()[: args.files]
        for _ in range(args.repeat):
            bare = None if args.no_bare else run_child("bare", str(args.bare_beam), files)
            for case, src in [(name, None)] + ([(f"{name}-before", args.before)] if args.before else []):
                with tempfile.TemporaryDirectory() as out:
                    rows.append(report(case, files, bare, run_child("pipeline", out, files, src)))
    print("\nsummary (goal: CPU ratio <= 1.5, peak < 3000 MB on 2 h); machine cores:", os.cpu_count())
    for r in rows:
        ratio = f"ratio wall {r['ratio_wall']:.2f}x CPU {r['ratio_cpu']:.2f}x  " if "ratio_wall" in r else ""
        print(
            f"{r['case']:<13} {r['audio_s']:>6.0f} s  {ratio}pipeline RTF {r['pipeline_wall'] / r['audio_s']:.3f}  "
            f"peak {r['pipeline_peak_mb']:.0f} MB  load {r['pipeline_load'][1]:.1f}"
        )
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
