"""Timeline benchmark: speaker-aware transcription on recordings with exact references.

Builds 2-4 speaker conversations (benchmarks/recordings.py: a real LibriVox reader and espeak-ng
voices, pauses and short overlaps, clean / pink noise / music), runs the timeline stages
(VAD, diarization, segment table, ASR, refinement) and reports per recording and pooled:

- CER, cpCER, tcpCER (collar 5 s) on meeteval with character tokens (lower-cased, whitespace
  and punctuation stripped), as SA-Eval's Timeline-Eval defines them;
- DER from 10 ms frames (optimal speaker mapping, overlap counted, 0.25 s collar);
- speaker-count accuracy; real-time factor of the timeline stages.

    PYTHONPATH=src .venv/bin/python benchmarks/timeline_bench.py --out /tmp/tbench [--quick] [--json results.json]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from timeline_recordings import SR, build_conversation, materialize  # noqa: E402

COLLAR_TCP = 5.0
COLLAR_DER = 0.25


def char_tokens(text: str) -> list[str]:
    """Characters of a transcript for CER: lower case, no whitespace, no punctuation."""
    return [c for c in text.lower() if c.isalnum()]


def _seglst(rows: list[tuple[float, float, str, str]], session: str):
    from meeteval.io.seglst import SegLST

    return SegLST(
        [
            {"session_id": session, "speaker": spk, "start_time": a, "end_time": b, "words": " ".join(char_tokens(t))}
            for a, b, spk, t in rows
        ]
    )


def _concat(rows) -> list[str]:
    return [c for _, _, _, t in sorted(rows, key=lambda r: (r[0], r[1])) for c in char_tokens(t)]


@dataclass
class Counts:
    errors: int
    length: int


def text_scores(ref: list[tuple], hyp: list[tuple], session: str = "s") -> dict[str, Counts]:
    """CER, cpCER and tcpCER error counts (meeteval)."""
    from meeteval.wer import cpwer, tcpwer
    from meeteval.wer.wer.siso import _siso_error_rate

    plain = _siso_error_rate(_concat(ref), _concat(hyp))
    if not hyp:  # meeteval's SegLST scorers need both sides; everything is deleted
        n = len(_concat(ref))
        return {k: Counts(n, n) for k in ("cer", "cpcer", "tcpcer")}
    cp = cpwer(_seglst(ref, session), _seglst(hyp, session))[session]
    tcp = tcpwer(_seglst(ref, session), _seglst(hyp, session), collar=COLLAR_TCP)[session]
    return {
        "cer": Counts(plain.errors, plain.length),
        "cpcer": Counts(cp.errors, cp.length),
        "tcpcer": Counts(tcp.errors, tcp.length),
    }


def der(
    ref: list[tuple], hyp: list[tuple], duration: float, frame: float = 0.01, collar: float = COLLAR_DER
) -> tuple[float, float]:
    """Diarization error (missed + false alarm + confusion) / reference speech, from frames.

    Speakers are mapped one-to-one by maximal overlap (Hungarian); overlapped speech counts
    per speaker, as in md-eval. Frames within `collar` of a reference boundary are ignored.
    Returns (errors in seconds, scored reference speech in seconds).
    """
    from scipy.optimize import linear_sum_assignment

    n = int(np.ceil(duration / frame)) + 1
    rs = sorted({r[2] for r in ref})
    hs = sorted({h[2] for h in hyp})
    R = np.zeros((n, max(1, len(rs))), bool)
    H = np.zeros((n, max(1, len(hs))), bool)
    scored = np.ones(n, bool)
    for a, b, spk, _ in ref:
        R[int(a / frame) : int(b / frame), rs.index(spk)] = True
        for edge in (a, b):
            scored[max(0, int((edge - collar) / frame)) : int((edge + collar) / frame)] = False
    for a, b, spk, _ in hyp:
        H[int(a / frame) : int(b / frame), hs.index(spk)] = True
    R, H = R[scored], H[scored]
    if hs:
        overlap = R.T.astype(float) @ H.astype(float)
        ri, hi = linear_sum_assignment(-overlap)
        correct = np.zeros(len(R))
        for i, j in zip(ri, hi):
            correct += R[:, i] & H[:, j]
    else:
        correct = np.zeros(len(R))
    nr, nh = R.sum(axis=1), H.sum(axis=1)
    err = float((np.maximum(nr, nh) - correct).sum()) * frame
    return err, float(nr.sum()) * frame


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
        path = materialize(conv, out_dir, name, noise=noise, snr_db=snr, seed=seed)
        audio = load_audio(path)
        t = time.perf_counter()
        res = recover_timeline(audio.samples, audio.sample_rate, cfg)
        elapsed = time.perf_counter() - t
        ref = [(u.start, u.end, u.speaker, u.text) for u in conv.utterances]
        hyp = [(s.start, s.end, s.speaker, s.text) for s in res.segments]
        sc = text_scores(ref, hyp, name)
        der_err, der_len = der(ref, hyp, audio.duration)
        row = {
            "name": name,
            "speakers": k,
            "found": res.num_speakers,
            "noise": noise or "clean",
            "duration": round(audio.duration, 1),
            **{key: asdict(c) for key, c in sc.items()},
            "der": [der_err, der_len],
            "rtf": round(elapsed / audio.duration, 3),
            "timings": res.timings,
        }
        rows.append(row)
        (out_dir / f"{name}.hyp.json").write_text(
            json.dumps([s.to_json() for s in res.segments], ensure_ascii=False, indent=1)
        )
        print(
            f"{name:24s} spk {k}->{res.num_speakers}  CER {_rate(row['cer']):5.1f}  cpCER {_rate(row['cpcer']):5.1f}  "
            f"tcpCER {_rate(row['tcpcer']):5.1f}  DER {100 * der_err / max(der_len, 1e-9):5.1f}  "
            f"RTF {row['rtf']:.3f} {res.timings}",
            flush=True,
        )
    return summarize(rows)


def _rate(c: dict | list) -> float:
    e, n = (c["errors"], c["length"]) if isinstance(c, dict) else c
    return 100.0 * e / max(n, 1e-9)


def summarize(rows: list[dict]) -> dict:
    pooled = {}
    for key in ("cer", "cpcer", "tcpcer"):
        pooled[key] = round(
            _rate({"errors": sum(r[key]["errors"] for r in rows), "length": sum(r[key]["length"] for r in rows)}), 2
        )
    pooled["der"] = round(_rate([sum(r["der"][0] for r in rows), sum(r["der"][1] for r in rows)]), 2)
    pooled["speaker_count_accuracy"] = round(sum(r["found"] == r["speakers"] for r in rows) / len(rows), 3)
    pooled["cpcer_over_cer"] = round(pooled["cpcer"] / max(pooled["cer"], 1e-9), 2)
    pooled["rtf"] = round(sum(r["rtf"] * r["duration"] for r in rows) / sum(r["duration"] for r in rows), 3)
    by_noise = {}
    for noise in sorted({r["noise"] for r in rows}):
        sub = [r for r in rows if r["noise"] == noise]
        by_noise[noise] = {
            key: round(
                _rate({"errors": sum(r[key]["errors"] for r in sub), "length": sum(r[key]["length"] for r in sub)}), 2
            )
            for key in ("cer", "cpcer", "tcpcer")
        }
    return {"pooled": pooled, "by_condition": by_noise, "recordings": rows}


def long_run(out_dir: Path, hours: float, config=None) -> dict:
    """Peak memory and RTF of the timeline stages on one long recording (4 speakers throughout),
    built by chaining conversations; scored like the others."""
    import resource

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
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    audio = load_audio(path)
    rss_audio = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    t = time.perf_counter()
    res = recover_timeline(audio.samples, audio.sample_rate, config or Config())
    elapsed = time.perf_counter() - t
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    hyp = [(s.start, s.end, s.speaker, s.text) for s in res.segments]
    sc = text_scores(ref, hyp, "long")
    der_err, der_len = der(ref, hyp, audio.duration)
    return {
        "duration_s": round(audio.duration, 1),
        "peak_rss_mb": round(peak),
        "rss_after_load_mb": round(rss_audio),
        "rss_before_load_mb": round(rss_before),
        "audio_mb": round(audio.samples.nbytes / 2**20),
        "rtf": round(elapsed / audio.duration, 3),
        "speakers_true": 4,
        "speakers_found": res.num_speakers,
        "timings": res.timings,
        **{k: round(_rate(asdict(c)), 2) for k, c in sc.items()},
        "der": round(100 * der_err / max(der_len, 1e-9), 2),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=Path("/tmp/timeline_bench"))
    ap.add_argument("--quick", action="store_true", help="2 recordings per speaker count instead of 4")
    ap.add_argument("--hard", action="store_true", help="noisy set: pink noise at 5 dB and music at 8 dB SNR")
    ap.add_argument("--config", type=Path, help="TOML settings (default: the cpu preset)")
    ap.add_argument("--json", type=Path, help="write all results here")
    ap.add_argument(
        "--long", type=float, metavar="HOURS", help="instead: one long recording of HOURS (peak memory, RTF)"
    )
    args = ap.parse_args()
    from speechannotator.config import load_config

    if args.long:
        result = long_run(args.out, args.long, load_config(args.config) if args.config else None)
        print(json.dumps(result, indent=1))
        if args.json:
            args.json.write_text(json.dumps(result, indent=1))
        return

    summary = run(args.out, args.quick, load_config(args.config) if args.config else None, args.hard)
    print(json.dumps({"pooled": summary["pooled"], "by_condition": summary["by_condition"]}, indent=1))
    if args.json:
        args.json.write_text(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
