"""OUT/speakers.jsonl read back: the corpus voices and each recording speaker's voice id.

A leaf the exports read (corpus_speaker_id); corpus/speakers.py writes the file.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

SPEAKERS_FILE = "speakers.jsonl"


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def read_registry(out_dir: str | Path) -> list[dict[str, Any]]:
    """The voices of OUT/speakers.jsonl (empty when there is none)."""
    return _read_jsonl(Path(out_dir) / SPEAKERS_FILE)


def read_speaker_map(out_dir: str | Path) -> dict[str, str]:
    """{"<rec>:<speaker_id>": corpus_speaker_id} from OUT/speakers.jsonl (empty when there is none)."""
    return {m: r["id"] for r in read_registry(out_dir) for m in r.get("members", [])}
