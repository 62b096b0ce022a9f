"""Does the review loop repair an LLM labeler? Closed-field accuracy on benches with known truth.

For every case of a bench (an audio file with a reference JSON in the output format), the
reference timeline is fixed and the rules pipeline runs once (priors, plan, rules labels and
their review): the *rules default*. The LLM then labels the measured fields on a copy of that
state (round 0: *no review*), and each review variant runs the bounded loop on its own copy of
those round-0 labels:

- `rules-checks`: the rules' evidence-grounded checks review the LLM's labels and the LLM
  relabels what they flag, from the request as the checks wrote it;
- `rules-checks+evidence`: the same, with the request carrying the evidence values the field
  was checked against (the default of RoutedBackend);
- `llm`: the LLM reviews its own labels (the plain openai backend's loop).

Fields (agent predictions before speaker-level regularization, so review is measured on its
own): gender (exact), pitch and speed (level class low / medium / high from the description),
background_sound (present or none). Per variant: accuracy, fields flagged, relabels that fixed
a wrong field, broke a right one, or changed nothing that counts.

    nice -n 10 python benchmarks/review_loop_bench.py --model 0.5b --out bench_results/review_loop [--cases N]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sqlite3
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from speechannotator import agents  # noqa: E402
from speechannotator.agents.openai.local import LocalBackend  # noqa: E402
from speechannotator.agents.openai.routed import RoutedBackend  # noqa: E402
from speechannotator.agents.phrases.en import PITCH_PARSE, SPEED_PARSE  # noqa: E402
from speechannotator.agents.rules import RulesBackend  # noqa: E402
from speechannotator.agents.rules.review import parse_level  # noqa: E402
from speechannotator.audio import load_audio  # noqa: E402
from speechannotator.config import load_config  # noqa: E402
from speechannotator.pipeline import Annotator  # noqa: E402
from speechannotator.schema import canonical_closed, is_empty_marker  # noqa: E402
from speechannotator.servers.local_llm import LocalLLMServer  # noqa: E402
from speechannotator.stages import StageContext  # noqa: E402
from speechannotator.state import StateStore  # noqa: E402

FIELDS = ("gender", "pitch", "speed", "background_sound")
VARIANTS = ("rules-checks", "rules-checks+evidence", "llm")


def _sign(level: int | None) -> int | None:
    return None if level is None else (level > 0) - (level < 0)


def field_class(field: str, value) -> str | None:
    """The class a value claims, comparable between reference and prediction (None: unparsable)."""
    if value is None:
        return None
    text = str(value)
    if field == "gender":
        return canonical_closed("gender", text)
    if field == "pitch":
        s = _sign(parse_level(text, PITCH_PARSE))
        return None if s is None else str(s)
    if field == "speed":
        s = _sign(parse_level(text, SPEED_PARSE))
        return None if s is None else str(s)
    if field == "background_sound":
        return "none" if is_empty_marker(text) else "present"
    raise ValueError(field)


def truth(case_json: Path) -> dict[str, dict[str, str | None]]:
    """{seg_key: {field: class}} from a reference in the output format (time order)."""
    ref = json.loads(case_json.read_text(encoding="utf-8"))
    return {f"seg_{i:05d}": {f: field_class(f, r.get(f)) for f in FIELDS if r.get(f)} for i, r in enumerate(ref)}


def score(preds: dict, gold: dict) -> dict[str, list[int]]:
    """{field: [correct, total]} over the reference values."""
    out = {f: [0, 0] for f in FIELDS}
    for key, fields in gold.items():
        for f, want in fields.items():
            if want is None:
                continue
            out[f][1] += 1
            p = preds.get((key, f))
            out[f][0] += int(p is not None and field_class(f, p.value) == want)
    return out


def relabel_effects(trails: dict, gold: dict) -> dict[str, int]:
    """Round-0 label vs final label, over the (key, field) pairs that were relabeled."""
    fx = {"relabeled": 0, "fixed": 0, "broke": 0, "unchanged": 0}
    for (key, f), trail in trails.items():
        want = gold.get(key, {}).get(f)
        if f not in FIELDS or want is None or len(trail) < 2:
            continue
        fx["relabeled"] += 1
        before = field_class(f, trail[0].value) == want
        after = field_class(f, trail[-1].value) == want
        fx["fixed" if after and not before else "broke" if before and not after else "unchanged"] += 1
    return fx


def _reset_agents(db: Path, rec: str) -> None:
    """Forget labels and review (keep timeline, evidence and contracts)."""
    with sqlite3.connect(db) as c:
        c.execute("DELETE FROM predictions WHERE rec=?", (rec,))
        c.execute("DELETE FROM verdicts WHERE rec=?", (rec,))
        c.execute("DELETE FROM stages WHERE rec=? AND stage IN ('label','review','finalize')", (rec,))


def _copy_state(src: Path, dst: Path) -> Path:
    dst.mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(src) as a, sqlite3.connect(dst / "state.sqlite") as b:
        a.backup(b)  # a consistent copy, WAL included
    return dst / "state.sqlite"


class _PlainRequests(RoutedBackend):
    """RoutedBackend whose relabel requests are the checks' text without the evidence values."""

    def review(self, task):
        return dict(self.rules.review(task))


