"""A fresh check of the background classifier: vehicle and crowd sounds the project never used.

The real-sound set (evaluation/recordings/real_sounds.py) has had its held-out half read several
times; this set is independent of it and of everything the classifier was trained or tuned on.
Sounds (Debian packages, pinned, checked by SHA-256, fetched here into ``--dir``):

- vehicle: three sounds of OpenSFX 1.0.3 (``openttd-opensfx``, recordings from freesound.org:
  "Truck/old bus start, pull away", "Modern bus start" (a London bus approaching and leaving),
  "Old bus start"), read from its sound catalogue ``opensfx.cat``;
- crowd: OpenSFX's "Applause" (an audience of about 850), tuxfootball's ``crowdooh.wav`` (a
  football crowd's "ooh"), and lincity-ng's ``MarketLow1.wav`` and ``MarketMed1.wav`` (a market's
  chatter, quieter siblings of the held-out ``MarketFull1``).

Each is mixed under the 3 segments of each held-out voice of the real-sound set (its speech was
never trained on either) at 0 .. -20 dB, as ``benchmarks/events_bench.py`` mixes, and scored by
``events.background_class`` (none / music / vehicle / crowd). Prints accuracy, the confusion, the
recall per level and per file. Deterministic (seeded stretches).

``--third`` scores the third held-out set instead (``real_sounds.MORE_FILES["third"]``: music,
vehicle and crowd files of the packages fetched by scripts/fetch_real_sounds.sh, written down
before any evaluation), mixed the same way under the same voices, with each segment clean too.

Usage: python scripts/fresh_background_check.py [--dir DIR] [--third]
"""

from __future__ import annotations

import argparse
import hashlib
import struct
import subprocess
import tempfile
from pathlib import Path

import numpy as np

from speechannotator.evaluation.recordings import real_sounds as rs
from speechannotator.priors import events

OPENSFX = "usr/share/games/openttd/baseset/opensfx/opensfx.cat"
PACKAGES = {  # package, pinned version -> (path in the package, SHA-256)
    ("openttd-opensfx", "1.0.3-2"): [(OPENSFX, "cd348625bd82cca10620977bdf11ca5ff4fd4477bf2a87bf4463b095d12310ec")],
    ("tuxfootball", "0.3.1-7"): [
        (
            "usr/share/games/tuxfootball/sound/crowdooh.wav",
            "4d8e7210bbb57c6b96c0399ac15e4e3a114b8fe1ee2b93207a56c858810ab60e",
        )
    ],
    ("lincity-ng-data", "2.9~git20150314-5"): [
        (
            "usr/share/games/lincity-ng/sounds/MarketLow1.wav",
            "da6fc54d5a3715f01089897de89c5342d686a89b269bcdb2f0933bb91e51a275",
        ),
        (
            "usr/share/games/lincity-ng/sounds/MarketMed1.wav",
            "27283d6904ea3f7403c2b1ecb2de0409d6ea463dd861da77ed00ec9337367756",
        ),
    ],
}
# (class, name, catalogue entry or file): OpenSFX entries by their index in opensfx.cat
SOUNDS = (
    ("vehicle", "opensfx 25 truck/old bus start", 25),
    ("vehicle", "opensfx 27 modern bus start", 27),
    ("vehicle", "opensfx 28 old bus start", 28),
    ("crowd", "opensfx 29 applause", 29),
    ("crowd", "tuxfootball crowdooh", "usr/share/games/tuxfootball/sound/crowdooh.wav"),
    ("crowd", "lincity MarketLow1", "usr/share/games/lincity-ng/sounds/MarketLow1.wav"),
    ("crowd", "lincity MarketMed1", "usr/share/games/lincity-ng/sounds/MarketMed1.wav"),
)


