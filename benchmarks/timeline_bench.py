"""Timeline benchmark: speaker-aware transcription on recordings with exact references.

Builds 2-4 speaker conversations (`speechannotator.evaluation.recordings.espeak_conversations`:
a real LibriVox reader and espeak-ng voices, pauses and short overlaps, clean / pink noise /
music), runs the timeline stages (VAD, diarization, segment table, ASR, refinement) and reports
per recording and pooled:

- CER, cpCER, tcpCER (collar 5 s) through SA-Eval's Timeline-Eval with character tokens;
- DER (pyannote.metrics, 0.25 s collar on each side, overlap counted; `evaluation.diarization`);
- speaker-count accuracy; real-time factor of the timeline stages.

    .venv/bin/python -m benchmarks.timeline_bench --out /tmp/tbench [--quick|--hard] [--json results.json]
    .venv/bin/python -m benchmarks.timeline_bench --long HOURS   # one long recording: peak memory, RTF
"""

from __future__ import annotations

import argparse
import json
import resource
import time
from decimal import Decimal
from pathlib import Path

from speechannotator.evaluation.diarization import diarization_scores
from speechannotator.evaluation.io import TimelineSegment
from speechannotator.evaluation.recordings.espeak_conversations import SR, build_conversation, materialize
from speechannotator.evaluation.timeline import score_recording

TCP_COLLAR = 5.0


def scores(ref: list[tuple], hyp: list[tuple], session: str) -> dict:
    """[errors, length] of CER, cpCER, tcpCER and DER for (start, end, speaker, text) rows."""

    def segs(rows):
        return [TimelineSegment(spk, Decimal(str(a)), Decimal(str(b)), t) for a, b, spk, t in rows]

    sc = score_recording(segs(ref), segs(hyp), unit="char", collar=TCP_COLLAR, session=session)
    der = diarization_scores([r[:3] for r in ref], [h[:3] for h in hyp])["der"]
    return {k: [c.errors, c.length] for k, c in (("cer", sc.plain), ("cpcer", sc.cp), ("tcpcer", sc.tcp))} | {
        "der": der
    }


def _rate(pairs: list[list[float]]) -> float:
    return round(100.0 * sum(p[0] for p in pairs) / max(sum(p[1] for p in pairs), 1e-9), 2)


# (num_speakers, seed, noise, snr): clean, pink noise at 12 dB and music at 15 dB;
# `hard`: pink noise at 5 dB and music at 8 dB instead.
def cases(quick: bool, hard: bool = False) -> list[tuple[int, int, str | None, float]]:
    out = []
    for k in (2, 3, 4):
        if hard:
            out += [(k, 10 + k, "pink", 5.0), (k, 20 + k, "music", 8.0)]
            continue
        for seed in range(2 if quick else 4):
            noise = [None, None, "pink", "music"][seed % 4]
            out.append((k, seed, noise, 12.0 if noise == "pink" else 15.0))
    return out


def run(out_dir: Path, quick: bool = False, config=None, hard: bool = False) -> dict:
    from speechannotator.audio import load_audio
    from speechannotator.config import Config
    from speechannotator.frontend.timeline import recover_timeline

    cfg = config or Config()
    rows = []
    for k, seed, noise, snr in cases(quick, hard):
        name = f"conv{k}_s{seed}_{noise or 'clean'}{f'_{snr:g}dB' if noise else ''}"
        conv = build_conversation(k, 4 * k + 4, seed, overlap_prob=0.2)
        audio = load_audio(materialize(conv, out_dir, name, noise=noise, snr_db=snr, seed=seed))
        t = time.perf_counter()
        res = recover_timeline(audio.samples, audio.sample_rate, cfg)
        elapsed = time.perf_counter() - t
        ref = [(u.start, u.end, u.speaker, u.text) for u in conv.utterances]
        hyp = [(s.start, s.end, s.speaker, s.text) for s in res.segments]
        row = {"name": name, "speakers": k, "found": res.num_speakers, "noise": noise or "clean"}
        row |= {
            "duration": round(audio.duration, 1),
            **scores(ref, hyp, name),
            "rtf": round(elapsed / audio.duration, 3),
        }
        rows.append(row | {"timings": res.timings})
        (out_dir / f"{name}.hyp.json").write_text(json.dumps([s.to_json() for s in res.segments], ensure_ascii=False))
        rates = "  ".join(f"{m.upper()} {_rate([row[m]]):5.1f}" for m in ("cer", "cpcer", "tcpcer", "der"))
        print(f"{name:24s} spk {k}->{res.num_speakers}  {rates}  RTF {row['rtf']:.3f} {res.timings}", flush=True)
    return summarize(rows)


