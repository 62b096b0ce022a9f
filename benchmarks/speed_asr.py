"""The ASR stage alone against bare faster-whisper, on the same files: CPU time and encoder passes.

    PYTHONPATH=src nice -n 10 .venv/bin/python benchmarks/speed_asr.py [--cases short] [--before SRC]

The segment table of each recording is built once (VAD + diarization + segment table, current
checkout) and then transcribed in a fresh process per checkout (`--before` names the `src`
folder of another checkout, e.g. the main branch, to compare): process CPU time of
`transcribe()` alone (model loading excluded, Whisper loaded before the clock starts), the
Whisper encoder passes the model really ran (and, for this checkout, the ones it reused for
a language id), the decodes, language ids and re-decodes the ASR stats count, and the audio
seconds decoded. Bare faster-whisper (shipped base, int8, Silero VAD on, word timestamps, beam
5) runs on the same files with its encoder passes counted. Transcripts of the two checkouts
are compared word by word (they differ where a window holds other audio).
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

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def _segments(files: list[str], out: str) -> None:
    from speechannotator.audio import load_audio
    from speechannotator.config import Config
    from speechannotator.frontend.diarize import run_diarization
    from speechannotator.frontend.segment_table import build_segments
    from speechannotator.frontend.vad import detect_speech

    cfg = Config()
    rows = []
    for f in files:
        a = load_audio(f)
        regions = detect_speech(a.samples, a.sample_rate, cfg.vad)
        dia = run_diarization(a.samples, a.sample_rate, regions, cfg.diarization)
        segs = build_segments(dia.turns, a.samples, a.sample_rate, max_len=cfg.max_segment_s, min_len=cfg.min_segment_s)
        rows.append({"file": f, "segments": [s.to_json() for s in segs]})
    Path(out).write_text(json.dumps(rows))


def _count_encodes(model) -> list[int]:
    """Wrap the model's CTranslate2 encode so that every real encoder pass is counted."""
    n = [0]
    inner = model.model

    class Counting:
        def __getattr__(self, name):
            return getattr(inner, name)

        def encode(self, *a, **k):
            n[0] += 1
            return inner.encode(*a, **k)

    model.model = Counting()
    return n


def _asr(seg_json: str) -> dict:
    from speechannotator.audio import load_audio
    from speechannotator.config import AsrConfig
    from speechannotator.frontend.asr_whisper import WhisperAsr
    from speechannotator.frontend.transcribe import transcribe
    from speechannotator.records import Segment

    cfg = AsrConfig()
    backend = WhisperAsr(cfg)
    passes = _count_encodes(backend.model)
    rows = json.loads(Path(seg_json).read_text())
    cpu = 0.0
    totals: dict[str, float] = {}
    texts = {}
    for r in rows:
        a = load_audio(r["file"])
        segs = [Segment.from_json(d) for d in r["segments"]]
        for s in segs:
            s.text, s.words = "", []
        c = time.process_time()
        stats = transcribe(a.samples, a.sample_rate, segs, cfg, backend)
        cpu += time.process_time() - c
        for k, v in stats.items():
            if isinstance(v, (int, float)):
                totals[k] = totals.get(k, 0) + v
        texts[Path(r["file"]).name] = " ".join(s.text for s in segs)
    return {"cpu": cpu, "encoder_passes": passes[0], "stats": totals, "texts": texts}


def _bare(files: list[str]) -> dict:
    from faster_whisper import WhisperModel

    from speechannotator.assets import whisper_base_dir

    threads = min(4, len(os.sched_getaffinity(0)))
    model = WhisperModel(str(whisper_base_dir()), device="cpu", compute_type="int8", cpu_threads=threads)
    passes = _count_encodes(model)
    from speechannotator.audio import load_audio

    cpu = 0.0
    for f in files:
        a = load_audio(f)
        c = time.process_time()
        segs, _ = model.transcribe(a.samples, beam_size=5, vad_filter=True, word_timestamps=True)
        list(segs)
        cpu += time.process_time() - c
    return {"cpu": cpu, "encoder_passes": passes[0]}


def _child(src: str, *args: str) -> dict:
    env = dict(os.environ, PYTHONPATH=src)
    proc = subprocess.run([sys.executable, __file__, *args], capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        raise SystemExit(f"{args[0]} failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _word_diff(a: str, b: str) -> float:
    import difflib

    if any("\u3400" <= c <= "\u9fff" for c in a + b):  # Chinese: characters, not space-separated runs
        wa, wb = [c for c in a if not c.isspace()], [c for c in b if not c.isspace()]
    else:
        wa, wb = a.split(), b.split()
    sm = difflib.SequenceMatcher(a=wa, b=wb, autojunk=False)
    same = sum(m.size for m in sm.get_matching_blocks())
    return 1.0 - same / max(1, len(wa))


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] in ("segments", "asr", "bare"):
        mode = sys.argv[1]
        if mode == "segments":
            _segments(sys.argv[3:], sys.argv[2])
            print("{}")
        elif mode == "asr":
            print(json.dumps(_asr(sys.argv[2])))
        else:
            print(json.dumps(_bare(sys.argv[2:])))
        return
    import speed_recordings as R

    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", default="short", help="short and/or long (10 minutes)")
    ap.add_argument("--before", help="src folder of another checkout to compare")
    ap.add_argument("--no-bare", action="store_true")
    ap.add_argument("--show", action="store_true", help="print both transcripts")
    ap.add_argument("--skip", type=int, default=0, help="skip the first N files of the case")
    ap.add_argument("--files", type=int, help="only the first N files of the case (a quick check)")
    args = ap.parse_args()
    src = str(HERE.parent / "src")
    for case in args.cases.split(","):
        files = [str(p) for p in (R.short_batch() if case == "short" else [R.long_recording(600.0)])][args.skip :][
            : args.files
        ]
        with tempfile.TemporaryDirectory() as tmp:
            seg_json = str(Path(tmp) / "segments.json")
            _child(src, "segments", seg_json, *files)
            runs = {"this": _child(src, "asr", seg_json)}
            if args.before:
                runs["before"] = _child(args.before, "asr", seg_json)
        bare = None if args.no_bare else _child(src, "bare", *files)
        print(f"\n## {case}: {len(files)} file(s); load average {os.getloadavg()[0]:.1f}")
        if bare:
            print(f"bare faster-whisper (beam 5): CPU {bare['cpu']:.1f} s, encoder passes {bare['encoder_passes']}")
        for name, r in runs.items():
            st = r["stats"]
            print(
                f"{name:<7} transcribe CPU {r['cpu']:.1f} s, encoder passes {r['encoder_passes']}, "
                + ", ".join(f"{k.removeprefix('asr_')} {v:g}" for k, v in st.items())
                + (f"; {r['cpu'] / bare['cpu']:.2f}x bare" if bare else "")
            )
        if "before" in runs:
            for f, t in runs["this"]["texts"].items():
                print(f"  {f}: tokens changed vs before {_word_diff(runs['before']['texts'][f], t):.1%}")
                if args.show:
                    print(f"    before: {runs['before']['texts'][f]}\n    this:   {t}")


if __name__ == "__main__":
    main()
