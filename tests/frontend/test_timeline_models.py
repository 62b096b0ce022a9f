"""The embedded frontend on real speech with the real shipped models."""

import json
from pathlib import Path

import jiwer
import numpy as np

from speechannotator.audio import load_audio
from speechannotator.frontend.diarize import diarize
from speechannotator.frontend.timeline import recover_timeline
from speechannotator.frontend.vad import detect_speech
from synth import SR, join, librivox, silence, speak

EXAMPLE = Path(__file__).resolve().parents[2] / "examples"


def _timeline(x):
    regions = detect_speech(x, SR)
    dia = diarize(x, SR, regions)
    return regions, dia


def test_two_clearly_different_voices_get_two_ids():
    reader = librivox()
    lines = ["Good morning, how are you today?", "That sounds wonderful, please go on.", "Thank you very much."]
    parts, truth = [], []
    for i, line in enumerate(lines):
        parts += [speak(line, "en-us+f2", pitch=65), reader[i]]
        truth += ["f", "m"]
    x = join(*parts, gap=0.8)
    _, dia = _timeline(x)
    assert dia.num_speakers == 2
    # Every turn of one true speaker carries the same id, and the two ids differ.
    t, labels = 0.3, {"f": set(), "m": set()}
    for p, who in zip(parts, truth):
        mid = t + len(p) / SR / 2
        turn = min(dia.turns, key=lambda u: 0 if u.start <= mid <= u.end else min(abs(mid - u.start), abs(mid - u.end)))
        labels[who].add(turn.speaker)
        t += len(p) / SR + 0.8
    assert len(labels["f"]) == 1 and len(labels["m"]) == 1 and labels["f"] != labels["m"]


def test_one_reader_stays_one_speaker():
    _, dia = _timeline(join(*librivox(), gap=0.7))
    assert dia.num_speakers == 1


def test_silence_and_noise_produce_no_speech():
    rng = np.random.default_rng(0)
    x = np.concatenate([silence(2.0), (0.01 * rng.normal(size=3 * SR)).astype(np.float32)])
    regions, dia = _timeline(x)
    assert regions == [] and dia.turns == []


def test_example_transcribed_with_low_error():
    audio = load_audio(EXAMPLE / "dialogue.flac")
    result = recover_timeline(audio.samples, SR)
    segments = result.segments
    ref = json.loads((EXAMPLE / "dialogue.seglst.json").read_text())
    norm = jiwer.Compose([jiwer.ToLowerCase(), jiwer.RemovePunctuation(), jiwer.RemoveMultipleSpaces(), jiwer.Strip()])
    hyp_text = norm(" ".join(s.text for s in segments))
    ref_text = norm(" ".join(r["words"] for r in ref))
    assert jiwer.wer(ref_text, hyp_text) < 0.2
    assert all(s.language == "en" for s in segments)
    assert result.num_speakers == 2
    # Word timestamps are absolute and inside their segment (with Whisper's coarse slack).
    for s in segments:
        assert s.words and all(s.start - 0.5 <= w.start <= w.end <= s.end + 0.5 for w in s.words)
