"""ASR average log-probability and no-speech probability: kept per segment, stored, exported."""

import json
import shutil
import sqlite3

import numpy as np
import pytest
import soundfile as sf

from speechannotator.config import AsrConfig, load_config
from speechannotator.engine import annotate_corpus
from speechannotator.export import export_corpus
from speechannotator.frontend.asr_types import Decoded, LanguageGuess, Piece, RawWord
from speechannotator.frontend.transcribe import transcribe
from speechannotator.records import Segment
from speechannotator.state import StateStore
from synth import SR, join, librivox


class _Backend:
    """Returns fixed pieces (clip-relative times), as faster-whisper would."""

    name = "fixed"

    def __init__(self, pieces):
        self.pieces = pieces

    def detect(self, clip):
        return LanguageGuess("en", 0.99)

    def decode(self, clip, language):
        return Decoded("en", 0.99, self.pieces)


def _words(*spans):
    return [RawWord(f" w{a}", a, b, 0.9) for a, b in spans]


def test_each_segment_gets_the_word_weighted_statistics_of_the_pieces_its_words_came_from():
    # One window over two adjacent segments of one voice: piece 1 gives three words to the first
    # segment, piece 2 one word to the first and two to the second; piece 3 is dropped (no speech).
    pieces = [
        Piece(0.0, 1.5, " w w w", _words((0.1, 0.4), (0.5, 0.9), (1.0, 1.4)), avg_logprob=-0.2, no_speech_prob=0.1),
        Piece(1.5, 3.5, " w w w", _words((1.6, 1.9), (2.2, 2.6), (2.8, 3.2)), avg_logprob=-0.8, no_speech_prob=0.3),
        Piece(3.5, 4.0, " w", _words((3.6, 3.9)), avg_logprob=-1.5, no_speech_prob=0.9),
    ]
    segs = [Segment("seg_00000", 0.0, 2.0, "A"), Segment("seg_00001", 2.0, 4.0, "A")]
    stats = transcribe(np.zeros(4 * SR, np.float32), SR, segs, AsrConfig(language="en"), _Backend(pieces))
    assert stats["asr_dropped"] == {"no speech": 1}
    assert len(segs[0].words) == 4 and len(segs[1].words) == 2
    assert segs[0].avg_logprob == round((3 * -0.2 - 0.8) / 4, 4) == -0.35
    assert segs[0].no_speech_prob == round((3 * 0.1 + 0.3) / 4, 4) == 0.15
    assert segs[1].avg_logprob == -0.8 and segs[1].no_speech_prob == 0.3  # the dropped piece counts nowhere


def test_a_segment_without_words_has_no_statistics_and_the_state_keeps_them(tmp_path):
    segs = [Segment("seg_00000", 0.0, 1.0, "A"), Segment("seg_00001", 3.0, 4.0, "B")]
    pieces = [Piece(0.0, 1.0, " w", _words((0.2, 0.6)), avg_logprob=-0.25, no_speech_prob=0.02)]
    transcribe(np.zeros(4 * SR, np.float32), SR, segs[:1], AsrConfig(language="en"), _Backend(pieces))
    assert (segs[0].avg_logprob, segs[0].no_speech_prob) == (-0.25, 0.02)
    assert segs[1].avg_logprob is None and segs[1].no_speech_prob is None  # no ASR ran: null, not 0

    store = StateStore(tmp_path / "state.sqlite")
    with store.transaction() as c:
        store.write_segments(c, "r", segs)
    back = store.segments("r")
    assert [(s.avg_logprob, s.no_speech_prob) for s in back] == [(-0.25, 0.02), (None, None)]
    # A segment table written before these statistics existed reads back without them.
    with sqlite3.connect(tmp_path / "state.sqlite") as c:
        data = json.loads(c.execute("SELECT data FROM segments WHERE key='seg_00000'").fetchone()[0])
        for k in ("avg_logprob", "no_speech_prob"):
            del data[k]
        c.execute("UPDATE segments SET data=? WHERE key='seg_00000'", (json.dumps(data),))
    assert store.segments("r")[0].avg_logprob is None


def test_an_endpoint_that_does_not_report_the_statistics_exports_null_not_a_perfect_score():
    from speechannotator.frontend.asr_openai import parse_verbose

    reply = {
        "text": "hello there",
        "segments": [{"start": 0.0, "end": 1.0, "text": "hello there"}],  # no avg_logprob / no_speech_prob
        "words": [{"word": "hello", "start": 0.1, "end": 0.4}, {"word": "there", "start": 0.5, "end": 0.9}],
    }
    decoded = parse_verbose(reply, 1.0)
    assert [p.scored for p in decoded.pieces] == [False]
    segs = [Segment("seg_00000", 0.0, 1.0, "A")]
    transcribe(np.zeros(SR, np.float32), SR, segs, AsrConfig(language="en"), _Fixed(decoded))
    assert segs[0].words and segs[0].avg_logprob is None and segs[0].no_speech_prob is None
    scored = dict(reply, segments=[dict(reply["segments"][0], avg_logprob=-0.3, no_speech_prob=0.05)])
    segs = [Segment("seg_00000", 0.0, 1.0, "A")]
    transcribe(np.zeros(SR, np.float32), SR, segs, AsrConfig(language="en"), _Fixed(parse_verbose(scored, 1.0)))
    assert (segs[0].avg_logprob, segs[0].no_speech_prob) == (-0.3, 0.05)


class _Fixed(_Backend):
    def __init__(self, decoded):
        self.decoded = decoded

    def decode(self, clip, language):
        return self.decoded


def _rows(out, tmp_path, name):
    path = export_corpus(out, "jsonl", tmp_path / f"{name}.jsonl")
    return [json.loads(x) for x in path.read_text().splitlines()]


@pytest.mark.slow
def test_the_real_pipeline_exports_them_and_a_resume_after_the_timeline_stage_gives_the_same_rows(tmp_path):
    """Whisper on a real reader: the columns carry the decode's values, also after a resume that
    reads the segment table back from the state instead of decoding again."""
    lv = librivox()
    inp = tmp_path / "in"
    inp.mkdir()
    sf.write(inp / "reader.wav", join(lv[1], lv[4], gap=0.8), SR)
    cfg = load_config(overrides={"agents": {"priors": False}})
    out = tmp_path / "out"
    assert annotate_corpus([inp], out, cfg).ok
    rows = _rows(out, tmp_path, "first")
    assert rows
    for r in rows:
        assert -3.0 < r["asr_avg_logprob"] <= 0.0 and 0.0 <= r["asr_no_speech_prob"] <= 1.0
        assert "no_speech" not in r["tts_issues"]  # a clean reader
    table = StateStore(out / "state.sqlite").segments("reader")
    assert sorted(r["asr_avg_logprob"] for r in rows) == sorted(s.avg_logprob for s in table)

    # As if killed right after the timeline stage committed: the later stages and the output are gone.
    resumed = tmp_path / "resumed"
    shutil.copytree(out, resumed)
    with sqlite3.connect(resumed / "state.sqlite") as c:
        c.execute("DELETE FROM stages WHERE stage != 'timeline'")
    (resumed / "reader.json").unlink()
    assert annotate_corpus([inp], resumed, cfg).ok
    assert (resumed / "reader.json").read_bytes() == (out / "reader.json").read_bytes()
    assert _rows(resumed, tmp_path, "resumed") == rows
