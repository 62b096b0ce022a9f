"""Scaling of the agent stages (plan, label, review) with the number of segments.

Builds a fixed timeline of N short segments over synthetic audio (two alternating speakers,
tones with different pitch) and times each stage of the rules backend with priors off, for
two sizes side by side in one run. A near-linear implementation shows a time ratio close to
the size ratio (4 for 1k vs 4k segments); a quadratic one shows about its square (16).
Stage times are CPU seconds of this process (time.process_time), which other jobs on a
shared machine disturb far less than wall-clock time.

    python -m benchmarks.review_scaling [--sizes 1000 4000]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np
import soundfile as sf

SR = 16000
SEG_S = 1.0


def build(folder: Path, n: int) -> tuple[Path, Path]:
    """A recording of n one-second segments (alternating 120 Hz / 220 Hz voices) and its SegLST."""
    t = np.arange(int(SEG_S * SR)) / SR
    rng = np.random.default_rng(0)
    parts = []
    ref = []
    for i in range(n):
        f0 = 120.0 if i % 2 == 0 else 220.0
        tone = 0.2 * np.sin(2 * np.pi * f0 * t) * np.hanning(len(t)) + 0.005 * rng.standard_normal(len(t))
        parts.append(tone.astype(np.float32))
        ref.append(
            {
                "session_id": "long",
                "speaker": f"S{i % 2}",
                "start_time": i * SEG_S + 0.05,
                "end_time": (i + 1) * SEG_S - 0.05,
                "words": f"segment number {i} says something",
            }
        )
    wav, seglst = folder / "long.wav", folder / "long.seglst.json"
    sf.write(wav, np.concatenate(parts), SR)
    seglst.write_text(json.dumps(ref))
    return wav, seglst


def time_stages(n: int) -> dict[str, float]:
    from speechannotator.config import load_config
    from speechannotator.pipeline import Annotator

    with tempfile.TemporaryDirectory() as d:
        wav, ref = build(Path(d), n)
        config = load_config(overrides={"agents": {"priors": False}, "labels": "en"})
        annotator = Annotator(Path(d) / "out", config)
        marks: list[tuple[str, float]] = []
        try:
            t = time.process_time()
            result = annotator.annotate(wav, timeline=ref, on_stage=lambda s: marks.append((s, time.process_time())))
            end = time.process_time()
        finally:
            annotator.close()
        if not result.ok:
            raise SystemExit(f"annotation failed: {result.error}")
        marks.append(("end", end))
        cpu = {stage: b - a for (stage, a), (_, b) in zip(marks, marks[1:])}
        stages = {k: round(cpu.get(k, 0.0), 2) for k in ("plan", "label", "review", "finalize")}
        return {"segments": n, **stages, "total": round(end - t, 2)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs=2, default=[1000, 4000])
    args = ap.parse_args()
    small, large = (time_stages(n) for n in args.sizes)
    print(json.dumps(small))
    print(json.dumps(large))
    size_ratio = large["segments"] / small["segments"]
    stages = ("plan", "label", "review", "finalize", "total")
    ratios = {k: round(large[k] / small[k], 2) if small[k] > 0 else None for k in stages}
    print(json.dumps({"size_ratio": size_ratio, "time_ratio": ratios}))


if __name__ == "__main__":
    main()
