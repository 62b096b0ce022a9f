"""How well the voice fit (priors/voice_fit.py) finds misassigned segments, on natural and spliced speech.

Annotates (or reads, where OUT already holds them) the 14 AMI meeting clips of pyannote-audio's test
data and the 22 spliced conversations of ``HELD_OUT_3`` with the default pipeline, then scores each
segment against its reference: its speaker is the one who talks most in it, and it is misassigned
where that is not the main speaker of its cluster (the reference speaker with the most seconds in
the cluster's segments). Prints per set the misassigned segments, the ROC AUC of low similarity for
them, and how many of them and of the others a negative margin flags.

Usage: python scripts/voice_fit_check.py OUT
"""

from __future__ import annotations

import argparse
from pathlib import Path

import soundfile as sf

from speechannotator.config import Config
from speechannotator.evaluation.recordings import ami
from speechannotator.evaluation.recordings import real_voice_sets as rvs
from speechannotator.evaluation.recordings import real_voices as rv
from speechannotator.pipeline import Annotator
from speechannotator.priors.voice_fit import voice_fit
from speechannotator.state import STATE_FILE, StateStore

Rows = list[tuple[float, float, str]]


def _inputs(out: Path) -> dict[str, tuple[Path, Rows]]:
    """recording name -> (audio path, reference rows); the spliced conversations written once."""
    found = {f"ami_{m.name}": (m.path, list(m.rows)) for m in ami.meetings(("train", "development", "test"))}
    folder = out / "held_out_3"
    folder.mkdir(parents=True, exist_ok=True)
    for spec in rvs.HELD_OUT_3:
        conv = rv.build(spec)
        path = folder / f"{spec.name}.flac"
        if not path.exists():
            sf.write(path, conv.samples, rv.SR)
        found[spec.name] = (path, list(conv.speech_rows()))
    return found


def _main_speaker(rows: Rows, start: float, end: float) -> str | None:
    talk: dict[str, float] = {}
    for a, b, spk in rows:
        if min(b, end) > max(a, start):
            talk[spk] = talk.get(spk, 0.0) + min(b, end) - max(a, start)
    return max(talk, key=lambda k: talk[k]) if talk else None


def score(store: StateStore, rec: str, rows: Rows) -> list[tuple[bool, float | None, float | None]]:
    """(misassigned, similarity, margin) of each segment with a voice and a reference speaker."""
    segs = store.segments(rec)
    main = {s.key: _main_speaker(rows, s.start, s.end) for s in segs}
    secs: dict[str, dict[str, float]] = {}
    for s in segs:
        if main[s.key] is not None:
            by = secs.setdefault(s.speaker, {})
            by[main[s.key]] = by.get(main[s.key], 0.0) + s.end - s.start
    cluster = {spk: max(by, key=lambda k: by[k]) for spk, by in secs.items()}
    fit = voice_fit(segs)
    return [(main[s.key] != cluster[s.speaker], *fit[s.key]) for s in segs if s.key in fit and main[s.key]]


def main() -> int:
    from sklearn.metrics import roc_auc_score

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out", type=Path, help="output folder (annotations are kept and reused)")
    args = ap.parse_args()
    annotator = Annotator(str(args.out), Config())
    results: dict[str, list[tuple[bool, float | None, float | None]]] = {"AMI": [], "HELD_OUT_3": []}
    for name, (path, rows) in _inputs(args.out).items():
        rec = annotator.annotate(path, rec=name).rec
        store = StateStore(str(args.out / STATE_FILE))
        results["AMI" if name.startswith("ami_") else "HELD_OUT_3"] += score(store, rec, rows)
    for name, rows in results.items():
        wrong = [r for r in rows if r[0]]
        flagged = [r[2] is not None and r[2] < 0 for r in rows]
        low = [-r[1] if r[1] is not None else 0.0 for r in rows]
        auc = roc_auc_score([r[0] for r in rows], low) if 0 < len(wrong) < len(rows) else float("nan")
        print(
            f"{name}: {len(wrong)} of {len(rows)} segments misassigned; low similarity ranks them first with ROC AUC "
            f"{auc:.2f}; margin < 0 flags {sum(f for f, r in zip(flagged, rows) if r[0])} of them and "
            f"{sum(f for f, r in zip(flagged, rows) if not r[0])} of the others"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
