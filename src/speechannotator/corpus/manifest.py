"""OUT/corpus.jsonl: the normalised manifest of every recording annotated into OUT.

Engines read it (Ray Data reads it as its input dataset) and exporters find each recording's
audio through it. Reruns merge into it by id; lines are sorted by id, so it is reproducible.
"""

from __future__ import annotations

import json
from pathlib import Path

from ..atomic import write_text_atomic
from .item import CorpusItem

MANIFEST_FILE = "corpus.jsonl"


def read_manifest(out_dir: str | Path) -> dict[str, CorpusItem]:
    path = Path(out_dir) / MANIFEST_FILE
    if not path.exists():
        return {}
    items = (CorpusItem.from_json(json.loads(line)) for line in path.read_text(encoding="utf-8").splitlines() if line)
    return {i.id: i for i in items}


def write_manifest(out_dir: str | Path, items: list[CorpusItem]) -> Path:
    """Merge `items` into OUT/corpus.jsonl (atomically) and return its path."""
    out = Path(out_dir)
    merged = read_manifest(out)
    merged.update({i.id: i for i in items})
    path = out / MANIFEST_FILE
    return write_text_atomic(path, "".join(merged[k].dumps() + "\n" for k in sorted(merged)))
