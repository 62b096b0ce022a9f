"""Corpus throughput: the local engine beside the Ray engine (1 and 2 workers) on the same cores.

Builds a corpus of recordings (default 20) of one to three speakers each, in two folders that
reuse file names (as corpora do): with `--source real` (recommended) conversations of real
recorded voices through the channels real data comes through (clean, telephone, music bed,
room, noise; speechannotator.evaluation.recordings.real_voices, data from
scripts/fetch_real_voices.sh), with
`--source built` LibriVox readers spliced with espeak-ng voices. The source matters: clean
built voices pass the enhancement gate untouched, real noisy ones do not. Each configuration
annotates the corpus from scratch in a fresh process on the CPU default and reports:

- wall time (model loading and Ray start-up included) and audio-h per hour;
- audio-h per CPU-h: audio hours / (wall hours x the CPUs the run may use);
- peak resident memory per worker process (each recording's result carries its worker's peak);
- the steady-state rate: audio finished after the first recording over the time since it
  finished (model loading and Ray start-up excluded: what a long corpus run converges to);
- what one more Ray worker adds over one.

`--threads T` gives every worker T threads (OMP and CTranslate2); with `--threads 1` a Ray
pool of N workers uses N cores, so "one more worker" is measured on a core of its own, which is
how a cluster grows. The CPU-h denominators count the cores a run may use: `--cpus` for the
default threads, else workers x T.

Results of the Ray runs are compared byte for byte with the local run's.

    .venv/bin/python -m benchmarks.corpus_bench [--recordings 20] [--turns 3] [--cpus 2] [--workers 1,2]
        [--threads 1]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import soundfile as sf

from speechannotator.evaluation.recordings.espeak_conversations import SR, build_conversation
from speechannotator.evaluation.recordings.real_voices import VOICES, Spec, build, clips

DATA = Path(__file__).resolve().parent / "data" / "corpus"

# A fresh process per configuration: its memory and its Ray runtime are its own.
RUN = """
import json, sys, time
from speechannotator import Config
from speechannotator.engine import RayOptions, annotate_corpus
inp, out, engine, workers, cpus, threads = sys.argv[1], sys.argv[2], sys.argv[3], *map(int, sys.argv[4:7])
config = Config()
if threads:
    config = config.model_copy(update={"asr": config.asr.model_copy(update={"cpu_threads": threads})})
results = []
def keep(item, r):
    results.append({**r.to_json(), "finished": time.perf_counter()})
s = annotate_corpus([inp], out, config, engine=engine, on_result=keep,
                    ray_options=RayOptions(workers=workers, num_cpus=cpus))
