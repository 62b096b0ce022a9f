"""The pipeline with the openai agent backend against a real local llama.cpp server."""

import json
from pathlib import Path

from speechannotator.config import load_config
from speechannotator.pipeline import Annotator
from speechannotator.schema import LABELED_FIELDS, validate_records

ROOT = Path(__file__).resolve().parents[1]


def test_fixed_timeline_annotation_through_an_llm(tmp_path, llama_server):
    ref = json.loads((ROOT / "examples" / "dialogue.seglst.json").read_text())[:2]  # two turns keep it short
    timeline = tmp_path / "dialogue.seglst.json"
    timeline.write_text(json.dumps(ref))
    config = load_config(
        overrides={
            # Review through the LLM is covered by tests/agents/test_openai_backend.py; here one
            # review round would cost minutes of SmolLM2 generation on a CPU thread.
            # The caption through the endpoint too (agents.llm_caption, off by default).
            "agents": {"backend": "openai", "review": False, "llm_caption": True},
            "labeler": {
                "url": llama_server.url,
                "model": "smollm2",
                # The work is bounded by tokens (the max_*_chars below set max_tokens), not by wall
                # time: the timeout is only a ceiling for a hung server, so a busy machine passes.
                "timeout_s": 600,
                "max_retries": 1,
                # Short answers: SmolLM2 tends to fill strings to their bound.
                "max_value_chars": 24,
                "max_compose_chars": 48,
            },
            "priors": {"dnsmos": False},
        }
    )
    annotator = Annotator(tmp_path / "out", config)
    try:
        result = annotator.annotate(ROOT / "examples" / "dialogue.flac", timeline=timeline)
        assert result.ok, result.error
        assert result.config is config  # the result carries the settings it ran with
        stats = annotator.backend.stats.as_dict()
        store = annotator.store
        preds = store.predictions("dialogue", all_rounds=True)
        verdicts = store.verdicts("dialogue")
    finally:
        annotator.close()
    records = validate_records(json.loads((tmp_path / "out" / "dialogue.json").read_text()))
    assert [r.text for r in records] == [r["words"] for r in ref]
    # Every labeled field of every segment has a round-0 prediction from the LLM (ok, abstain or failed).
    assert {(k, f) for (k, f) in preds} == {(f"seg_{i:05d}", f) for i in range(2) for f in LABELED_FIELDS}
    assert all(p[0].backend == "openai" for p in preds.values())
    # The real pipeline's prompt (all admitted evidence, contracts, context) fits the endpoint:
    # the model answered, under the schema, for the fields of round 0 (quality aside).
    round0 = [p[0] for p in preds.values()]
    assert sum(p.status != "failed" for p in round0) >= 0.8 * len(round0), [p.error for p in round0 if p.error][:3]
    # Without review: exactly one label call and one caption call per segment.
    assert verdicts == {} and all(len(p) == 1 for p in preds.values())
    assert stats["label_calls"] == 2 and stats["compose_calls"] == 2
