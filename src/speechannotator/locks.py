"""One writer per recording and output folder.

An advisory `flock` on OUT/.locks/<hash>.lock is held while a process annotates a recording.
The kernel drops it when the process ends in any way (kill -9 included), so a stale lock
never blocks a later run; the file keeps the holder's pid only to name it in the message.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
from pathlib import Path

LOCK_DIR = ".locks"


class RecordingBusy(Exception):
    """Another live process holds the recording's lock."""


class RecordingLock:
    def __init__(self, out_dir: Path, rec: str):
        digest = hashlib.sha1(rec.encode("utf-8", "surrogateescape")).hexdigest()[:16]
        self.path = out_dir / LOCK_DIR / f"{digest}.lock"  # short and fixed-length whatever the stem
        self.rec = rec
        self._fd: int | None = None

    def acquire(self) -> RecordingLock:
        self.path.parent.mkdir(exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.read(fd, 32).decode("ascii", "replace").strip() or "?"
            os.close(fd)
            raise RecordingBusy(
                f"another process (pid {holder}) is annotating {self.rec!r} into this output "
                f"folder; wait for it to finish, or use another -o"
            ) from None
        os.ftruncate(fd, 0)
        os.write(fd, str(os.getpid()).encode())
        self._fd = fd
        return self

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing the descriptor drops the flock
            self._fd = None

    def __enter__(self) -> RecordingLock:
        return self.acquire()

    def __exit__(self, *exc) -> None:
        self.release()
