"""The windowed waveform and the spectrogram of the review page, on a signal with known content."""

from __future__ import annotations

import base64

import numpy as np
import pytest
import soundfile as sf

from speechannotator.viewer.audioview import SPEC_BINS, WindowError, spectrogram, window, window_peaks


def test_the_spectrogram_puts_a_tone_in_its_band_and_peaks_follow_the_window(tmp_path):
    sr = 16000
    t = np.arange(sr) / sr
    # One second at 1 kHz (amplitude 0.5), then one second at 3 kHz (amplitude 0.1).
    audio = np.concatenate([0.5 * np.sin(2 * np.pi * 1000 * t), 0.1 * np.sin(2 * np.pi * 3000 * t)])
    wav = tmp_path / "tones.wav"
    sf.write(wav, audio, sr, subtype="PCM_16")
    spec = spectrogram(wav, window(wav, 0.0, 2.0, 20))
    rows = np.frombuffer(base64.b64decode(spec["data"]), dtype=np.uint8).reshape(20, SPEC_BINS)
    hz_per_bin = spec["max_hz"] / SPEC_BINS
    loudest = rows.argmax(axis=1) * hz_per_bin
    assert all(abs(f - 1000) <= hz_per_bin for f in loudest[:9]) and all(
        abs(f - 3000) <= hz_per_bin for f in loudest[11:]
    )
    assert rows.max() == 255 and rows[:, : int(500 / hz_per_bin)].max() < 128  # nothing much below 500 Hz
    peaks = window_peaks(wav, window(wav, 0.9, 1.1, 4))
    assert [round(hi, 1) for _, hi in peaks] == [0.5, 0.5, 0.1, 0.1]  # the window, not the whole file
    for t0, t1, cols in ((1.0, 0.5, 10), (5.0, 6.0, 10), (0.0, 1.0, 0), (float("nan"), 1.0, 10)):
        with pytest.raises(WindowError):
            window(wav, t0, t1, cols)
