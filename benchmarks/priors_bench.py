"""Accuracy and speed of the prior-evidence extractors on audio with known truth.

    python -m benchmarks.priors_bench [--quick]

Truth comes from how the audio is made (speechannotator.evaluation.recordings.known_truth): espeak-ng voice gender
and -p pitch settings kept inside human ranges; speed from espeak -s in words per minute
(slow <= 120, normal 160-175, fast >= 250, the usual wpm bands); pitch class from WORLD
resynthesis that imposes a median F0 at the centre of a calibration bin; background from
mixing noise or music at a known SNR. Prints per-evidence accuracy and real-time factor.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import time
import warnings
from collections import Counter

import numpy as np

from speechannotator import calibration
from speechannotator.config import PriorsSettings
from speechannotator.enhance import enhance
from speechannotator.evaluation.recordings import known_truth as C
from speechannotator.priors.extract import extract_priors

warnings.simplefilter("ignore")


def run(clips, settings=None):
    audio, segs = C.recording(clips)
    ev = extract_priors(audio, segs, settings=settings or PriorsSettings())
    table = {(e.key, e.name): e.value for e in ev}
    return audio, segs, table


def three(c: int) -> int:
    return int(np.sign(c))


def bench_gender(quick: bool) -> tuple[float, int]:
    clips, truth = [], []
    mp = (20, 50, 80) if quick else (20, 35, 50, 65, 80)
    fp = (50, 80) if quick else (50, 65, 80, 95)
    for i, v in enumerate(C.MALE_VOICES):
        for p in mp:
            clips.append((C.espeak(C.TEXTS[(i + p) % 4], v, p), f"{v}{p}", C.TEXTS[(i + p) % 4], "en"))
            truth.append("male")
    for i, v in enumerate(C.FEMALE_VOICES):
        for p in fp:
            clips.append((C.espeak(C.TEXTS[(i + p) % 4], v, p), f"{v}{p}", C.TEXTS[(i + p) % 4], "en"))
            truth.append("female")
    for x, t in C.librivox():
        clips.append((x, f"libri{len(clips)}", t, "en"))
        truth.append("male")
    _, segs, tab = run(clips)
    ok = [tab.get((s.key, "gender.label")) == t for s, t in zip(segs, truth)]
    for s, t, good in zip(segs, truth, ok):
        if not good:
            print(f"  gender miss: {s.speaker} truth={t} p_male={tab.get((s.key, 'gender.p_male')):.2f}")
    return float(np.mean(ok)), len(ok)


def bench_speed(quick: bool) -> tuple[float, int]:
    bands = {-1: (110, 120), 0: (160, 175), 1: (250, 280)}
    clips, truth = [], []
    voices = C.MALE_VOICES[:2] + C.FEMALE_VOICES[:2] if quick else C.MALE_VOICES + C.FEMALE_VOICES
    for i, v in enumerate(voices):
        for cls, speeds in bands.items():
            for sp in speeds:
                t = C.TEXTS[(i + sp) % 4]
                clips.append((C.espeak(t, v, 50, sp), f"{v}", t, "en"))
                truth.append(cls)
    for x, t in C.librivox():
        clips.append((x, "libri", t, "en"))
        truth.append(0)  # audiobook narration at an ordinary pace
    _, segs, tab = run(clips)
    got = [three(int(tab.get((s.key, "rate.class"), 99))) for s in segs]
    for s, t, g in zip(segs, truth, got):
        if g != t:
            print(f"  speed miss: {s.speaker} truth={t} got={g} rate={tab.get((s.key, 'rate.units_per_s')):.2f}")
    return float(np.mean([g == t for g, t in zip(got, truth)])), len(truth)


def bench_pitch(quick: bool) -> tuple[float, float, int]:
    """Pitch class with the true gender (bins + F0 measurement) and end to end (estimated gender)."""
    targets = {"male": {-1: 90.0, 0: 118.0, 1: 150.0}, "female": {-1: 163.0, 0: 208.0, 1: 265.0}}
    sources = [("male", C.espeak(C.TEXTS[0], "en-us+m3", 50)), ("female", C.espeak(C.TEXTS[1], "en-us+f2", 65))]
    if not quick:
        sources += [
            ("male", C.librivox()[0][0]),
            ("male", C.espeak(C.TEXTS[2], "en-us", 50)),
            ("female", C.espeak(C.TEXTS[3], "en-us+f4", 65)),
        ]
    texts = {0: C.TEXTS[0], 1: C.TEXTS[1], 2: C.librivox()[0][1], 3: C.TEXTS[2], 4: C.TEXTS[3]}
    clips, truth = [], []
    for j, (g, x) in enumerate(sources):
        for cls, hz in targets[g].items():
            clips.append((C.world_shift(x, hz), f"s{j}{cls}", texts[j], "en"))
            truth.append((g, cls))
    _, segs, tab = run(clips)
    with_truth, end2end = [], []
    for s, (g, cls) in zip(segs, truth):
        med = tab.get((s.key, "pitch.median_hz"))
        with_truth.append(three(calibration.pitch_class(med, g)) == cls)
        end2end.append(three(int(tab.get((s.key, "pitch.class"), 99))) == cls)
        if not end2end[-1]:
            print(
                f"  pitch miss: {g} truth={cls} median={med:.0f} gender={tab.get((s.key, 'gender.label'))} "
                f"class={tab.get((s.key, 'pitch.class'))}"
            )
    return float(np.mean(with_truth)), float(np.mean(end2end)), len(truth)


def bench_background(quick: bool) -> tuple[float, int, Counter]:
    rng = np.random.default_rng(7)
    kinds = ["none", "white", "pink", "brown", "babble", "music"]
    snrs = (5, 10, 20)
    speech = [
        (C.espeak(C.TEXTS[i % 4], v, 50), C.TEXTS[i % 4])
        for i, v in enumerate(["en-us+m3", "en-us+f2"] + ([] if quick else ["en-us+m7", "en-us+f4"]))
    ]
    speech += [(x, t) for x, t in C.librivox()[: 1 if quick else 3]]
    clips, truth = [], []
    for x, t in speech:
        for k in kinds:
            for snr in snrs if k != "none" else (None,):
                bg = None if k == "none" else (C.music(len(x), rng) if k == "music" else C.noise(k, len(x), rng))
                clips.append((C.mix(x, bg, snr or 0), f"{k}{snr}", t, "en"))
                truth.append("none" if k == "none" else "music" if k == "music" else "noise")
    _, segs, tab = run(clips)
    got = [tab.get((s.key, "scene.background")) for s in segs]
    conf = Counter((t, g) for t, g in zip(truth, got))
    for s, t, g in zip(segs, truth, got):
        if g != t:
            print(
                f"  background miss: {s.speaker} truth={t} got={g} snr={tab.get((s.key, 'snr.db'), float('nan')):.1f} "
                f"noise_db={tab.get((s.key, 'scene.noise_db'), float('nan')):.1f} "
                f"music={tab.get((s.key, 'scene.music_prob'))}"
            )
    return float(np.mean([g == t for g, t in zip(got, truth)])), len(truth), conf


def bench_rtf() -> tuple[float, float, float, float]:
    """Enhance + extract on a ~60 s two-speaker recording (threads capped at 2)."""
    clips = []
    lv = C.librivox()
    for i in range(12):
        if i % 2:
            x, t = lv[i % len(lv)]
            clips.append((x, "A", t, "en"))
        else:
            t = C.TEXTS[i % 4]
            clips.append((C.espeak(t, "en-us+f2", 60), "B", t, "en"))
    audio, segs = C.recording(clips)
    extract_priors(audio, segs[:1], enhanced=audio.samples, settings=PriorsSettings())  # load models once
    c0, t0 = time.process_time(), time.perf_counter()
    enh = enhance(audio, PriorsSettings())
    t1 = time.perf_counter()
    extract_priors(audio, segs, enhanced=enh, settings=PriorsSettings())
    c2, t2 = time.process_time(), time.perf_counter()
    d = audio.duration
    # CPU time is what the extractors cost; wall time also counts other processes' load.
    return (t1 - t0) / d, (t2 - t1) / d, (c2 - c0) / d, d


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="fewer voices and settings")
    args = ap.parse_args()
    logging.basicConfig(level=logging.WARNING)
    os.environ.setdefault("OMP_NUM_THREADS", "2")
    if not C.have_espeak():
        sys.exit("espeak-ng is not installed")
    g, n = bench_gender(args.quick)
    print(f"gender accuracy            {g:6.1%}  (n={n}, goal >= 95 %)")
    s, n = bench_speed(args.quick)
    print(f"speed class accuracy       {s:6.1%}  (n={n}, goal >= 90 %)")
    pt, pe, n = bench_pitch(args.quick)
    print(f"pitch class, true gender   {pt:6.1%}  (n={n}, goal >= 90 %)")
    print(f"pitch class, end to end    {pe:6.1%}  (n={n})")
    b, n, conf = bench_background(args.quick)
    print(f"background accuracy        {b:6.1%}  (n={n}, SNR 5/10/20 dB, goal >= 90 %)")
    print("  confusion (truth, got):", dict(conf))
    re, rx, cpu, d = bench_rtf()
    load = os.getloadavg()[0]
    print(
        f"RTF wall: enhance {re:.3f} + extract {rx:.3f} = {re + rx:.3f} on {d:.0f} s; CPU-time RTF {cpu:.3f}; "
        f"load average {load:.1f} on {os.cpu_count()} cores (goal < 0.15 on 2 cores)"
    )


if __name__ == "__main__":
    main()