def summarize(rows: list[dict]) -> dict:
    keys = ("cer", "cpcer", "tcpcer", "der")
    pooled = {k: _rate([r[k] for r in rows]) for k in keys}
    pooled["speaker_count_accuracy"] = round(sum(r["found"] == r["speakers"] for r in rows) / len(rows), 3)
    pooled["cpcer_over_cer"] = round(pooled["cpcer"] / max(pooled["cer"], 1e-9), 2)
    pooled["rtf"] = round(sum(r["rtf"] * r["duration"] for r in rows) / sum(r["duration"] for r in rows), 3)
    conditions = sorted({r["noise"] for r in rows})
    by_noise = {c: {k: _rate([r[k] for r in rows if r["noise"] == c]) for k in keys} for c in conditions}
    return {"pooled": pooled, "by_condition": by_noise, "recordings": rows}


def long_run(out_dir: Path, hours: float, config=None) -> dict:
    """Peak memory and RTF of the timeline stages on one long recording (4 speakers throughout),
    built by chaining conversations; scored like the others."""
    import soundfile as sf

    from speechannotator.audio import load_audio
    from speechannotator.config import Config
    from speechannotator.frontend.timeline import recover_timeline

    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"long_{hours:g}h.flac"
    ref: list[tuple] = []
    t0, seed = 0.0, 0
    with sf.SoundFile(path, "w", SR, 1, subtype="PCM_16") as f:  # written piecewise: never all in memory
        while t0 < hours * 3600:
            conv = build_conversation(4, 20, seed, overlap_prob=0.2)
            f.write(conv.samples)
            ref += [(t0 + u.start, t0 + u.end, u.speaker, u.text) for u in conv.utterances]
            t0 += conv.duration
            seed += 1
    audio = load_audio(path)
    rss_audio = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    t = time.perf_counter()
    res = recover_timeline(audio.samples, audio.sample_rate, config or Config())
    elapsed = time.perf_counter() - t
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    sc = scores(ref, [(s.start, s.end, s.speaker, s.text) for s in res.segments], "long")
    return {
        "duration_s": round(audio.duration, 1),
        "peak_rss_mb": round(peak),
        "rss_after_load_mb": round(rss_audio),
        "audio_mb": round(audio.samples.nbytes / 2**20),
        "rtf": round(elapsed / audio.duration, 3),
        "speakers_true": 4,
        "speakers_found": res.num_speakers,
        "timings": res.timings,
        **{k: _rate([v]) for k, v in sc.items()},
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=Path("/tmp/timeline_bench"))
    ap.add_argument("--quick", action="store_true", help="2 recordings per speaker count instead of 4")
    ap.add_argument("--hard", action="store_true", help="noisy set: pink noise at 5 dB and music at 8 dB SNR")
    ap.add_argument("--config", type=Path, help="TOML settings (default: the cpu preset)")
    ap.add_argument("--json", type=Path, help="write all results here")
    ap.add_argument("--long", type=float, metavar="HOURS", help="instead: one long recording (peak memory, RTF)")
    args = ap.parse_args()
    from speechannotator.config import load_config

    config = load_config(args.config) if args.config else None
    if args.long:
        result = long_run(args.out, args.long, config)
        print(json.dumps(result, indent=1))
    else:
        result = run(args.out, args.quick, config, args.hard)
        print(json.dumps({"pooled": result["pooled"], "by_condition": result["by_condition"]}, indent=1))
    if args.json:
        args.json.write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
