"""The within-speaker whitener (frontend/within_speaker.py) and its second opinion on splits."""

import numpy as np
import pytest

from speechannotator.frontend.clustering import _split_mixed
from speechannotator.frontend.within_speaker import ASSET, Whitener, fit_within_speaker, load_whitener

D = 8


def _voices(rng, offsets, n, wide=0.15, narrow=0.02):
    """Windows of voices that share direction 0; each voice sits at its offset. A voice varies
    widely along dims 2-4 (its words, its channel) and little along the others."""
    scale = np.full(D, narrow)
    scale[2:5] = wide
    rows, names = [], []
    for name, off in offsets.items():
        base = np.zeros(D)
        base[0] = 1.0
        base += off
        rows.append(base + rng.standard_normal((n, D)) * scale)
        names += [name] * n
    return np.vstack(rows), np.array(names)


def _whitener(rng) -> Whitener:
    # Learned on other voices, which differ from each other along dims 5-7 only.
    offsets = {f"t{i}": np.r_[np.zeros(5), rng.standard_normal(3) * 0.3] for i in range(6)}
    x, names = _voices(rng, offsets, 60)
    mean, within = fit_within_speaker(x, names)
    return Whitener.from_covariance(mean, within, 0.3)


def test_whitened_second_opinion_splits_two_voices_alike_in_raw_cosine():
    rng = np.random.default_rng(0)
    e1 = np.eye(D)[1]
    x, names = _voices(rng, {"a": 0.3 * e1, "b": -0.3 * e1}, 20)
    x = x / np.linalg.norm(x, axis=1, keepdims=True)
    raw = [x[names == v].mean(axis=0) for v in "ab"]
    assert 0.8 < raw[0] @ raw[1] / np.linalg.norm(raw[0]) / np.linalg.norm(raw[1]) < 0.85  # the hard band
    joined = np.zeros(len(x), int)
    alone = _split_mixed(x, joined, 4, 0.8, 4, 1500)
    assert alone.max() == 0  # the raw rule keeps them one speaker
    white = _whitener(rng)
    split = _split_mixed(x, joined, 4, 0.8, 4, 1500, white(x), 0.55)
    assert split.max() == 1
    assert all(len(set(split[names == v])) == 1 for v in "ab")  # and along the two voices


def test_shipped_covariance_loads_and_is_a_covariance():
    w = load_whitener(0.3)
    assert w.mean.shape == (256,) and w.transform.shape == (256, 256)
    assert np.allclose(w.transform, w.transform.T, atol=1e-6)
    assert np.all(np.linalg.eigvalsh(w.transform) > 0)
    assert ASSET.stat().st_size < 1_000_000


def test_damaged_asset_is_one_clear_error(tmp_path):
    bad = tmp_path / "within.npz"
    bad.write_bytes(b"not an npz")
    with pytest.raises(RuntimeError, match="within.npz: cannot read"):
        load_whitener(0.3, bad)


def test_doctests():
    import doctest

    from speechannotator.frontend import within_speaker

    assert doctest.testmod(within_speaker).failed == 0
