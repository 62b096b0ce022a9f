"""The timeline on real recorded voices (fetched by scripts/fetch_real_voices.sh), and the ASR
rules that keep it honest: recording-level language prior, prompt echoes, words inside their
segment, reproducible decoding."""

import json

import numpy as np
import pytest

from speechannotator.config import AsrConfig, Config
from speechannotator.evaluation.recordings import real_voices as rv
from speechannotator.frontend.asr_types import Decoded, LanguageGuess, Piece, RawWord, hallucination_reason
from speechannotator.frontend.transcribe import transcribe
from speechannotator.records import Segment

needs_voices = pytest.mark.skipif(not rv.available(), reason="real voices not fetched (scripts/fetch_real_voices.sh)")
SR = 16000


def test_prompt_echo_is_dropped_like_a_hallucination():
    cfg = AsrConfig()
    echo = Piece(0.0, 2.0, "【 以下是普通话的句子。】。", [], -0.3, 1.0, 0.1)
    assert hallucination_reason(echo, cfg) == "prompt echo"
    real = Piece(0.0, 2.0, "以下是今天的新闻。", [], -0.3, 1.0, 0.1)
    assert hallucination_reason(real, cfg) is None


class _ScriptedAsr:
    """A backend whose language answers are scripted per segment: each segment's audio holds
    a constant value (its index + 1), so a clip tells which segments it covers."""

    name = "scripted"

    def __init__(self, langs):
        self.langs = langs  # index -> (language, probability)

    def _index(self, clip):
        vals = np.unique(np.round(clip[clip > 0] * 100).astype(int))
        return [int(v) - 1 for v in vals]

    def detect(self, clip):
        idx = self._index(clip)
        lang, prob = self.langs[idx[0]]
        return LanguageGuess(lang, prob, 1.0 - prob)

    def decode(self, clip, language):
        idx = self._index(clip)
        lang = language or self.langs[idx[0]][0]
        # One word per second of each covered segment, tagged with its language.
        words = []
        vals = np.round(clip * 100).astype(int)
        for i in range(0, len(clip), SR):
            v = int(vals[i : i + SR].max())
            if v > 0:
                words.append(RawWord(f" {lang}{v - 1}", i / SR + 0.1, i / SR + 0.9, 0.9))
        return Decoded(lang, 0.9, [Piece(0.0, len(clip) / SR, "".join(w.text for w in words), words, -0.2, 1.2, 0.05)])


