"""Build SA-Bench-mini deterministically: <case>.flac + <case>.json references.

Audio that may be redistributed: espeak-ng voices (Debian package espeak-ng) and the BSD-2
LibriVox clips of Debian's pocketsphinx test data, mixed in numpy at exact sample offsets with
seeded synthetic backgrounds. The references are exact where the construction fixes the truth:
timeline (times, speakers, text), gender (voice variant; the LibriVox reader by his F0),
accent (espeak language variant), speed (words per second over the placed audio), pitch
(pyworld F0 of the clean utterance) and background sound (what was mixed in). Other fields
stay blank: SA-Eval treats a blank reference as not annotated.

    python scripts/build_sa_bench_mini.py [OUT_DIR]   # default: benchmarks/sa_bench_mini
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import soundfile as sf

from speechannotator.schema import OUTPUT_KEYS

SR = 16000
LIBRIVOX = Path("/usr/share/pocketsphinx/test/data/librivox")
ACCENTS = {
    "en-us": "American English accent",
    "en-gb": "British English accent",
    "en-gb-scotland": "Scottish English accent",
}


@dataclass(frozen=True)
class Voice:
    lang: str  # espeak-ng language (fixes the accent)
    variant: str  # espeak-ng variant: m* male, f* female
    speed: int = 175  # words per minute
    pitch: int = 50  # 0-99

    @property
    def gender(self) -> str:
        return "female" if self.variant.startswith("f") else "male"


@dataclass(frozen=True)
class Turn:
    speaker: str
    text: str
    gap_ms: int = 600  # silence before this turn; negative overlaps the previous one
    clip: str | None = None  # a LibriVox clip id instead of synthesis


def synth(voice: Voice, text: str) -> np.ndarray:
    wav = subprocess.run(
        [
            "espeak-ng",
            "-v",
            f"{voice.lang}+{voice.variant}",
            "-s",
            str(voice.speed),
            "-p",
            str(voice.pitch),
            "--stdout",
            text,
        ],
        check=True,
        capture_output=True,
    ).stdout
    x, sr = sf.read(io.BytesIO(wav), dtype="float32")
    import soxr

    return soxr.resample(x, sr, SR, quality="HQ").astype(np.float32)


def librivox(clip: str) -> tuple[np.ndarray, str]:
    x, sr = sf.read(LIBRIVOX / f"{clip}.wav", dtype="float32")
    assert sr == SR, sr
    for line in (LIBRIVOX / "transcription").read_text().splitlines():
        if f"({clip})" in line:
            return x, line.split("</s>")[0].replace("<s>", "").strip()
    raise KeyError(clip)


def trim(x: np.ndarray) -> np.ndarray:
    """Cut leading/trailing silence so reference boundaries are tight (10 ms frames)."""
    frames = np.abs(x[: len(x) // 160 * 160]).reshape(-1, 160).max(axis=1)
    on = np.flatnonzero(frames > 0.02 * frames.max())
    return x[on[0] * 160 : (on[-1] + 1) * 160]


def f0_median(x: np.ndarray) -> float:
    import pyworld

    d = x.astype(np.float64)
    f0, t = pyworld.dio(d, SR)
    f0 = pyworld.stonemask(d, f0, t, SR)
    return float(np.median(f0[f0 > 0]))


def pitch_label(f0: float, gender: str) -> str:
    low, high = (100, 150) if gender == "male" else (170, 240)
    level = "low" if f0 < low else "high" if f0 > high else "medium"
    return f"{level} pitch, around {f0:.0f} Hz"


def speed_label(words: int, seconds: float) -> str:
    wps = words / seconds
    level = "slow" if wps < 2.3 else "fast" if wps > 3.3 else "moderate"
    return f"{level} speaking rate, about {wps:.1f} words per second"


def background(kind: str, n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if kind == "none":
        return np.zeros(n, dtype=np.float32)
    if kind == "hum":
        t = np.arange(n) / SR
        x = sum(a * np.sin(2 * np.pi * f * t) for f, a in ((50, 1.0), (100, 0.5), (150, 0.25)))
    else:  # coloured noise by spectral shaping: pink 1/f, brown 1/f^2 (power)
        spec = np.fft.rfft(rng.standard_normal(n))
        f = np.maximum(np.fft.rfftfreq(n, 1 / SR), 20.0)
        spec /= f ** (0.5 if kind == "pink" else 1.0)
        x = np.fft.irfft(spec, n)
    return (x / np.sqrt(np.mean(x**2))).astype(np.float32)


BACKGROUND_TEXT = {
    "none": "none",
    "pink": "steady broadband hiss (pink noise)",
    "hum": "low electrical hum at 50 Hz",
    "brown": "steady low rumble (brown noise)",
}


@dataclass(frozen=True)
class Case:
    name: str
    voices: dict[str, Voice | None]  # None: the LibriVox reader
    turns: tuple[Turn, ...]
    bg: str = "none"
    snr_db: float = 15.0
    seed: int = 0


CASES = (
    Case(
        "dialogue_quiet",
        {"A": Voice("en-us", "m3", 170, 40), "B": Voice("en-us", "f2", 175, 60)},
        (
            Turn("A", "Good morning. Did you finish the report for the budget meeting?", 400),
            Turn("B", "Almost. I still need the numbers from the sales team.", 700),
            Turn("A", "They promised to send them before lunch.", 600),
            Turn("B", "Then I can have the whole thing ready by three o'clock.", 650),
            Turn("A", "Perfect. Let us review it together after that.", 500),
            Turn("B", "Should I invite the director as well, or keep it small?", 700),
            Turn("A", "Keep it small for now. We can show her the final version on Friday.", 600),
            Turn("B", "Fine. I will book the small room on the second floor.", 650),
        ),
    ),
    Case(
        "meeting_noise",
        {
            "A": Voice("en-gb", "m3", 165, 35),
            "B": Voice("en-us", "f3", 180, 65),
            "C": Voice("en-gb-scotland", "m1", 160, 50),
        },
        (
            Turn("A", "Right, let us start with the schedule for next week.", 300),
            Turn("B", "The workshop moved to Thursday because the room was booked.", 600),
            Turn("C", "Thursday works for me, but I have to leave early.", 500),
            Turn("A", "No problem, we can record the afternoon session.", -700),
            Turn("B", "I will send everyone the new invitation tonight.", 600),
            Turn("C", "Could you also attach the travel form? Mine is out of date.", 700),
            Turn("A", "Good point. The finance office changed it last month.", 500),
            Turn("B", "I will attach the new form and the map of the campus.", 600),
        ),
        bg="pink",
        snr_db=12.0,
        seed=11,
    ),
    Case(
        "reading_librivox",
        {"R": None},
        tuple(
            Turn("R", "", 500 if i else 300, clip=f"sense_and_sensibility_01_austen_64kb-{c}")
            for i, c in enumerate(("0870", "0880", "0890", "0920", "0930"))
        ),
        bg="hum",
        snr_db=25.0,
        seed=23,
    ),
    Case(
        "pace_contrast",
        {"A": Voice("en-us", "m7", 115, 20), "B": Voice("en-us", "f2", 250, 80)},
        (
            Turn("A", "Please speak slowly, I am writing everything down.", 400),
            Turn("B", "Sorry, I always talk fast when I am excited about a project.", 600),
            Turn("A", "That is fine. Tell me about the second phase.", 600),
            Turn("B", "The second phase adds three new stations along the northern coast line.", 500),
            Turn("A", "How long will the construction take?", 700),
            Turn("B", "About two years, if the weather is kind and the permits arrive in time.", 500),
            Turn("A", "Thank you. That is all I need for today.", 600),
        ),
        bg="brown",
        snr_db=18.0,
        seed=37,
    ),
)


def build_case(case: Case, out: Path) -> None:
    pieces, t = [], 0
    speakers: dict[str, str] = {}
    for turn in case.turns:
        voice = case.voices[turn.speaker]
        if turn.clip:
            x, text = librivox(turn.clip)
        else:
            x, text = synth(voice, turn.text), turn.text
        x = trim(x)
        x = x * (0.1 / np.sqrt(np.mean(x**2)))  # equal speech level for every turn
        start = max(0, t + turn.gap_ms * SR // 1000)
        pieces.append((turn, voice, text, x, start))
        t = start + len(x)
        speakers.setdefault(turn.speaker, f"spk_{len(speakers) + 1:02d}")
    mix = np.zeros(t + SR * 3 // 10, dtype=np.float32)
    for _, _, _, x, start in pieces:
        mix[start : start + len(x)] += x
    bg = background(case.bg, len(mix), case.seed)
    mix += bg * (0.1 / 10 ** (case.snr_db / 20))
    mix *= 0.8 / max(1e-9, float(np.abs(mix).max()))
    sf.write(out / f"{case.name}.flac", mix, SR, format="FLAC", subtype="PCM_16")
    records = []
    for turn, voice, text, x, start in pieces:
        gender = voice.gender if voice else "male"  # LibriVox reader: median F0 ~95 Hz
        sid = speakers[turn.speaker]
        rec = dict.fromkeys(OUTPUT_KEYS, "")
        rec.update(
            speaker_id=sid,
            speaker_name=f"Speaker{int(sid[4:])}",
            text=text,
            text_and_paralanguage=text,
            start_time=start * 1000 // SR,
            end_time=-(-(start + len(x)) * 1000 // SR),
            language="en",
            background_sound=BACKGROUND_TEXT[case.bg],
            gender=gender,
            pitch=pitch_label(f0_median(x), gender),
            speed=speed_label(len(text.split()), len(x) / SR),
            accent=ACCENTS[voice.lang] if voice else "",
        )
        records.append(rec)
    records.sort(key=lambda r: (r["start_time"], r["end_time"]))
    (out / f"{case.name}.json").write_text(json.dumps(records, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for case in CASES:
        build_case(case, out)


if __name__ == "__main__":
    main(
        Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[1] / "benchmarks" / "sa_bench_mini"
    )
