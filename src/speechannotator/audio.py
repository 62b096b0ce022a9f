"""Decode, down-mix, resample and validate input audio.

soundfile reads wav/flac/ogg/mp3 quickly; PyAV (FFmpeg) reads everything else (m4a, video
soundtracks). Every failure becomes an AudioError whose message names the cause in one line.
"""

from __future__ import annotations

import errno
import hashlib
import logging
import os
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np

log = logging.getLogger("speechannotator.audio")

SAMPLE_RATE = 16000
MIN_DURATION = 0.3  # seconds; shorter input holds no annotatable speech
# Headers claiming rates outside this range are corrupt (a 1 Hz header turns 1 MB into hours).
MIN_SAMPLE_RATE, MAX_SAMPLE_RATE = 4000, 768000
DC_OFFSET_MIN = 1e-3  # a channel mean above this (full scale 1) is a DC offset, removed at load
# A down-mix this much quieter than its loudest channel means the channels cancel (phase-inverted
# stereo); averaging would erase the speech, so the loudest channel is used alone.
CANCELLATION_RATIO = 0.1
AUDIO_EXTENSIONS = (
    ".wav",
    ".flac",
    ".mp3",
    ".ogg",
    ".oga",
    ".opus",
    ".m4a",
    ".aac",
    ".wma",
    ".mp4",
    ".mkv",
    ".webm",
    ".mov",
)


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


def check_sample_rate(sr: int | float | None) -> None:
    if not sr or not MIN_SAMPLE_RATE <= sr <= MAX_SAMPLE_RATE:
        raise AudioError(
            f"implausible sample rate {sr} Hz in the header "
            f"(expected {MIN_SAMPLE_RATE}-{MAX_SAMPLE_RATE} Hz); the file is corrupt"
        )


