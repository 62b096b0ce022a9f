"""Audio with known truth for the priors tests and benchmark.

espeak-ng voices at controlled pitch (-p) and speed (-s); WORLD resynthesis (pyworld) that
imposes an exact median F0; LibriVox clips (real male read speech, Debian
pocketsphinx-testdata); noise (white, pink, brown, babble) and synthetic music mixed at a
controlled SNR.
"""

from __future__ import annotations

import subprocess
import tempfile
import warnings
from functools import lru_cache
from pathlib import Path

import numpy as np

from speechannotator.audio import Audio
from speechannotator.records import Segment, segment_key

SR = 16000
LIBRIVOX = Path("/usr/share/pocketsphinx/test/data/librivox")
TEXTS = [
    "The quick brown fox jumps over the lazy dog, and the children laugh at the garden gate.",
    "It was a bright cold day in April, and the clocks were striking thirteen in the town.",
    "Please remember to bring the blue folder to the meeting on Thursday afternoon.",
    "We walked along the river until the sun went down behind the old stone bridge.",
]
MALE_VOICES = ["en-us", "en-us+m1", "en-us+m3", "en-us+m7"]
FEMALE_VOICES = ["en-us+f1", "en-us+f2", "en-us+f4"]


def have_espeak() -> bool:
    try:
        subprocess.run(["espeak-ng", "--version"], capture_output=True, check=True)
        return True
    except (OSError, subprocess.CalledProcessError):
        return False


def espeak(text: str, voice: str, pitch: int = 50, speed: int = 170) -> np.ndarray:
    import soundfile as sf
    import soxr

    with tempfile.NamedTemporaryFile(suffix=".wav") as fh:
        subprocess.run(
            ["espeak-ng", "-v", voice, "-p", str(pitch), "-s", str(speed), "-w", fh.name, text],
            check=True,
            capture_output=True,
        )
        x, sr = sf.read(fh.name, dtype="float32")
    return soxr.resample(x, sr, SR).astype(np.float32)


@lru_cache(maxsize=1)
def librivox() -> tuple[tuple[np.ndarray, str], ...]:
    """(samples, transcript) of the five LibriVox clips (one male reader), in file order; the one
    loader of these clips (espeak_conversations' reader turns and the benchmarks use it too).
    Cached: the arrays are shared, so callers must not change them in place."""
    import soundfile as sf

    lines = {}
    for line in (LIBRIVOX / "transcription").read_text().splitlines():
        text, _, fid = line.rpartition("(")
        lines[fid.strip(" )")] = text.replace("<s>", "").replace("</s>", "").strip()
    out = []
    for wav in sorted(LIBRIVOX.glob("*.wav")):
        x, sr = sf.read(str(wav), dtype="float32")
        assert sr == SR
        out.append((x, lines[wav.stem]))
    return tuple(out)


def world_shift(x: np.ndarray, target_median_hz: float) -> np.ndarray:
    """Resynthesize with WORLD so the voiced median F0 equals ``target_median_hz`` exactly."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import pyworld

    xd = np.asarray(x, np.float64)
    f0, t = pyworld.harvest(xd, SR, f0_floor=50, f0_ceil=600)
    sp = pyworld.cheaptrick(xd, f0, t, SR)
    ap = pyworld.d4c(xd, f0, t, SR)
    med = np.median(f0[f0 > 0])
    y = pyworld.synthesize(f0 * (target_median_hz / med), sp, ap, SR)
    return (y / max(1e-6, np.max(np.abs(y))) * 0.5).astype(np.float32)


def noise(kind: str, n: int, rng: np.random.Generator) -> np.ndarray:
    if kind == "babble":  # four overlapping espeak talkers
        parts = [
            espeak(TEXTS[i % len(TEXTS)], v, 40 + 10 * i, 160)
            for i, v in enumerate(["en-us+m1", "en-us+f2", "en-us+m7", "en-us+f4"])
        ]
        y = np.zeros(n, np.float32)
        for p in parts:
            p = np.tile(p, int(np.ceil(n / len(p))) + 1)
            off = int(rng.integers(0, SR))
            y += p[off : off + n] / (np.std(p) + 1e-9)
        return y
    w = rng.standard_normal(n)
    if kind == "white":
        return w.astype(np.float32)
    spec = np.fft.rfft(w)
    f = np.maximum(np.fft.rfftfreq(n, 1 / SR), 20.0)
    spec /= np.sqrt(f) if kind == "pink" else f  # pink 1/f power, brown 1/f^2
    return np.fft.irfft(spec, n).astype(np.float32)


def music(n: int, rng: np.random.Generator) -> np.ndarray:
    """Plucked melody over a bass line (harmonic tones with decaying envelopes)."""
    notes = np.array([261.6, 293.7, 329.6, 349.2, 392.0, 440.0, 493.9, 523.3])
    y = np.zeros(n)
    step = int(rng.choice([0.2, 0.25, 0.3]) * SR)
    seq = rng.integers(0, len(notes), size=n // step + 1)
    for j, i in enumerate(range(0, n, step)):
        tt = np.arange(min(step, n - i)) / SR
        f = notes[seq[j]]
        env = np.exp(-4 * tt)
        for h, a in ((1, 1.0), (2, 0.5), (3, 0.3), (4, 0.15)):
            y[i : i + len(tt)] += a * env * np.sin(2 * np.pi * f * h * tt)
        y[i : i + len(tt)] += 0.4 * np.sin(2 * np.pi * notes[seq[j - j % 4]] / 2 * tt)
    return y.astype(np.float32)


def mix(speech: np.ndarray, bg: np.ndarray | None, snr_db: float) -> np.ndarray:
    if bg is None:
        return speech.copy()
    bg = bg[: len(speech)]
    ps = np.mean(speech[np.abs(speech) > 0.01 * np.max(np.abs(speech))] ** 2)  # active speech power
    g = np.sqrt(ps / (np.mean(bg**2) + 1e-12) / 10 ** (snr_db / 10))
    y = speech + g * bg
    return (y / max(1.0, np.max(np.abs(y)) / 0.95)).astype(np.float32)


def recording(clips: list[tuple[np.ndarray, str, str, str]], gap_s: float = 0.4) -> tuple[Audio, list[Segment]]:
    """Concatenate (samples, speaker, text, language) clips with silent gaps into one Audio."""
    gap = np.zeros(int(gap_s * SR), np.float32)
    parts, segs, t = [gap], [], gap_s
    for i, (x, spk, text, lang) in enumerate(clips):
        segs.append(Segment(key=segment_key(i), start=t, end=t + len(x) / SR, speaker=spk, text=text, language=lang))
        parts += [x, gap]
        t += (len(x) + len(gap)) / SR
    y = np.concatenate(parts).astype(np.float32)
    return Audio(samples=y, sample_rate=SR, path="<synthetic>", original_sample_rate=SR, original_channels=1), segs
