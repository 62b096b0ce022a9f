"""HF export memory: peak resident memory of `export --to hf` for N and 10 x N clips, side by side.

Builds an annotation folder of real recorded speech without running the pipeline (the export
reads only OUT/<id>.json, the state's records and OUT/corpus.jsonl): recordings of 100 s made
of one real voice (codec2's speech_orig_16k.wav from the real-voice set, scripts/fetch_real_voices.sh),
each cut into 1 s segments carrying a real annotation record as their values. Each size is
exported in a fresh process, which reports its peak RSS; the ratio of the two peaks says whether
memory grows with the clip count (a streaming export stays near 1; holding every clip would
grow by about the audio's size, 32 kB per clip as 16-bit WAV).

    .venv/bin/python -m benchmarks.hf_export_memory [--clips 1000] [--factor 10] [--rate 16000]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
import soundfile as sf

from speechannotator.corpus import CorpusItem, write_manifest
from speechannotator.evaluation.recordings.real_voices import DATA
from speechannotator.state import STATE_FILE, StateStore

ROOT = Path(__file__).resolve().parents[1]
VOICE = DATA / "root" / "usr" / "share" / "codec2" / "raw" / "speech_orig_16k.wav"
SEGMENTS_PER_RECORDING = 100
SEGMENT_S = 1.0
RECORD = {  # the values of a real annotated segment (a female reader, priors on)
    "speaker_name": "Speaker1_young adult",
    "text_and_paralanguage": "Don't throw trash on the street.",
    "language": "en",
    "background_sound": "none",
    "environment": "none",
    "gender": "female",
    "age": "young adult",
    "pitch": "medium pitch, some rise and fall",
    "speed": "moderate pace, fluent delivery",
    "emotion": "neutral (moderate)",
    "accent": "standard American English",
    "tone": "calm, natural directive tone",
    "rhythm": "steady rhythm, moderate pace",
    "texture": "clear voice",
    "pronunciation": "clear articulation",
    "paralinguistic": "none",
    "contextual_inference": "A calm reading.",
    "caption": "A young woman reads a sentence calmly.",
}


def build(out: Path, clips: int) -> None:
    """An annotation folder with `clips` segments of real speech."""
    voice, sr = sf.read(VOICE, dtype="float32")
    length = int(SEGMENTS_PER_RECORDING * SEGMENT_S * sr)
    audio = np.tile(voice, length // len(voice) + 1)[:length]
    out.mkdir(parents=True)
    wav = out.parent / "voice100s.wav"
    sf.write(wav, audio, sr)
    store = StateStore(out / STATE_FILE)
    items = []
    n_recs = (clips + SEGMENTS_PER_RECORDING - 1) // SEGMENTS_PER_RECORDING
    for r in range(n_recs):
        rec = f"r{r:05d}"
        n = min(SEGMENTS_PER_RECORDING, clips - r * SEGMENTS_PER_RECORDING)
        store.begin_recording(rec, str(wav), f"fp{r}", len(audio) / sr)
        records = []
        for i in range(n):
            d = {**RECORD, "speaker_id": "spk_01", "start_time": int(i * SEGMENT_S * 1000)}
            d["end_time"] = d["start_time"] + int(SEGMENT_S * 1000)
            d["text"] = RECORD["text_and_paralanguage"]
            records.append((f"seg_{i:05d}", d))
        with store.transaction() as c:
            store.write_records(c, rec, records)
        store.set_status(rec, "complete")
        (out / f"{rec}.json").write_text(json.dumps([d for _, d in records]))
        items.append(CorpusItem(id=rec, path=str(wav), duration=len(audio) / sr))
    store.close()
    write_manifest(out, items)


def _anon_mb() -> float:
    """Anonymous resident memory: what the process holds. (Peak RSS also counts the pages of the
    memory-mapped Arrow files it has read, which the kernel reclaims at will.)"""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("RssAnon:"):
                return int(line.split()[1]) / 1024
    return 0.0


def child(out: Path, dest: Path, rate: str) -> None:
    import datasets  # noqa: F401  (its import cost is the baseline, not the export's)

    from speechannotator.export import export_corpus

    base = _anon_mb()
    peak = [base]
    done = threading.Event()

    def sample() -> None:
        while not done.wait(0.02):
            peak[0] = max(peak[0], _anon_mb())

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    t = time.perf_counter()
    export_corpus(out, "hf", dest, rate=rate, record=False)
    wall = time.perf_counter() - t
    done.set()
    sampler.join()
    peak[0] = max(peak[0], _anon_mb())
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    size = sum(p.stat().st_size for p in dest.rglob("*") if p.is_file()) / 2**20
    result = {"baseline_mb": base, "peak_mb": peak[0], "peak_rss_mb": rss, "wall_s": wall, "size_mb": size}
    print(json.dumps({k: round(v, 1) for k, v in result.items()}))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--clips", type=int, default=1000)
    ap.add_argument("--factor", type=int, default=10)
    ap.add_argument("--rate", default="16000")
    ap.add_argument("--child", nargs=3, metavar=("OUT", "DEST", "RATE"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(Path(args.child[0]), Path(args.child[1]), args.child[2])
        return
    if not VOICE.exists():
        sys.exit(f"{VOICE} missing: run scripts/fetch_real_voices.sh")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in (args.clips, args.clips * args.factor):
            out = Path(tmp) / f"out{n}"
            build(out, n)
            cmd = [sys.executable, "-m", "benchmarks.hf_export_memory", "--child", str(out), str(Path(tmp) / f"hf{n}")]
            res = subprocess.run([*cmd, args.rate], capture_output=True, text=True, check=True, cwd=ROOT)
            rows.append((n, json.loads(res.stdout.strip().splitlines()[-1])))
    print(f"hf export, {SEGMENT_S:g} s clips of real speech at {args.rate} Hz, one fresh process per size")
    print("memory: anonymous resident (sampled every 20 ms); peak RSS adds the mapped Arrow pages read")
    head = f"{'clips':>7} {'baseline MB':>12} {'peak MB':>8} {'export MB':>10} {'peak RSS MB':>12}"
    print(head + f" {'wall s':>7} {'dataset MB':>11}")
    for n, r in rows:
        grown = r["peak_mb"] - r["baseline_mb"]
        line = f"{n:>7} {r['baseline_mb']:>12} {r['peak_mb']:>8} {grown:>10.1f} {r['peak_rss_mb']:>12}"
        print(line + f" {r['wall_s']:>7} {r['size_mb']:>11}")
    (n1, a), (n2, b) = rows
    ratio = (b["peak_mb"] - b["baseline_mb"]) / max(1e-6, a["peak_mb"] - a["baseline_mb"])
    print(f"export memory x{ratio:.2f} for x{n2 // n1} clips (dataset x{b['size_mb'] / max(a['size_mb'], 1e-6):.1f})")


if __name__ == "__main__":
    main()
