"""The local engine: one process, models loaded once, recordings one after another."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

from ..config import Config
from ..corpus.item import CorpusItem
from ..pipeline import Annotator
from .item_run import ItemResult, annotate_item


def run_local(
    items: list[CorpusItem], out_dir: str | Path, config: Config, on_stage: Callable[[str, str], None] | None = None
) -> Iterator[ItemResult]:
    """Annotate `items` into `out_dir`, yielding each result as its recording finishes."""
    annotator = Annotator(out_dir, config)
    try:
        for item in items:
            hook = (lambda s, rec=item.id: on_stage(rec, s)) if on_stage else None
            yield annotate_item(annotator, item, hook)
    finally:
        annotator.close()
