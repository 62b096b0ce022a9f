"""Within-speaker covariance of Resemblyzer windows from real voices the benchmark never uses.

Training voices: Debian's Asterisk prompt packages in other languages, one recorded voice each,
not fetched by `scripts/fetch_real_voices.sh` (the experiment was not kept; docs/timeline.md):

    apt-get download asterisk-core-sounds-fr-wav asterisk-core-sounds-it-wav asterisk-core-sounds-ru-wav \
        asterisk-prompt-fr-armelle asterisk-prompt-es-co asterisk-prompt-it-menardi-wav
    for d in *.deb; do dpkg -x "$d" /tmp/wccn/root; done

fr_CA June, it_IT Carlo, ru_RU IvrvoiceRU, it_IT Menardi (wav, 8 kHz), Colombian Spanish July E.
Jimenez and French Armelle (raw GSM, read through sox). The Mexican Spanish set
(asterisk-core-sounds-es-wav) is left out: it is filed as `es_MX_f_Allison`, and Allison is a
benchmark voice. Each voice's prompts are played in "sessions" (one simulated recording each: 30
prompts in a row with 0.4-1.0 s pauses) through the benchmark's own channels (`real_voices`:
clean, telephone, a room per session, pink noise at 5-20 dB, a music bed at 10 / 15 dB) and cut
into the diarizer's windows by `embed_windows` (one region per prompt).

    PYTHONPATH=src:benchmarks nice -n 10 .venv/bin/python benchmarks/wccn_train.py --root /tmp/wccn/root \
        --out /tmp/wccn/train.npz
"""

from __future__ import annotations

import argparse
import subprocess
import tempfile
from pathlib import Path

import numpy as np
import real_voices as rv

from speechannotator.frontend.embeddings import embed_windows
from speechannotator.frontend.vad import SpeechRegion

VOICES = {
    "fr_june": "usr/share/asterisk/sounds/fr_CA_f_June",
    "it_carlo": "usr/share/asterisk/sounds/it_IT_m_Carlo",
    "ru_ivr": "usr/share/asterisk/sounds/ru_RU_f_IvrvoiceRU",
    "it_menardi": "usr/share/asterisk/sounds/it_IT_f_Menardi",
    "es_july": "usr/share/asterisk/sounds/es",
    "fr_armelle": "usr/share/asterisk/sounds/fr",
}
CHANNELS = ("clean", "telephone", "reverb", "pink5", "pink10", "pink15", "pink20", "music10", "music15")


def prompts(root: Path, voice: str) -> list[Path]:
    """The voice's speech files: no silence folder, beeps or tones."""
    d = root / VOICES[voice]
    files = sorted(p for p in d.rglob("*") if p.suffix in (".wav", ".gsm") and "silence" not in p.parts)
    return [p for p in files if not p.stem.startswith("beep") and "2tone" not in p.stem]


def read(path: Path) -> np.ndarray:
    if path.suffix == ".gsm":
        with tempfile.NamedTemporaryFile(suffix=".wav") as tmp:
            subprocess.run(["sox", "-t", "gsm", "-r", "8000", "-c", "1", str(path), tmp.name], check=True)
            return rv._trim(rv._read(Path(tmp.name)))
    return rv._trim(rv._read(path))


def session(rng: np.random.Generator, clips: list[np.ndarray], channel: str) -> tuple[np.ndarray, list[SpeechRegion]]:
    sr = rv.SR
    room = rv._room(rng, float(rng.uniform(0.3, 0.7))) if channel == "reverb" else None
    parts, regions, t = [np.zeros(int(0.5 * sr), np.float32)], [], int(0.5 * sr)
    for c in clips:
        x = c * float(10 ** (rng.uniform(-3, 3) / 20))
        if room is not None:
            from scipy.signal import fftconvolve

            x = fftconvolve(x, room)[: len(x) + int(0.3 * sr)].astype(np.float32)
        gap = np.zeros(int(rng.uniform(0.4, 1.0) * sr), np.float32)
        regions.append(SpeechRegion(t / sr, (t + len(c)) / sr))
        parts += [x, gap]
        t += len(x) + len(gap)
    mix = np.concatenate(parts)
    n = len(mix)
    if channel.startswith("music"):
        mix = mix + rv._at_snr(mix, rv._music(rng, n), float(channel[5:]))
    elif channel.startswith("pink"):
        mix = mix + rv._at_snr(mix, rv._pink(rng, n), float(channel[4:]))
    elif channel == "telephone":
        mix = rv._telephone(mix + rv._at_snr(mix, rv._pink(rng, n), 30.0))
    peak = float(np.abs(mix).max()) or 1.0
    return (mix / peak * 0.9).astype(np.float32), regions


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", type=Path, required=True, help="where the packages were unpacked (dpkg -x)")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--per-session", type=int, default=30)
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    vec, voice, sess, utt = [], [], [], []
    for vi, v in enumerate(VOICES):
        clips = [c for c in (read(p) for p in prompts(args.root, v)) if len(c) >= 1.2 * rv.SR]
        print(f"{v}: {len(clips)} prompts of 1.2 s or more", flush=True)
        order = rng.permutation(len(clips))
        for ci, ch in enumerate(CHANNELS):
            pick = [clips[i] for i in np.roll(order, -ci * args.per_session)[: args.per_session]]
            mix, regions = session(rng, pick, ch)
            w = embed_windows(mix, rv.SR, regions, hop_s=0.75)
            vec.append(w.vectors)
            voice += [vi] * len(w)
            sess += [vi * len(CHANNELS) + ci] * len(w)
            utt += list((vi * len(CHANNELS) + ci) * 1000 + np.asarray(w.region_index))
            print(f"  {ch}: {len(w)} windows", flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    np.savez(
        args.out,
        vectors=np.concatenate(vec).astype(np.float32),
        voice=np.array(voice),
        session=np.array(sess),
        utterance=np.array(utt),
        voices=np.array(list(VOICES)),
        channels=np.array(CHANNELS),
    )


if __name__ == "__main__":
    main()
