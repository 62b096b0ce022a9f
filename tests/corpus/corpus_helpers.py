"""A tiny real-voice corpus for the corpus, engine and export tests (built on the spot)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import soundfile as sf

from synth import SR, join, librivox, speak

LINES = (
    ("Hello there, this is the first short recording.", "en-us+f2", 60),
    ("Another voice says something else entirely.", "en-us+m3", 40),
    ("The weather today is calm and clear.", "en-us+f4", 70),
)


def voices() -> list[np.ndarray]:
    """Three espeak voices and two LibriVox readers (real recorded speech), 2-4 s each."""
    lv = librivox()
    out = [join(speak(text, voice, pitch=p)) for text, voice, p in LINES]
    out += [join(lv[1][: 3 * SR]), join(lv[4][: 3 * SR])]
    return out


def write_timeline(path: Path, rec: str, x: np.ndarray, text: str = "speech") -> Path:
    """A one-speaker reference timeline (SegLST) over the voiced part of `x`."""
    voiced = np.flatnonzero(np.abs(x) > 0.01)
    start, end = round(voiced[0] / SR, 2), round(voiced[-1] / SR, 2)
    seg = {"session_id": rec, "speaker": "A", "start_time": start, "end_time": end, "words": text}
    path.write_text(json.dumps([seg]))
    return path


def tree_corpus(root: Path, n: int = 5) -> dict[str, Path]:
    """Recordings in a folder tree where two share a file name (a/x.wav, b/x.wav): {id: file}."""
    names = ["a/x.wav", "b/x.wav", "b/y.flac", "c/deep/z.wav", "c/w.ogg"][:n]
    files = {}
    for name, x in zip(names, voices()):
        p = root / name
        p.parent.mkdir(parents=True, exist_ok=True)
        sf.write(p, x, SR)
        files[name.rsplit(".", 1)[0]] = p
    return files


def timeline_manifest(root: Path, n: int = 5) -> Path:
    """A JSONL manifest over tree_corpus with a reference timeline per recording (no ASR, no diarization)."""
    files = tree_corpus(root / "audio", n)
    lines = []
    for (rec, p), (text, *_rest) in zip(files.items(), LINES * 2):
        x, _ = sf.read(p, dtype="float32")
        tl = write_timeline(root / f"{rec.replace('/', '_')}.seglst.json", rec, x, text)
        lines.append({"audio_filepath": str(p.relative_to(root)), "timeline": tl.name})
    manifest = root / "manifest.jsonl"
    manifest.write_text("".join(json.dumps(d) + "\n" for d in lines))
    return manifest


def output_bytes(out: Path) -> dict[str, bytes]:
    """Every per-recording output of a run (the summary's wall time is the only thing allowed to differ)."""
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*.json")) if p.name != "summary.json"}
