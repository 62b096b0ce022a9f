"""ASR backends on real speech: the shipped Whisper in process and behind a real local
OpenAI-compatible server (servers/whisper_server.py), code-switching, hallucination filter."""

import json
import re
import threading
import urllib.error
import urllib.request

import jiwer
import numpy as np
import pytest

from speechannotator.config import AsrConfig, Config
from speechannotator.frontend.asr_openai import AsrEndpointError, OpenAIAsr, language_code, parse_verbose
from speechannotator.frontend.asr_types import Decoded, Piece, RawWord, hallucination_reason, wav_bytes
from speechannotator.frontend.timeline import recover_timeline
from speechannotator.frontend.transcribe import _fill, transcribe
from speechannotator.records import Segment
from synth import SR, join, librivox, speak


def NORM(text: str) -> str:
    return " ".join(re.sub(r"[^a-z0-9]", " ", text.lower()).split())


READER = ["he was not an ill disposed young man", "he might even have been made amiable himself"]


@pytest.fixture(scope="module")
def server():
    from speechannotator.servers.whisper_server import serve

    srv = serve(port=0)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    host, port = srv.server_address[:2]
    yield f"http://{host}:{port}/v1"
    srv.shutdown()
    srv.server_close()


def _segments(parts, gap, speakers):
    t, out = 0.3, []
    for i, (p, spk) in enumerate(zip(parts, speakers)):
        out.append(Segment(f"seg_{i:05d}", round(t, 3), round(t + len(p) / SR, 3), spk))
        t += len(p) / SR + gap
    return out


def test_server_verbose_json_and_openai_backend(server):
    r = librivox()
    asr = OpenAIAsr(AsrConfig(backend="openai", url=server, api_model="whisper-base"))
    dec = asr.decode(r[1], None)
    assert dec.language == "en"
    words = [w for p in dec.pieces for w in p.words]
    assert words and all(0 <= w.start <= w.end <= len(r[1]) / SR + 0.5 for w in words)
    assert jiwer.wer(READER[0], NORM("".join(w.text for w in words))) < 0.2
    assert all(p.avg_logprob < 0 and 0 <= p.no_speech_prob <= 1 for p in dec.pieces)  # statistics carried over


def test_transcribe_through_endpoint_assigns_words_to_segments(server):
    r = librivox()
    x = join(r[1], r[4], gap=0.7)
    segs = _segments([r[1], r[4]], 0.7, ["A", "A"])
    stats = transcribe(x, SR, segs, AsrConfig(backend="openai", url=server))
    assert stats["asr_spans"] == 1  # one request for the span
    for s, ref in zip(segs, READER):
        assert s.language == "en" and jiwer.wer(ref, NORM(s.text)) < 0.25
        assert s.words and all(s.start - 0.5 <= w.start <= w.end <= s.end + 0.5 for w in s.words)


def test_server_rejects_bad_requests_with_json_errors(server):
    def post(body: bytes, ctype: str):
        req = urllib.request.Request(f"{server}/audio/transcriptions", data=body, headers={"Content-Type": ctype})
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(req, timeout=30)
        return err.value.code, json.loads(err.value.read())["error"]["message"]

    b = "XyZ"
    body = (
        f'--{b}\r\nContent-Disposition: form-data; name="file"; filename="a.wav"\r\n\r\nnot audio\r\n--{b}--\r\n'
    ).encode()
    code, msg = post(body, f"multipart/form-data; boundary={b}")
    assert code == 400 and "not decodable audio" in msg
    code, msg = post(b"{}", "application/json")
    assert code == 400 and "multipart" in msg
    body = (f'--{b}\r\nContent-Disposition: form-data; name="model"\r\n\r\nx\r\n--{b}--\r\n').encode()
    assert post(body, f"multipart/form-data; boundary={b}") == (400, "missing 'file'")


def test_unreachable_endpoint_is_one_clear_error():
    asr = OpenAIAsr(AsrConfig(backend="openai", url="http://127.0.0.1:9/v1", max_retries=0, timeout_s=2))
    with pytest.raises(AsrEndpointError, match="transcription endpoint http://127.0.0.1:9/v1 failed"):
        asr.decode(np.zeros(SR, np.float32), None)
    with pytest.raises(AsrEndpointError, match="needs asr.url"):
        OpenAIAsr(AsrConfig(backend="openai"))


