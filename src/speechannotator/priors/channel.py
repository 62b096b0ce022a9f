"""Channel evidence: effective bandwidth, sample-rate origin, clipping and level.

The loader resamples everything to 16 kHz, so a call recorded at 8 kHz arrives as 16 kHz
samples with nothing above 4 kHz. The effective bandwidth is read from the long-term
spectrum of the speech frames: the highest frequency whose band energy stays within
``BAND_DROP_DB`` of the 300-3000 Hz speech band. Under ~4 kHz the recording came through an
8 kHz (telephone) channel; a 16 kHz recording reaches past 6 kHz.
"""

from __future__ import annotations

import numpy as np

from speechannotator.priors.acoustic import EPS, SR, frame_db, frames_of, speech_mask

N_FFT = 512
# Band energy (dB per bin) at least this far under the 300-3000 Hz speech band counts as empty.
# Measured (benchmarks/events_bench.py): the 8 kHz codec2 voices and Asterisk prompts and 16 kHz
# speech through a 300-3400 Hz mu-law channel measure 4000-4250 Hz; the 16-22 kHz voices
# (LibriVox, ARCTIC, the Dutch lines, the Mandarin lecture) 6250-8000 Hz, also at -30 dB.
BAND_DROP_DB = 50.0
TELEPHONE_MAX_HZ = 4500.0  # effective bandwidth up to here: 8 kHz origin (telephone)
WIDEBAND_MIN_HZ = 6000.0  # from here: 16 kHz origin or more
CLIP_LEVEL = 0.999  # |sample| at full scale
CLIP_SHARE_MIN = 1e-3  # share of samples at full scale that counts as clipped


def effective_bandwidth_hz(x: np.ndarray) -> float | None:
    """Highest frequency (Hz) with energy within BAND_DROP_DB of the speech band, on speech frames."""
    x = np.asarray(x, np.float64)
    if len(x) < N_FFT * 4:
        return None
    db = frame_db(x, hop=N_FFT // 2, win=N_FFT)
    mask, _ = speech_mask(db)
    every = frames_of(x, N_FFT, N_FFT // 2)
    n = len(every)
    frames = every[mask[:n]] if mask[:n].sum() >= 4 else every
    spec = np.mean(np.abs(np.fft.rfft(frames * np.hanning(N_FFT), axis=1)) ** 2, axis=0)
    freqs = np.fft.rfftfreq(N_FFT, 1 / SR)
    ref = 10 * np.log10(np.mean(spec[(freqs >= 300) & (freqs <= 3000)]) + EPS)
    level = 10 * np.log10(spec + EPS)
    # 250 Hz bands: the top of the highest band whose mean stays above the floor
    top = 0.0
    for lo in np.arange(250.0, SR / 2, 250.0):
        band = level[(freqs >= lo) & (freqs < lo + 250.0)]
        if len(band) and 10 * np.log10(np.mean(10 ** (band / 10)) + EPS) >= ref - BAND_DROP_DB:
            top = lo + 250.0
    return float(top)


def origin(bandwidth_hz: float) -> str:
    if bandwidth_hz <= TELEPHONE_MAX_HZ:
        return "telephone"
    if bandwidth_hz < WIDEBAND_MIN_HZ:
        return "narrowband"
    return "wideband"


def channel_evidence(x: np.ndarray) -> dict[str, float | str]:
    """Bandwidth, origin, clipping share and peak level of a stretch of original audio."""
    x = np.asarray(x, np.float64)
    out: dict[str, float | str] = {}
    if len(x) == 0:
        return out
    bw = effective_bandwidth_hz(x)
    if bw is not None:
        out["channel.bandwidth_hz"] = bw
        out["channel.origin"] = origin(bw)
    out["channel.clipped_share"] = float(np.mean(np.abs(x) >= CLIP_LEVEL))
    out["channel.peak_dbfs"] = float(20 * np.log10(np.max(np.abs(x)) + EPS))
    return out


def clipped(ev: dict) -> bool:
    return float(ev.get("channel.clipped_share", 0.0)) >= CLIP_SHARE_MIN
