"""export_corpus: the one function `speechannotator export` and `annotate --export` forward to."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

from .audio_source import ClipOptions
from .corpus_view import ExportFilter, corpus_view
from .formats import EXPORT_FORMATS
from .registry import clip_from, filters_from, record_export, recorded_exports

log = logging.getLogger(__name__)


def export_corpus(
    out_dir: str | Path,
    fmt: str,
    dest: str | Path,
    filters: ExportFilter | None = None,
    *,
    rate: str = "16000",
    record: bool = True,
    on_count: Callable[[int], None] | None = None,
    clip: ClipOptions | None = None,
) -> Path:
    """Export the complete recordings of an annotation folder to `dest` in `fmt` (see EXPORT_FORMATS).

    clips and hf write audio as `clip` says (rate 16000, 22050, 24000, 44100 or "source"; loudness
    normalisation, edges, padding; `rate` alone sets the rate); jsonl, rttm and seglst write one file
    (dest itself when it has the format's extension, else a file inside dest); srt and vtt one file
    per recording; lhotse and labelstudio a folder of manifests. The export is recorded in
    OUT/exports.json (`record`), so that a correction on the review page writes it again.
    Filters that can never match are a ValueError naming the filter; `on_count` gets the number
    of segments kept (0: an empty export, which the CLI warns about).
    """
    clip = clip or ClipOptions(rate=rate)
    clip.check()
    path = _export(out_dir, fmt, dest, filters, clip, on_count)
    if record:
        from ..output.files import OutputError

        try:
            record_export(out_dir, fmt, Path(dest), filters, clip)
        except OutputError as exc:  # a read-only results folder still exports; corrections can't reach it
            log.warning("export not recorded in %s: %s", out_dir, exc)
    return path


def _export(
    out_dir: str | Path,
    fmt: str,
    dest: str | Path,
    filters: ExportFilter | None,
    clip: ClipOptions,
    on_count: Callable[[int], None] | None = None,
) -> Path:
    if fmt not in EXPORT_FORMATS:
        raise ValueError(f"unknown export format {fmt!r} (one of {', '.join(EXPORT_FORMATS)})")
    view = corpus_view(out_dir, filters)
    if on_count is not None:
        on_count(sum(len(r.segments) for r in view))
    dest = Path(dest)
    if fmt == "clips":
        from .clips import export_clips

        return export_clips(view, dest, clip=clip)
    if fmt == "hf":
        from .hf_export import export_hf

        return export_hf(view, dest, clip=clip)
    if fmt == "jsonl":
        from .jsonl import export_jsonl

        return export_jsonl(view, dest)
    if fmt == "lhotse":
        from .lhotse_export import export_lhotse

        return export_lhotse(view, dest)
    if fmt in ("rttm", "seglst"):
        from . import timelines

        return getattr(timelines, f"export_{fmt}")(view, dest)
    if fmt in ("srt", "vtt"):
        from . import subtitles

        return getattr(subtitles, f"export_{fmt}")(view, dest)
    from .labelstudio import export_labelstudio

    return export_labelstudio(view, dest)


def rerun_exports(out_dir: str | Path) -> list[Path]:
    """Write every export recorded in OUT/exports.json again (after a correction), each with its
    own format, destination, rate and filters."""
    return [
        export_corpus(out_dir, e["format"], e["dest"], filters_from(e["filters"]), clip=clip_from(e), record=False)
        for e in recorded_exports(out_dir)
    ]
