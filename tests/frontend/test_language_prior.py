"""The recording-level language prior on scripted language ids: a language one uncertain window
alone reports draws no other segment into it, and a confidently heard second language stays."""

import numpy as np

from speechannotator.config import AsrConfig
from speechannotator.frontend.asr_types import Decoded, LanguageGuess, Piece, RawWord
from speechannotator.frontend.transcribe import transcribe
from speechannotator.records import Segment

SR = 16000


class _WindowAsr:
    """Language answers scripted per clip: each segment's audio holds its index + 1 (in 1/100),
    so a clip tells which segments it covers; `langs` maps the first covered segment's index to
    (language, probability). A decode gives one word per second, tagged with its language."""

    name = "scripted-windows"

    def __init__(self, langs):
        self.langs = langs

    def _first(self, clip):
        return int(np.round(clip[clip > 0] * 100).astype(int).min()) - 1

    def detect(self, clip):
        lang, prob = self.langs[self._first(clip)]
        return LanguageGuess(lang, prob, 0.05)

    def decode(self, clip, language):
        lang = language or self.langs[self._first(clip)][0]
        vals = np.round(clip * 100).astype(int)
        words = [
            RawWord(f" {lang}{int(vals[i : i + SR].max()) - 1}", i / SR + 0.1, i / SR + 0.9, 0.9)
            for i in range(0, len(clip), SR)
            if vals[i : i + SR].max() > 0
        ]
        return Decoded(lang, 0.9, [Piece(0.0, len(clip) / SR, "".join(w.text for w in words), words, -0.2, 1.2, 0.05)])


def _conversation(turns):
    """(speaker, seconds) turns, 0.5 s apart; returns audio and segments."""
    audio, segs, t = [], [], 0.0
    for i, (spk, d) in enumerate(turns):
        audio += [np.zeros(SR // 2, np.float32), np.full(int(d * SR), (i + 1) / 100, np.float32)]
        t += 0.5
        segs.append(Segment(f"seg_{i:05d}", round(t, 3), round(t + d, 3), spk))
        t += d
    return np.concatenate(audio), segs


def test_one_uncertain_window_does_not_pull_the_call_into_its_language():
    # An English call in two windows: the first (16 s) identified as English at 0.72, the second
    # (10 s, telephone English) as Portuguese at 0.65; no Portuguese anywhere else. The old prior
    # moved the first window's segments into Portuguese one by one (each move made the next).
    audio, segs = _conversation([("A", 5), ("B", 3), ("A", 4), ("B", 3), ("B", 3), ("A", 4), ("B", 3)])
    asr = _WindowAsr({0: ("en", 0.72), 4: ("pt", 0.65)})
    stats = transcribe(audio, SR, segs, AsrConfig(chunk_s=16.5, pack_by="time"), backend=asr)
    assert stats["asr_spans"] == 2
    assert [s.language for s in segs] == ["en"] * 7, [(s.language, s.text) for s in segs]
    assert all(s.text.startswith("en") for s in segs)  # the Portuguese window decoded again in English
    assert stats["asr_language_prior"] == 3


def test_a_second_language_heard_in_two_windows_stays():
    # Speaker B's Dutch is identified at 0.7 in two windows of its own: not one window's say-so.
    audio, segs = _conversation([("A", 6), ("A", 6), ("B", 4), ("B", 4), ("A", 6), ("A", 6)])
    asr = _WindowAsr({0: ("en", 0.9), 1: ("en", 0.8), 2: ("nl", 0.7), 3: ("nl", 0.7), 4: ("en", 0.9), 5: ("en", 0.8)})
    transcribe(audio, SR, segs, AsrConfig(mode="segment"), backend=asr)
    assert [s.language for s in segs] == ["en", "en", "nl", "nl", "en", "en"]


def test_a_voice_identified_alone_keeps_its_language():
    # Windows of one voice each: A's English at 0.95, B's Dutch at 0.7 over 11 s (one window, not
    # strong, less supported than English): B's own language, established by B's own speech.
    audio, segs = _conversation([("A", 5), ("B", 4), ("A", 5), ("B", 4), ("A", 5), ("B", 3)])
    asr = _WindowAsr({0: ("en", 0.95), 1: ("nl", 0.7)})
    stats = transcribe(audio, SR, segs, AsrConfig(pack_by="speaker"), backend=asr)
    assert stats["asr_spans"] == 2 and stats["asr_language_prior"] == 0
    assert [s.language for s in segs] == ["en", "nl"] * 3
    assert all(w.text.startswith("nl") for s in segs[1::2] for w in s.words)  # decoded in Dutch, not moved
    assert all(w.text.startswith("en") for s in segs[::2] for w in s.words)
