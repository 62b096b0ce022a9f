"""heap.release returns the heap's free pages (glibc): freed buffers between live ones stay
resident after free() and leave with malloc_trim."""

import sys

import numpy as np
import pytest

from speechannotator import heap


def _rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096 / 2**20


@pytest.mark.skipif(heap._malloc_trim() is None, reason="no glibc malloc_trim")
def test_release_returns_freed_pages_between_live_buffers():
    assert sys.platform.startswith("linux")
    # 100 KB buffers come from the heap (below glibc's 128 KiB mmap threshold); keeping every
    # tenth one alive pins the heap's top, so free() alone cannot give the rest back.
    bufs = [np.ones(100_000 // 8) for _ in range(2000)]
    keep = bufs[::10]
    del bufs
    before = _rss_mb()
    assert heap.release() in (True, False)
    after = _rss_mb()
    assert before - after > 100, (before, after)
    assert all(b[0] == 1.0 for b in keep)