def _summarize(counts: dict[str, list[int]]) -> dict:
    total = [sum(c[0] for c in counts.values()), sum(c[1] for c in counts.values())]
    return {
        "per_field": {f: f"{c[0]}/{c[1]}" for f, c in counts.items()},
        "accuracy": round(100.0 * total[0] / max(1, total[1]), 1),
        "correct": total[0],
        "total": total[1],
    }


def bench_cases(bench: Path, cases: int | None, names: list[str] | None) -> list[Path]:
    """Audio files of a bench directory (each with its reference <stem>.json beside it)."""
    audio_files = sorted(p for p in bench.iterdir() if p.suffix in (".flac", ".wav") and (not names or p.stem in names))
    return audio_files[: cases or None]


# What the channel of a real-voice conversation puts behind the voices (None: not scored).
_REAL_BACKGROUND = {"clean": "none", "music": "background music"}


def real_voice_cases(names: list[str], out: Path) -> list[Path]:
    """Real-voice conversations (benchmarks/real_voices.py) as cases: the audio and a reference
    in the output format with each turn's speaker, transcript and the voice's known gender
    (and the background where the channel decides it). Overlaps and backchannels are turned
    off: the timeline is fixed, so only labeling is measured."""
    from dataclasses import replace

    import real_voices

    if not real_voices.available():
        raise SystemExit(f"real voices not found in {real_voices.DATA} (set REAL_VOICES_DIR)")
    specs = {s.name: s for s in real_voices.DEV_SET}
    paths = []
    for name in names:
        if name not in specs:
            raise SystemExit(f"unknown real-voice spec {name!r}; known: {', '.join(specs)}")
        spec = replace(specs[name], overlap_prob=0.0, backchannel_prob=0.0)
        conv = real_voices.build(spec)
        path = real_voices.write(conv, out)
        gender = {"f": "female", "m": "male"}
        ref = [
            {
                "speaker_id": u.speaker,
                "text": u.text or "",
                "start_time": round(u.start * 1000),  # the output format's milliseconds
                "end_time": round(u.end * 1000),
                "gender": gender[real_voices.VOICES[u.speaker].gender],
                **(
                    {"background_sound": _REAL_BACKGROUND[conv.condition]} if conv.condition in _REAL_BACKGROUND else {}
                ),
            }
            for u in conv.utterances
        ]
        path.with_suffix(".json").write_text(json.dumps(ref, ensure_ascii=False, indent=1), encoding="utf-8")
        paths.append(path)
    return paths


