from __future__ import annotations

import numpy as np
import pytest

from speechannotator.schema import OUTPUT_KEYS


class CharBagEncoder:
    """Bag-of-characters vectors: cosines are hand-computable (e.g. "ab" vs "ac" = 1/2)."""

    name = "char-bag (test)"

    def __init__(self):
        self.calls = 0

    def encode(self, texts):
        self.calls += 1
        alphabet = sorted({ch for t in texts for ch in t}) or ["_"]
        m = np.array([[t.count(ch) for ch in alphabet] for t in texts], dtype=np.float32)
        n = np.linalg.norm(m, axis=1, keepdims=True)
        return m / np.where(n > 0, n, 1)


@pytest.fixture
def char_bag():
    return CharBagEncoder()


@pytest.fixture(scope="session")
def use_encoder():
    from speechannotator.evaluation.encoders import UseEncoder

    return UseEncoder()


def record(start: int, end: int, speaker: str = "spk_01", text: str = "x", **fields) -> dict:
    """A full output-format record; unspecified fields are blank (not annotated)."""
    base = dict.fromkeys(OUTPUT_KEYS, "")
    base.update(
        speaker_id=speaker,
        speaker_name="Speaker1_young adult",
        text=text,
        text_and_paralanguage=text,
        start_time=start,
        end_time=end,
        language="en",
    )
    base.update(fields)
    return base
