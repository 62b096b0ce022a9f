"""Speech quality (MOS 1-5) per segment from Distill-MOS (the ``distillmos`` wheel, MIT).

Distill-MOS v7 is a small convolutional transformer distilled from XLS-R SQA; its weights
(17 MB) ship in the wheel and its layers come from ``xls-r-sqa`` (code only). The package
imports torchaudio at the top for its command-line file reader only; torchaudio is not
installed here, so ``_model`` imports it behind a local placeholder module that fails on
any use (the waveform path never touches it) and removes the placeholder afterwards.

Cost: one 7.68 s window takes about 0.2 s of CPU on one thread, so segments are scored on a
budget of windows (a count fixed by the audio, never elapsed time): evenly spaced segments,
at least one per recording. A segment shorter than the window is repeated to fill it (padding
with silence drags short clean clips down: 3.4 against 3.9 on a 3 s LibriVox line); the
model normalizes the peak itself, so the score does not depend on the level.
"""

from __future__ import annotations

import logging
import math
import sys
import types
from functools import lru_cache

import numpy as np

from ..torch_threads import SHIPPED_THREADS, torch_threads

log = logging.getLogger(__name__)

SR = 16000
SEQ_LEN = 122880  # the model's window (7.68 s)
HOP_LEN = 16000  # its hop between windows of a longer input


def windows_of(n_samples: int) -> int:
    """Model passes a segment of ``n_samples`` costs (the model's own segmenting rule)."""
    return int(math.ceil(max(0, n_samples - SEQ_LEN) / HOP_LEN)) + 1


@lru_cache(maxsize=1)
def _model():
    import torch

    placed = False
    if "torchaudio" not in sys.modules:
        try:
            import torchaudio  # noqa: F401
        except Exception:
            shim = types.ModuleType("torchaudio")

            def _missing(name: str):
                raise ImportError(f"torchaudio.{name}: torchaudio is not installed (distillmos file reader)")

            shim.__getattr__ = _missing
            sys.modules["torchaudio"] = shim
            placed = True
    try:
        from distillmos import sqa
    finally:
        if placed:
            del sys.modules["torchaudio"]
    model = sqa.ConvTransformerSQAModel(load_weights=False)  # its own loader prints to stdout
    chkpt = torch.load(sqa.DEFAULT_WEIGHTS_CHKPT, map_location="cpu", weights_only=True)
    model.load_state_dict(chkpt["model"])
    model.eval()
    return model


def mos(x: np.ndarray) -> float:
    """Distill-MOS of one stretch of 16 kHz audio (repeated to the window when shorter)."""
    import torch

    x = np.asarray(x, np.float32)
    if len(x) < SEQ_LEN:
        x = np.tile(x, int(math.ceil(SEQ_LEN / len(x))))[:SEQ_LEN]
    model = _model()
    with torch.no_grad(), torch_threads(SHIPPED_THREADS):
        return float(model(torch.from_numpy(np.ascontiguousarray(x))[None]).item())


class MosBudget:
    """Scores segments while windows are left: ``rtf * duration / window_cost_s`` (at least one)."""

    def __init__(self, duration_s: float, rtf: float, window_cost_s: float) -> None:
        self.windows_left = max(1, int(rtf * duration_s / window_cost_s))
        self._failed = False

    def score(self, x: np.ndarray) -> float | None:
        """MOS of a segment; a segment longer than the budget allows is scored on its centre."""
        need = windows_of(len(x))
        if need > self.windows_left:
            mid = (len(x) - SEQ_LEN) // 2
            x, need = x[mid : mid + SEQ_LEN], 1
        if self._failed or len(x) < int(0.5 * SR) or need > self.windows_left:
            return None
        try:
            value = mos(x)
        except Exception as exc:
            log.warning("Distill-MOS unavailable (%s: %s); no MOS evidence", exc.__class__.__name__, exc)
            self._failed = True
            return None
        self.windows_left -= need
        return value


def pick(durations: list[float], windows: int) -> list[int]:
    """Indices of about ``windows`` evenly spaced segments (all when the budget covers them)."""
    n = len(durations)
    if n == 0:
        return []
    step = max(1.0, n / max(1, windows))
    return sorted({int(i) for i in np.arange(0, n, step)})
