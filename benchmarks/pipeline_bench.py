"""Whole-pipeline speed and memory on the CPU default, beside bare faster-whisper.

For a 1-minute and a 10-minute multi-speaker recording (benchmarks/timeline_recordings.py) this
prints the real-time factor (processing seconds per audio second) of the whole pipeline and
of each stage, the ratio of the whole pipeline to bare faster-whisper transcription of the
same audio (same model, VAD on, measured in the same run), and peak memory. Each run is a
fresh process so that peak RSS belongs to it alone.

    .venv/bin/python benchmarks/pipeline_bench.py [--only 60]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from timeline_recordings import build_conversation, materialize  # noqa: E402

DATA = Path(__file__).resolve().parent / "data"


def recording(name: str, seconds: float, speakers: int) -> Path:
    """A conversation of about `seconds` (about 4 s per turn with pauses), built once."""
    path = DATA / f"{name}.flac"
    if not path.exists():
        conv = build_conversation(speakers, num_turns=max(4, int(seconds / 4.0)), seed=int(seconds), name=name)
        materialize(conv, DATA, name)
    return path

PIPELINE = """
import json, resource, sys, time
from speechannotator.pipeline import Annotator
t = time.perf_counter()
a = Annotator(sys.argv[2])
r = a.annotate(sys.argv[1])
assert r.ok, r.error
print(json.dumps({"duration": r.duration, "timings": r.timings, "segments": len(r.records),
                  "speakers": len({x.speaker_id for x in r.records}), "wall": time.perf_counter() - t,
                  "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""

BARE_WHISPER = """
import json, sys, time
t = time.perf_counter()
from faster_whisper import WhisperModel
from speechannotator.assets import whisper_base_dir
m = WhisperModel(str(whisper_base_dir()), device="cpu", compute_type="int8")
segs, info = m.transcribe(sys.argv[1], beam_size=1, vad_filter=True, word_timestamps=True)
n = sum(1 for _ in segs)
print(json.dumps({"wall": time.perf_counter() - t, "duration": info.duration, "segments": n}))
"""


def _run(code: str, *args: str) -> dict:
    proc = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(proc.stderr[-3000:])
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", type=float, help="run only the recording of this many seconds")
    args = ap.parse_args()
    cases = [("pipeline_1min", 60.0, 3), ("pipeline_10min", 600.0, 4)]
    rows = []
    for name, seconds, speakers in cases:
        if args.only and seconds != args.only:
            continue
        path = recording(name, seconds, speakers)
        bare = _run(BARE_WHISPER, str(path))
        with tempfile.TemporaryDirectory() as out:
            res = _run(PIPELINE, str(path), out)
        peak_mb = res["peak_mb"]
        rows.append((name, res, bare, peak_mb))
        d = res["duration"]
        print(f"\n## {name}: {d:.0f} s audio, {speakers} speakers (found {res['speakers']}), {res['segments']} segments")
        print(f"{'stage':<16}{'seconds':>10}{'RTF':>10}")
        for stage, sec in res["timings"].items():
            if stage != "total":
                print(f"{stage:<16}{sec:>10.2f}{sec / d:>10.4f}")
        total = res["timings"]["total"]
        print(f"{'whole pipeline':<16}{total:>10.2f}{total / d:>10.4f}")
        print(f"{'bare whisper':<16}{bare['wall']:>10.2f}{bare['wall'] / d:>10.4f}")
        print(f"pipeline / bare faster-whisper: {total / bare['wall']:.2f}x; peak memory {peak_mb:.0f} MB")
    print("\nsummary (goal: RTF < 0.5 on 10 min, peak < 3000 MB)")
    for name, res, bare, peak in rows:
        d = res["duration"]
        print(f"{name:<12} RTF {res['timings']['total'] / d:.3f}  ratio-to-whisper {res['timings']['total'] / bare['wall']:.2f}  peak {peak:.0f} MB")


if __name__ == "__main__":
    main()
