"""Conversations of a real LibriVox reader and espeak-ng voices with exact references (tests, benchmarks).

Speakers: a real LibriVox reader (Debian pocketsphinx-testdata, public domain, with
transcripts) and espeak-ng voices (distinct variants, pitches and speeds). Every utterance is
placed at a sample offset chosen here, so reference times are exact. Pauses between turns
vary; some turns start before the previous one ends (short overlaps); optional white/pink
noise or synthetic music is mixed at a given SNR over the whole recording.

    conv = build_conversation(num_speakers=3, num_turns=14, seed=1, overlap_prob=0.2)
    materialize(conv, "bench/", "conv3", noise="pink", snr_db=10)  # -> conv3.flac, conv3.json, conv3.seglst.json
"""

from __future__ import annotations

import io
import json
import subprocess
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np
import soundfile as sf
import soxr

from .known_truth import librivox

SR = 16000

# espeak-ng voices (variant, pitch, speed) chosen to be far apart; the reader is speaker 0.
# Resemblyzer places most espeak-ng variants within 0.8-0.95 cosine of each other (one
# formant synthesizer); these five and the reader stay below ~0.66 at the utterance level.
VOICES = [
    ("en-us+f4", 45, 175),
    ("en-us+iven3", 45, 160),
    ("en-us+klatt2", 50, 160),
    ("en-us+grandma", 50, 150),
    ("en-us+Alicia", 55, 160),
]
SENTENCES = [
    "Good morning, thank you for coming in today.",
    "I would like to talk about the results of the survey.",
    "That is a very interesting point, please tell me more.",
    "We visited the old harbour on a cold and windy afternoon.",
    "The committee will meet again next Thursday at ten.",
    "Honestly, I did not expect the numbers to be so high.",
    "Could you explain how the new system handles long recordings?",
    "My sister moved to the countryside a few years ago.",
    "The train was delayed because of the heavy snow.",
    "Let us start with the budget and then discuss the schedule.",
    "I agree, but we should check the data once more.",
    "She played the piano every evening after dinner.",
    "What happened to the letters that were sent last week?",
    "The museum opens early on weekends during the summer.",
    "Nobody knew where the key had been hidden.",
    "We need three volunteers to carry the boxes upstairs.",
    "The garden looked beautiful after the rain.",
    "He finally answered the question after a long silence.",
    "Please remember to bring your notes to the meeting.",
    "The children were laughing in the next room.",
    "Our company started with only four employees.",
    "It is important to listen carefully before deciding.",
    "The river was too deep to cross on foot.",
    "I think the second proposal is much more practical.",
]


@dataclass
class Utterance:
    speaker: str
    text: str
    start: float  # seconds, exact
    end: float


@dataclass
class Conversation:
    name: str
    samples: np.ndarray  # 16 kHz mono float32, clean mix
    utterances: list[Utterance] = field(default_factory=list)

    @property
    def duration(self) -> float:
        return len(self.samples) / SR

    @property
    def speakers(self) -> list[str]:
        return sorted({u.speaker for u in self.utterances})


@lru_cache(maxsize=256)
def _tts(text: str, voice: str, pitch: int, speed: int) -> np.ndarray:
    wav = subprocess.run(
        ["espeak-ng", "-v", voice, "-p", str(pitch), "-s", str(speed), "--stdout", text],
        check=True,
        capture_output=True,
    ).stdout
    x, sr = sf.read(io.BytesIO(wav), dtype="float32")
    return soxr.resample(x, sr, SR).astype(np.float32)


def _trim(x: np.ndarray, thresh: float = 0.01) -> np.ndarray:
    """Cut leading/trailing silence so reference boundaries hug the speech."""
    idx = np.flatnonzero(np.abs(x) > thresh * np.abs(x).max())
    return x[max(0, idx[0] - 160) : idx[-1] + 160] if idx.size else x


def _utterance(speaker: int, i: int, rng: np.random.Generator) -> tuple[np.ndarray, str]:
    if speaker == 0:
        clips = librivox()
        x, text = clips[i % len(clips)]
    else:
        voice, pitch, speed = VOICES[(speaker - 1) % len(VOICES)]
        text = SENTENCES[int(rng.integers(len(SENTENCES)))]
        x = _tts(text, voice, pitch, speed)
    x = _trim(x)
    return (0.3 * x / (np.abs(x).max() + 1e-9)).astype(np.float32), text


