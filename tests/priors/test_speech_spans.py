"""Enhancement and the whole-stretch extractors run on the speech spans only."""

import numpy as np
import pytest

from speechannotator.audio import Audio
from speechannotator.enhance import SPAN_LEAD_S, SPAN_TAIL_S, Enhancer, speech_spans
from speechannotator.evaluation.recordings import ami
from speechannotator.evaluation.recordings import known_truth as C
from speechannotator.records import Segment

SR = 16000


def _audio(x):
    return Audio(
        samples=np.asarray(x, np.float32), sample_rate=SR, path="<t>", original_sample_rate=SR, original_channels=1
    )


def test_speech_spans_widen_clip_and_merge():
    spans = speech_spans([(5.0, 6.0), (0.2, 1.0), (6.5, 7.0), (20.0, 29.9)], 30.0)
    # (0.2, 1.0) is clipped at 0; (5, 6) and (6.5, 7) lie within the join distance: one span.
    assert spans == [(0.0, 1.0 + SPAN_TAIL_S), (5.0 - SPAN_LEAD_S, 7.0 + SPAN_TAIL_S), (20.0 - SPAN_LEAD_S, 30.0)]
    assert speech_spans([], 10.0) == []


@pytest.fixture(scope="module")
def faint_room_with_one_utterance():
    """20 s of pink noise with one LibriVox utterance (3 s) at 8 s, mixed at 10 dB."""
    x = C.librivox()[1][0]
    rng = np.random.default_rng(0)
    y = np.zeros(20 * SR, np.float32)
    a = 8 * SR
    y[a : a + len(x)] += x
    return C.mix(y, C.noise("pink", len(y), rng), 10), a, a + len(x)


