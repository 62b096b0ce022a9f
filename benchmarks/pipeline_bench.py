"""Whole pipeline vs bare faster-whisper on the CPU default: ratio, per-stage RTF, peak memory.

    PYTHONPATH=src nice -n 10 .venv/bin/python benchmarks/pipeline_bench.py [--cases short,long] [--repeat 1]
    PYTHONPATH=src .venv/bin/python benchmarks/pipeline_bench.py --cases 2h --no-bare   # peak memory, 2 hours

Cases (real voices, benchmarks/speed_recordings.py): ``short`` = eight recordings of 20-60 s
(about 310 s) annotated by one Annotator in one process, as ``speechannotator annotate`` does
with several files; ``long`` = one 10-minute recording; ``silent`` = 5 minutes with one
3-second utterance; ``2h`` = two hours (peak memory). Bare faster-whisper is what a user runs
without this project: the same shipped Whisper base (int8), Silero VAD on, word timestamps,
faster-whisper's default beam 5, one model for the whole batch. Both run in fresh processes,
one after the other on the same files, model loading included; the ratio is pipeline wall
time over bare wall time (and the same for CPU time, which the machine's other load does not
inflate). The load average before and after each run is printed beside it.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import speed_recordings as R  # noqa: E402
from profile_stages import run_child  # noqa: E402

STAGES = (
    "load",
    "vad",
    "diarize",
    "transcribe",
    "refine",
    "enhance",
    "extract_priors",
    "plan",
    "label",
    "review",
    "finalize",
)


def case_files(name: str) -> list[Path]:
    if name == "short":
        return R.short_batch()
    if name == "long":
        return [R.long_recording(600.0)]
    if name == "silent":
        return [R.mostly_silent()]
    if name == "2h":
        return [R.long_recording(7200.0)]
    raise SystemExit(f"unknown case {name!r} (short, long, silent, 2h)")


def stage_table(res: dict) -> tuple[float, dict[str, float]]:
    total = sum(r["duration"] for r in res["runs"])
    sums: dict[str, float] = defaultdict(float)
    for r in res["runs"]:
        for k, v in r["timings"].items():
            sums[k] += v
    return total, sums


def report(name: str, files: list[Path], bare: dict | None, pipe: dict) -> dict:
    dur, sums = stage_table(pipe)
    print(f"\n## {name}: {len(files)} file(s), {dur:.0f} s of audio")
    print(f"{'stage':<16}{'wall s':>9}{'RTF':>8}")
    for st in STAGES:
        if st in sums:
            print(f"{st:<16}{sums[st]:>9.2f}{sums[st] / dur:>8.3f}")
    print(f"{'sum of files':<16}{sums['total']:>9.2f}{sums['total'] / dur:>8.3f}")
    row = {
        "case": name,
        "audio_s": dur,
        "pipeline_wall": pipe["wall"],
        "pipeline_cpu": pipe["cpu"],
        "pipeline_peak_mb": pipe["peak_mb"],
        "pipeline_load": pipe["load"],
        "stages": dict(sums),
    }
    probes = pipe.get("probes", {})
    if probes:
        print(f"{'probe (speed_probe.py; nested rows)':<46}{'calls':>7}{'CPU s':>9}{'CPU RTF':>9}")
        for label, t in probes.items():
            if t["cpu"] >= 0.05 * max(1.0, pipe["cpu"]) / 10:  # rows above 0.5 % of the run
                print(f"{label:<46}{t['calls']:>7}{t['cpu']:>9.2f}{t['cpu'] / dur:>9.3f}")
    row["probes"] = probes
    print(
        f"pipeline process: wall {pipe['wall']:.1f} s (RTF {pipe['wall'] / dur:.3f}), CPU {pipe['cpu']:.1f} s, "
        f"peak {pipe['peak_mb']:.0f} MB, load {pipe['load'][0]:.1f} -> {pipe['load'][1]:.1f}"
    )
    if bare is not None:
        row.update(
            bare_wall=bare["wall"],
            bare_cpu=bare["cpu"],
            bare_peak_mb=bare["peak_mb"],
            bare_load=bare["load"],
            ratio_wall=pipe["wall"] / bare["wall"],
            ratio_cpu=pipe["cpu"] / bare["cpu"],
        )
        print(
            f"bare whisper:     wall {bare['wall']:.1f} s (RTF {bare['wall'] / dur:.3f}), CPU {bare['cpu']:.1f} s, "
            f"peak {bare['peak_mb']:.0f} MB, load {bare['load'][0]:.1f} -> {bare['load'][1]:.1f}"
        )
        print(
            f"RATIO pipeline / bare faster-whisper: wall {row['ratio_wall']:.2f}x, "
            f"CPU {row['ratio_cpu']:.2f}x (goal <= 1.5)"
        )
    return row


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", default="short,long")
    ap.add_argument("--repeat", type=int, default=1, help="alternate bare and pipeline runs this many times")
    ap.add_argument("--bare-beam", type=int, default=5)
    ap.add_argument("--no-bare", action="store_true", help="pipeline only (the 2-hour memory check)")
    ap.add_argument("--json", type=Path, help="also write the rows here")
    args = ap.parse_args()
    rows = []
    for name in args.cases.split(","):
        files = case_files(name)
        for _ in range(args.repeat):
            bare = None if args.no_bare else run_child("bare", str(args.bare_beam), files)
            with tempfile.TemporaryDirectory() as out:
                pipe = run_child("pipeline", out, files)
            rows.append(report(name, files, bare, pipe))
    print("\nsummary (goal: ratio <= 1.5, peak < 3000 MB on 2 h); machine cores:", os.cpu_count())
    for r in rows:
        ratio = f"ratio wall {r['ratio_wall']:.2f}x CPU {r['ratio_cpu']:.2f}x  " if "ratio_wall" in r else ""
        print(
            f"{r['case']:<8} {r['audio_s']:>6.0f} s  {ratio}pipeline RTF {r['pipeline_wall'] / r['audio_s']:.3f}  "
            f"peak {r['pipeline_peak_mb']:.0f} MB  load {r['pipeline_load'][1]:.1f}"
        )
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
