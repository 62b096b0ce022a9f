"""The output folder: checks that it can hold our files before any work is done, the output
JSON's atomic write, and the name rules every output file follows."""

from __future__ import annotations

import errno
import json
import os
import sqlite3
import tempfile
from collections.abc import Iterable
from pathlib import Path

from ..atomic import write_text_atomic
from ..schema import SegmentRecord


class OutputError(Exception):
    """The output folder or an output file cannot be written; the message is one line."""


def _cause(exc: OSError) -> str:
    return exc.strerror or exc.__class__.__name__


def prepare_out_dir(out_dir: Path) -> None:
    """Create `out_dir` if needed and prove it writable (a path under a file, /proc, a
    read-only mount), so that a run fails in its first second rather than after the work."""
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise OutputError("exists and is not a folder") from None
    except OSError as exc:
        raise OutputError(f"cannot create the output folder ({_cause(exc)})") from exc
    if not out_dir.is_dir():
        raise OutputError("is not a folder")
    try:
        fd, probe = tempfile.mkstemp(dir=out_dir, prefix=".probe-")
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise OutputError(f"cannot write in the output folder ({_cause(exc)})") from exc


def state_error(exc: sqlite3.Error, path: Path) -> OutputError:
    """A one-line OutputError for an SQLite failure on the state database."""
    return OutputError(f"cannot use the state database {path.name} ({exc})")


def name_max(folder: Path) -> int:
    try:
        return os.pathconf(folder, "PC_NAME_MAX")
    except (OSError, ValueError):
        return 255


def check_output_name(out_path: Path) -> None:
    """Refuse, before annotating, an output name the file system cannot hold or a folder
    standing where the output file goes."""
    limit = name_max(out_path.parent)
    size = len(os.fsencode(out_path.name))
    if size > limit:
        raise OutputError(
            f"output name {out_path.name[:40]}... is {size} bytes, longer than the file system's "
            f"limit of {limit}; rename the input"
        )
    if out_path.is_dir():
        raise OutputError(f"{out_path} is a folder; the output file cannot be written there")


def write_json_atomic(path: Path, records: Iterable[SegmentRecord]) -> None:
    """The records as the demo JSON, written atomically; a failure is a one-line OutputError."""
    text = json.dumps([r.ordered() for r in records], ensure_ascii=False, indent=2) + "\n"
    try:
        write_text_atomic(path, text)
    except OSError as exc:
        if exc.errno in (errno.EISDIR, errno.ENOTEMPTY, errno.EEXIST):
            raise OutputError(f"{path} is a folder; the output file cannot be written there") from exc
        raise OutputError(f"cannot write {path.name} ({_cause(exc)})") from exc