def fetch(root: Path) -> None:
    """apt-get download each pinned package once, keep the listed files, check their SHA-256."""
    for (pkg, version), files in PACKAGES.items():
        if not all((root / f).exists() for f, _ in files):
            with tempfile.TemporaryDirectory() as tmp:
                subprocess.run(["apt-get", "download", "-qq", f"{pkg}={version}"], cwd=tmp, check=True)
                deb = next(Path(tmp).glob(f"{pkg}_*.deb"))
                subprocess.run(["dpkg", "-x", str(deb), f"{tmp}/x"], check=True)
                for f, _ in files:
                    (root / f).parent.mkdir(parents=True, exist_ok=True)
                    (root / f).write_bytes(Path(tmp, "x", f).read_bytes())
        for f, sha in files:
            if hashlib.sha256((root / f).read_bytes()).hexdigest() != sha:
                raise SystemExit(f"{root / f}: SHA-256 differs from the pinned file")


def opensfx_wav(catalogue: bytes, entry: int, path: Path) -> Path:
    """One sound of an OpenTTD sound catalogue (a table of (offset, size), each entry a name
    then a RIFF WAVE) written out as a .wav file."""
    offset, size = struct.unpack("<II", catalogue[8 * entry : 8 * entry + 8])
    offset &= 0x7FFFFFFF
    body = catalogue[offset : offset + size]
    path.write_bytes(body[body.find(b"RIFF") :])
    return path


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dir", type=Path, default=rs.SOUNDS.parent / "fresh_sounds", help="where the sounds are kept")
    ap.add_argument("--third", action="store_true", help="the third held-out set (real_sounds.MORE_FILES)")
    args = ap.parse_args()
    sounds = []
    if args.third:
        for cls in rs.BG_CLASSES:
            sounds += [(cls, p.stem, rs.read_sound(p)) for p in rs.more_files(cls, "third")]
    else:
        fetch(args.dir)
        catalogue = (args.dir / OPENSFX).read_bytes()
        for cls, name, src in SOUNDS:
            path = (
                opensfx_wav(catalogue, src, args.dir / f"opensfx_{src}.wav") if isinstance(src, int) else args.dir / src
            )
            sounds.append((cls, name, rs.read_sound(path)))
    rng = np.random.default_rng(2024)
    confusion: dict[tuple[str, str], int] = {}
    classes = sorted({c for c, _n, _x in sounds}, key=rs.BG_CLASSES.index)
    per_level = {(c, lv): [0, 0] for c in classes for lv in rs.LEVELS_DB}
    per_file = {name: [0, 0] for _c, name, _x in sounds}
    for v in rs.voices("test"):
        for seg in rs.segments_of(v):
            x = rs.join(seg)
            if args.third:
                said = events.background_class(events.segment_events(events.event_track(x), 0.0, len(x) / rs.SR))
                confusion[("none", said)] = confusion.get(("none", said), 0) + 1
            for cls, name, bg in sounds:
                for lv in rs.LEVELS_DB:
                    y = x + rs.at_level(x, rs.fit_length(bg, len(x), rng), lv)
                    said = events.background_class(events.segment_events(events.event_track(y), 0.0, len(y) / rs.SR))
                    confusion[(cls, said)] = confusion.get((cls, said), 0) + 1
                    for tally in (per_level[(cls, lv)], per_file[name]):
                        tally[0] += said == cls
                        tally[1] += 1
    right, n = sum(v for (t, s), v in confusion.items() if t == s), sum(confusion.values())
    print(f"{'third' if args.third else 'fresh vehicle / crowd'} set: {right}/{n} = {100 * right / n:.1f} % right")
    truths = sorted({t for t, _s in confusion})
    per_class = [
        sum(v for (t, s), v in confusion.items() if t == c == s) / sum(v for (t, _s), v in confusion.items() if t == c)
        for c in truths
    ]
    print(f"  mean of the classes' recall ({', '.join(truths)}): {100 * float(np.mean(per_class)):.1f} %")
    print("  confusion (truth, said): " + ", ".join(f"{t}->{s} {k}" for (t, s), k in sorted(confusion.items())))
    for c in classes:
        rec = " / ".join(f"{100 * per_level[(c, lv)][0] / per_level[(c, lv)][1]:.0f}" for lv in rs.LEVELS_DB)
        print(f"  {c} found at {'/'.join(str(lv) for lv in rs.LEVELS_DB)} dB: {rec} %")
    print("  per file: " + ", ".join(f"{name} {a}/{b}" for name, (a, b) in per_file.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
