"""Does the rules' review repair an LLM labeler? Closed-field accuracy on benches with known truth.

For every case of a bench (an audio file with a reference JSON in the output format beside it),
the reference timeline is fixed and the rules pipeline runs once (priors, plan, rules labels and
their review): the *rules default*. On a copy of that state the local LLM labels the measured
fields (round 0: *LLM, no review*), and on a copy of those labels the bounded loop runs with the
rules' evidence checks as the reviewer (*LLM + rules' checks*, what `--llm local` does).

Fields (agent predictions before speaker-level regularization, so review is measured on its
own): gender (exact), pitch and speed (level class low / medium / high from the phrase),
background_sound (present or none). Per variant: accuracy; for the loop also the relabels that
fixed a wrong field, broke a right one or changed nothing that counts.

    nice -n 10 python benchmarks/review_loop_bench.py benchmarks/sa_bench_mini --model 0.5b --out bench_results/review
"""

from __future__ import annotations

import argparse
import json
import shutil
import time
from pathlib import Path

from speechannotator import agents
from speechannotator.agents.levels import parse_level
from speechannotator.agents.openai.local import LocalBackend
from speechannotator.agents.openai.routed import RoutedBackend
from speechannotator.agents.phrases import phrases
from speechannotator.agents.rules import RulesBackend
from speechannotator.audio import load_audio
from speechannotator.config import load_config
from speechannotator.pipeline import Annotator
from speechannotator.schema import canonical_closed, is_empty_marker
from speechannotator.servers.local_llm import LocalLLMServer
from speechannotator.stages import StageContext
from speechannotator.state import STATE_FILE, StateStore

FIELDS = ("gender", "pitch", "speed", "background_sound")
VARIANTS = ("rules", "llm_no_review", "llm_rules_checks")


def field_class(field: str, value: object) -> str | None:
    """What is scored of a value: the canonical gender, the side of a level, background presence."""
    if value is None or not str(value).strip():
        return None
    text = str(value)
    if field == "gender":
        return canonical_closed("gender", text)
    if field in ("pitch", "speed"):
        table = [pair for lang in ("en", "zh") for pair in getattr(phrases(lang), f"{field.upper()}_PARSE")]
        level = parse_level(text, table)
        return None if level is None else ("low", "medium", "high")[(level > 0) - (level < 0) + 1]
    return "none" if is_empty_marker(text) else "present"


def truth(ref: Path) -> dict[str, dict[str, str]]:
    """{segment key: {field: class}} of the reference's non-blank fields (keys follow its order)."""
    rows = json.loads(ref.read_text(encoding="utf-8"))
    out = {}
    for i, row in enumerate(rows):
        classes = {f: field_class(f, row.get(f)) for f in FIELDS if row.get(f)}
        out[f"seg_{i:05d}"] = {f: c for f, c in classes.items() if c is not None}
    return out


def score(preds: dict, gold: dict, tally: dict[str, list[int]]) -> None:
    for key, want in gold.items():
        for f, c in want.items():
            p = preds.get((key, f))
            tally[f][0] += int(p is not None and field_class(f, p.value) == c)
            tally[f][1] += 1


def relabel_effects(trails: dict, gold: dict, effects: dict[str, int]) -> None:
    for (key, f), trail in trails.items():
        want = gold.get(key, {}).get(f)
        if want is None or len(trail) < 2:
            continue
        before, after = field_class(f, trail[0].value) == want, field_class(f, trail[-1].value) == want
        effects["fixed" if after and not before else "broke" if before and not after else "unchanged"] += 1


def copy_state(src: Path, dst: Path) -> StateStore:
    dst.mkdir(parents=True, exist_ok=True)
    shutil.copy(src / STATE_FILE, dst / STATE_FILE)  # the annotator closed it: no WAL left behind
    return StateStore(dst / STATE_FILE)


def run_case(path: Path, out: Path, llm: LocalBackend, llm_cfg, tally: dict, effects: dict, t: dict) -> int:
    rec, ref = path.stem, path.with_suffix(".json")
    gold = truth(ref)
    ann = Annotator(out / rec / "rules", load_config(overrides={"agents": {"backend": "rules"}}))
    try:
        result = ann.annotate(path, timeline=ref)
        assert result.ok, result.error
        score({k: tr[-1] for k, tr in ann.store.predictions(rec, all_rounds=True).items()}, gold, tally["rules"])
    finally:
        ann.close()
    audio = load_audio(path)
    backend = RoutedBackend(llm, RulesBackend(), list(FIELDS), compact=True)
    store = copy_state(out / rec / "rules", out / rec / "llm")
    try:
        start = time.perf_counter()
        agents.label(StageContext(store, rec, llm_cfg, audio=audio, backend=backend))  # round 0 replaces the rules'
        score(store.predictions(rec), gold, tally["llm_no_review"])
        agents.review(StageContext(store, rec, llm_cfg, audio=audio, backend=backend))
        t["llm_s"] += time.perf_counter() - start
        trails = store.predictions(rec, all_rounds=True)
        score({k: tr[-1] for k, tr in trails.items()}, gold, tally["llm_rules_checks"])
        relabel_effects(trails, gold, effects)
        effects["flagged"] += sum(
            1 for (k, f), vs in store.verdicts(rec).items() if f in FIELDS and k in gold and not vs[0].accepted
        )
    finally:
        store.close()
    return len(gold)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("bench", type=Path, help="a folder of audio files, each with its reference <stem>.json")
    ap.add_argument("--model", default="0.5b")
    ap.add_argument("--out", type=Path, default=Path("bench_results/review_loop"))
    ap.add_argument("--cases", type=int, help="the first N cases only")
    ap.add_argument("--threads", type=int, default=0, help="llama.cpp threads (0: one per idle core)")
    args = ap.parse_args(argv)
    files = sorted(p for p in args.bench.iterdir() if p.suffix in (".flac", ".wav") and p.with_suffix(".json").exists())
    files = files[: args.cases or None]
    overrides = {"agents": {"backend": "local", "llm_fields": list(FIELDS)}}
    llm_cfg = load_config(overrides={**overrides, "local_llm": {"model": args.model, "threads": args.threads}})
    tally = {v: {f: [0, 0] for f in FIELDS} for v in VARIANTS}
    effects = dict.fromkeys(("flagged", "fixed", "broke", "unchanged"), 0)
    t = {"llm_s": 0.0}
    segments = 0
    with LocalLLMServer(llm_cfg.local_llm) as server:
        llm = LocalBackend(llm_cfg, server=server)
        for path in files:
            segments += run_case(path, args.out, llm, llm_cfg, tally, effects, t)
    accuracy = {}
    for v, per in tally.items():
        right, total = sum(c[0] for c in per.values()), sum(c[1] for c in per.values())
        accuracy[v] = {
            "per_field": {f: f"{c[0]}/{c[1]}" for f, c in per.items()},
            "accuracy": round(100 * right / max(1, total), 1),
        }
    result = {"model": args.model, "cases": [p.stem for p in files], "segments": segments, "accuracy": accuracy}
    result |= {"review_effects": effects, "llm_s": round(t["llm_s"], 1)}
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "results.json").write_text(json.dumps(result, indent=1), encoding="utf-8")
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
