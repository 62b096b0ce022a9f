"""AMI meeting clips with references: natural turn-taking, overlap and far-field rooms.

pyannote-audio's source distribution carries 30 s excerpts of AMI meetings (CC BY 4.0) as its
test data: train trn00-09, development dev00-01 (used for tuning here) and test tst00-01 (kept
out of tuning: reported as held-out). `scripts/fetch_real_voices.sh` unpacks the sdist into
$REAL_VOICES_DIR/pypi/pyannote-audio. One file is named `trñ00.wav` on disk and `trn00` in the
RTTM.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from speechannotator.evaluation.recordings.real_voices import DATA, MissingData

SPLITS = {"train": "debug.train", "development": "debug.development", "test": "debug.test"}
TUNING = ("train", "development")


def data_dir(root: Path = DATA) -> Path:
    hits = sorted((root / "pypi" / "pyannote-audio").glob("pyannote_audio-*/tests/data"))
    if not hits:
        raise MissingData(f"AMI clips not found under {root}/pypi/pyannote-audio (run scripts/fetch_real_voices.sh)")
    return hits[-1]


def available(root: Path = DATA) -> bool:
    try:
        data_dir(root)
    except MissingData:
        return False
    return True


@dataclass(frozen=True)
class Meeting:
    name: str  # uri in the RTTM
    split: str
    path: Path
    rows: tuple[tuple[float, float, str], ...] = field(repr=False)  # reference (start, end, speaker)
    uem: tuple[float, float]

    @property
    def speakers(self) -> int:
        return len({r[2] for r in self.rows})


def _wav(folder: Path, uri: str) -> Path:
    for p in folder.glob("*.wav"):
        # trñ00 -> trn00: the RTTM names files without the accent.
        plain = unicodedata.normalize("NFKD", p.stem).encode("ascii", "ignore").decode()
        if p.stem == uri or plain == uri:
            return p
    raise MissingData(f"no audio for {uri} in {folder}")


def meetings(splits: tuple[str, ...] = TUNING, root: Path = DATA) -> list[Meeting]:
    folder = data_dir(root)
    out = []
    for split in splits:
        base = folder / SPLITS[split]
        rows: dict[str, list[tuple[float, float, str]]] = {}
        for line in Path(f"{base}.rttm").read_text(encoding="utf-8").splitlines():
            f = line.split()
            if f and f[0] == "SPEAKER":
                start, dur = float(f[3]), float(f[4])
                rows.setdefault(f[1], []).append((start, start + dur, f[7]))
        uem = {}
        for line in Path(f"{base}.uem").read_text(encoding="utf-8").splitlines():
            f = line.split()
            if f:
                uem[f[0]] = (float(f[2]), float(f[3]))
        for uri in sorted(uem):
            out.append(Meeting(uri, split, _wav(folder, uri), tuple(rows.get(uri, [])), uem[uri]))
    return out


def load(m: Meeting) -> np.ndarray:
    import soundfile as sf

    x, sr = sf.read(m.path, dtype="float32", always_2d=True)
    if sr != 16000:
        raise MissingData(f"{m.path}: expected 16 kHz, got {sr}")
    return x.mean(axis=1)