def _scripted(durations, langs, speakers=None):
    audio, segs, t = [], [], 0.0
    for i, d in enumerate(durations):
        audio += [np.zeros(SR // 2, np.float32), np.full(int(d * SR), (i + 1) / 100, np.float32)]
        t += 0.5
        segs.append(Segment(f"seg_{i:05d}", round(t, 3), round(t + d, 3), (speakers or ["A"] * len(durations))[i]))
        t += d
    return np.concatenate(audio), segs, _ScriptedAsr(dict(enumerate(langs)))


def test_short_noisy_segment_takes_a_language_heard_elsewhere():
    # Mandarin throughout; one short noisy segment is identified as Thai with low confidence.
    audio, segs, asr = _scripted([4, 4, 2, 4], [("zh", 0.95), ("zh", 0.9), ("th", 0.4), ("zh", 0.9)])
    stats = transcribe(audio, SR, segs, AsrConfig(mode="segment"), backend=asr)
    assert [s.language for s in segs] == ["zh"] * 4
    assert segs[2].text.startswith("zh")  # decoded again in Mandarin, not only relabelled
    assert stats["asr_language_prior"] == 1


def test_noisy_long_segment_in_a_foreign_language_is_moved_but_code_switching_stays():
    # Segment 2 says Thai with 0.5 (no support elsewhere): moved. Segment 3 says English with 0.95:
    # strong evidence of its own, a real switch of language: kept.
    audio, segs, asr = _scripted([4, 4, 3, 3], [("zh", 0.9), ("zh", 0.9), ("th", 0.5), ("en", 0.95)])
    transcribe(audio, SR, segs, AsrConfig(mode="segment"), backend=asr)
    assert [s.language for s in segs] == ["zh", "zh", "zh", "en"]


def test_words_stay_inside_their_segment():
    from speechannotator.frontend.transcribe import _fill

    seg = Segment("seg_00000", 1.0, 2.0, "A")
    _fill(seg, [RawWord(" good", 0.7, 1.3), RawWord(" bye", 1.8, 2.4)], 0.0, "en", 0.9)
    assert all(seg.start <= w.start <= w.end <= seg.end for w in seg.words)


def test_reference_voice_excludes_a_noise_floor_and_rumble():
    """The builder's voiced reference: a steady hiss 26 dB under the speech (as in codec2's mmt1) and
    rumble under 80 Hz (as in ARCTIC awb) before and after a voiced stretch are not voice."""
    rng = np.random.default_rng(0)
    t = np.arange(3 * SR) / SR
    voice = 0.5 * np.sign(np.sin(2 * np.pi * 140 * t)) * ((t >= 1.0) & (t < 2.0))  # 1 s of a buzzy "vowel"
    hiss = rng.normal(0, 0.5 * 10 ** (-26 / 20), len(t))
    rumble = 0.5 * 10 ** (-30 / 20) * np.sin(2 * np.pi * 12 * t) * ((t < 1.0) | (t >= 2.0))
    clip = (voice + rumble).astype(np.float32)
    # Rumble alone around the voice: energy is measured above 80 Hz, so only the voiced second is left.
    (a, b), *rest = rv.voiced_stretches(clip)
    assert not rest and abs(a / SR - 1.0) < 0.05 and abs(b / SR - 2.0) < 0.05
    # Hiss at -26 dB everywhere: within 35 dB of the peak, yet at the source's noise floor.
    noisy = (voice + hiss).astype(np.float32)
    assert len(rv.voiced_stretches(noisy)) == 1 and rv.voiced_stretches(noisy)[0] == (0, len(noisy))
    (a, b), *rest = rv.voiced_stretches(noisy, floor_db=rv.noise_floor_db(noisy))
    assert not rest and abs(a / SR - 1.0) < 0.05 and abs(b / SR - 2.0) < 0.05


@pytest.fixture(scope="module")
def telephone_pair():
    """Two women on a telephone line: Allison and the Dutch actress (a same-gender pair, the kind
    d-vector clustering collapsed to one speaker)."""
    spec = rv.Spec("test_ff", ("allison", "nl_f"), 10, "telephone", seed=3, pool_limit=60)
    return rv.build(spec)


@needs_voices
def test_real_voices_counted_on_a_telephone_line(telephone_pair):
    from speechannotator.evaluation.diarization import diarization_scores
    from speechannotator.frontend.diarize import diarize
    from speechannotator.frontend.vad import detect_speech

    conv = telephone_pair
    x = conv.samples
    regions = detect_speech(x, SR)
    new = diarize(x, SR, regions)
    d_new = diarization_scores(conv.speech_rows(), [(t.start, t.end, t.speaker) for t in new.speech])
    assert new.num_speakers == 2
    assert d_new["der"][0] / d_new["der"][1] < 0.1
    # Exclusive turns: one voice at a time, overlapped seconds inside them.
    turns = sorted(new.turns, key=lambda t: t.start)
    assert all(a.end <= b.start + 1e-9 for a, b in zip(turns, turns[1:]))
    assert all(0.0 <= t.overlap_s <= t.end - t.start + 0.02 for t in turns)


@needs_voices
def test_rerun_is_byte_identical_and_segments_bounded(telephone_pair):
    from speechannotator.frontend.timeline import recover_timeline

    x = telephone_pair.samples[: 12 * SR]
    cfg = Config(max_segment_s=6.0)
    runs = [
        json.dumps([s.to_json() for s in recover_timeline(x, SR, cfg).segments], ensure_ascii=False) for _ in range(2)
    ]
    assert runs[0] == runs[1]
    segs = json.loads(runs[0])
    assert segs and all(s["end"] - s["start"] <= 6.0 + 1e-6 for s in segs)
    assert all(s["start"] <= w["start"] <= w["end"] <= s["end"] for s in segs for w in s["words"])


def _words(a: float, b: float, tag: str):
    """Words every 0.4 s across [a, b] (the timestamps an ASR would give)."""
    from speechannotator.records import Word

    ts = np.arange(a, b - 0.3, 0.4)
    return [Word(f"{tag}{i}", round(float(t), 3), round(float(t) + 0.3, 3), 0.9) for i, t in enumerate(ts)]


@needs_voices
def test_speaker_change_inside_a_segment_is_found_at_a_word_boundary(telephone_pair):
    from speechannotator.frontend.diarize import diarize
    from speechannotator.frontend.vad import detect_speech
    from speechannotator.frontend.word_changes import split_at_word_changes

    conv = telephone_pair
    dia = diarize(conv.samples, SR, detect_speech(conv.samples, SR))
    utts = conv.utterances
    # Two neighbouring turns of different voices, each long enough for a piece of its own.
    pairs = [
        (u, v)
        for u, v in zip(utts, utts[1:])
        if u.speaker != v.speaker and u.end - u.start >= 1.5 and v.end - v.start >= 1.5 and v.start >= u.end
    ]
    assert pairs
    u, v = pairs[0]
    words = _words(u.start, u.end, "u") + _words(v.start, v.end, "v")
    # The segment as a missed change leaves it: both turns under the first turn's speaker.
    first = max(dia.turns, key=lambda t: min(t.end, u.end) - max(t.start, u.start)).speaker
    seg = Segment("seg_00000", u.start, v.end, first, " ".join(w.text for w in words), "en", 0.9, words)
    counts: dict[str, int] = {}
    pieces, splits = split_at_word_changes([seg], conv.samples, SR, dia.space, counts=counts)
    assert splits >= 1 and len({p.speaker for p in pieces}) == 2
    assert counts["searched"] >= 1  # the gate saw the other voice
    # The cut sits between the two turns' words; every word is kept, inside its piece.
    assert any(p.words and p.words[-1].text == words[len(_words(u.start, u.end, "u")) - 1].text for p in pieces)
    assert [w.text for p in pieces for w in p.words] == [w.text for w in words]
    assert all(p.start <= w.start <= w.end <= p.end for p in pieces for w in p.words)
    # One voice alone is not split.
    solo_words = _words(u.start, u.end, "u")
    solo = Segment("seg_00001", u.start, u.end, first, "x", "en", 0.9, solo_words)
    assert split_at_word_changes([solo], conv.samples, SR, dia.space, counts=counts)[1] == 0
    # ... and costs the gate's windows only, not two spans per word boundary.
    assert counts["searched"] == 0 and counts["embedded"] < len(solo_words)
