"""Gender on natural meetings: the AMI clips of pyannote-audio's test data, far-field, overlapped.

Each segment of the default pipeline's output is scored against the reference speaker who talks
most in it (AMI speaker ids begin with the speaker's gender, F or M); "dominant" segments are
those where that speaker covers >= 70 % and the others < 30 % of the segment. Beside the final
label, each of the three votes of `priors/gender.py` (voice2gender, pitch, the CAM++ embedding
model) and their fusion are scored alone, with the ROC AUC of their P(male). Train and development
clips are what the project tunes on; the test clips are held out.

    python -m benchmarks.natural_gender_bench [--out DIR]
"""

from __future__ import annotations

import argparse
import tempfile

from speechannotator.config import Config
from speechannotator.evaluation.recordings import ami
from speechannotator.pipeline import Annotator
from speechannotator.state import STATE_FILE, StateStore

VOTES = ("gender.p_model", "gender.p_pitch", "gender.p_embedding", "gender.p_male")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", help="output folder (default: a temporary one)")
    args = ap.parse_args()
    out = args.out or tempfile.mkdtemp(prefix="natural-gender-")
    annotator = Annotator(out, Config())
    rows: list[tuple[str, bool, bool, bool, dict[str, float]]] = []  # split, male, dominant, right, votes
    for m in ami.meetings(("train", "development", "test")):
        result = annotator.annotate(m.path)
        store = StateStore(f"{out}/{STATE_FILE}")
        segs = sorted(store.segments(result.rec), key=lambda s: (s.start, s.end, s.key))
        evidence = store.evidence(result.rec)
        for seg, rec in zip(segs, result.records):
            talk: dict[str, float] = {}
            for a, b, spk in m.rows:
                talk[spk] = talk.get(spk, 0.0) + max(0.0, min(b, seg.end) - max(a, seg.start))
            top = max(talk, key=lambda k: talk[k])
            if talk[top] <= 0:
                continue
            dominant = talk[top] >= 0.7 * seg.duration and sum(talk.values()) - talk[top] < 0.3 * seg.duration
            male = top.startswith("M")
            votes = {n: float(e.value) for n, e in evidence.get(seg.key, {}).items() if n in VOTES}
            rows.append((m.split, male, dominant, rec.gender == ("male" if male else "female"), votes))
    from sklearn.metrics import roc_auc_score

    for name, splits in (("train + development", ami.TUNING), ("test (held out)", ("test",))):
        sel = [r for r in rows if r[0] in splits]
        women, men, dom = ([r for r in sel if cond(r)] for cond in (lambda r: not r[1], lambda r: r[1], lambda r: r[2]))
        print(
            f"{name}: final gender {sum(r[3] for r in sel)}/{len(sel)} segments (women {sum(r[3] for r in women)}/"
            f"{len(women)}, men {sum(r[3] for r in men)}/{len(men)}; dominant {sum(r[3] for r in dom)}/{len(dom)})"
        )
        for v in VOTES:
            have = [r for r in sel if v in r[4]]
            right = sum((r[4][v] >= 0.5) == r[1] for r in have)
            both = len({r[1] for r in have}) == 2
            auc = f", AUC {roc_auc_score([r[1] for r in have], [r[4][v] for r in have]):.3f}" if both else ""
            print(f"  {v:20s} {right}/{len(have)} right{auc}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
