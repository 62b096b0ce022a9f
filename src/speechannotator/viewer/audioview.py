"""What the page draws of a time window of the decoded audio: min/max peaks and a spectrogram.

Both read only the window's frames from the decoded 16 kHz WAV, so zooming into a minute of
an hour reads that minute. The spectrogram reads one FFT frame per drawn column (seeking),
so its cost depends on the columns, not on the window's length.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import soundfile as sf

MAX_COLUMNS = 4000  # a wide screen at device pixel ratio 2
MAX_PEAK_WINDOW_S = 900.0  # longer windows use the whole-recording peaks sent with the recording
SPEC_FFT = 512  # 32 ms at 16 kHz: formants and harmonics of speech resolved at 31 Hz
SPEC_BINS = 128  # frequency rows sent (0 .. Nyquist, 62.5 Hz each at 16 kHz)
SPEC_RANGE_DB = 80.0  # dynamic range drawn below the window's loudest bin


class WindowError(ValueError):
    """A window the recording does not have, or one too long for detailed peaks."""


@dataclass(frozen=True)
class Window:
    start: int  # first frame
    stop: int  # one past the last frame
    columns: int
    sample_rate: int


def window(wav: Path, t0: float, t1: float, columns: int) -> Window:
    info = sf.info(str(wav))
    sr, n = info.samplerate, info.frames
    if not (np.isfinite(t0) and np.isfinite(t1)) or not 0 <= t0 < t1:
        raise WindowError(f"a window must satisfy 0 <= t0 < t1 (got {t0}, {t1})")
    start, stop = int(t0 * sr), min(n, int(np.ceil(t1 * sr)))
    if start >= stop:
        raise WindowError(f"the window starts after the recording's end ({n / sr:.2f} s)")
    if not 1 <= columns <= MAX_COLUMNS:
        raise WindowError(f"columns must be 1..{MAX_COLUMNS}")
    return Window(start, stop, min(columns, stop - start), sr)


def window_peaks(wav: Path, w: Window) -> list[list[float]]:
    """[min, max] per column over the window's frames."""
    from .data import peaks

    if (w.stop - w.start) / w.sample_rate > MAX_PEAK_WINDOW_S:
        raise WindowError(f"detailed peaks are for windows up to {MAX_PEAK_WINDOW_S:.0f} s")
    samples, _ = sf.read(str(wav), start=w.start, stop=w.stop, dtype="float32", always_2d=False)
    return peaks(samples, w.columns)


def spectrogram(wav: Path, w: Window) -> dict:
    """Log power per (column, frequency bin) as bytes 0..255 (row-major, column by column, the
    lowest frequency first), base64; 0 is SPEC_RANGE_DB or more below the window's maximum."""
    centers = np.linspace(w.start, w.stop, w.columns, endpoint=False) + (w.stop - w.start) / (2 * w.columns)
    hann = np.hanning(SPEC_FFT).astype(np.float32)
    frames = np.zeros((w.columns, SPEC_FFT), dtype=np.float32)
    with sf.SoundFile(str(wav)) as f:
        for i, c in enumerate(centers.astype(int)):
            a = max(0, c - SPEC_FFT // 2)
            f.seek(a)
            got = f.read(SPEC_FFT, dtype="float32", always_2d=False)
            frames[i, : len(got)] = got
    power = np.abs(np.fft.rfft(frames * hann, axis=1)) ** 2  # (columns, SPEC_FFT // 2 + 1)
    edges = np.linspace(0, power.shape[1], SPEC_BINS + 1).astype(int)
    binned = np.add.reduceat(power, edges[:-1], axis=1) / np.diff(edges)  # mean power per row
    db = 10.0 * np.log10(binned + 1e-12)
    top = float(db.max())
    scaled = np.clip((db - (top - SPEC_RANGE_DB)) / SPEC_RANGE_DB, 0.0, 1.0)
    data = np.round(255 * scaled).astype(np.uint8)
    return {
        "columns": w.columns,
        "bins": SPEC_BINS,
        "max_hz": w.sample_rate / 2,
        "data": base64.b64encode(data.tobytes()).decode("ascii"),
    }
