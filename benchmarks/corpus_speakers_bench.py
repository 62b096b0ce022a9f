"""Corpus speaker ids on a corpus of real voices recurring over channels: purity, coverage, count.

The corpus of benchmarks/corpus_bench.py (`--source real`): N recordings of 1-3 real voices each
(speechannotator.evaluation.recordings.real_voices), channels in rotation (clean, telephone, music bed, reverberation,
noise). It is annotated with the local engine, then the corpus step joins the voices
(corpus/speakers.py). Each per-recording speaker is mapped to the real voice it overlaps most
(exact reference), and over speech time:

- purity: the share of speech whose corpus id's majority voice is its own;
- coverage: the share of speech in its voice's largest corpus id;
- voices: corpus ids counted against the real voices present.

`--timeline` annotates on the reference timelines (the fixed-timeline setting: no diarization
errors, the corpus step alone is measured); without it the full pipeline diarizes.
`--one-at-a-time` also annotates the files one by one into another OUT, in the order of the
one run (ids compared) or with `--reverse` in reverse order (the partition compared: ids then
follow the order the voices arrived in).

    .venv/bin/python -m benchmarks.corpus_speakers_bench [--recordings 20] [--turns 3] [--timeline]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path

from benchmarks.corpus_bench import real_spec
from speechannotator.config import load_config
from speechannotator.engine import annotate_corpus
from speechannotator.evaluation.recordings import real_voices as rv
from speechannotator.export import corpus_view


def build(root: Path, n: int, turns: int) -> dict[str, list[dict]]:
    """rec_XX.flac and rec_XX.seglst.json per recording; {rec: reference utterances}."""
    refs = {}
    for i in range(n):
        conv = rv.build(real_spec(i, turns))
        conv.name = f"rec_{i:02d}"
        rv.write(conv, root / "raw")
        for sub, ext in (("audio", ".flac"), ("tl", ".seglst.json")):
            (root / sub).mkdir(exist_ok=True)
            (root / "raw" / f"{conv.name}{ext}").rename(root / sub / f"{conv.name}{ext}")
        refs[conv.name] = [{"speaker": u.speaker, "start": u.start, "end": u.end} for u in conv.utterances]
    return refs


def true_voice(segments: list[tuple[float, float]], ref: list[dict]) -> str:
    overlap: Counter[str] = Counter()
    for a, b in segments:
        for u in ref:
            overlap[u["speaker"]] += max(0.0, min(b, u["end"]) - max(a, u["start"]))
    return overlap.most_common(1)[0][0] if overlap else "?"


def measure(out: Path, refs: dict[str, list[dict]]) -> dict:
    time_by: dict[tuple[str, str], float] = defaultdict(float)  # (voice, corpus id) -> seconds
    ids = {}
    for rec in corpus_view(out):
        spans: dict[str, list[tuple[float, float]]] = defaultdict(list)
        corpus_id = {}
        for s in rec.segments:
            spans[s.record["speaker_id"]].append((s.start, s.end))
            corpus_id[s.record["speaker_id"]] = s.corpus_speaker
        for spk, segs in spans.items():
            voice = true_voice(segs, refs[rec.id])
            time_by[(voice, corpus_id[spk])] += sum(b - a for a, b in segs)
            ids[f"{rec.id}:{spk}"] = corpus_id[spk]
    total = sum(time_by.values())
    by_id: dict[str, Counter] = defaultdict(Counter)
    by_voice: dict[str, Counter] = defaultdict(Counter)
    for (voice, cid), t in time_by.items():
        by_id[cid][voice] += t
        by_voice[voice][cid] += t
    purity = sum(c.most_common(1)[0][1] for c in by_id.values()) / total
    coverage = sum(c.most_common(1)[0][1] for c in by_voice.values()) / total
    return {"purity": purity, "coverage": coverage, "ids": len(by_id), "voices": len(by_voice), "map": ids}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--recordings", type=int, default=20)
    ap.add_argument("--turns", type=int, default=3)
    ap.add_argument("--timeline", action="store_true", help="annotate on the reference timelines")
    ap.add_argument("--one-at-a-time", action="store_true")
    ap.add_argument("--reverse", action="store_true", help="join the files one at a time in reverse order")
    args = ap.parse_args()
    if not rv.available():
        sys.exit("real voices missing: run scripts/fetch_real_voices.sh")
    cfg = load_config(overrides={"agents": {"priors": False}})
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        refs = build(root, args.recordings, args.turns)
        audio = root / "audio"
        tl = root / "tl" if args.timeline else None
        inputs = sorted(audio.glob("*.flac"))
        s = annotate_corpus([audio], root / "out", cfg, timeline=tl)
        m = measure(root / "out", refs)
        hours = s.audio_seconds / 3600
        mode = "reference timelines" if args.timeline else "full pipeline (diarized)"
        print(f"{len(inputs)} recordings ({hours * 60:.1f} min) of {m['voices']} real voices over 5 channels; {mode}")
        print(f"corpus ids {m['ids']} for {m['voices']} voices; purity {m['purity']:.1%}, coverage {m['coverage']:.1%}")
        if args.one_at_a_time:
            for wav in sorted(inputs, reverse=args.reverse):
                annotate_corpus([wav], root / "one", cfg, timeline=tl)
            m2 = measure(root / "one", refs)

            def parts(mp):
                return {frozenset(k for k in mp if mp[k] == v) for v in mp.values()}

            same = parts(m["map"]) == parts(m2["map"])
            order = (
                "reverse order" if args.reverse else f"same order: same ids {'yes' if m['map'] == m2['map'] else 'NO'}"
            )
            print(
                f"one at a time, {order}; same partition {'yes' if same else 'NO'}; "
                f"purity {m2['purity']:.1%}, coverage {m2['coverage']:.1%}"
            )
        print(json.dumps({k: v for k, v in m.items() if k != "map"}))


if __name__ == "__main__":
    main()