@contextmanager
def _quiet_native_stderr() -> Iterator[None]:
    """Decoder libraries (libmpg123 inside libsndfile) write notes straight to file descriptor 2;
    keep them off the user's terminal and in the debug log."""
    try:
        saved = os.dup(2)
    except OSError:  # no stderr to protect
        yield
        return
    with tempfile.TemporaryFile() as sink:
        os.dup2(sink.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            sink.seek(0)
            noise = sink.read(4000).decode("utf-8", "replace").strip()
            if noise:
                log.debug("decoder messages: %s", noise)


def _read_soundfile(path: Path) -> tuple[np.ndarray, int]:
    import soundfile as sf

    with _quiet_native_stderr():
        check_sample_rate(sf.info(str(path)).samplerate)
        data, sr = sf.read(str(path), dtype="float32", always_2d=True)
    return data, sr


def _read_av(path: Path) -> tuple[np.ndarray, int]:
    import av

    try:
        container = av.open(str(path))
    except (av.error.InvalidDataError, EOFError) as exc:  # type: ignore[attr-defined]
        raise AudioError("not an audio file (no decodable audio stream)") from exc
    with container:
        streams = [s for s in container.streams if s.type == "audio"]
        if not streams:
            raise AudioError("the file has no audio stream")
        stream = streams[0]
        sr = stream.codec_context.sample_rate or stream.rate
        check_sample_rate(sr)
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
        raise AudioError(
            f"not a readable audio file ({exc.__class__.__name__}: {str(exc).splitlines()[0][:80]})"
        ) from exc


def resample(samples: np.ndarray, sr: int, target: int = SAMPLE_RATE) -> np.ndarray:
    if sr == target:
        return samples.astype(np.float32, copy=False)
    import soxr

    return soxr.resample(samples, sr, target, quality="HQ").astype(np.float32)


def check_audio_file(p: Path) -> None:
    """A readable, non-empty regular file, or the reason it is not."""
    try:
        st = p.stat()
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise AudioError("symbolic link loop") from None
        if p.is_symlink():
            raise AudioError(f"broken symbolic link (to {os.readlink(p)})") from None
        if exc.errno == errno.ENOENT:
            raise AudioError("file does not exist") from None
        raise AudioError(f"cannot access the file ({exc.strerror})") from None
    if stat.S_ISDIR(st.st_mode):
        raise AudioError("is a directory, not an audio file")
    if not stat.S_ISREG(st.st_mode):
        raise AudioError("not a regular file (a pipe, device or socket)")
    if st.st_size == 0:
        raise AudioError("file is empty (0 bytes)")
    try:
        with open(p, "rb") as f:
            f.read(1)
    except OSError as exc:
        raise AudioError(f"cannot read the file ({exc.strerror})") from None


def remove_dc(data: np.ndarray) -> np.ndarray:
    """Subtract each channel's mean when it is a real offset (it skews VAD energy and the priors)."""
    offset = data.mean(axis=0, dtype=np.float64)
    if np.any(np.abs(offset) > DC_OFFSET_MIN):
        return (data - offset.astype(np.float32)).astype(np.float32, copy=False)
    return data


def downmix(data: np.ndarray) -> np.ndarray:
    """Mono: the channel mean, or the loudest channel when the channels cancel each other."""
    if data.shape[1] == 1:
        return data[:, 0]
    mono = data.mean(axis=1)
    channel_power = np.einsum("ij,ij->j", data, data, dtype=np.float64)
    mono_power = float(np.dot(mono.astype(np.float64), mono))
    # the first channel about as loud as the loudest (left, for L / -L)
    loudest = int(np.argmax(channel_power >= 0.9 * channel_power.max()))
    if channel_power[loudest] > 0 and mono_power < (CANCELLATION_RATIO**2) * channel_power[loudest]:
        log.info("channels cancel when mixed (phase-inverted?); using channel %d alone", loudest + 1)
        return np.ascontiguousarray(data[:, loudest])
    return mono


def load_audio(path: str | Path, *, min_duration: float = MIN_DURATION) -> Audio:
    """Load any common audio file as 16 kHz mono float32, or raise AudioError."""
    p = Path(path)
    check_audio_file(p)
    data, sr = _decode(p)
    return audio_from_array(data, sr, str(p), min_duration=min_duration)


def audio_from_array(data: np.ndarray, sr: int, name: str, *, min_duration: float = MIN_DURATION) -> Audio:
    """Validate decoded (frames, channels) samples and make them 16 kHz mono, or raise AudioError."""
    check_sample_rate(sr)
    data = np.asarray(data, dtype=np.float32)
    if data.ndim == 1:
        data = data[:, None]
    if data.size == 0 or data.shape[0] == 0:
        raise AudioError("audio has zero length")
    if not np.all(np.isfinite(data)):
        bad = int((~np.isfinite(data)).sum())
        raise AudioError(f"audio contains {bad} NaN/Inf samples")
    channels = data.shape[1]
    mono = downmix(remove_dc(data))
    duration = len(mono) / sr
    if duration < min_duration:
        raise AudioError(f"audio is too short to annotate ({duration:.2f} s < {min_duration} s)")
    if float(np.max(np.abs(mono))) == 0.0:
        raise AudioError("audio is digital silence")
    samples = resample(mono, sr)
    # Guard against clipping introduced by resampling overshoot.
    np.clip(samples, -1.0, 1.0, out=samples)
    return Audio(
        samples=samples, sample_rate=SAMPLE_RATE, path=name, original_sample_rate=sr, original_channels=channels
    )


def fingerprint(audio: Audio) -> str:
    """Content hash of the decoded audio (stable across containers of the same samples)."""
    h = hashlib.sha1()
    h.update(np.ascontiguousarray(audio.samples).tobytes())
    return h.hexdigest()[:16]


def find_audio_files(paths: list[str | Path]) -> list[Path]:
    """Expand files and folders (recursively) into a sorted list of audio files."""
    out: list[Path] = []
    seen: set[str] = set()
    for raw in paths:
        p = Path(raw)
        found = [p]
        if p.is_dir():
            found = sorted(q for q in p.rglob("*") if q.is_file() and q.suffix.lower() in AUDIO_EXTENSIONS)
        for q in found:
            real = os.path.realpath(q)
            if real not in seen:  # the same file named twice (or through a link) is annotated once
                seen.add(real)
                out.append(q)
    return out
