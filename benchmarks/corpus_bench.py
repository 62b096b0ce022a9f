"""Corpus throughput: the local engine beside the Ray engine (1 and 2 workers) on the same cores.

Builds a corpus of recordings (default 20) of one to three speakers each: LibriVox readers (real
recorded voices from Debian's pocketsphinx-testdata) and espeak-ng voices, in two folders that
reuse file names (as corpora do). Each configuration annotates the corpus from scratch in a fresh
process on the CPU default and reports:

- wall time (model loading and Ray start-up included) and audio-h per hour;
- audio-h per CPU-h: audio hours / (wall hours x the CPUs the run may use);
- peak resident memory per worker process (each recording's result carries its worker's peak);
- what one more Ray worker adds over one.

Results of the Ray runs are compared byte for byte with the local run's.

    .venv/bin/python benchmarks/corpus_bench.py [--recordings 20] [--turns 3] [--cpus 2] [--workers 1,2]
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

sys.path.insert(0, str(Path(__file__).resolve().parent))
from timeline_recordings import SR, build_conversation  # noqa: E402

DATA = Path(__file__).resolve().parent / "data" / "corpus"

# A fresh process per configuration: its memory and its Ray runtime are its own.
RUN = """
import json, sys
from speechannotator.engine import RayOptions, annotate_corpus
from speechannotator.engine.item_run import ItemResult
inp, out, engine, workers, cpus = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
results = []
s = annotate_corpus([inp], out, engine=engine, on_result=lambda item, r: results.append(r.to_json()),
                    ray_options=RayOptions(workers=workers, num_cpus=cpus))
print(json.dumps({"summary": s.to_json(), "results": results}))
"""


def build_corpus(n: int, turns: int) -> tuple[Path, float]:
    """n recordings in DATA/n{n}_t{turns}/{a,b}/rec_XX.flac (built once); returns (folder, audio seconds)."""
    root = DATA / f"n{n}_t{turns}"
    total = 0.0
    for i in range(n):
        path = root / ("a" if i % 2 == 0 else "b") / f"rec_{i // 2:02d}.flac"
        if not path.exists():
            conv = build_conversation(num_speakers=1 + i % 3, num_turns=turns, seed=100 + i)
            path.parent.mkdir(parents=True, exist_ok=True)
            sf.write(path, conv.samples, SR, subtype="PCM_16")
        total += sf.info(str(path)).duration
    return root, total


def run(corpus: Path, out: Path, engine: str, workers: int, cpus: int) -> dict:
    env = dict(os.environ)
    t = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-c", RUN, str(corpus), str(out), engine, str(workers), str(cpus)],
        capture_output=True,
        text=True,
        env=env,
    )
    if proc.returncode != 0:
        raise SystemExit(proc.stderr[-3000:])
    res = json.loads(proc.stdout.strip().splitlines()[-1])
    res["process_wall"] = time.perf_counter() - t
    return res


def outputs(out: Path) -> dict[str, bytes]:
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*.json")) if p.name != "summary.json"}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--recordings", type=int, default=20)
    ap.add_argument("--turns", type=int, default=3, help="turns per recording (about 4 s each)")
    ap.add_argument("--cpus", type=int, default=len(os.sched_getaffinity(0)), help="CPUs the runs may use")
    ap.add_argument("--workers", default="1,2", help="Ray pool sizes to measure")
    ap.add_argument("--reference", type=Path, help="an earlier local run's OUT to compare with (skips the local run)")
    args = ap.parse_args()
    corpus, seconds = build_corpus(args.recordings, args.turns)
    print(f"corpus: {args.recordings} recordings, {seconds / 60:.1f} min of audio, {args.cpus} CPUs")
    configs = [] if args.reference else [("local", 1)]
    configs += [("ray", int(w)) for w in args.workers.split(",")]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        ref = outputs(args.reference) if args.reference else None
        for engine, workers in configs:
            out = Path(tmp) / f"{engine}{workers}"
            res = run(corpus, out, engine, workers, args.cpus)
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
            rows.append(
                {
                    "engine": engine,
                    "workers": workers,
                    "wall_s": s["wall_time_s"],
                    "audio_h_per_h": hours / wall_h,
                    "audio_h_per_cpu_h": hours / (wall_h * args.cpus),
                    "peak_mb_per_worker": max(peaks.values()),
                    "workers_seen": len(peaks),
                    "same_as_local": same,
                }
            )
            print(json.dumps(rows[-1]))
    print(
        f"\n{'engine':<8}{'workers':>8}{'wall s':>9}{'audio-h/h':>11}{'audio-h/CPU-h':>15}"
        f"{'peak MB/worker':>16}  same as local"
    )
    for r in rows:
        same = "-" if r["same_as_local"] is None else ("yes" if r["same_as_local"] else "NO")
        print(
            f"{r['engine']:<8}{r['workers']:>8}{r['wall_s']:>9.1f}{r['audio_h_per_h']:>11.2f}"
            f"{r['audio_h_per_cpu_h']:>15.3f}{r['peak_mb_per_worker']:>16.0f}  {same}"
        )
    ray_rows = {r["workers"]: r for r in rows if r["engine"] == "ray"}
    if 1 in ray_rows and 2 in ray_rows:
        gain = ray_rows[2]["audio_h_per_h"] / ray_rows[1]["audio_h_per_h"]
        print(
            f"one more Ray worker (1 -> 2): throughput x{gain:.2f}, "
            f"+{ray_rows[2]['peak_mb_per_worker']:.0f} MB resident"
        )
    for r in rows:
        if r["audio_h_per_h"] > 0:
            print(
                f"1,000 audio-h at the {r['engine']}/{r['workers']} rate on {args.cpus} CPUs: "
                f"{1000 / r['audio_h_per_h']:.0f} h wall, {1000 / r['audio_h_per_cpu_h']:.0f} CPU-h"
            )


if __name__ == "__main__":
    main()
