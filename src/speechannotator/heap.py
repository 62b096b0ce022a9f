"""Give freed model activations back to the system between stages (glibc only).

Each stage's models allocate large short-lived buffers (CAM++ window batches, segmentation
chunks, DeepFilterNet and DNSMOS frames); once glibc has freed one mmapped buffer it serves later
ones of that size from the heap, and what the heap frees in its middle stays resident. The next
stage's models then grow the process on top of it. `release()` (malloc_trim) returns those free
pages at a stage boundary; the numbers computed are unchanged, only where buffers live. Fixing
glibc's mmap threshold instead (every large buffer mapped and unmapped) cost more system time in
page faults than it saved (docs/speed.md).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import sys
from functools import cache
from typing import Any


@cache
def _malloc_trim() -> Any:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        trim = libc.malloc_trim
    except (OSError, AttributeError):  # not glibc (musl has no malloc_trim)
        return None
    trim.argtypes, trim.restype = [ctypes.c_size_t], ctypes.c_int
    return trim


def release() -> bool:
    """Return the heap's free pages to the system; False where there is no glibc."""
    trim = _malloc_trim()
    return bool(trim(0)) if trim is not None else False
