"""Loaders for Timeline-Eval and attribute scoring: output-format JSON, SegLST, STM.

A path is a file or a folder; sessions (recordings) are keyed by file stem for the output
format and by ``session_id`` / the STM file field for SegLST and STM. Times become exact
``Decimal`` seconds (milliseconds / 1000 for the output format), as meeteval's own loaders do,
so that collar decisions never depend on float rounding.
"""

from __future__ import annotations

import json
import logging
import math
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from pathlib import Path

log = logging.getLogger(__name__)

TIMELINE_SUFFIXES = (".json", ".stm")


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


def _stem(path: Path) -> str:
    name = path.name
    for suffix in (".seglst.json", ".json", ".stm"):
        if name.lower().endswith(suffix):
            return name[: -len(suffix)]
    return path.stem


def _seconds(value: object, where: str) -> Decimal:
    if isinstance(value, bool) or value is None:
        raise EvalInputError(f"{where}: time {value!r} is not a number")
    try:
        d = Decimal(str(value))
    except InvalidOperation as exc:
        raise EvalInputError(f"{where}: time {value!r} is not a number") from exc
    if not d.is_finite():  # NaN / Infinity parse as Decimals (and JSON allows them)
        raise EvalInputError(f"{where}: time {value!r} is not a finite number")
    return d


def _read_json(path: Path) -> object:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise EvalInputError(f"{path}: not readable JSON ({exc})") from exc


def _is_seglst(items: list) -> bool:
    return bool(items) and isinstance(items[0], dict) and "words" in items[0]


def _from_output_json(path: Path, items: list) -> Sessions:
    segs = []
    for i, item in enumerate(items):
        where = f"{path} segment {i}"
        if not isinstance(item, dict):
            raise EvalInputError(f"{where}: not an object")
        missing = [k for k in ("speaker_id", "text", "start_time", "end_time") if k not in item]
        if missing:
            raise EvalInputError(f"{where}: missing {', '.join(missing)}")
        start = _seconds(item["start_time"], where) / 1000
        end = _seconds(item["end_time"], where) / 1000
        segs.append(TimelineSegment(str(item["speaker_id"]), start, end, str(item["text"] or "")))
    return {_stem(path): segs}


def _from_seglst(path: Path, items: list) -> Sessions:
    out: Sessions = {}
    for i, item in enumerate(items):
        where = f"{path} segment {i}"
        if not isinstance(item, dict) or not {"words", "start_time", "end_time", "speaker"} <= set(item):
            raise EvalInputError(f"{where}: SegLST needs words, speaker, start_time, end_time")
        session = str(item.get("session_id", _stem(path)))
        seg = TimelineSegment(
            str(item["speaker"]),
            _seconds(item["start_time"], where),
            _seconds(item["end_time"], where),
            str(item["words"] or ""),
        )
        out.setdefault(session, []).append(seg)
    return out


def _from_stm(path: Path) -> Sessions:
    out: Sessions = {}
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise EvalInputError(f"{path}: not readable ({exc})") from exc
    for n, line in enumerate(lines, 1):
        if not line.strip() or line.startswith(";;"):
            continue
        parts = line.split(maxsplit=5)
        if len(parts) < 5:
            raise EvalInputError(f"{path} line {n}: STM needs 'session channel speaker start end [text]'")
        session, _channel, speaker, start, end = parts[:5]
        text = parts[5] if len(parts) > 5 else ""
        if text.startswith("<"):  # optional <label> column
            text = text.split(">", 1)[1] if ">" in text else ""
        where = f"{path} line {n}"
        out.setdefault(session, []).append(
            TimelineSegment(speaker, _seconds(start, where), _seconds(end, where), text.strip())
        )
    return out


def load_timeline_file(path: str | Path) -> Sessions:
    p = Path(path)
    if p.suffix.lower() == ".stm":
        return _from_stm(p)
    data = _read_json(p)
    if not isinstance(data, list):
        raise EvalInputError(f"{p}: expected a JSON array (output format or SegLST)")
    return _from_seglst(p, data) if _is_seglst(data) else _from_output_json(p, data)


def load_timeline(path: str | Path) -> Sessions:
    """Load one file or every .json/.stm file of a folder into sessions."""
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
        out[_stem(f)] = data
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
