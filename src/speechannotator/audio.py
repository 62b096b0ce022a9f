"""Decode, down-mix, resample and validate input audio.

soundfile reads wav/flac/ogg/mp3 quickly; PyAV (FFmpeg) reads everything else (m4a, video
soundtracks). Every failure becomes an AudioError whose message names the cause in one line.
"""

from __future__ import annotations

import errno
import hashlib
import logging
import os
import re
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
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
# Decoded audio this much shorter than its header declares is a truncated file (worth a warning).
TRUNCATED_FRACTION = 0.98
# File signatures of containers: a file that starts with one yet cannot be parsed has a corrupt header.
AUDIO_SIGNATURES = (
    (b"RIFF", "WAV"),
    (b"RF64", "WAV"),
    (b"FORM", "AIFF"),
    (b"fLaC", "FLAC"),
    (b"OggS", "Ogg"),
    (b"ID3", "MP3"),
)
# Bytes per sample of uncompressed subtypes, and what a header plus metadata may take besides samples.
PCM_BYTES = {"PCM_U8": 1, "PCM_S8": 1, "PCM_16": 2, "PCM_24": 3, "PCM_32": 4, "FLOAT": 4, "DOUBLE": 8}
HEADER_SLACK_BYTES = 64 * 1024
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
    # What decoding noticed but could still read (a truncated file): shown to the user as warnings.
    notes: tuple[str, ...] = ()

    @property
    def duration(self) -> float:
        return len(self.samples) / self.sample_rate

    def sample_range(self, start: float, end: float) -> tuple[int, int]:
        """The samples [a, b) of the stretch start..end (seconds), rounded and within the recording."""
        a = max(0, int(round(start * self.sample_rate)))
        return a, min(len(self.samples), int(round(end * self.sample_rate)))

    def span(self, start: float, end: float) -> np.ndarray:
        a, b = self.sample_range(start, end)
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


# libsndfile's parse log: "data : 128000 (should be 63978)" names a chunk cut short; "*** ..." lines
# are chunks it could not parse (a corrupt header).
_SHOULD_BE = re.compile(r"^\s*data\s*:\s*(\d+)\s*\(should be (\d+)\)", re.MULTILINE)
_PARSER_ERRORS = re.compile(r"^\*\*\* (.+)$", re.MULTILINE)


@dataclass(frozen=True)
class _Decoded:
    data: np.ndarray  # (frames, channels)
    sr: int
    declared_s: float | None = None  # the duration the header states, where it states one
    header_errors: tuple[str, ...] = ()  # what the container parser could not make sense of
    hidden_s: float = 0.0  # uncompressed audio the file's bytes could hold beyond what the header declares

    def corrupt_header(self, min_duration: float) -> bool:
        """A file too short to annotate whose bytes say otherwise: its header hides the data."""
        got = self.data.shape[0] / self.sr
        return got < min_duration and (bool(self.header_errors) or self.hidden_s >= min_duration)

    @property
    def notes(self) -> tuple[str, ...]:
        got = self.data.shape[0] / self.sr
        if self.declared_s and got < TRUNCATED_FRACTION * self.declared_s:
            return (f"the file is truncated: decoded {got:.2f} s of the {self.declared_s:.2f} s its header declares",)
        return ()


def _read_soundfile(path: Path) -> _Decoded:
    import soundfile as sf

    with _quiet_native_stderr():
        info = sf.info(str(path))
        check_sample_rate(info.samplerate)
        data, sr = sf.read(str(path), dtype="float32", always_2d=True)
    declared = info.frames / info.samplerate if info.frames > 0 else None
    extra = info.extra_info or ""
    cut = _SHOULD_BE.search(extra)
    if cut and int(cut.group(1)) > int(cut.group(2)) and info.format in ("WAV", "WAVEX", "RF64", "AIFF"):
        # The data chunk is shorter than its header says: libsndfile reads what is there.
        declared = int(cut.group(1)) / max(1, int(cut.group(2))) * data.shape[0] / sr
    hidden_s = 0.0
    width = PCM_BYTES.get(info.subtype)
    if width:  # uncompressed: the bytes not covered by the declared frames, as seconds of audio
        unexplained = path.stat().st_size - info.frames * info.channels * width - HEADER_SLACK_BYTES
        hidden_s = max(0.0, unexplained / (info.samplerate * info.channels * width))
    errors = tuple(m.strip() for m in _PARSER_ERRORS.findall(extra))
    return _Decoded(data, sr, declared, errors, hidden_s)


def _read_av(path: Path) -> _Decoded:
    import av

    try:
        container = av.open(str(path), mode="r")
    except (av.error.InvalidDataError, EOFError) as exc:
        raise AudioError("not an audio file (no decodable audio stream)") from exc
    with container:
        streams = container.streams.audio
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
        except av.error.FFmpegError as exc:
            if not chunks:
                raise AudioError(f"audio stream cannot be decoded ({exc.__class__.__name__})") from exc
            raise AudioError("audio stream is truncated or corrupt") from exc
    if not chunks:
        return _Decoded(np.zeros((0, 1), dtype=np.float32), int(sr or SAMPLE_RATE))
    data = np.concatenate(chunks, axis=1).T.astype(np.float32)
    return _Decoded(data, int(sr))


def _audio_magic(path: Path) -> str | None:
    """The container a file's first bytes announce (None: no known signature)."""
    try:
        with open(path, "rb") as f:
            head = f.read(12)
    except OSError:
        return None
    for sig, name in AUDIO_SIGNATURES:
        if head.startswith(sig) or (name == "WAV" and head[8:12] == b"WAVE"):
            return name
    return None


def _decode_checked(path: Path) -> _Decoded:
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
        magic = _audio_magic(path)
        if magic is not None:  # it says it is audio, yet neither decoder can parse it
            raise AudioError(f"corrupt {magic} header (the file starts as {magic} but cannot be parsed)") from exc
        raise AudioError(
            f"not a readable audio file ({exc.__class__.__name__}: {str(exc).splitlines()[0][:80]})"
        ) from exc


def _decode(path: Path) -> tuple[np.ndarray, int]:
    d = _decode_checked(path)
    return d.data, d.sr


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
    d = _decode_checked(p)
    got = d.data.shape[0] / d.sr
    if d.corrupt_header(min_duration):
        # Not a short recording: its header hides the data (a wrong chunk size, a garbled marker).
        why = f" ({d.header_errors[0][:80]})" if d.header_errors else ""
        raise AudioError(f"corrupt header: it declares {got:.2f} s of audio in a {p.stat().st_size}-byte file{why}")
    audio = audio_from_array(d.data, d.sr, str(p), min_duration=min_duration)
    for note in d.notes:
        log.info("%s: %s", p, note)
    return replace(audio, notes=d.notes) if d.notes else audio


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