print(json.dumps({"summary": s.to_json(), "results": results}))
"""


CHANNELS = ("clean", "telephone", "music", "reverb", "noise")


def real_spec(i: int, turns: int):
    """The i-th real-voice recording: 1-3 voices drawn by seed, channels in rotation. Only voices
    with several recorded utterances are drawn: a voice with one clip would say the same sentence
    turn after turn, which Whisper (rightly) drops as a repetition loop, and no corpus sounds so."""
    import numpy as np

    pool = sorted(v for v in VOICES if len(clips(v)) >= 4)
    rng = np.random.default_rng(500 + i)
    voices = tuple(str(v) for v in rng.choice(pool, size=1 + i % 3, replace=False))
    return Spec(f"corpus_{i:02d}", voices, 2 * turns, CHANNELS[i % len(CHANNELS)], 15.0, seed=500 + i)


def build_corpus(n: int, turns: int, source: str) -> tuple[Path, float]:
    """n recordings in DATA/{source}_n{n}_t{turns}/{a,b}/rec_XX.flac (built once); returns (folder, seconds)."""
    root = DATA / f"{source}_n{n}_t{turns}"
    total = 0.0
    for i in range(n):
        path = root / ("a" if i % 2 == 0 else "b") / f"rec_{i // 2:02d}.flac"
        if not path.exists():
            if source == "real":
                samples = build(real_spec(i, turns)).samples
            else:
                samples = build_conversation(num_speakers=1 + i % 3, num_turns=turns, seed=100 + i).samples
            path.parent.mkdir(parents=True, exist_ok=True)
            sf.write(path, samples, SR, subtype="PCM_16")
        total += sf.info(str(path)).duration
    return root, total


def run(corpus: Path, out: Path, engine: str, workers: int, cpus: int, threads: int) -> dict:
    env = dict(os.environ)
    if threads:
        env["OMP_NUM_THREADS"] = str(threads)  # Ray actors start with the driver's value
    t = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-c", RUN, str(corpus), str(out), engine, str(workers), str(cpus), str(threads)],
        capture_output=True,
        text=True,
        env=env,
    )
    if proc.returncode != 0:
        raise SystemExit(proc.stderr[-3000:])
    res = json.loads(proc.stdout.strip().splitlines()[-1])
    res["process_wall"] = time.perf_counter() - t
    return res


def steady_rate(results: list[dict]) -> float:
    """Audio-h per hour after the first recording finished (start-up and model loading excluded)."""
    done = sorted((r for r in results if r["status"] == "done"), key=lambda r: r["finished"])
    if len(done) < 2:
        return 0.0
    span_h = (done[-1]["finished"] - done[0]["finished"]) / 3600
    return sum(r["duration"] for r in done[1:]) / 3600 / span_h if span_h > 0 else 0.0


def outputs(out: Path) -> dict[str, bytes]:
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*.json")) if p.name != "summary.json"}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--recordings", type=int, default=20)
    ap.add_argument("--turns", type=int, default=3, help="turns per recording (about 4 s each)")
    ap.add_argument("--cpus", type=int, default=len(os.sched_getaffinity(0)), help="CPUs the runs may use")
    ap.add_argument("--workers", default="1,2", help="Ray pool sizes to measure")
    ap.add_argument("--source", choices=("real", "built"), default="real", help="real voices or espeak/LibriVox")
    ap.add_argument("--threads", type=int, default=0, help="threads per worker (0: the default, all CPUs)")
    ap.add_argument("--reference", type=Path, help="an earlier local run's OUT to compare with (skips the local run)")
    args = ap.parse_args()
    corpus, seconds = build_corpus(args.recordings, args.turns, args.source)
    print(
        f"corpus ({args.source} voices): {args.recordings} recordings, {seconds / 60:.1f} min of audio, "
        f"{args.cpus} CPUs, "
        f"threads per worker: {args.threads or 'default'}"
    )
    configs = [] if args.reference else [("local", 1)]
    configs += [("ray", int(w)) for w in args.workers.split(",")]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        ref = outputs(args.reference) if args.reference else None
        for engine, workers in configs:
            out = Path(tmp) / f"{engine}{workers}"
            res = run(corpus, out, engine, workers, args.cpus, args.threads)
            s = res["summary"]
            assert not s["failed"], s["failed"]
            peaks: dict[int, float] = {}
            for r in res["results"]:
                peaks[r["worker"]] = max(peaks.get(r["worker"], 0.0), r["peak_mb"])
            got = outputs(out)
            same = None if ref is None else got == ref
            ref = got if ref is None else ref
            hours = s["audio_hours"]
            wall_h = s["wall_time_s"] / 3600
            cores = min(args.cpus, workers * args.threads) if args.threads else args.cpus
            steady = steady_rate(res["results"])
            rows.append(
                {
                    "engine": engine,
                    "workers": workers,
                    "wall_s": s["wall_time_s"],
                    "audio_h_per_h": hours / wall_h,
                    "cores": cores,
                    "audio_h_per_cpu_h": hours / (wall_h * cores),
                    "steady_audio_h_per_h": steady,
                    "steady_audio_h_per_cpu_h": steady / cores,
                    "peak_mb_per_worker": max(peaks.values()),
                    "workers_seen": len(peaks),
                    "same_as_local": same,
                }
            )
            print(json.dumps(rows[-1]))
    print(
        f"\n{'engine':<8}{'workers':>8}{'cores':>6}{'wall s':>9}{'audio-h/h':>11}{'audio-h/CPU-h':>15}"
        f"{'steady a-h/h':>14}{'steady a-h/CPU-h':>18}{'peak MB/worker':>16}  same as local"
    )
    for r in rows:
        same = "-" if r["same_as_local"] is None else ("yes" if r["same_as_local"] else "NO")
        print(
            f"{r['engine']:<8}{r['workers']:>8}{r['cores']:>6}{r['wall_s']:>9.1f}{r['audio_h_per_h']:>11.2f}"
            f"{r['audio_h_per_cpu_h']:>15.3f}{r['steady_audio_h_per_h']:>14.2f}{r['steady_audio_h_per_cpu_h']:>18.3f}"
            f"{r['peak_mb_per_worker']:>16.0f}  {same}"
        )
    ray_rows = {r["workers"]: r for r in rows if r["engine"] == "ray"}
    if 1 in ray_rows and 2 in ray_rows:
        gain = ray_rows[2]["audio_h_per_h"] / ray_rows[1]["audio_h_per_h"]
        one, two = ray_rows[1]["steady_audio_h_per_h"], ray_rows[2]["steady_audio_h_per_h"]
        print(
            f"one more Ray worker (1 -> 2): throughput x{gain:.2f} whole run, "
            f"x{two / one if one else 0:.2f} steady state, +{ray_rows[2]['peak_mb_per_worker']:.0f} MB resident"
        )
    for r in rows:
        if r["audio_h_per_h"] > 0:
            print(
                f"1,000 audio-h at the {r['engine']}/{r['workers']} rate on {args.cpus} CPUs: "
                f"{1000 / r['audio_h_per_h']:.0f} h wall, {1000 / r['audio_h_per_cpu_h']:.0f} CPU-h"
                + (
                    f" (steady state: {1000 / r['steady_audio_h_per_cpu_h']:.0f} CPU-h)"
                    if r["steady_audio_h_per_h"]
                    else ""
                )
            )


if __name__ == "__main__":
    main()
