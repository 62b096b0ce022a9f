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

    def __init__(self, langs, truth=None, skip_in_windows=(), empty_in=None):
        self.langs = langs
        self.truth = truth or {}  # index -> the language really spoken (words fit it best)
        self.skip = set(skip_in_windows)  # segments whose words a window of several drops
        self.empty_in = empty_in or {}  # index -> language a decode of it gives no words in

    def _first(self, clip):
        return int(np.round(clip[clip > 0] * 100).astype(int).min()) - 1

    def detect(self, clip):
        lang, prob = self.langs[self._first(clip)]
        return LanguageGuess(lang, prob, 0.05)

    def decode(self, clip, language):
        lang = language or self.langs[self._first(clip)][0]
        vals = np.round(clip * 100).astype(int)
        covered = set(np.unique(vals[vals > 0]) - 1)
        words = []
        for i in range(0, len(clip), SR):
            here = set(np.unique(vals[i : i + SR]) - 1) - {-1}
            if not here or (here & self.skip and len(covered) > 1):
                continue
            k = max(here)
            if self.empty_in.get(k) == lang:
                continue
            p = 0.9 if self.truth.get(k, lang) == lang else 0.3
            words.append(RawWord(f" {lang}{k}", i / SR + 0.1, i / SR + 0.9, p))
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
    # An English call in two windows of even length: the first (segments 0-2, 12 s) identified as
    # English at 0.72, the second (segments 3-6, 13 s, telephone English) as Portuguese at 0.65; no
    # Portuguese anywhere else. The old prior moved the first window's segments into Portuguese
    # one by one (each move made the next).
    audio, segs = _conversation([("A", 5), ("B", 3), ("A", 4), ("B", 3), ("B", 3), ("A", 4), ("B", 3)])
    asr = _WindowAsr({0: ("en", 0.72), 3: ("pt", 0.65)})
    stats = transcribe(audio, SR, segs, AsrConfig(chunk_s=16.5, pack_by="time"), backend=asr)
    assert stats["asr_spans"] == 2
    assert [s.language for s in segs] == ["en"] * 7, [(s.language, s.text) for s in segs]
    assert all(s.text.startswith("en") for s in segs)  # the Portuguese window decoded again in English
    assert stats["asr_language_prior"] == 4


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


def test_a_move_is_refused_when_the_words_fit_the_own_language_better():
    # B speaks English (5 s, 0.9) and one Dutch turn identified at 0.65: not established (B's own
    # voice is mostly English, one stretch), so the prior tries English; decoded in English the
    # turn's words are far less likely (0.3 vs 0.9): it stays Dutch. Same ids, but the turn really
    # English (English words fit): moved.
    turns = [("A", 4), ("B", 5), ("B", 3), ("A", 4)]
    ids = {0: ("en", 0.9), 1: ("en", 0.9), 2: ("nl", 0.65), 3: ("en", 0.9)}
    audio, segs = _conversation(turns)
    stats = transcribe(audio, SR, segs, AsrConfig(mode="segment"), backend=_WindowAsr(ids, truth={2: "nl"}))
    assert [s.language for s in segs] == ["en", "en", "nl", "en"]
    assert segs[2].text.startswith("nl2") and stats["asr_language_prior_refused"] == 1
    assert stats["asr_language_kept"] == [[segs[2].start, segs[2].end, "nl"]]
    audio, segs = _conversation(turns)
    stats = transcribe(audio, SR, segs, AsrConfig(mode="segment"), backend=_WindowAsr(ids, truth={2: "en"}))
    assert [s.language for s in segs] == ["en"] * 4 and stats["asr_language_prior"] == 1


def test_a_turn_the_window_decode_skipped_is_decoded_alone():
    # One voice repeating itself: the window's decode drops turn 1's words (Whisper skips a turn
    # that repeats); its own language id confirms English, so it is decoded alone and filled.
    audio, segs = _conversation([("A", 3), ("A", 3), ("A", 3)])
    asr = _WindowAsr({0: ("en", 0.95), 1: ("en", 0.95), 2: ("en", 0.95)}, skip_in_windows={1})
    stats = transcribe(audio, SR, segs, AsrConfig(), backend=asr)
    assert stats["asr_spans"] == 1 and stats["asr_refilled"] == 1
    assert [w.text for w in segs[1].words] == ["en1"] * 3


def test_a_language_id_whose_decode_gave_no_words_establishes_nothing():
    # fff_tel's Dutch actress on the telephone, each turn alone: one turn Dutch at 0.66 (words),
    # one Portuguese at 0.76 that decodes to nothing in Portuguese, one German at 0.21. The old
    # prior counted the empty Portuguese turn as the voice's best-supported language and moved the
    # German turn into Portuguese (a language nobody speaks, alone in the call). Words heard
    # are the evidence: Dutch is her language, both other turns are decoded in Dutch.
    audio, segs = _conversation([("A", 5), ("B", 2.5), ("A", 4), ("B", 3), ("A", 4), ("B", 3.5)])
    ids = {0: ("en", 0.99), 1: ("nl", 0.66), 2: ("en", 0.99), 3: ("pt", 0.76), 4: ("en", 0.99), 5: ("de", 0.21)}
    asr = _WindowAsr(ids, truth={1: "nl", 3: "nl", 5: "nl"}, empty_in={3: "pt"})
    stats = transcribe(audio, SR, segs, AsrConfig(mode="segment"), backend=asr)
    assert [s.language for s in segs] == ["en", "nl"] * 3, [(s.language, s.text) for s in segs]
    assert segs[3].text.startswith("nl3") and segs[5].text.startswith("nl5")
    assert stats["asr_language_prior"] == 2
