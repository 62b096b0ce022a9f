"""heap.release returns the heap's free pages (glibc): freed buffers between live ones stay
resident after free() and leave with malloc_trim. heap.configure keeps a large buffer that a
worker thread frees and allocates again in the heap, so it is not faulted in afresh each time."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from speechannotator import heap

glibc = pytest.mark.skipif(heap._libc() is None, reason="no glibc malloc_trim/mallopt")


def _rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096 / 2**20


@glibc
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


# A thread allocates (malloc), fills and frees an 80 MB buffer (CTranslate2's encoder does so with its 72 MB
# attention scores) three times; prints the page faults of the last two rounds.
_CHILD = textwrap.dedent(
    """
    import ctypes, resource, sys, threading
    from speechannotator import heap
    configured = heap.configure() if sys.argv[1] == "1" else False
    libc = heap._libc()
    libc.malloc.argtypes, libc.malloc.restype = [ctypes.c_size_t], ctypes.c_void_p
    libc.free.argtypes = [ctypes.c_void_p]
    faults = []
    def work():
        for _ in range(3):
            f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
            p = libc.malloc(80_000_000)
            ctypes.memset(p, 1, 80_000_000)
            libc.free(p)
            faults.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0)
    t = threading.Thread(target=work)
    t.start(); t.join()
    # configured: the stage boundary keeps the free pages for the next stage's models
    kept = heap.between_stages()
    assert kept is False if configured else isinstance(kept, bool)
    print(configured, sum(faults[1:]))
    """
)


def _faults(configure: bool, env: dict | None = None) -> tuple[str, int]:
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, "1" if configure else "0"],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, **(env or {})},
    ).stdout.split()
    return out[0], int(out[1])


@glibc
def test_configure_reuses_a_threads_large_buffer():
    pages = 80_000_000 // 4096
    configured, reused = _faults(True)
    assert configured == "True"
    assert reused < pages // 10, reused  # served from the heap again: no page faulted afresh
    plain, fresh = _faults(False)
    assert plain == "False" and fresh > pages, fresh  # glibc's default maps it anew each round


@glibc
def test_configure_leaves_a_users_malloc_tunables_alone():
    configured, _ = _faults(True, {"GLIBC_TUNABLES": "glibc.malloc.perturb=0"})
    assert configured == "False"


_BOUND = textwrap.dedent(
    """
    import ctypes
    from speechannotator import heap
    assert heap.configure()
    libc = heap._libc()
    libc.malloc.argtypes, libc.malloc.restype = [ctypes.c_size_t], ctypes.c_void_p
    libc.free.argtypes = [ctypes.c_void_p]
    def held(n):  # n MB written and freed below a live block that pins the heap's top
        ps = [libc.malloc(1 << 20) for _ in range(n)]
        for p in ps:
            ctypes.memset(p, 1, 1 << 20)
        pin = libc.malloc(1 << 20)
        for p in ps:
            libc.free(p)
        return pin
    held(64)
    small = heap.between_stages()  # 64 MB free: kept for the next stage
    held(320)
    large = heap.between_stages()  # over TRIM_THRESHOLD free: returned
    print(small, large)
    """
)


@glibc
def test_between_stages_returns_the_heap_only_past_the_bound():
    if heap.free_bytes() is None:
        pytest.skip("no mallinfo2")
    out = subprocess.run([sys.executable, "-c", _BOUND], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["False", "True"], out


_MAPPED = textwrap.dedent(
    """
    import ctypes, resource
    from speechannotator import heap
    assert heap.configure()
    libc = heap._libc()
    libc.malloc.argtypes, libc.malloc.restype = [ctypes.c_size_t], ctypes.c_void_p
    libc.free.argtypes = [ctypes.c_void_p]
    def refaulted(n):  # page faults of the 2nd and 3rd rounds of an n-byte buffer written and freed
        faults = []
        for _ in range(3):
            f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
            p = libc.malloc(n)
            ctypes.memset(p, 1, n)
            libc.free(p)
            faults.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0)
        return sum(faults[1:])
    with heap.large_buffers_mapped():
        large, small = refaulted(2 * heap.MAPPED_THRESHOLD), refaulted(heap.MAPPED_THRESHOLD // 4)
    after = refaulted(2 * heap.MAPPED_THRESHOLD)
    print(large, small, after)
    """
)


@glibc
def test_large_buffers_are_mapped_apart_only_within_the_priors_block():
    out = subprocess.run([sys.executable, "-c", _MAPPED], capture_output=True, text=True, check=True).stdout.split()
    large, small, after = map(int, out)
    pages = 2 * heap.MAPPED_THRESHOLD // 4096
    assert large > pages, large  # mapped afresh and unmapped each round: every page faulted again
    assert small < pages // 40, small  # a smaller buffer is the heap's to reuse
    assert after < pages // 10, after  # one heap again: the buffer reused
