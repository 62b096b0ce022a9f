"""Atomic file writes: a reader sees the old file or the new one, never half of one.

Everything the package writes for others to read (the output JSON, manifests, summaries,
exports, joined model files) goes through here. The temporary lies beside the target (so the
final ``os.replace`` is a rename on one file system), has a short name (a long target name must
not overflow NAME_MAX) and is removed when the write fails.
"""

from __future__ import annotations

import os
import secrets
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

TEMP_PREFIX = ".tmp-"  # the temporaries' names start so (tests check none is left behind)


def _create_temp(parent: Path, suffix: str, directory: bool) -> Path:
    # Created exclusively (two writers never share one) with the permissions of a plain
    # write_text / mkdir (the umask applies), unlike tempfile's owner-only 0600.
    while True:
        tmp = parent / f"{TEMP_PREFIX}{os.getpid()}-{secrets.token_hex(4)}{suffix}"
        try:
            if directory:
                tmp.mkdir()
            else:
                os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
            return tmp
        except FileExistsError:
            continue


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


@contextmanager
def atomic_path(target: str | Path, *, directory: bool = False) -> Iterator[Path]:
    """A new temporary file (or folder) beside `target` to fill; when the block ends without an
    error it takes `target`'s place, otherwise it is removed and the error passes on.

    A folder replaces an existing folder of that name whole (the old one is removed just
    before the rename), so an interrupted fill is never mistaken for a complete one.
    """
    target = Path(target)
    tmp = _create_temp(target.parent, "" if directory else target.suffix, directory)
    try:
        yield tmp
        if directory:
            shutil.rmtree(target, ignore_errors=True)
        os.replace(tmp, target)
    except BaseException:
        _remove(tmp)
        raise


def write_text_atomic(path: str | Path, text: str) -> Path:
    """Write `text` (UTF-8) to `path` atomically, creating its folder if needed; returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")
    return path
