"""Corrections of corpus voices: merge two voices, split a recording's speaker off one.

Each is an append-only decision in OUT/state.sqlite (corpus/voice_decisions.py replays them),
after which OUT/speakers.jsonl and every recorded export are written again, so
corpus_speaker_id follows at once. Sits above the registry builder (corpus/speakers.py) and the
exports it rewrites.
"""

from __future__ import annotations

import getpass
from pathlib import Path
from typing import Any

from ..export.api import rerun_exports as rerun_export_files
from ..state import STATE_FILE, StateStore
from .speakers import next_voice_id, read_registry, registry_lock, rewrite_registry
from .voice_decisions import MERGE, SPLIT, VoiceError


def _state(out: Path, *, readonly: bool) -> StateStore:
    path = out / STATE_FILE
    if not path.is_file():
        raise VoiceError(f"no state database {path} (annotate into {out} first)")
    return StateStore(path, readonly=readonly)


def _registry(out: Path) -> dict[str, dict[str, Any]]:
    rows = {r["id"]: r for r in read_registry(out)}
    if not rows:
        raise VoiceError(f"no corpus voices in {out} (annotate with speaker ids to join them)")
    return rows


def _rewrite(out: Path) -> None:
    """speakers.jsonl with the decisions replayed (under the registry lock); the caller then
    writes every export recorded in OUT/exports.json again (their corpus_speaker_id follows)."""
    rewrite_registry(out)


def rerun_exports(out: Path) -> None:
    rerun_export_files(out)


def _who(who: str | None) -> str:
    return who or getpass.getuser()


def merge_voices(out_dir: str | Path, keep: str, absorb: str, *, who: str | None = None, note: str = "") -> int:
    """Voice ``absorb`` becomes part of voice ``keep``; recorded, then OUT/speakers.jsonl rewritten.
    Returns the decision id."""
    out = Path(out_dir)
    with registry_lock(out):
        rows = _registry(out)
        for v in (keep, absorb):
            if v not in rows:
                raise VoiceError(f"no voice {v!r} in {out / 'speakers.jsonl'}")
        if keep == absorb:
            raise VoiceError(f"cannot merge voice {keep!r} with itself")
        members = sorted(rows[keep]["members"] + rows[absorb]["members"])
        with _state(out, readonly=False) as store:
            did = store.add_voice_decision(MERGE, keep, {"from": absorb, "members": members}, _who(who), note)
        _rewrite(out)
    rerun_exports(out)
    return did


def split_voice(
    out_dir: str | Path, rec: str, speaker: str, *, who: str | None = None, note: str = ""
) -> tuple[int, str]:
    """Recording ``rec``'s speaker ``speaker`` leaves its voice and gets a new voice id; recorded,
    then OUT/speakers.jsonl rewritten. Returns (decision id, the new voice id)."""
    out = Path(out_dir)
    member = f"{rec}:{speaker}"
    with registry_lock(out):
        rows = _registry(out)
        holder = next((r for r in rows.values() if member in r["members"]), None)
        if holder is None:
            raise VoiceError(f"no voice holds speaker {speaker!r} of recording {rec!r}")
        if holder["members"] == [member]:
            raise VoiceError(f"{member} is already a voice of its own ({holder['id']})")
        with _state(out, readonly=False) as store:
            taken = set(rows) | {d.voice for d in store.voice_decisions()}
            new = next_voice_id(taken)
            did = store.add_voice_decision(SPLIT, new, {"member": member, "from": holder["id"]}, _who(who), note)
        _rewrite(out)
    rerun_exports(out)
    return did, new
