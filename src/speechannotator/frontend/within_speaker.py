"""How one voice's Resemblyzer d-vectors vary, learned on real voices the benchmarks never use.

The asset `within_speaker.npz` holds the mean d-vector (`mean`, 256) and the pooled within-voice
covariance (`within`, 256 x 256) of 7 570 windows of six recorded voices from Debian's Asterisk
prompt packages in other languages (fr_CA June, it_IT Carlo and Menardi, ru_RU IvrvoiceRU, es_CO
July, fr Armelle: five women, one man; CC-BY-SA 3.0 / GPL prompt sets), each played through
clean, telephone, room, pink-noise (5-20 dB) and music-bed (10 / 15 dB) channels, every window
minus its voice's mean over all channels. `benchmarks/wccn_train.py` builds the windows and
`benchmarks/wccn_supervised.py --write-asset` writes the file.

Whitening by that covariance (WCCN) turns down the directions in which one voice moves with its
words and its channel, so two voices that differ where a voice varies little point apart. Used
only as a second opinion on a proposed split (frontend/clustering.py, `split_whitened`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from .clustering import unit_rows

ASSET = Path(__file__).with_name("within_speaker.npz")


def fit_within_speaker(vectors: np.ndarray, voices: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(mean, within-voice covariance) of unit d-vectors; `voices` names each row's voice.

    >>> x = np.array([[1.0, 0.0], [1.0, 0.2], [0.0, 1.0], [0.2, 1.0]])
    >>> mean, w = fit_within_speaker(x, np.array(["a", "a", "b", "b"]))
    >>> bool(np.allclose(w, w.T)) and w.shape == (2, 2)
    True
    """
    x = unit_rows(vectors.astype(np.float64))
    d = x.copy()
    for v in np.unique(voices):
        d[voices == v] -= x[voices == v].mean(axis=0)
    return x.mean(axis=0), d.T @ d / len(d)


@dataclass(frozen=True)
class Whitener:
    """x -> unit((x - mean) @ transform), transform = (shrunk within)^-1/2."""

    mean: np.ndarray
    transform: np.ndarray

    def __call__(self, vectors: np.ndarray) -> np.ndarray:
        return unit_rows((unit_rows(vectors.astype(np.float64)) - self.mean) @ self.transform)

    @classmethod
    def from_covariance(cls, mean: np.ndarray, within: np.ndarray, shrink: float) -> Whitener:
        """`shrink` moves the covariance towards a scaled identity (0: as learned, 1: no whitening)."""
        w = (1 - shrink) * within + shrink * np.trace(within) / len(within) * np.eye(len(within))
        vals, vecs = np.linalg.eigh(w)
        return cls(mean, vecs @ np.diag(vals**-0.5) @ vecs.T)


@lru_cache(maxsize=4)
def load_whitener(shrink: float, path: Path = ASSET) -> Whitener:
    """The shipped within-speaker whitener (a missing or damaged asset is one error line)."""
    try:
        with np.load(path) as z:
            mean, within = z["mean"].astype(np.float64), z["within"].astype(np.float64)
    except (OSError, KeyError, ValueError) as e:
        raise RuntimeError(f"{path}: cannot read the within-speaker covariance ({e})") from e
    if within.shape != (len(mean), len(mean)):
        raise RuntimeError(f"{path}: within-speaker covariance of shape {within.shape} for a {len(mean)}-d mean")
    return Whitener.from_covariance(mean, within, shrink)
