import math
import wave

import numpy as np
import pytest
import soundfile as sf

from speechannotator.audio import AudioError, find_audio_files, load_audio
from synth import SR, join, librivox


@pytest.fixture(scope="module")
def speech():
    return join(*librivox()[:2])


def test_wav_roundtrip(tmp_path, speech):
    p = tmp_path / "a.wav"
    sf.write(p, speech, SR)
    a = load_audio(p)
    assert a.sample_rate == 16000 and a.original_channels == 1
    assert abs(a.duration - len(speech) / SR) < 1e-3


@pytest.mark.parametrize("fmt,sub", [("flac", "PCM_16"), ("ogg", "VORBIS"), ("mp3", "MPEG_LAYER_III")])
def test_compressed_formats(tmp_path, speech, fmt, sub):
    p = tmp_path / f"a.{fmt}"
    sf.write(p, speech, SR, format=fmt.upper() if fmt != "mp3" else "MP3", subtype=sub)
    a = load_audio(p)
    assert abs(a.duration - len(speech) / SR) < 0.1


def test_m4a_through_pyav(tmp_path, speech):
    import av

    p = tmp_path / "a.m4a"
    with av.open(str(p), "w") as out:
        stream = out.add_stream("aac", rate=SR)
        frame = av.AudioFrame.from_ndarray((speech[None, :] * 32767).astype(np.int16), format="s16", layout="mono")
        frame.rate = SR
        for packet in stream.encode(frame):
            out.mux(packet)
        for packet in stream.encode(None):
            out.mux(packet)
    a = load_audio(p)
    assert abs(a.duration - len(speech) / SR) < 0.2
    assert np.abs(a.samples).max() > 0.05


def test_stereo_48k_is_downmixed_and_resampled(tmp_path, speech):
    import soxr

    x = soxr.resample(speech, SR, 48000)
    p = tmp_path / "s.wav"
    sf.write(p, np.stack([x, 0.5 * x], axis=1), 48000)
    a = load_audio(p)
    assert a.original_sample_rate == 48000 and a.original_channels == 2
    assert a.sample_rate == 16000
    assert abs(a.duration - len(speech) / SR) < 1e-2
    # The down-mix is the channel mean: 0.75 of the original level.
    assert abs(np.abs(a.samples).max() - 0.75 * np.abs(speech).max()) < 0.02


def test_8k_is_upsampled(tmp_path, speech):
    import soxr

    p = tmp_path / "n.wav"
    sf.write(p, soxr.resample(speech, SR, 8000), 8000)
    a = load_audio(p)
    assert a.sample_rate == 16000 and a.original_sample_rate == 8000


def _check_error(path, fragment):
    with pytest.raises(AudioError) as err:
        load_audio(path)
    msg = str(err.value)
    assert fragment in msg and "\n" not in msg
    return msg


def test_empty_file(tmp_path):
    p = tmp_path / "empty.wav"
    p.write_bytes(b"")
    _check_error(p, "empty")


def test_text_renamed_wav(tmp_path):
    p = tmp_path / "notes.wav"
    p.write_text("this is not audio\n" * 20)
    _check_error(p, "not")


def test_truncated_wav(tmp_path, speech):
    p = tmp_path / "t.wav"
    sf.write(p, speech, SR, subtype="PCM_16")
    data = p.read_bytes()
    p.write_bytes(data[:30])  # header cut inside the fmt chunk
    msg = _check_error(p, "")
    assert "truncated" in msg or "not" in msg


def test_truncated_wav_body_is_read_up_to_the_cut(tmp_path, speech):
    # A header that promises more samples than the file holds: what is there is decoded.
    p = tmp_path / "t2.wav"
    sf.write(p, speech, SR, subtype="PCM_16")
    data = p.read_bytes()
    p.write_bytes(data[: len(data) // 2])
    a = load_audio(p)
    assert 0.4 * len(speech) / SR < a.duration < 0.6 * len(speech) / SR
    assert len(a.notes) == 1 and "truncated" in a.notes[0]  # read, and said so
    whole = tmp_path / "whole.wav"
    sf.write(whole, speech, SR, subtype="PCM_16")
    assert load_audio(whole).notes == ()


def test_truncated_mp3_is_read_with_a_note(tmp_path, speech):
    p = tmp_path / "t.mp3"
    sf.write(p, speech, SR, format="MP3")
    assert load_audio(p).notes == ()
    data = p.read_bytes()
    p.write_bytes(data[: len(data) // 2])
    a = load_audio(p)
    assert a.duration < 0.7 * len(speech) / SR
    assert len(a.notes) == 1 and "truncated" in a.notes[0] and f"{len(speech) / SR:.2f} s" in a.notes[0]


def test_a_corrupt_header_is_called_corrupt_not_too_short(tmp_path, speech):
    import struct

    sf.write(tmp_path / "ok.wav", speech, SR, subtype="PCM_16")
    data = bytearray((tmp_path / "ok.wav").read_bytes())
    small = bytearray(data)
    i = small.find(b"data")
    small[i + 4 : i + 8] = struct.pack("<I", 100)  # the data chunk claims 100 bytes of a whole file
    (tmp_path / "small.wav").write_bytes(small)
    msg = _check_error(tmp_path / "small.wav", "corrupt header")
    assert "too short" not in msg
    fmt = bytearray(data)
    fmt[20:22] = struct.pack("<H", 77)  # an unknown format code
    (tmp_path / "fmt.wav").write_bytes(fmt)
    _check_error(tmp_path / "fmt.wav", "corrupt WAV header")


def test_nan_samples(tmp_path, speech):
    x = speech.copy()
    x[1000:1010] = np.nan
    p = tmp_path / "nan.wav"
    sf.write(p, x, SR, subtype="FLOAT")
    _check_error(p, "NaN")


def test_too_short(tmp_path, speech):
    p = tmp_path / "short.wav"
    sf.write(p, speech[: int(0.2 * SR)], SR)
    _check_error(p, "too short")


def test_zero_length(tmp_path):
    p = tmp_path / "zero.wav"
    with wave.open(str(p), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(SR)
    _check_error(p, "zero length")


def test_missing_and_directory(tmp_path):
    _check_error(tmp_path / "nope.wav", "does not exist")
    _check_error(tmp_path, "directory")


def test_find_audio_files(tmp_path, speech):
    (tmp_path / "sub").mkdir()
    sf.write(tmp_path / "sub" / "b.flac", speech, SR)
    sf.write(tmp_path / "a.wav", speech, SR)
    (tmp_path / "readme.txt").write_text("x")
    found = find_audio_files([tmp_path])
    assert [p.name for p in found] == ["a.wav", "b.flac"]
    assert math.isclose(load_audio(found[1]).duration, len(speech) / SR, abs_tol=1e-3)
