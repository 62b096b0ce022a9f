"""One measured process of the speed benchmarks: the whole pipeline or bare faster-whisper.

    python speed_child.py pipeline OUT_DIR FILE...     # one Annotator, files in order
    python speed_child.py bare BEAM FILE...            # one WhisperModel, files in order

Prints one JSON line: per-file results, per-probe times (speed_probe.py), the process's wall
and CPU time (model loading included) and its peak RSS. A fresh process per run, so the peak
belongs to that run alone.
"""

from __future__ import annotations

import json
import os
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def pipeline(out_dir: str, files: list[str]) -> dict:
    import speed_probe

    speed_probe.install()
    from speechannotator.pipeline import Annotator

    annotator = Annotator(out_dir)
    runs = []
    for f in files:
        r = annotator.annotate(f)
        if not r.ok:
            raise SystemExit(f"{f}: {r.error}")
        runs.append(
            {
                "file": Path(f).name,
                "duration": r.duration,
                "timings": r.timings,
                "segments": len(r.records),
                "speakers": len({x.speaker_id for x in r.records}),
            }
        )
    annotator.close()
    return {"runs": runs, "probes": speed_probe.report()}


def bare(beam: int, files: list[str]) -> dict:
    from faster_whisper import WhisperModel

    from speechannotator.assets import whisper_base_dir

    # faster-whisper's own defaults apart from the model: what a user runs without this project.
    threads = min(4, len(os.sched_getaffinity(0)))
    model = WhisperModel(str(whisper_base_dir()), device="cpu", compute_type="int8", cpu_threads=threads)
    runs = []
    for f in files:
        t = time.perf_counter()
        segs, info = model.transcribe(f, beam_size=beam, vad_filter=True, word_timestamps=True)
        n = sum(1 for _ in segs)
        runs.append({"file": Path(f).name, "duration": info.duration, "wall": time.perf_counter() - t, "segments": n})
    return {"runs": runs}


def main() -> None:
    mode, arg, files = sys.argv[1], sys.argv[2], sys.argv[3:]
    w, c = time.perf_counter(), time.process_time()
    load0 = os.getloadavg()[0]
    res = pipeline(arg, files) if mode == "pipeline" else bare(int(arg), files)
    res.update(
        wall=time.perf_counter() - w, cpu=time.process_time() - c, peak_mb=_peak_mb(), load=[load0, os.getloadavg()[0]]
    )
    print(json.dumps(res))


if __name__ == "__main__":
    main()
