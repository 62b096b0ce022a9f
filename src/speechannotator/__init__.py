"""speechannotator: context-aware multi-agent annotation of long speech recordings, and SA-Eval.

>>> import speechannotator
>>> records = speechannotator.annotate("examples/dialogue.flac", out_dir="out")
>>> records[0].speaker_id, records[0].gender, records[0].caption

>>> annotator = speechannotator.Annotator("out", speechannotator.Config(labels="en"))
>>> result = annotator.annotate("examples/dialogue.flac")  # records, output path, timings, config
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:
    from .config import Config
    from .pipeline import Annotator
    from .schema import SegmentRecord

__all__ = ["Annotator", "Config", "SegmentRecord", "annotate", "AnnotationError"]

# Imported on first use, so that `import speechannotator` (and the CLI's start) stays cheap.
_LAZY = {"Annotator": "pipeline", "Config": "config", "SegmentRecord": "schema"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class AnnotationError(RuntimeError):
    """A recording could not be annotated; the message names the file and the cause."""


def annotate(
    path: str | Path,
    *,
    out_dir: str | Path | None = None,
    config: Config | None = None,
    timeline: str | Path | None = None,
    backend=None,
) -> list[SegmentRecord]:
    """Annotate one recording and return its segment records.

    Writes `out_dir/<stem>.json` and keeps the shared state in `out_dir/state.sqlite`
    (a temporary folder when out_dir is None). `timeline` (output JSON, SegLST or RTTM)
    gives the fixed-timeline setting. Raises AnnotationError for bad input.
    """
    import tempfile

    from .pipeline import Annotator, OutputError

    with tempfile.TemporaryDirectory(prefix="speechannotator-") as tmp:
        try:
            annotator = Annotator(out_dir or tmp, config, backend=backend)
        except OutputError as exc:
            raise AnnotationError(f"{out_dir}: {exc}") from exc
        try:
            result = annotator.annotate(path, timeline=timeline)
        finally:
            annotator.close()
    if not result.ok:
        raise AnnotationError(f"{path}: {result.error}")
    return result.records
