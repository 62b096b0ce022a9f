"""Benchmark recordings with exact references, built on the spot from real and synthetic speech.

Speakers are the LibriVox reader of Debian's pocketsphinx-testdata (real, public domain) and
espeak-ng voices at distinct pitch settings. Every utterance is placed at a sample offset
chosen here, so the reference timeline (SegLST) is exact. Optional noise or music at a
given SNR makes the noisy variants.
"""

from __future__ import annotations

import io
import json
import subprocess
from functools import lru_cache
from pathlib import Path

import numpy as np
import soundfile as sf
import soxr

SR = 16000
LIBRIVOX = Path("/usr/share/pocketsphinx/test/data/librivox")
DATA = Path(__file__).resolve().parent / "data"

SENTENCES = [
    "The committee will meet again on Thursday to review the budget.",
    "I think we should start with the simplest version and measure it.",
    "Could you send me the notes from yesterday's call?",
    "The weather turned cold just as the harvest began.",
    "Nobody expected the results to arrive so quickly.",
    "Let us take a short break and come back in ten minutes.",
    "The old bridge was closed for repairs all summer.",
    "She explained the plan twice, slowly and carefully.",
    "We need more data before we can draw any conclusion.",
    "The train was late again, so I walked the last mile.",
    "That is a fair point, but the cost is still too high.",
    "Please read the second paragraph aloud for everyone.",
    "The museum opens at nine and closes at five.",
    "He said the engine had been running for hours.",
    "What time does the next meeting start?",
    "I agree with most of what you said earlier.",
    "The children played in the garden until dark.",
    "Our team finished the report a day ahead of schedule.",
    "Turn left at the corner and the shop is on your right.",
    "It was the quietest evening of the whole year.",
]

# name -> (espeak voice, pitch) ; "reader" is the real LibriVox recording.
VOICES = {
    "reader": None,
    "anna": ("en-us+f2", 70),
    "bob": ("en-us+m3", 25),
    "carol": ("en-gb+f4", 55),
    "dave": ("en-us+m1", 45),
}


@lru_cache(maxsize=256)
def _speak(text: str, voice: str, pitch: int, speed: int) -> np.ndarray:
    wav = subprocess.run(
        ["espeak-ng", "-v", voice, "-p", str(pitch), "-s", str(speed), "--stdout", text], check=True, capture_output=True
    ).stdout
    x, sr = sf.read(io.BytesIO(wav), dtype="float32")
    return soxr.resample(x, sr, SR).astype(np.float32)


@lru_cache(maxsize=1)
def _reader() -> list[tuple[np.ndarray, str]]:
    trans = {}
    for line in (LIBRIVOX / "transcription").read_text().splitlines():
        text, _, ident = line.rpartition("(")
        trans[ident.strip(" )")] = text.replace("<s>", "").replace("</s>", "").strip()
    return [(sf.read(p, dtype="float32")[0], trans[p.stem]) for p in sorted(LIBRIVOX.glob("*.wav"))]


def _trim(x: np.ndarray, thresh: float = 0.01) -> np.ndarray:
    idx = np.flatnonzero(np.abs(x) > thresh * np.abs(x).max())
    return x[max(0, idx[0] - 160): idx[-1] + 160] if idx.size else x


def _background(kind: str, n: int, rng: np.random.Generator) -> np.ndarray:
    if kind == "noise":  # pink-ish noise
        white = rng.normal(size=n)
        spec = np.fft.rfft(white) / np.sqrt(np.arange(1, n // 2 + 2))
        return np.fft.irfft(spec, n).astype(np.float32)
    if kind == "music":  # a chord progression with harmonics
        t = np.arange(n) / SR
        out = np.zeros(n)
        for i, base in enumerate([220.0, 261.6, 329.6, 196.0] * (n // (2 * SR) + 1)):
            a, b = i * 2 * SR, min(n, (i + 1) * 2 * SR)
            if a >= n:
                break
            for mult, amp in ((1, 1.0), (1.5, 0.6), (2, 0.4), (3, 0.2)):
                out[a:b] += amp * np.sin(2 * np.pi * base * mult * t[a:b])
        return out.astype(np.float32)
    raise ValueError(kind)


def build_conversation(
    name: str, seconds: float, speakers: list[str], *, seed: int = 0, background: str | None = None, snr_db: float = 10.0
) -> tuple[np.ndarray, list[dict]]:
    """A conversation of about `seconds` seconds among `speakers` with its SegLST reference."""
    rng = np.random.default_rng(seed)
    reader = _reader()
    pieces, ref, t = [np.zeros(int(0.4 * SR), np.float32)], [], 0.4
    prev, i = None, 0
    while t < seconds:
        choices = [s for s in speakers if s != prev] or speakers
        spk = choices[int(rng.integers(len(choices)))]
        if VOICES[spk] is None:
            x, text = reader[i % len(reader)]
        else:
            voice, pitch = VOICES[spk]
            text = SENTENCES[int(rng.integers(len(SENTENCES)))]
            x = _speak(text, voice, pitch, int(rng.integers(140, 190)))
        x = _trim(x)
        x = 0.3 * x / (np.abs(x).max() + 1e-9)
        ref.append({"session_id": name, "speaker": spk, "start_time": round(t, 3), "end_time": round(t + len(x) / SR, 3), "words": text})
        pieces.append(x)
        t += len(x) / SR
        gap = float(rng.uniform(0.4, 1.2))
        pieces.append(np.zeros(int(gap * SR), np.float32))
        t += int(gap * SR) / SR
        prev, i = spk, i + 1
    audio = np.concatenate(pieces)
    if background:
        bg = _background(background, len(audio), rng)
        speech_power = np.mean(np.concatenate([p for p in pieces if p.any()]) ** 2)
        bg *= np.sqrt(speech_power / (np.mean(bg**2) * 10 ** (snr_db / 10)))
        audio = audio + bg
    audio = (audio / max(1.0, np.abs(audio).max() / 0.95)).astype(np.float32)
    return audio, ref


def materialize(name: str, seconds: float, speakers: list[str], **kw) -> Path:
    """Write DATA/<name>.flac and DATA/<name>.seglst.json once; return the audio path."""
    DATA.mkdir(parents=True, exist_ok=True)
    path = DATA / f"{name}.flac"
    if not path.exists():
        audio, ref = build_conversation(name, seconds, speakers, **kw)
        sf.write(path, audio, SR, subtype="PCM_16")
        (DATA / f"{name}.seglst.json").write_text(json.dumps(ref, indent=1))
    return path
