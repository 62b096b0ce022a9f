"""Does enhancement make the acoustic statistics closer to the clean truth, and from which SNR on not?

    PYTHONPATH=src nice -n 10 .venv/bin/python benchmarks/enhance_gate_bench.py

Real voices (the five LibriVox clips, four 8 s slices of the Mandarin lecture) with pink or
white noise mixed at a known SNR. Truth: the statistics of the clean clip. For each SNR the
mean absolute error of the statistics computed on the noisy original and on the noisy clip
after DeepFilterNet3 is printed, with the gate's estimate of the SNR (speech_snr_db on the
original), so the gate threshold (PriorsSettings.enhance_gate_snr_db) can be read off.
"""

from __future__ import annotations

import sys
import warnings
from collections import defaultdict
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent / "src"), str(HERE)]
warnings.simplefilter("ignore")

import speed_recordings as R  # noqa: E402
from timeline_recordings import add_noise, librivox_clips  # noqa: E402

from speechannotator.audio import Audio  # noqa: E402
from speechannotator.enhance import Enhancer  # noqa: E402
from speechannotator.priors.acoustic import segment_stats  # noqa: E402
from speechannotator.priors.spans import speech_snr_db  # noqa: E402

SR = 16000
STATS = {  # name: (unit, error function)
    "pitch.median_hz": ("st", lambda a, b: abs(12 * np.log2(a / b))),
    "pitch.std_semitones": ("st", lambda a, b: abs(a - b)),
    "loudness.lufs": ("dB", lambda a, b: abs(a - b)),
    "energy.rms_db": ("dB", lambda a, b: abs(a - b)),
    "pause.ratio": ("", lambda a, b: abs(a - b)),
    "rate.units_per_s": ("%", lambda a, b: 100 * abs(a / b - 1)),
    "voice.hnr_db": ("dB", lambda a, b: abs(a - b)),
}


def clips() -> list[tuple[np.ndarray, str, str]]:
    out = [(x, t, "en") for x, t in librivox_clips()]
    zh = R.mandarin_lecture()
    out += [(zh[int(a * SR) : int((a + 8) * SR)], "一" * 40, "zh") for a in (2.0, 20.0, 38.0, 56.0)]
    return out


def stats(x: np.ndarray, enhanced: np.ndarray, text: str, lang: str) -> dict:
    st, _ = segment_stats(enhanced, x, text, lang, praat=False)
    return st.values


def main() -> None:
    enhancer = Enhancer()
    errors: dict[tuple[str, int, str], list[float]] = defaultdict(list)
    gate_est: dict[tuple[str, int], list[float]] = defaultdict(list)
    for i, (x, text, lang) in enumerate(clips()):
        pad = np.zeros(SR // 2, np.float32)
        clean = np.concatenate([pad, x, pad])
        truth = stats(clean, clean, text, lang)
        for kind in ("pink", "white"):
            for snr in (5, 10, 20, 30, 40):
                noisy = add_noise(clean, kind, snr, seed=i)
                enh = enhancer(Audio(noisy, SR, "<b>", SR, 1))
                gate_est[(kind, snr)].append(speech_snr_db(noisy))
                for path, val in (
                    ("original", stats(noisy, noisy, text, lang)),
                    ("enhanced", stats(noisy, enh, text, lang)),
                ):
                    for name, (_, err) in STATS.items():
                        a, b = val.get(name), truth.get(name)
                        if isinstance(a, float) and isinstance(b, float) and b:
                            errors[(name, snr, path + ":" + kind)].append(err(a, b))
    print(f"{'statistic':<22}{'SNR':>5}  {'pink orig':>10}{'pink enh':>10}{'white orig':>11}{'white enh':>10}")
    for name, (unit, _) in STATS.items():
        for snr in (5, 10, 20, 30, 40):
            row = [
                np.mean(errors[(name, snr, f"{p}:{k}")]) if errors[(name, snr, f"{p}:{k}")] else float("nan")
                for k in ("pink", "white")
                for p in ("original", "enhanced")
            ]
            print(
                f"{name + ' (' + unit + ')':<22}{snr:>5}  {row[0]:>10.3f}{row[1]:>10.3f}{row[2]:>11.3f}{row[3]:>10.3f}"
            )
    print("\ngate estimate of the SNR (speech_snr_db on the noisy original), mean [min, max]:")
    for (kind, snr), v in sorted(gate_est.items()):
        print(f"  {kind:<6}{snr:>3} dB: {np.mean(v):6.1f} [{np.min(v):6.1f}, {np.max(v):6.1f}]")


if __name__ == "__main__":
    main()
