"""Where the time goes: wall and CPU time per stage and per model of the whole pipeline.

    PYTHONPATH=src nice -n 10 .venv/bin/python benchmarks/profile_stages.py [--which short,long,silent] [--json F]

Recordings (benchmarks/speed_recordings.py, real voices): ``short`` = the bundled example
(36 s, two speakers), ``long`` = 10 minutes of a LibriVox reader and a Mandarin lecturer taking
turns, ``silent`` = 5 minutes of faint room noise around one 3-second utterance. Each runs in a
fresh process with the probes of speed_probe.py; model loading is included. RTF = seconds per
audio second. The results are summarised in docs/speed.md.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import speed_recordings as R  # noqa: E402

CHILD = HERE / "speed_child.py"


def run_child(mode: str, arg: str, files: list[Path]) -> dict:
    env = dict(os.environ)
    src = os.environ.get("SPEED_SRC") or str(HERE.parent / "src")  # SPEED_SRC: measure another checkout
    env["PYTHONPATH"] = src + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    proc = subprocess.run(
        [sys.executable, str(CHILD), mode, arg, *map(str, files)], capture_output=True, text=True, env=env
    )
    if proc.returncode != 0:
        raise SystemExit(f"{mode} run failed:\n{proc.stderr[-4000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def recordings(which: list[str]) -> dict[str, Path]:
    make = {"short": lambda: R.short_batch()[0], "long": lambda: R.long_recording(600.0), "silent": R.mostly_silent}
    return {w: make[w]() for w in which}


def print_profile(name: str, res: dict) -> None:
    run = res["runs"][0]
    d = run["duration"]
    print(
        f"\n## {name}: {run['file']}, {d:.0f} s audio, {run['segments']} segments, {run['speakers']} speakers; "
        f"process wall {res['wall']:.1f} s, CPU {res['cpu']:.1f} s, peak {res['peak_mb']:.0f} MB, "
        f"load average {res['load'][0]:.1f} -> {res['load'][1]:.1f}"
    )
    print(f"{'probe':<46}{'calls':>7}{'wall s':>9}{'CPU s':>9}{'RTF':>8}{'CPU RTF':>9}")
    for label, t in res["probes"].items():
        print(f"{label:<46}{t['calls']:>7}{t['wall']:>9.2f}{t['cpu']:>9.2f}{t['wall'] / d:>8.3f}{t['cpu'] / d:>9.3f}")
    print(f"{'pipeline stages (wall, from AnnotationResult)':<46}")
    for stage, sec in run["timings"].items():
        print(f"  {stage:<44}{'':>7}{sec:>9.2f}{'':>9}{sec / d:>8.3f}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--which", default="short,long,silent")
    ap.add_argument("--json", type=Path, help="also write the raw results here")
    args = ap.parse_args()
    recs = recordings(args.which.split(","))
    results = {}
    for name, path in recs.items():
        with tempfile.TemporaryDirectory() as out:
            results[name] = run_child("pipeline", out, [path])
        print_profile(name, results[name])
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
