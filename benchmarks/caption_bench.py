"""Caption-only harness: finalize (caption and contextual inference) again on the reviewed state
of a finished run, with the local model, without redoing ASR, labels and review.

    python benchmarks/caption_bench.py OUT/state.sqlite --llm 0.5b [--config FILE] [--out FILE]
        [--lead on|off] [--examples on|off] [--vocabulary on|off] [--samples N] [--sample-temperature T]

The state is copied first (finalize writes its records into it), so the run it came from is left
as it was. The captions of every recording are printed with the free-text checks' counts
(benchmarks/free_text_stats.py) and the backend's request and rejection counts; `--out` writes
the records as JSON. Same state, same model, same settings: the same bytes (sampling is seeded).
"""

from __future__ import annotations

import argparse
import json
import logging
import shutil
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from speechannotator.agents.openai.local import LocalBackend
from speechannotator.agents.rules import RulesBackend
from speechannotator.config import load_config
from speechannotator.output.finalize import finalize
from speechannotator.stages import StageContext
from speechannotator.state import StateStore

sys.path.insert(0, str(Path(__file__).resolve().parent))
from free_text_stats import stats  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("state", type=Path)
    ap.add_argument("--llm", default="0.5b")
    ap.add_argument("--config", type=Path)
    ap.add_argument("--out", type=Path)
    ap.add_argument(
        "--lead", choices=("on", "off"), help="captions made to begin with the lead words (default: the model's)"
    )
    ap.add_argument(
        "--samples", type=int, help="sampled caption candidates (OpenAIOptions.caption_samples; default: the model's)"
    )
    ap.add_argument(
        "--examples", choices=("on", "off"), help="worked rewrites in the caption prompt (default: the model's)"
    )
    ap.add_argument("--vocabulary", choices=("on", "off"), help="the caption sampled under its vocabulary's grammar")
    ap.add_argument("--inference-samples", type=int, help="the same for the contextual inference")
    ap.add_argument("--sample-temperature", type=float, help="their temperature (OpenAIOptions.sample_temperature)")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(name)s: %(message)s")
    cfg = load_config(args.config, overrides={"agents": {"backend": "local"}, "local_llm": {"model": args.llm}})
    out: dict[str, list[dict]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "state.sqlite"
        shutil.copy(args.state, copy)
        store = StateStore(copy)
        backend = LocalBackend(cfg, fallback=RulesBackend(cfg.calibration))
        if args.lead:
            backend.options = replace(backend.options, caption_lead=args.lead == "on")
        if args.examples:
            backend.options = replace(backend.options, caption_examples=args.examples == "on")
        if args.vocabulary:
            backend.options = replace(backend.options, caption_vocabulary=args.vocabulary == "on")
        if args.samples is not None:
            backend.options = replace(backend.options, caption_samples=args.samples)
        if args.inference_samples is not None:
            backend.options = replace(backend.options, inference_samples=args.inference_samples)
        if args.sample_temperature is not None:
            backend.options = replace(backend.options, sample_temperature=args.sample_temperature)
        try:
            t0 = time.monotonic()
            for rec in store.recordings():
                lang = store.label_language(rec["rec"]) or "en"
                ctx = StageContext(store, rec["rec"], cfg, backend=backend)
                records = finalize(ctx)
                out[rec["rec"]] = [r.model_dump() for r in records]
                print(f"# {rec['rec']} ({lang})")
                for r in out[rec["rec"]]:
                    print(json.dumps(r["caption"], ensure_ascii=False))
                try:  # the checks of this checkout (an older one, run for comparison, may lack some)
                    print(json.dumps(stats(out[rec["rec"]], lang or "en"), ensure_ascii=False))
                except AttributeError as exc:
                    print(f"(no stats: {exc})")
            wall = time.monotonic() - t0
            st = backend.stats.as_dict()
            keep = ("compose_calls", "requests", "retries", "text_rejections", "failures", "repairs")
            print(json.dumps({"wall_s": round(wall, 1), **{k: st.get(k) for k in keep}}))
        finally:
            backend.close()
    if args.out:
        args.out.write_text(json.dumps(out, ensure_ascii=False, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
