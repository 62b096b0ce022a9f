"""Human corrections of the corpus voice registry as decisions, and their replay: merge two
voices, split a recording's speaker off a voice (corpus/voice_edits.py records them). Each is an
append-only decision in the state (who, when, what); the corpus step replays them, oldest first,
over its clustering every time it writes OUT/speakers.jsonl, so a rerun or a new recording joining
the registry keeps them.

A merge records both voices' members at the time: on replay the groups holding any of them become
one voice with the surviving id, so a new recording that joins either side joins the merged voice.
A split records the member ("<rec>:<speaker_id>") and the new id it got; on replay that member is
taken out of whatever group it fell in and becomes that voice.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ..records import VoiceDecision
from ..state import STATE_FILE, StateStore

MERGE = "merge"
SPLIT = "split"


class VoiceError(ValueError):
    """A voice correction that cannot apply; the message says why."""


@dataclass
class Group:
    """A voice being formed: its members ("<rec>:<speaker_id>", sorted) and the id a human decision
    gave it (None: named by enrollment, the previous registry or a new number)."""

    members: list[str]
    forced: str | None = None


def replay(groups: list[Group], decisions: list[VoiceDecision]) -> list[Group]:
    """The groups after the decisions, oldest first. Deterministic: groups keep their order,
    a merged group takes the place of its first part, a split member goes last."""
    groups = [Group(sorted(g.members), g.forced) for g in groups if g.members]
    for d in decisions:
        if d.action == MERGE:
            wanted = set(d.data.get("members", []))
            hit = [i for i, g in enumerate(groups) if wanted & set(g.members)]
            if not hit:
                continue  # every member has left the corpus
            merged = Group(sorted(m for i in hit for m in groups[i].members), d.voice)
            groups = [merged if i == hit[0] else g for i, g in enumerate(groups) if i == hit[0] or i not in hit]
        elif d.action == SPLIT:
            member = d.data.get("member")
            holder = next((g for g in groups if member in g.members), None)
            if not isinstance(member, str) or holder is None:
                continue
            holder.members.remove(member)
            groups = [g for g in groups if g.members] + [Group([member], d.voice)]
    # One id, one group: a forced id that an earlier group already holds is released.
    seen: set[str] = set()
    for g in groups:
        if g.forced in seen:
            g.forced = None
        elif g.forced:
            seen.add(g.forced)
    return groups


def read_voice_decisions(out_dir: str | Path) -> list[VoiceDecision]:
    path = Path(out_dir) / STATE_FILE
    if not path.is_file():
        return []
    # A read-only connection that closes last leaves the WAL's -wal/-shm files behind (it may not
    # checkpoint), so a folder we can write gets an ordinary connection that cleans up on close.
    with StateStore(path, readonly=not os.access(path.parent, os.W_OK)) as store:
        return store.voice_decisions()


def describe(d: VoiceDecision) -> str:
    """One line for `voices` and `explain`."""
    if d.action == MERGE:
        what = f"merged {d.data.get('from')} into {d.voice}"
    else:
        what = f"split {d.data.get('member')} off {d.data.get('from')} as {d.voice}"
    return f"#{d.id} {what} by {d.who}" + (f" ({d.note})" if d.note else "")
