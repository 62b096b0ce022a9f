"""Chunk-mode ASR packs the segments' speech into full windows and maps times back; the
Whisper backend runs one encoder pass for a window's language id and its decode."""

import jiwer
import numpy as np

from speechannotator.config import AsrConfig
from speechannotator.frontend.asr_types import Decoded, LanguageGuess, Piece, RawWord
from speechannotator.frontend.transcribe import _chunks, pack, transcribe
from speechannotator.records import Segment
from synth import SR, librivox


def _seg(i, a, b, spk="A"):
    return Segment(f"seg_{i:05d}", a, b, spk)


def test_pack_drops_long_pauses_and_maps_clip_time_back():
    segs = [_seg(0, 1.0, 3.0), _seg(1, 3.2, 5.0), _seg(2, 10.0, 12.0)]
    p = pack(segs, SR, keep_gap=0.4)
    # 0.2 s gap kept whole; the 5 s pause shortened to 0.4 s (0.2 s on each side).
    assert p.pieces == ((16000, 83200), (156800, 192000))
    assert abs(p.seconds - 6.4) < 1e-9
    audio = np.arange(13 * SR, dtype=np.float32)
    clip = p.clip(audio)
    assert len(clip) == int(round(p.seconds * SR))
    for t in (0.0, 1.5, 4.19, 4.21, 6.3):  # every clip time maps to the sample the clip holds there
        assert abs(p.to_source(t) * SR - clip[int(round(t * SR))]) <= 1
    assert abs(p.to_source(4.3) - 9.9) < 1e-9
    # Overlapping segments are one piece (no audio twice).
    assert pack([_seg(0, 1.0, 4.0), _seg(1, 3.0, 5.0)], SR, 0.4).pieces == ((16000, 80000),)


def test_chunks_fill_windows_with_speech_not_pauses():
    segs = [_seg(i, 15.0 * i, 15.0 * i + 5.0) for i in range(12)]  # 5 s turns, 10 s pauses
    groups = _chunks(segs, 28.0, SR, 0.4)
    # 5 turns (25 s of speech + 4 x 0.4 s) fit one window, so 12 turns need three windows; filled to
    # the brim they would be 5, 5 and 2 turns, the last two decoded with little context around them.
    # Cut evenly: 4 turns (20 s of speech, spans of the recording 50 s long) each.
    assert [len(g) for g in groups] == [4, 4, 4]
    assert all(pack(g, SR, 0.4).seconds <= 28.0 for g in groups)
    # A stream that fits one window stays one window; each voice's stream is cut on its own.
    assert [len(g) for g in _chunks(segs[:5], 28.0, SR, 0.4)] == [5]
    two = [_seg(i, 15.0 * i, 15.0 * i + 5.0, "AB"[i % 2]) for i in range(12)]
    assert sorted(len(g) for g in _chunks(two, 28.0, SR, 0.4, by_speaker=True)) == [3, 3, 3, 3]


class _RunsAsr:
    """Returns one word per run of constant non-zero samples, at its clip times."""

    name = "runs"

    def __init__(self):
        self.clips = []

    def detect(self, clip):
        return LanguageGuess("en", 0.99)

    def decode(self, clip, language):
        self.clips.append(len(clip) / SR)
        edges = np.flatnonzero(np.diff(np.concatenate([[0.0], clip, [0.0]])) != 0)
        words = [
            RawWord(f" w{int(round(clip[a] * 100))}", a / SR, b / SR, 0.9)
            for a, b in zip(edges[:-1], edges[1:])
            if clip[a] > 0
        ]
        return Decoded(language or "en", 0.99, [Piece(0.0, len(clip) / SR, "x", words, -0.2, 1.2, 0.05)])


