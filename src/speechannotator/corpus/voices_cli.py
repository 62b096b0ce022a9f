"""`speechannotator voices list|merge|split OUT ...`: the corpus voices and their corrections
(a thin CLI over corpus/voice_decisions.py; registered by the main CLI)."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import click

from ..terminal import echo

_OUT = click.argument("out_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
_WHO = click.option("--who", help="Reviewer name recorded with the decision (default: the login name).")
_NOTE = click.option("--note", default="", help="Why, recorded with the decision.")


def _run(fn, *args, **kwargs):
    from .voice_decisions import VoiceError

    try:
        return fn(*args, **kwargs)
    except (VoiceError, OSError, sqlite3.Error) as exc:
        raise click.ClickException(str(exc).splitlines()[0]) from exc


@click.group("voices")
def voices_group() -> None:
    """The corpus voices (OUT/speakers.jsonl): list them, merge two, split a speaker off one."""


@voices_group.command("list")
@_OUT
def list_command(out_dir: Path) -> None:
    """Each voice with its recordings and hours, then the voice decisions in force."""
    from .voice_decisions import describe, read_voice_decisions
    from .voice_registry import read_registry

    rows = read_registry(out_dir)
    if not rows:
        raise click.ClickException(f"no corpus voices in {out_dir / 'speakers.jsonl'}")
    for r in rows:
        summary = ", ".join(
            x
            for x in (r.get("gender"), r.get("age"), f"{r['pitch_hz_median']} Hz" if r.get("pitch_hz_median") else "")
            if x
        )
        name = f"{r['id']}{' (enrolled)' if r.get('enrolled') else ''}"
        echo(f"{name}: {len(r['recordings'])} recordings, {r['hours'] * 60:.1f} min, {summary or '-'}")
        echo(f"    members: {' '.join(r['members'])}")
    decisions = _run(read_voice_decisions, out_dir)
    if decisions:
        echo("decisions:")
        for d in decisions:
            when = datetime.fromtimestamp(d.at, UTC).strftime("%Y-%m-%d %H:%M:%SZ")
            echo(f"    {describe(d)} at {when}")


@voices_group.command("merge")
@_OUT
@click.argument("keep")
@click.argument("absorb")
@_WHO
@_NOTE
def merge_command(out_dir: Path, keep: str, absorb: str, who: str | None, note: str) -> None:
    """Voice ABSORB becomes part of voice KEEP (recorded; speakers.jsonl rewritten)."""
    from .voice_edits import merge_voices

    did = _run(merge_voices, out_dir, keep, absorb, who=who, note=note)
    echo(f"decision #{did}: {absorb} merged into {keep}", err=True)


@voices_group.command("split")
@_OUT
@click.argument("recording")
@click.argument("speaker")
@_WHO
@_NOTE
def split_command(out_dir: Path, recording: str, speaker: str, who: str | None, note: str) -> None:
    """SPEAKER (a speaker_id) of RECORDING leaves its voice for a new one (recorded; speakers.jsonl rewritten)."""
    from .voice_edits import split_voice

    did, new = _run(split_voice, out_dir, recording, speaker, who=who, note=note)
    echo(f"decision #{did}: {recording}:{speaker} is now voice {new}", err=True)
