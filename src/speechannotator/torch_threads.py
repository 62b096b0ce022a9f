"""Torch's intra-op thread count, fixed for the length of a forward pass.

Torch keeps one process-wide count and other code moves it (in one process the count read 2,
then 1 after CAM++ was loaded, then 2 again after Whisper was), and the count changes how a
network's sums are split: CAM++ vectors differed in their last digits, so a recording's output
depended on what the process had run before it. Every network run here sets its own count.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager


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