def run(
    audio_files: list[Path],
    out: Path,
    model: str,
    variants: list[str],
    threads: int,
    max_segments: int | None = None,
    parallel: int = 1,
) -> dict:
    out.mkdir(parents=True, exist_ok=True)
    rules_cfg = load_config(overrides={"agents": {"backend": "rules"}})
    llm_cfg = load_config(
        overrides={
            "agents": {"backend": "local", "llm_fields": list(FIELDS)},
            "local_llm": {"model": model, "threads": threads, "parallel": parallel},
        }
    )
    server = LocalLLMServer(llm_cfg.local_llm)
    results: dict = {"model": model, "cases": [p.stem for p in audio_files], "timings_s": {}}
    tally = {k: {f: [0, 0] for f in FIELDS} for k in ("rules", "rules_no_review", "llm_no_review", *variants)}
    effects = {v: {"flagged": 0, "relabeled": 0, "fixed": 0, "broke": 0, "unchanged": 0} for v in variants}
    t_llm = {"label": 0.0, **dict.fromkeys(variants, 0.0)}
    n_segments = 0
    audio_s = 0.0
    with server:
        llm = LocalBackend(llm_cfg, fallback=RulesBackend(), server=server)
        for path in audio_files:
            rec, ref = path.stem, path.with_suffix(".json")
            if max_segments:  # the first N reference segments only: a shorter fixed timeline
                (out / rec).mkdir(parents=True, exist_ok=True)
                short = json.loads(ref.read_text(encoding="utf-8"))[:max_segments]
                ref = out / rec / f"{rec}.json"
                ref.write_text(json.dumps(short, ensure_ascii=False), encoding="utf-8")
            gold = truth(ref)
            n_segments += len(gold)
            base = out / rec / "rules"
            ann = Annotator(base, rules_cfg)
            try:
                res = ann.annotate(path, timeline=ref)
                assert res.ok, res.error
                trails = ann.store.predictions(rec, all_rounds=True)
                span = max(seg.end for seg in ann.store.segments(rec))
            finally:
                ann.close()
            audio = load_audio(path)
            audio_s += min(audio.duration, span)  # the annotated span (RTF denominator)
            add(tally["rules"], score({k: t[-1] for k, t in trails.items()}, gold))
            add(tally["rules_no_review"], score({k: t[0] for k, t in trails.items()}, gold))
            # Round 0 of the LLM, once; every review variant starts from a copy of it.
            db0 = _copy_state(base / "state.sqlite", out / rec / "llm_round0")
            _reset_agents(db0, rec)
            store = StateStore(db0)
            t = time.perf_counter()
            agents.label(
                StageContext(
                    store,
                    rec,
                    llm_cfg,
                    audio=audio,
                    backend=RoutedBackend(llm, RulesBackend(), list(FIELDS), compact=True),
                )
            )
            t_llm["label"] += time.perf_counter() - t
            round0 = store.predictions(rec)
            store.close()
            add(tally["llm_no_review"], score(round0, gold))
            for v in variants:
                db = _copy_state(db0, out / rec / v)
                store = StateStore(db)
                if v == "llm":
                    backend = RoutedBackend(llm, RulesBackend(), list(FIELDS), llm_review=True, compact=True)
                    backend.review = _llm_only_review(backend)  # the LLM judges alone
                elif v == "rules-checks":
                    backend = _PlainRequests(llm, RulesBackend(), list(FIELDS), compact=True)
                else:
                    backend = RoutedBackend(llm, RulesBackend(), list(FIELDS), compact=True)
                t = time.perf_counter()
                agents.review(StageContext(store, rec, llm_cfg, audio=audio, backend=backend))
                t_llm[v] += time.perf_counter() - t
                trails = store.predictions(rec, all_rounds=True)
                verdicts = store.verdicts(rec)
                store.close()
                add(tally[v], score({k: tr[-1] for k, tr in trails.items()}, gold))
                effects[v]["flagged"] += sum(
                    1 for (k, f), vs in verdicts.items() if f in FIELDS and k in gold and not vs[0].accepted
                )
                for name, n in relabel_effects(trails, gold).items():
                    effects[v][name] += n
            print(f"{rec}: done ({len(gold)} segments)", file=sys.stderr, flush=True)
        results["server"] = server.describe()
        results["llm_stats"] = st = llm.stats.as_dict()
        new_prompt = st["prompt_tokens"] - st["cached_tokens"]
        results["throughput"] = {
            "prompt_tok_per_s": round(1000 * new_prompt / max(1, st["prompt_ms"]), 1),
            "output_tok_per_s": round(1000 * st["completion_tokens"] / max(1, st["predicted_ms"]), 1),
            "prompt_cache_share": round(st["cached_tokens"] / max(1, st["prompt_tokens"]), 3),
        }
    results["segments"], results["audio_s"] = n_segments, round(audio_s, 1)
    results["accuracy"] = {k: _summarize(v) for k, v in tally.items()}
    results["review_effects"] = effects
    results["timings_s"] = {k: round(v, 1) for k, v in t_llm.items()}
    results["llm_label_rtf"] = round(t_llm["label"] / max(audio_s, 1e-6), 2)
    return results


def record_calls(path: Path) -> None:
    """Append every chat call (schema name, prompt, answer, seconds) to `path` as JSON lines:
    the transcripts that show why a relabel did or did not repair a field."""
    from speechannotator import llm_client

    path.parent.mkdir(parents=True, exist_ok=True)
    log = path.open("w", encoding="utf-8")
    chat = llm_client.ChatClient.chat

    counters = ("prompt_tokens", "cached_tokens", "completion_tokens", "prompt_ms", "predicted_ms")

    def recorded(self, system, user_text, schema, **kw):
        t = time.perf_counter()
        before = [getattr(self.stats, c) for c in counters]
        answer = chat(self, system, user_text, schema, **kw)
        row = {"s": round(time.perf_counter() - t, 2), "name": kw.get("schema_name")}
        row.update({c: getattr(self.stats, c) - b for c, b in zip(counters, before, strict=True)})
        row.update(user=user_text, answer=answer)
        log.write(json.dumps(row, ensure_ascii=False) + "\n")
        log.flush()
        return answer

    llm_client.ChatClient.chat = recorded


