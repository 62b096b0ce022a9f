"""Decode, down-mix, resample and validate input audio.

soundfile reads wav/flac/ogg/mp3 quickly; PyAV (FFmpeg) reads everything else (m4a, video
soundtracks). Every failure becomes an AudioError whose message names the cause in one line.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

SAMPLE_RATE = 16000
MIN_DURATION = 0.3  # seconds; shorter input holds no annotatable speech
AUDIO_EXTENSIONS = (".wav", ".flac", ".mp3", ".ogg", ".oga", ".opus", ".m4a", ".aac", ".wma", ".mp4", ".mkv", ".webm", ".mov")


class AudioError(Exception):
    """Input audio that cannot be annotated; the message is one line naming the cause."""


@dataclass
class Audio:
    """Mono float32 samples at SAMPLE_RATE."""

    samples: np.ndarray
    sample_rate: int
    path: str
    original_sample_rate: int
    original_channels: int

    @property
    def duration(self) -> float:
        return len(self.samples) / self.sample_rate

    def span(self, start: float, end: float) -> np.ndarray:
        a = max(0, int(round(start * self.sample_rate)))
        b = min(len(self.samples), int(round(end * self.sample_rate)))
        return self.samples[a:b]


def _read_soundfile(path: Path) -> tuple[np.ndarray, int]:
    import soundfile as sf

    data, sr = sf.read(str(path), dtype="float32", always_2d=True)
    return data, sr


def _read_av(path: Path) -> tuple[np.ndarray, int]:
    import av

    try:
        container = av.open(str(path))
    except av.error.InvalidDataError as exc:  # type: ignore[attr-defined]
        raise AudioError("not an audio file (no decodable audio stream)") from exc
    with container:
        streams = [s for s in container.streams if s.type == "audio"]
        if not streams:
            raise AudioError("the file has no audio stream")
        stream = streams[0]
        sr = stream.codec_context.sample_rate or stream.rate
        chunks = []
        resampler = av.AudioResampler(format="fltp")
        try:
            for frame in container.decode(stream):
                for f in resampler.resample(frame):
                    chunks.append(f.to_ndarray())
        except av.error.FFmpegError as exc:  # type: ignore[attr-defined]
            if not chunks:
                raise AudioError(f"audio stream cannot be decoded ({exc.__class__.__name__})") from exc
            raise AudioError("audio stream is truncated or corrupt") from exc
    if not chunks:
        return np.zeros((0, 1), dtype=np.float32), int(sr or SAMPLE_RATE)
    data = np.concatenate(chunks, axis=1).T.astype(np.float32)
    return data, int(sr)


def _decode(path: Path) -> tuple[np.ndarray, int]:
    import soundfile as sf

    try:
        return _read_soundfile(path)
    except sf.LibsndfileError as exc:
        message = str(exc).lower()
        if path.suffix.lower() == ".wav" and ("unspecified internal error" in message or "truncat" in message):
            raise AudioError("wav file is truncated or corrupt") from exc
    except (RuntimeError, ValueError):
        pass
    try:
        return _read_av(path)
    except AudioError:
        raise
    except Exception as exc:  # PyAV raises many error classes; all mean "cannot decode"
        raise AudioError(f"not a readable audio file ({exc.__class__.__name__}: {str(exc).splitlines()[0][:80]})") from exc


def resample(samples: np.ndarray, sr: int, target: int = SAMPLE_RATE) -> np.ndarray:
    if sr == target:
        return samples.astype(np.float32, copy=False)
    import soxr

    return soxr.resample(samples, sr, target, quality="HQ").astype(np.float32)


def load_audio(path: str | Path, *, min_duration: float = MIN_DURATION) -> Audio:
    """Load any common audio file as 16 kHz mono float32, or raise AudioError."""
    p = Path(path)
    if not p.exists():
        raise AudioError("file does not exist")
    if p.is_dir():
        raise AudioError("is a directory, not an audio file")
    if p.stat().st_size == 0:
        raise AudioError("file is empty (0 bytes)")
    data, sr = _decode(p)
    return audio_from_array(data, sr, str(p), min_duration=min_duration)


def audio_from_array(data: np.ndarray, sr: int, name: str, *, min_duration: float = MIN_DURATION) -> Audio:
    """Validate decoded (frames, channels) samples and make them 16 kHz mono, or raise AudioError."""
    data = np.asarray(data, dtype=np.float32)
    if data.ndim == 1:
        data = data[:, None]
    if data.size == 0 or data.shape[0] == 0:
        raise AudioError("audio has zero length")
    if not np.all(np.isfinite(data)):
        bad = int((~np.isfinite(data)).sum())
        raise AudioError(f"audio contains {bad} NaN/Inf samples")
    channels = data.shape[1]
    mono = data.mean(axis=1) if channels > 1 else data[:, 0]
    duration = len(mono) / sr
    if duration < min_duration:
        raise AudioError(f"audio is too short to annotate ({duration:.2f} s < {min_duration} s)")
    if float(np.max(np.abs(mono))) == 0.0:
        raise AudioError("audio is digital silence")
    samples = resample(mono, sr)
    # Guard against clipping introduced by resampling overshoot.
    np.clip(samples, -1.0, 1.0, out=samples)
    return Audio(samples=samples, sample_rate=SAMPLE_RATE, path=name, original_sample_rate=sr, original_channels=channels)


def fingerprint(audio: Audio) -> str:
    """Content hash of the decoded audio (stable across containers of the same samples)."""
    h = hashlib.sha1()
    h.update(np.ascontiguousarray(audio.samples).tobytes())
    return h.hexdigest()[:16]


def find_audio_files(paths: list[str | Path]) -> list[Path]:
    """Expand files and folders (recursively) into a sorted list of audio files."""
    out: list[Path] = []
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            out.extend(sorted(q for q in p.rglob("*") if q.is_file() and q.suffix.lower() in AUDIO_EXTENSIONS))
        else:
            out.append(p)
    return out
