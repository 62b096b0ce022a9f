"""The review page's voices view: the corpus voices of OUT/speakers.jsonl with a clip to listen
to per voice and per recording, and the voice decisions made so far (corpus/voice_decisions.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..corpus.voice_decisions import describe
from ..corpus.voice_registry import read_registry
from ..corrections import reviewed_items
from ..state import StateStore


def _longest(store: StateStore, rec: str, speaker: str) -> dict[str, Any] | None:
    """The speaker's longest segment in the recording as reviewed now: the clip to listen to."""
    try:
        rows = [row for _, row in reviewed_items(store, rec) if str(row["speaker_id"]) == speaker]
    except Exception:  # noqa: BLE001 - a recording being annotated again has no clip for now
        return None
    if not rows:
        return None
    best = max(rows, key=lambda r: (r["end_time"] - r["start_time"], -r["start_time"]))
    return {"start": best["start_time"] / 1000.0, "end": best["end_time"] / 1000.0, "text": best.get("text", "")}


def voices(store: StateStore, out_dir: Path) -> dict[str, Any]:
    """Every voice (id, enrolled, recordings, hours, gender/age/pitch, representative clip) with
    its members' clips, and the decision trail."""
    listed = []
    for r in read_registry(out_dir):
        members = []
        for m in r["members"]:
            rec, _, speaker = m.rpartition(":")
            members.append({"member": m, "rec": rec, "speaker": speaker, "clip": _longest(store, rec, speaker)})
        listed.append({**{k: r.get(k) for k in _FIELDS}, "members": members})
    trail = [
        {"id": d.id, "action": d.action, "voice": d.voice, "who": d.who, "at": d.at, "text": describe(d)}
        for d in store.voice_decisions()
    ]
    return {"voices": listed, "decisions": trail}


_FIELDS = ("id", "enrolled", "recordings", "hours", "segments", "gender", "age", "pitch_hz_median", "representative")