def rescore(out: Path, bench: Path, variants: list[str]) -> dict:
    """Accuracy and review effects from the states a run left in `out` (also an interrupted
    run's: every case whose states are complete counts)."""
    tally = {k: {f: [0, 0] for f in FIELDS} for k in ("rules", "rules_no_review", "llm_no_review", *variants)}
    effects = {v: {"flagged": 0, "relabeled": 0, "fixed": 0, "broke": 0, "unchanged": 0} for v in variants}
    done = []
    for case in sorted(p for p in out.iterdir() if p.is_dir() and (p / "rules").is_dir()):
        rec = case.name
        if not all((case / v / "state.sqlite").exists() for v in variants):
            continue
        ref = case / f"{rec}.json" if (case / f"{rec}.json").exists() else bench / f"{rec}.json"
        gold = truth(ref)
        dbs = {"rules": case / "rules" / "state.sqlite", "llm_round0": case / "llm_round0" / "state.sqlite"}
        dbs.update({v: case / v / "state.sqlite" for v in variants})
        trails = {}
        verdicts = {}
        for name, db in dbs.items():
            store = StateStore(db)
            trails[name], verdicts[name] = store.predictions(rec, all_rounds=True), store.verdicts(rec)
            store.close()
        add(tally["rules"], score({k: t[-1] for k, t in trails["rules"].items()}, gold))
        add(tally["rules_no_review"], score({k: t[0] for k, t in trails["rules"].items()}, gold))
        add(tally["llm_no_review"], score({k: t[-1] for k, t in trails["llm_round0"].items()}, gold))
        for v in variants:
            add(tally[v], score({k: t[-1] for k, t in trails[v].items()}, gold))
            effects[v]["flagged"] += sum(
                1 for (k, f), vs in verdicts[v].items() if f in FIELDS and k in gold and not vs[0].accepted
            )
            for name, n in relabel_effects(trails[v], gold).items():
                effects[v][name] += n
        done.append(rec)
    return {
        "cases": done,
        "accuracy": {k: _summarize(v) for k, v in tally.items()},
        "review_effects": effects,
    }


def _llm_only_review(backend: RoutedBackend):
    def review(task):
        return backend.llm.review(task)

    return review


def add(acc: dict[str, list[int]], part: dict[str, list[int]]) -> None:
    for f, (c, n) in part.items():
        acc[f][0] += c
        acc[f][1] += n


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bench", type=Path, default=ROOT / "benchmarks" / "sa_bench_mini")
    ap.add_argument("--out", type=Path, default=ROOT / "bench_results" / "review_loop")
    ap.add_argument("--model", default="0.5b", choices=["0.5b", "1.5b"])
    ap.add_argument("--cases", type=int, help="only the first N cases")
    ap.add_argument("--max-segments", type=int, help="only the first N segments of each case")
    ap.add_argument("--case", action="append", default=[], help="only these cases (by stem; repeatable)")
    ap.add_argument(
        "--real",
        default="",
        help="real-voice conversations instead of --bench: DEV_SET names of benchmarks/real_voices.py, comma-separated",
    )
    ap.add_argument("--calls", type=Path, help="write every LLM call (prompt, answer, seconds) to this JSONL file")
    ap.add_argument("--variants", default=",".join(VARIANTS))
    ap.add_argument("--threads", type=int, default=0, help="llama.cpp threads (0: one per idle core)")
    ap.add_argument("--parallel", type=int, default=1, help="llama.cpp server slots")
    ap.add_argument("--rescore", type=Path, help="only score the states an earlier run left in this --out folder")
    args = ap.parse_args(argv)
    variants = [v for v in args.variants.split(",") if v]
    bad = [v for v in variants if v not in VARIANTS]
    if bad:
        ap.error(f"unknown variants: {bad}")
    if args.rescore:
        print(json.dumps(rescore(args.rescore, args.bench, variants), indent=2, ensure_ascii=False))
        return 0
    if args.out.exists():
        shutil.rmtree(args.out)
    args.out.mkdir(parents=True)
    if args.real:
        cases = real_voice_cases([n for n in args.real.split(",") if n], args.out / "real_voices")
    else:
        cases = bench_cases(args.bench, args.cases, args.case)
    if args.calls:
        record_calls(args.calls)
    res = run(cases, args.out, args.model, variants, args.threads, args.max_segments, args.parallel)
    text = json.dumps(res, indent=2, ensure_ascii=False)
    (args.out / "results.json").write_text(text + "\n", encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
