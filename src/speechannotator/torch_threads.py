"""Torch's intra-op thread count, fixed for the length of a forward pass.

Torch keeps one process-wide count and other code moves it (in one process the count read 2,
then 1 after CAM++ was loaded, then 2 again after Whisper was), and the count changes how a
network's sums are split: CAM++ vectors differed in their last digits, so a recording's output
depended on what the process had run before it. Every network run here sets its own count.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

SHIPPED_THREADS = 1
"""The count of the small shipped networks (CAM++, segmentation-3.0, Distill-MOS): one thread
gives the same sums in the same order on every machine, and the other core is left to ASR."""


def plugin_threads() -> int:
    """The count for a heavy plug-in model (a wav2vec2 age model, a text encoder): every core
    this process may use, a number that does not change while it runs, unlike torch's own."""
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)


@contextmanager
def torch_threads(n: int) -> Iterator[None]:
    """Run the block with torch's intra-op thread count at `n`, then restore the count."""
    import torch

    before = torch.get_num_threads()
    if before != n:
        torch.set_num_threads(n)
    try:
        yield
    finally:
        if torch.get_num_threads() != before:
            torch.set_num_threads(before)