def test_parse_verbose_variants():
    reply = {"language": "Chinese", "text": "你好世界", "segments": [{"start": 0.0, "end": 1.0, "text": "你好世界"}]}
    dec = parse_verbose(reply, 1.2)
    assert dec.language == "zh" and dec.pieces[0].words[0].text == "你好世界"  # no words: one per piece
    assert language_code("en-US") == "en" and language_code(None) == ""


@pytest.mark.xfail(
    reason="known: Whisper base drops the espeak German turn inside the English chunk (text '' or "
    "'Good' on the English turn); seen on main before the language prior, open in issue 9's note"
)
def test_code_switched_span_gets_language_per_segment():
    """English (real reader) and Spanish / German (espeak) turns inside one chunk span."""
    r = librivox()
    es = speak("Buenos días, hoy vamos a hablar del tiempo y de la ciudad.", "es", pitch=60)
    de = speak("Guten Morgen, heute sprechen wir über das Wetter in der Stadt.", "de", pitch=40)
    parts = [r[1], es, r[4], de]
    x = join(*parts, gap=0.6)
    segs = _segments(parts, 0.6, ["A", "B", "A", "C"])
    stats = transcribe(x, SR, segs, AsrConfig())
    assert [s.language for s in segs] == ["en", "es", "en", "de"], [(s.language, s.text) for s in segs]
    assert stats["asr_spans"] == 1 and stats["asr_redecoded"] + stats["asr_mixed_spans"] >= 1
    assert "buenos" in segs[1].text.lower() and "morgen" in segs[3].text.lower()
    assert jiwer.wer(READER[1], NORM(segs[2].text)) < 0.25


def test_chinese_words_become_simplified_characters_with_times():
    seg = Segment("seg_00000", 10.0, 12.0, "A")
    _fill(seg, [RawWord("這個", 0.2, 0.6, 0.9), RawWord("問題", 0.6, 1.0, 0.8)], 10.0, "zh", 0.95)
    assert seg.text == "这个问题"
    assert [w.text for w in seg.words] == ["这", "个", "问", "题"]
    assert seg.words[0].start == 10.2 and seg.words[1].start == 10.4 and seg.words[-1].end == 11.0


@pytest.mark.parametrize(
    "piece,reason",
    [
        (Piece(0, 2, " ♪ ♪ "), "no words"),
        (Piece(0, 2, "[Music]"), "no words"),
        (Piece(0, 2, "la la la la la la", compression_ratio=3.1), "repetitive"),
        (Piece(0, 2, "Hello there.", avg_logprob=-1.2, no_speech_prob=0.8), "no speech"),
        (Piece(0, 2, "some words", avg_logprob=-1.8), "low confidence"),
        (Piece(0, 2, "Thank you for watching!", avg_logprob=-0.8), "stock phrase"),
        (Piece(0, 2, "Thank you for watching!", avg_logprob=-0.2, no_speech_prob=0.01), None),
        (Piece(0, 2, "He was not an ill disposed young man.", avg_logprob=-0.3, no_speech_prob=0.05), None),
    ],
)
def test_hallucination_filter(piece, reason):
    assert hallucination_reason(piece, AsrConfig()) == reason


def test_music_and_noise_alone_give_no_text():
    from speechannotator.evaluation.recordings.espeak_conversations import background_noise as _noise

    rng = np.random.default_rng(3)
    music = 0.2 * _noise("music", 12 * SR, rng) / 4
    noise = 0.05 * _noise("pink", 6 * SR, rng)
    res = recover_timeline(np.concatenate([music, noise]).astype(np.float32), SR, Config())
    assert res.segments == [], [(s.start, s.end, s.text) for s in res.segments]


def test_wav_bytes_round_trip():
    import io

    import soundfile as sf

    x = (0.1 * np.sin(np.arange(SR) / 10)).astype(np.float32)
    y, sr = sf.read(io.BytesIO(wav_bytes(x)), dtype="float32")
    assert sr == SR and np.abs(x - y).max() < 1e-3
    assert isinstance(Decoded("en", 1.0), Decoded)


def test_code_switching_through_the_endpoint(server):
    r = librivox()
    es = speak("Buenos días, hoy vamos a hablar del tiempo y de la ciudad.", "es", pitch=60)
    parts = [r[1], es, r[4]]
    x = join(*parts, gap=0.6)
    segs = _segments(parts, 0.6, ["A", "B", "A"])
    transcribe(x, SR, segs, AsrConfig(backend="openai", url=server))
    assert [s.language for s in segs] == ["en", "es", "en"], [(s.language, s.text) for s in segs]
    assert "buenos" in segs[1].text.lower()