def test_words_come_back_at_their_recording_times():
    audio = np.zeros(40 * SR, np.float32)
    segs = []
    for i, (a, b) in enumerate([(1.0, 4.0), (4.25, 6.0), (12.0, 15.0), (30.0, 33.5)]):
        audio[int(a * SR) : int(b * SR)] = (i + 1) / 100
        segs.append(_seg(i, a, b))
    asr = _RunsAsr()
    stats = transcribe(audio, SR, segs, AsrConfig(pack_gap_s=0.4), backend=asr)
    assert stats["asr_decodes"] == 1 and len(asr.clips) == 1
    assert abs(asr.clips[0] - (3.0 + 0.25 + 1.75 + 0.4 + 3.0 + 0.4 + 3.5)) < 1e-3  # one window, pauses shortened
    assert abs(stats["asr_decoded_s"] - asr.clips[0]) < 0.01
    for i, s in enumerate(segs):
        assert [w.text for w in s.words] == [f"w{i + 1}"]
        assert abs(s.words[0].start - s.start) < 1e-3 and abs(s.words[0].end - s.end) < 1e-3


def test_language_id_and_decode_share_one_encoder_pass():
    from speechannotator.frontend.asr_whisper import WhisperAsr

    asr = WhisperAsr(AsrConfig())
    m = asr.model
    clip = np.concatenate([np.zeros(SR // 4, np.float32), librivox()[4]])
    passes, reuses = m.encoder_passes, m.encoder_reuses
    guess = asr.detect(clip)
    assert guess.language == "en" and guess.probability > 0.5
    dec = asr.decode(clip, guess.language)
    assert m.encoder_reuses == reuses + 1  # the decode's first window is the language id's
    first = m.encoder_passes - passes
    m._kept.entries.clear()  # the same decode without the kept pass computes it afresh
    again = asr.decode(clip, guess.language)
    assert m.encoder_passes - passes == 2 * first and [p.text for p in again.pieces] == [p.text for p in dec.pieces]
    text = " ".join(p.text for p in dec.pieces).lower()
    assert (
        jiwer.wer(
            "he might even have been made amiable himself", "".join(c for c in text if c.isalpha() or c == " ").strip()
        )
        < 0.25
    )


def test_windows_hold_one_voice_and_margins_stop_at_other_voices():
    # Quick handoffs: A, B 0.1 s later, A 0.05 s after B; a window per voice, and the pause margins
    # (0.2 s each side) stop where the other voice's segment begins.
    turns = [(1.0, 3.0, "A"), (3.1, 5.0, "B"), (5.05, 7.0, "A"), (9.0, 11.0, "B")]
    segs = [_seg(i, a, b, spk) for i, (a, b, spk) in enumerate(turns)]
    groups = _chunks(segs, 28.0, SR, 0.4, by_speaker=True)
    assert [[s.key for s in g] for g in groups] == [["seg_00000", "seg_00002"], ["seg_00001", "seg_00003"]]
    assert pack(groups[0], SR, 0.4, others=[segs[1], segs[3]]).pieces == ((16000, 49600), (80000, 112000))
    assert len(_chunks(segs, 28.0, SR, 0.4)) == 1  # by time: one window of both voices
    audio = np.zeros(12 * SR, np.float32)
    for i, (a, b, _) in enumerate(turns):
        audio[int(a * SR) : int(b * SR)] = (i + 1) / 100
    asr = _RunsAsr()
    stats = transcribe(audio, SR, segs, AsrConfig(pack_by="speaker"), backend=asr)
    assert stats["asr_decodes"] == 2
    for i, s in enumerate(segs):  # no sample of the other voice reached a window
        assert [w.text for w in s.words] == [f"w{i + 1}"], (s.key, [w.text for w in s.words])


class _VoiceLanguageAsr(_RunsAsr):
    """Identifies a clip by its first segment: English for A's (odd run values), `b_language`
    for B's; records each clip it identifies."""

    def __init__(self, b_language):
        super().__init__()
        self.b_language, self.identified = b_language, []

    def detect(self, clip):
        first = int(round(clip[clip > 0][0] * 100))
        self.identified.append((len(clip), first))
        return LanguageGuess("en" if first % 2 else self.b_language, 0.99, 0.005)


def test_auto_windows_join_a_voice_that_says_little_only_when_the_voices_share_a_language():
    # A answers at length (12 s), B asks two short questions (3.9 s, under thin_voice_s).
    turns = [(0.5, 6.5, "A"), (6.6, 8.5, "B"), (9.0, 15.0, "A"), (15.5, 17.5, "B")]
    audio = np.zeros(19 * SR, np.float32)
    for i, (a, b, _) in enumerate(turns):
        audio[int(a * SR) : int(b * SR)] = (i + 1) / 100
    for b_language, by, decodes in (("en", "time", 1), ("nl", "speaker", 2)):
        segs = [_seg(i, a, b, spk) for i, (a, b, spk) in enumerate(turns)]
        asr = _VoiceLanguageAsr(b_language)
        stats = transcribe(audio, SR, segs, AsrConfig(pack_by="auto"), backend=asr)
        assert stats["asr_windows_by"] == by and stats["asr_decodes"] == decodes, (b_language, stats)
        assert [[w.text for w in s.words] for s in segs] == [[f"w{i + 1}"] for i in range(4)]
        # Each voice's first window was identified once, although the decode asks for it again.
        assert len(set(asr.identified)) == len(asr.identified) == stats["asr_language_ids"]
    # Both voices with enough speech of their own: one voice per window, no probe needed.
    turns = [(0.5, 6.5, "A"), (6.6, 12.5, "B"), (13.0, 19.0, "A"), (19.5, 25.5, "B")]
    audio = np.zeros(27 * SR, np.float32)
    for i, (a, b, _) in enumerate(turns):
        audio[int(a * SR) : int(b * SR)] = (i + 1) / 100
    segs = [_seg(i, a, b, spk) for i, (a, b, spk) in enumerate(turns)]
    stats = transcribe(audio, SR, segs, AsrConfig(pack_by="auto"), backend=_VoiceLanguageAsr("en"))
    assert stats["asr_windows_by"] == "speaker" and stats["asr_decodes"] == 2
    assert [[w.text for w in s.words] for s in segs] == [[f"w{i + 1}"] for i in range(4)]


class _LoopingWindowAsr(_RunsAsr):
    """A clip holding more than one turn falls into a repetition loop (one piece over the whole
    clip, far too repetitive: dropped as a hallucination); a turn alone decodes cleanly."""

    def decode(self, clip, language):
        dec = super().decode(clip, language)
        if len(dec.pieces[0].words) < 2:
            return dec
        loop = Piece(0.0, len(clip) / SR, " M-G-C-P" + "-N" * 60, dec.pieces[0].words, -0.1, 9.0, 0.05)
        return Decoded(dec.language, dec.language_probability, [loop])


def test_short_turns_of_a_window_lost_to_a_repetition_loop_are_decoded_alone():
    # Each voice's window (A: 2.6 s, 1.1 s, 1.0 s turns; B: two of 4 s) comes back as one looping
    # piece and is dropped; every turn is decoded alone in the window's language, A's short ones
    # too (too short for their own language id).
    turns = [(0.5, 3.1, "A"), (3.5, 7.5, "B"), (8.0, 9.1, "A"), (9.5, 13.5, "B"), (14.0, 15.0, "A")]
    audio = np.zeros(16 * SR, np.float32)
    for i, (a, b, _) in enumerate(turns):
        audio[int(a * SR) : int(b * SR)] = (i + 1) / 100
    for language in (None, "en"):  # identified per window, or fixed by the settings
        segs = [_seg(i, a, b, spk) for i, (a, b, spk) in enumerate(turns)]
        stats = transcribe(
            audio, SR, segs, AsrConfig(pack_by="speaker", language=language), backend=_LoopingWindowAsr()
        )
        assert [[w.text for w in s.words] for s in segs] == [[f"w{i + 1}"] for i in range(5)], language
        assert stats["asr_refilled"] == 5 and stats["asr_dropped"] == {"repetitive": 2}
        assert all(s.language == "en" for s in segs)
