"""Loaders for Timeline-Eval and attribute scoring.

Timelines (output-format JSON, SegLST, RTTM, STM) are read by the package's one timeline reader
(speechannotator/timelines.py), which keeps times as exact ``Decimal`` seconds (milliseconds /
1000 for the output format), as meeteval's own loaders do, so that collar decisions never depend
on float rounding. A path is a file or a folder; sessions (recordings) are keyed by
``session_id`` / the RTTM or STM file field, and by the file's name where the format names none.
"""

from __future__ import annotations

import json
import logging
import math
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

from ..timelines import TIMELINE_SUFFIXES, TimelineError, Turn, read_timeline, session_name, turns_from_json

log = logging.getLogger(__name__)


class EvalInputError(ValueError):
    """An evaluation input that cannot be read; the message names the file and the cause."""


@dataclass(frozen=True)
class TimelineSegment:
    speaker: str
    start: Decimal  # seconds
    end: Decimal
    text: str


Sessions = dict[str, list[TimelineSegment]]


def _files(path: Path, suffixes: tuple[str, ...]) -> list[Path]:
    if not path.exists():
        raise EvalInputError(f"{path}: does not exist")
    if path.is_file():
        return [path]
    files = sorted(p for p in path.iterdir() if p.is_file() and p.suffix.lower() in suffixes)
    if not files:
        raise EvalInputError(f"{path}: folder holds no {'/'.join(suffixes)} files")
    return files


def _read_json(path: Path) -> object:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise EvalInputError(f"{path}: not readable JSON ({exc})") from exc


def _sessions(turns: list[Turn], path: Path) -> Sessions:
    """Turns by session; turns of no named session, and a file without turns, are the file's recording."""
    out: Sessions = {}
    for t in turns:
        seg = TimelineSegment(t.speaker, t.start_time, t.end_time, t.words)
        out.setdefault(t.session_id or session_name(path), []).append(seg)
    return out or {session_name(path): []}


def sessions_from_json(path: Path, items: object) -> Sessions:
    """Sessions of JSON items already read from `path` (output format or SegLST)."""
    try:
        return _sessions(turns_from_json(items), path)
    except TimelineError as exc:
        raise EvalInputError(f"{path} {exc}") from None


def load_timeline_file(path: str | Path) -> Sessions:
    p = Path(path)
    try:
        return _sessions(read_timeline(p), p)
    except TimelineError as exc:  # its message opens with the item or line at fault
        raise EvalInputError(f"{p} {exc}") from None


def load_timeline(path: str | Path) -> Sessions:
    """Load one file or every timeline file (.json, .rttm, .stm) of a folder into sessions."""
    out: Sessions = {}
    for f in _files(Path(path), TIMELINE_SUFFIXES):
        for session, segs in load_timeline_file(f).items():
            if session in out:
                raise EvalInputError(f"{f}: session {session!r} appears in more than one file")
            out[session] = segs
    return out


def load_records(path: str | Path) -> dict[str, list[dict]]:
    """Load output-format JSON records (one file, or every .json of a folder) keyed by stem.

    Records stay plain dicts: a hypothesis may lack fields or hold junk, and scoring gives
    such fields 0 instead of refusing the file.
    """
    out: dict[str, list[dict]] = {}
    for f in _files(Path(path), (".json",)):
        data = _read_json(f)
        if not isinstance(data, list) or not all(isinstance(x, dict) for x in data):
            raise EvalInputError(f"{f}: expected a JSON array of segment objects")
        for i, item in enumerate(data):
            for key in ("start_time", "end_time"):
                v = item.get(key)
                if isinstance(v, float) and not math.isfinite(v):
                    raise EvalInputError(f"{f} segment {i}: {key} {v!r} is not a finite number")
        out[session_name(f)] = data
    return out


def pair_sessions(ref: dict, hyp: dict, *, ref_path: str | Path = "", hyp_path: str | Path = "") -> list[str]:
    """Session ids to score; hypotheses are matched to references by name.

    Two single files holding one session each are paired whatever their names. A reference
    session without a hypothesis is scored against an empty hypothesis (it counts, all
    deleted); a hypothesis session without a reference is ignored with a warning.
    """
    if (
        len(ref) == 1
        and len(hyp) == 1
        and Path(ref_path).is_file()
        and Path(hyp_path).is_file()
        and set(ref) != set(hyp)
    ):
        (r,), (h,) = ref, hyp
        hyp[r] = hyp.pop(h)
    extra = sorted(set(hyp) - set(ref))
    if extra:
        log.warning("hypothesis sessions without a reference are ignored: %s", ", ".join(extra))
    if ref and not set(ref) & set(hyp):
        raise EvalInputError(
            f"no hypothesis session matches a reference session (reference {ref_path}: "
            f"{_names(ref)}; hypothesis {hyp_path}: {_names(hyp)}); recordings are matched by name"
        )
    missing = sorted(set(ref) - set(hyp))
    if missing:
        log.warning("reference sessions without a hypothesis score as empty: %s", ", ".join(missing))
    return sorted(ref)


def _names(sessions: dict, shown: int = 5) -> str:
    names = sorted(sessions)
    more = f" and {len(names) - shown} more" if len(names) > shown else ""
    return (", ".join(names[:shown]) or "none") + more


def write_seglst(sessions: Sessions, path: str | Path, *, split_chars: bool = False) -> None:
    """Write sessions as SegLST (seconds). split_chars writes one space-separated token per
    character, the form meeteval's CLI needs to score characters."""
    from .tokenize import char_tokens

    items = []
    for session, segs in sessions.items():
        for s in segs:
            words = " ".join(char_tokens(s.text)) if split_chars else s.text
            items.append(
                {
                    "session_id": session,
                    "speaker": s.speaker,
                    "start_time": float(s.start),
                    "end_time": float(s.end),
                    "words": words,
                }
            )
    Path(path).write_text(json.dumps(items, ensure_ascii=False, indent=1), encoding="utf-8")
