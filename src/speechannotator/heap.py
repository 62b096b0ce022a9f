"""Keep model buffers out of page faults, and give them back when the batch is done (glibc only).

The models allocate large short-lived buffers: Whisper's encoder, in CTranslate2's worker thread,
72 MB of attention scores per layer per 30-s window; CAM++ window batches, DeepFilterNet and
DNSMOS frames. glibc maps a buffer that large afresh on every call (a thread's arena cannot hold
more than 64 MB, and `mmap_max` does not stop that path), and the kernel zeroes each new page on
its first touch: on the short speed batch 6.4 M page faults, ~9 s of system time, a fifth of the
process's CPU. `configure()` serves every thread from the main heap and never maps a buffer on
its own, so a freed buffer is reused by the next call, the next stage's and the next recording's
too. The heap keeps what it frees up to `TRIM_THRESHOLD` at its top; `release()` (malloc_trim)
returns every free page when the batch is done. Without `configure()` (glibc's default: a heap
per thread, large buffers mapped apart) `between_stages()` returns them after each step, so the
next stage's models do not grow the process on top of the last one's buffers; with it only when
more than `TRIM_THRESHOLD` is free (on the short batch trimming after every step made the next
step fault its buffers back in: ~4 s of CPU for no lower peak; docs/speed.md).
The priors stage (enhancement and the extractors) runs with its large buffers mapped apart
(`large_buffers_mapped()`): there DeepFilterNet's two streams, YAMNet, DNSMOS and the rest free
buffers of many sizes, which one heap kept as holes, resident, while the stage's live memory
grew past them (`MAPPED_THRESHOLD`; docs/speed.md).
The numbers computed are unchanged, only where buffers live.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from typing import Any

# mallopt parameters (glibc's malloc.h)
M_TRIM_THRESHOLD, M_MMAP_THRESHOLD, M_MMAP_MAX, M_ARENA_MAX = -1, -3, -4, -8
MMAP_MAX_DEFAULT = 65536  # glibc's
# Free memory the heap top may keep between trims: above Whisper's 72 MB score buffer and a
# CAM++ batch's activations, so a stage reuses them; release() returns the rest at its end.
TRIM_THRESHOLD = 256 << 20
# Within `large_buffers_mapped()`: buffers this large are mapped on their own. On 150 s of the
# 2-hour file the priors stage peaked at 740 MB with 8 MiB (875-1202 MB with one heap, 793 with
# 16 MiB, 757 with 4 MiB) for ~2 s more system time than one heap (3x the page faults).
MAPPED_THRESHOLD = 8 << 20


@cache
def _libc() -> Any:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        libc.malloc_trim.argtypes, libc.malloc_trim.restype = [ctypes.c_size_t], ctypes.c_int
        libc.mallopt.argtypes, libc.mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    except (OSError, AttributeError):  # not glibc (musl has neither)
        return None
    return libc


def _user_tuned() -> bool:
    """The user set glibc's malloc tunables for this process: theirs win."""
    return "glibc.malloc." in os.environ.get("GLIBC_TUNABLES", "") or any(
        k.startswith("MALLOC_") and k.endswith("_") for k in os.environ
    )


_configured = False


def configure() -> bool:
    """One heap for every thread, no buffer mapped on its own (call once per process, before the
    models start their threads); False where there is no glibc or the user tuned malloc."""
    global _configured
    libc = _libc()
    if not _configured and libc is not None and not _user_tuned():
        _configured = all(
            libc.mallopt(param, value) == 1
            for param, value in ((M_ARENA_MAX, 1), (M_MMAP_MAX, 0), (M_TRIM_THRESHOLD, TRIM_THRESHOLD))
        )
    return _configured


class _MallInfo2(ctypes.Structure):
    _fields_ = [
        (name, ctypes.c_size_t)
        for name in ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks")
    ] + [("keepcost", ctypes.c_size_t)]


def free_bytes() -> int | None:
    """Free bytes held by the heap (glibc >= 2.33's mallinfo2), None where unknown."""
    libc = _libc()
    fn = getattr(libc, "mallinfo2", None) if libc is not None else None
    if fn is None:
        return None
    fn.argtypes, fn.restype = [], _MallInfo2
    return int(fn().fordblks)


def between_stages() -> bool:
    """At a step or stage boundary. Without `configure()` the free pages go back (the next
    stage's models would grow the process on top of them); with it the next stage reuses them,
    unless the heap holds more than `TRIM_THRESHOLD` free (a long recording's buffers, which
    pieces of other sizes would not reuse: the 10-minute speed file peaked at 2015 MB without
    this bound, 1757 MB with it, 1575 MB with glibc's defaults; docs/speed.md)."""
    if not _configured:
        return release()
    free = free_bytes()
    return release() if free is None or free > TRIM_THRESHOLD else False


def release() -> bool:
    """Return the heap's free pages to the system; False where there is no glibc."""
    libc = _libc()
    return bool(libc.malloc_trim(0)) if libc is not None else False


@contextmanager
def large_buffers_mapped(threshold: int = MAPPED_THRESHOLD) -> Iterator[None]:
    """Within: buffers of `threshold` bytes and more are mapped on their own and unmapped when
    freed (the heap's free pages are returned first); after it, one heap again. Nothing changes
    without `configure()` (glibc's defaults map large buffers already)."""
    libc = _libc()
    if not _configured or libc is None:
        yield
        return
    release()
    libc.mallopt(M_MMAP_THRESHOLD, threshold)
    libc.mallopt(M_MMAP_MAX, MMAP_MAX_DEFAULT)
    try:
        yield
    finally:
        libc.mallopt(M_MMAP_MAX, 0)