def build_conversation(
    num_speakers: int = 2,
    num_turns: int = 12,
    seed: int = 0,
    *,
    overlap_prob: float = 0.15,
    max_overlap: float = 0.6,
    pause: tuple[float, float] = (0.3, 1.2),
    name: str | None = None,
) -> Conversation:
    """A conversation of `num_turns` turns by `num_speakers` speakers (every speaker talks).

    Turn order is random with no speaker twice in a row, except that a speaker sometimes
    continues after a pause (a second utterance of the same turn). With probability
    `overlap_prob` a turn starts up to `max_overlap` seconds before the previous one ends.
    """
    if not 1 <= num_speakers <= 1 + len(VOICES):
        raise ValueError(f"num_speakers must be in 1..{1 + len(VOICES)}")
    rng = np.random.default_rng(seed)
    order = list(range(num_speakers))
    rng.shuffle(order)
    while len(order) < num_turns:
        if rng.random() < 0.15:
            order.append(order[-1])
        else:
            order.append(int(rng.choice([s for s in range(num_speakers) if s != order[-1]] or [0])))
    placed: list[tuple[int, np.ndarray, str]] = []
    utts: list[Utterance] = []
    prev_end, prev_spk = 0.5, None
    counts: dict[int, int] = {}
    for spk in order[:num_turns]:
        x, text = _utterance(spk, counts.get(spk, 0) + seed, rng)
        counts[spk] = counts.get(spk, 0) + 1
        if prev_spk is not None and spk != prev_spk and rng.random() < overlap_prob:
            start = prev_end - float(rng.uniform(0.2, max_overlap))
        else:
            start = prev_end + float(rng.uniform(*pause))
        off = int(round(start * SR))
        placed.append((off, x, text))
        utts.append(Utterance(f"spk{spk}", text, off / SR, (off + len(x)) / SR))
        prev_end, prev_spk = (off + len(x)) / SR, spk
    total = int(round((prev_end + 0.5) * SR))
    mix = np.zeros(total, np.float32)
    for off, x, _ in placed:
        mix[off : off + len(x)] += x
    return Conversation(name or f"conv{num_speakers}_{seed}", mix, utts)


def background_noise(kind: str, n: int, rng: np.random.Generator) -> np.ndarray:
    if kind == "white":
        return rng.normal(size=n).astype(np.float32)
    if kind == "pink":
        spec = np.fft.rfft(rng.normal(size=n))
        f = np.arange(len(spec))
        spec[1:] /= np.sqrt(f[1:])
        return np.fft.irfft(spec, n).astype(np.float32)
    if kind == "music":
        # Chords of harmonic tones with note changes every 0.5 s: sustained, pitched, broadband.
        t = np.arange(n) / SR
        out = np.zeros(n, np.float32)
        notes = 220.0 * 2 ** (rng.integers(0, 12, size=(n // (SR // 2) + 1, 3)) / 12)
        for j in range(3):
            f0 = np.repeat(notes[:, j], SR // 2)[:n]
            phase = 2 * np.pi * np.cumsum(f0) / SR
            for h in range(1, 5):
                out += (np.sin(h * phase) / h).astype(np.float32)
        env = 0.6 + 0.4 * np.abs(np.sin(2 * np.pi * 2 * t))
        return (out * env).astype(np.float32)
    raise ValueError(f"unknown noise kind {kind!r} (white, pink, music)")


def add_noise(samples: np.ndarray, kind: str, snr_db: float, seed: int = 0) -> np.ndarray:
    """Mix noise at `snr_db` relative to the power of the active speech samples."""
    rng = np.random.default_rng(seed)
    noise = background_noise(kind, len(samples), rng)
    active = np.abs(samples) > 1e-4
    p_speech = float(np.mean(samples[active] ** 2)) if active.any() else 1e-6
    p_noise = float(np.mean(noise**2)) + 1e-12
    noise *= np.sqrt(p_speech / (p_noise * 10 ** (snr_db / 10)))
    out = samples + noise
    return (out / max(1.0, np.abs(out).max() / 0.99)).astype(np.float32)


def reference_records(conv: Conversation) -> list[dict]:
    """The reference in the output JSON format (times in integer ms)."""
    return [
        {
            "speaker_id": u.speaker,
            "start_time": int(round(u.start * 1000)),
            "end_time": int(round(u.end * 1000)),
            "text": u.text,
        }
        for u in sorted(conv.utterances, key=lambda u: u.start)
    ]


def reference_seglst(conv: Conversation, session: str | None = None) -> list[dict]:
    return [
        {
            "session_id": session or conv.name,
            "speaker": u.speaker,
            "start_time": round(u.start, 3),
            "end_time": round(u.end, 3),
            "words": u.text,
        }
        for u in sorted(conv.utterances, key=lambda u: u.start)
    ]


def materialize(
    conv: Conversation,
    out_dir: str | Path,
    name: str | None = None,
    *,
    noise: str | None = None,
    snr_db: float = 15.0,
    seed: int = 0,
) -> Path:
    """Write <name>.flac, <name>.json (output format) and <name>.seglst.json; returns the audio path."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    name = name or conv.name
    x = add_noise(conv.samples, noise, snr_db, seed) if noise else conv.samples
    audio = out / f"{name}.flac"
    sf.write(audio, x, SR, subtype="PCM_16")
    (out / f"{name}.json").write_text(json.dumps(reference_records(conv), indent=1) + "\n")
    (out / f"{name}.seglst.json").write_text(json.dumps(reference_seglst(conv, name), indent=1) + "\n")
    return audio
