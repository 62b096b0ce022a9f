"""Build the bundled example recording `examples/dialogue.flac` and its exact reference.

A two-speaker exchange: an interviewer (espeak-ng, female variant, GPL-3 program whose
output is not covered by its licence) asks short questions, and a real LibriVox reader
(public domain recordings, shipped by Debian's pocketsphinx-testdata under BSD-2) answers
with sentences of Sense and Sensibility. Times in the reference are exact: every piece is
placed at a sample offset that this script chooses.

Run: .venv/bin/python examples/make_example.py   (needs espeak-ng and pocketsphinx-testdata)
"""

from __future__ import annotations

import io
import json
import subprocess
from pathlib import Path

import numpy as np
import soundfile as sf
import soxr

SR = 16000
LIBRIVOX = Path("/usr/share/pocketsphinx/test/data/librivox")
HERE = Path(__file__).resolve().parent

# (speaker, source, text): source "tts" speaks the text, otherwise a LibriVox clip id.
SCRIPT = [
    ("interviewer", "tts", "Tell me about mister John Dashwood."),
    (
        "reader",
        "0870",
        "and mister john dashwood had then leisure to consider how much there might be prudently in his power to do for them",
    ),
    ("interviewer", "tts", "Was he a bad man?"),
    ("reader", "0880", "he was not an ill disposed young man"),
    ("reader", "0890", "unless to be rather cold hearted and rather selfish is to be ill disposed"),
    ("interviewer", "tts", "And what about his marriage?"),
    (
        "reader",
        "0920",
        "had he married a more a amiable woman he might have been made still more respectable than he was",
    ),
    ("interviewer", "tts", "I see. Could he have changed?"),
    ("reader", "0930", "he might even have been made amiable himself"),
]
GAPS = {"interviewer": 0.7, "reader": 0.6}  # pause before each turn, seconds
SAME_SPEAKER_GAP = 0.45
GENDER = {"interviewer": "female", "reader": "male"}


def tts(text: str) -> np.ndarray:
    wav = subprocess.run(
        ["espeak-ng", "-v", "en-us+f2", "-p", "60", "-s", "165", "--stdout", text],
        check=True,
        capture_output=True,
    ).stdout
    x, sr = sf.read(io.BytesIO(wav), dtype="float32")
    return soxr.resample(x, sr, SR).astype(np.float32)


def clip(clip_id: str) -> np.ndarray:
    x, sr = sf.read(next(LIBRIVOX.glob(f"*-{clip_id}.wav")), dtype="float32")
    assert sr == SR
    return x


def trim(x: np.ndarray, thresh: float = 0.01) -> np.ndarray:
    """Cut leading/trailing silence so reference boundaries hug the speech."""
    idx = np.flatnonzero(np.abs(x) > thresh)
    return x[max(0, idx[0] - 160) : idx[-1] + 160] if idx.size else x


def main() -> None:
    rng = np.random.default_rng(0)
    pieces, segments, t, prev = [], [], 0.5, None
    pieces.append(np.zeros(int(0.5 * SR), np.float32))
    for speaker, source, text in SCRIPT:
        gap = SAME_SPEAKER_GAP if speaker == prev else GAPS[speaker]
        if prev is not None:
            pieces.append(np.zeros(int(gap * SR), np.float32))
            t += int(gap * SR) / SR
        x = trim(tts(text) if source == "tts" else clip(source))
        x = 0.3 * x / (np.max(np.abs(x)) + 1e-9)  # equal peak levels, no clipping
        segments.append(
            {
                "session_id": "dialogue",
                "speaker": speaker,
                "start_time": round(t, 3),
                "end_time": round(t + len(x) / SR, 3),
                "words": text,
                "gender": GENDER[speaker],
            }
        )
        pieces.append(x)
        t += len(x) / SR
        prev = speaker
    pieces.append(np.zeros(int(0.6 * SR), np.float32))
    audio = np.concatenate(pieces)
    audio += rng.normal(0, 1e-4, len(audio)).astype(np.float32)  # faint room noise floor
    sf.write(HERE / "dialogue.flac", audio, SR, subtype="PCM_16")
    (HERE / "dialogue.seglst.json").write_text(json.dumps(segments, indent=1) + "\n")
    print(f"wrote {HERE / 'dialogue.flac'} ({len(audio) / SR:.1f} s, {len(segments)} segments)")


if __name__ == "__main__":
    main()