def test_span_enhancement_aligns_with_whole_recording(faint_room_with_one_utterance):
    y, a, b = faint_room_with_one_utterance
    audio = _audio(y)
    whole = Enhancer()(audio)
    enh = Enhancer()
    spans = speech_spans([(a / SR, b / SR)], audio.duration)
    part = enh(audio, spans)
    assert len(part) == len(y)
    i = int(round(spans[0][0] * SR))
    assert np.array_equal(part[:i], y[:i])  # outside the spans: the original, untouched
    assert enh.processed_s == pytest.approx((b - a) / SR + SPAN_LEAD_S + SPAN_TAIL_S, abs=0.01)
    # Inside the segment the span's output matches enhancing the whole file: same alignment
    # (no delay) and within -20 dB of it (measured -30 dB).
    d = whole[a:b] - part[a:b]
    assert 10 * np.log10(np.sum(d**2) / np.sum(whole[a:b] ** 2)) < -20
    assert np.corrcoef(whole[a:b], part[a:b])[0, 1] > 0.99
    assert np.std(part[:i]) > 3 * np.std(part[a - SR // 2 : a])  # the noise before speech was removed


def test_mostly_silent_recording_processes_only_the_speech(faint_room_with_one_utterance):
    from speechannotator.priors import extract_priors
    from speechannotator.priors.spans import PriorsWork

    y, a, b = faint_room_with_one_utterance
    quiet = np.concatenate([y[:a] * 0.02, y[a:b], y[b:] * 0.02, np.zeros(40 * SR, np.float32)])  # 60 s, 3 s of speech
    audio = _audio(quiet)
    seg = Segment("seg_0000", a / SR, b / SR, "A", text=C.librivox()[1][1], language="en")
    work = PriorsWork()
    evs = extract_priors(audio, [seg], work=work)
    span = (b - a) / SR + SPAN_LEAD_S + SPAN_TAIL_S
    assert work.spans_s == pytest.approx(span, abs=0.01)
    assert work.enhanced_s == pytest.approx(span, abs=0.01)
    assert span <= work.aed_s < span + 0.02  # whole 10 ms frames
    t = {(e.key, e.name): e.value for e in evs}
    assert 70 < t[(seg.key, "pitch.median_hz")] < 130  # the male reader's voice is still measured
    assert 0.5 < t[(seg.key, "scene.speech_prob")] <= 1.0


def test_snr_gate_leaves_clean_speech_and_enhances_noisy_speech(faint_room_with_one_utterance, espeak_ok):
    from speechannotator.config import PriorsSettings
    from speechannotator.priors.spans import PriorsWork, enhance_speech, speech_snr_db

    y, a, b = faint_room_with_one_utterance
    x = C.espeak(C.TEXTS[0], "en-us+f2", 65)  # a formant synthesizer: pauses at digital silence
    clean = np.zeros(len(x) + 4 * SR, np.float32)
    clean[2 * SR : 2 * SR + len(x)] = x
    seg = [(2.0, 2.0 + len(x) / SR)]
    assert speech_snr_db(y[a:b]) < 15 < 30 < speech_snr_db(x)
    gated = PriorsWork()
    assert np.array_equal(enhance_speech(_audio(clean), seg, PriorsSettings(), gated), clean)
    assert gated.enhanced_s == 0 and gated.gated_s > len(x) / SR
    noisy = PriorsWork()
    enhance_speech(_audio(y), [(a / SR, b / SR)], PriorsSettings(), noisy)
    assert noisy.gated_s == 0 and noisy.enhanced_s > (b - a) / SR


def test_pipeline_priors_stage_works_on_the_speech_spans(tmp_path, faint_room_with_one_utterance):
    """The fixed-timeline setting: a 40 s recording holding 3 s of speech; the stage's counted
    work (state) covers the span around that utterance only."""
    import json

    import soundfile as sf

    from speechannotator.pipeline import Annotator

    y, a, b = faint_room_with_one_utterance
    x = np.concatenate([y * 0.05, np.zeros(20 * SR, np.float32)])
    x[a:b] = y[a:b]
    sf.write(tmp_path / "quiet.wav", x, SR)
    ref = [
        {"session_id": "quiet", "speaker": "A", "start_time": a / SR, "end_time": b / SR, "words": C.librivox()[1][1]}
    ]
    (tmp_path / "quiet.seglst.json").write_text(json.dumps(ref))
    annotator = Annotator(tmp_path / "out")
    try:
        res = annotator.annotate(tmp_path / "quiet.wav", timeline=tmp_path / "quiet.seglst.json")
        assert res.ok, res.error
        info = annotator.store.stage_info("quiet", "priors")
    finally:
        annotator.close()
    span = (b - a) / SR + SPAN_LEAD_S + SPAN_TAIL_S
    assert info["speech_spans_s"] == pytest.approx(span, abs=0.01)
    assert info["enhanced_s"] + info["gated_s"] == pytest.approx(span, abs=0.01)
    assert span <= info["aed_s"] < span + 0.02
    assert len(res.records) == 1 and res.records[0].gender in ("male", "Male", "男声")


def test_span_streams_split_in_order_by_duration():
    from speechannotator.enhance import span_streams

    spans = [(0, 10), (20, 30), (40, 45), (50, 55), (60, 70)]
    assert span_streams(spans, 2) == [[(0, 10), (20, 30)], [(40, 45), (50, 55), (60, 70)]]
    assert span_streams(spans, 1) == [spans]
    assert span_streams(spans[:1], 4) == [spans[:1]]


def test_streams_in_threads_equal_each_stream_enhanced_alone(faint_room_with_one_utterance):
    from speechannotator.config import PriorsSettings
    from speechannotator.enhance import _model, span_streams

    y, _, _ = faint_room_with_one_utterance
    audio = _audio(y)
    spans = [(1.0, 5.0), (6.5, 12.0), (14.0, 19.0)]
    got = Enhancer(PriorsSettings(enhance_streams=2))(audio, spans)
    assert np.array_equal(got, Enhancer(PriorsSettings(enhance_streams=2))(audio, spans))  # rerun
    want = y.astype(np.float32).copy()
    ranges = [(int(a * SR), int(b * SR)) for a, b in spans]
    for group in span_streams(ranges, 2):
        model = _model(PriorsSettings())
        for i, j in group:
            want[i:j] = model.enhance16(want[i:j])
        model.close()
    assert np.array_equal(got, want)  # the threads neither share a state nor each other's samples
    assert not np.array_equal(got[ranges[2][0] : ranges[2][1]], y[ranges[2][0] : ranges[2][1]])


def test_batch_runtime_matches_the_c_runtime(faint_room_with_one_utterance, monkeypatch):
    """The offline runtime (whole stretches, ONNX graphs) and the C runtime (frame by frame) are
    the same model: same alignment, output within -25 dB, also across the batch runtime's block
    joins (measured -50 dB in one block, -35 dB with 6-s blocks)."""
    import speechannotator.enhance as E
    from speechannotator.config import PriorsSettings

    y, a, b = faint_room_with_one_utterance
    audio = _audio(y)
    monkeypatch.setattr(E, "BLOCK_S", 6.0)  # 20 s + 1 s prime: four blocks, three joins
    batch = Enhancer(PriorsSettings(enhancer_runtime="batch"))(audio)
    stream = Enhancer(PriorsSettings(enhancer_runtime="stream"))(audio)
    s = slice(SR, len(y) - SR // 10)
    d = batch[s] - stream[s]
    assert 10 * np.log10(np.sum(d**2) / np.sum(stream[s] ** 2)) < -25
    assert np.corrcoef(batch[a:b], stream[a:b])[0, 1] > 0.999
    assert np.std(batch[: a - SR]) < 0.5 * np.std(y[: a - SR])  # the noise is removed


def test_a_segment_the_enhancer_silenced_keeps_the_original():
    """A turn left 40 dB quieter lost its speech (noise 40 dB above a voice ASR heard cannot
    be): it is restored; one left 3 dB quieter (noise removed) keeps the enhanced samples."""
    from speechannotator.enhance import Patched
    from speechannotator.priors.spans import restore_lost_speech

    rng = np.random.default_rng(1)
    orig = (0.05 * rng.standard_normal(6 * SR)).astype(np.float32)
    enh = Patched(orig)
    enh.put(0, orig[: 2 * SR] * 0.01)  # -40 dB
    enh.put(3 * SR, orig[3 * SR : 5 * SR] * 0.7)  # -3 dB
    kept = enh[3 * SR : 5 * SR]
    assert restore_lost_speech(orig, enh, [(0, 2 * SR), (3 * SR, 5 * SR)], 20.0) == pytest.approx(2.0)
    assert np.array_equal(enh[: 2 * SR], orig[: 2 * SR])
    assert np.array_equal(enh[3 * SR : 5 * SR], kept)


def test_patched_reads_as_the_array_it_stands_for():
    """``Patched`` (the original plus replaced ranges) against the whole-recording copy it
    replaces, written the same way: every slice, a range put back to the original, the whole."""
    from speechannotator.enhance import Patched

    rng = np.random.default_rng(3)
    base = rng.standard_normal(200).astype(np.float32)
    dense, patched, first = base.copy(), Patched(base), base.copy()
    for i, n in ((10, 30), (60, 25), (150, 50), (70, 5)):  # the last overlaps the second: it wins
        x = rng.standard_normal(n).astype(np.float32)
        dense[i : i + n] = x
        patched.put(i, x)
        assert np.array_equal(patched[5:200], dense[5:200])  # read between puts too
    dense[20:65] = base[20:65]
    patched.keep_original(20, 65)
    assert len(patched) == len(dense) and np.array_equal(np.asarray(patched), dense)
    for i in range(0, 200, 7):
        for j in range(i, 201, 11):
            got = patched[i:j]
            assert got.dtype == np.float32 and np.array_equal(got, dense[i:j])
    assert np.array_equal(base, first)  # the original is never written
    # Bounded by `keep`: the same samples inside those ranges, the original outside.
    keep = [(40, 70), (0, 12), (65, 80), (160, 190)]
    bounded = Patched(base, keep)
    for i, x in patched.pieces:
        bounded.put(i, x)
    inside = np.zeros(200, bool)
    for i, j in keep:
        inside[i:j] = True
    want = np.where(inside, dense, base)
    assert np.array_equal(np.asarray(bounded), want)
    assert sum(len(x) for _, x in bounded.pieces) < sum(len(x) for _, x in patched.pieces)


@pytest.mark.skipif(not ami.available(), reason="AMI clips not fetched (scripts/fetch_real_voices.sh)")
def test_far_field_voice_of_ami_trn07_survives_enhancement():
    """On AMI trn07 (train split) DeepFilterNet removes a far-field woman's turn at 22.6-25.0 s
    (-31 dB) almost entirely; its acoustic statistics must still see her voice."""
    from speechannotator.audio import load_audio
    from speechannotator.config import PriorsSettings
    from speechannotator.priors.spans import PriorsWork, enhance_speech

    m = next(x for x in ami.meetings(("train",)) if x.name == "trn07")
    audio = load_audio(m.path)
    turn = (22.6, 24.96)  # the segments the pipeline found there (one span, enhanced: not clean)
    work = PriorsWork()
    out = enhance_speech(audio, [(15.6, 16.21), (20.0, 21.25), turn, (26.57, 29.96)], PriorsSettings(), work)
    i, j = int(turn[0] * SR), int(turn[1] * SR)
    drop = 10 * np.log10(np.mean(audio.samples[i:j] ** 2) / (np.mean(out[i:j] ** 2) + 1e-10))
    assert drop < 20 and work.restored_s >= turn[1] - turn[0]


def test_overlapping_enhancement_spans_are_refused():
    # Each stream writes its own ranges; overlapping spans would make the output depend on which
    # piece came last, so they are an error (speech_spans merges them before they get here).
    audio = _audio(np.zeros(3 * SR))
    with pytest.raises(ValueError, match="spans overlap"):
        Enhancer().patched(audio, [(0.0, 1.5), (1.0, 2.5)])
