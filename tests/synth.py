"""Real test audio made on the spot: espeak-ng voices and LibriVox recordings (Debian packages)."""

from __future__ import annotations

import io
import subprocess
from functools import lru_cache
from pathlib import Path

import numpy as np
import soundfile as sf
import soxr

SR = 16000
LIBRIVOX = Path("/usr/share/pocketsphinx/test/data/librivox")


@lru_cache(maxsize=64)
def _espeak(text: str, voice: str, pitch: int, speed: int) -> bytes:
    return subprocess.run(
        ["espeak-ng", "-v", voice, "-p", str(pitch), "-s", str(speed), "--stdout", text],
        check=True,
        capture_output=True,
    ).stdout


def speak(text: str, voice: str = "en-us+m3", pitch: int = 50, speed: int = 160) -> np.ndarray:
    x, sr = sf.read(io.BytesIO(_espeak(text, voice, pitch, speed)), dtype="float32")
    return soxr.resample(x, sr, SR).astype(np.float32)


def librivox() -> list[np.ndarray]:
    return [sf.read(p, dtype="float32")[0] for p in sorted(LIBRIVOX.glob("*.wav"))]


def silence(seconds: float) -> np.ndarray:
    return np.zeros(int(seconds * SR), np.float32)


def join(*parts: np.ndarray, gap: float = 0.6) -> np.ndarray:
    out = [silence(0.3)]
    for p in parts:
        out += [0.3 * p / (np.abs(p).max() + 1e-9), silence(gap)]
    return np.concatenate(out)


def mandarin_clip() -> tuple[np.ndarray, str]:
    """A real 4 s Mandarin recording (FunASR's example clip, shipped in the fasr wheel) and its transcript."""
    import importlib.util

    spec = importlib.util.find_spec("fasr")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("fasr (test audio) is not installed: run scripts/setup.sh")
    path = Path(list(spec.submodule_search_locations)[0]) / "asset" / "example" / "asr_example.wav"
    x, sr = sf.read(path, dtype="float32")
    assert sr == SR
    return x, "甚至出现交易几乎停滞的情况"
