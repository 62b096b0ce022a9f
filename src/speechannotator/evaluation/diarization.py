"""Speaker-side scores of a timeline with pyannote.metrics: DER, JER, purity and coverage.

Rows are (start, end, speaker) in seconds. The collar is 0.25 s on each side of a reference
boundary (pyannote takes the total width); DER and JER are given once with overlapped speech
scored and once (``_noov``) with it excluded.
"""

from __future__ import annotations

from collections.abc import Iterable

COLLAR = 0.25  # seconds on each side of a reference boundary

Rows = Iterable[tuple[float, float, str]]


def _annotation(rows: Rows):
    from pyannote.core import Annotation, Segment

    ann = Annotation()
    for i, (a, b, spk) in enumerate(rows):
        if b > a:
            ann[Segment(float(a), float(b)), i] = spk
    return ann


def diarization_scores(ref_rows: Rows, hyp_rows: Rows, uem: tuple[float, float] | None = None) -> dict:
    """DER ([errors, total] seconds) and its parts, JER, purity and coverage (percent), within `uem`
    when given, else within the union of both extents."""
    from pyannote.core import Segment, Timeline
    from pyannote.metrics.diarization import (
        DiarizationCoverage,
        DiarizationErrorRate,
        DiarizationPurity,
        JaccardErrorRate,
    )

    ref, hyp = _annotation(ref_rows), _annotation(hyp_rows)
    ext = Timeline([Segment(*uem)]) if uem else (ref.get_timeline() | hyp.get_timeline()).extent()
    ext = ext if isinstance(ext, Timeline) else Timeline([ext])
    out: dict = {}
    for name, skip in (("", False), ("_noov", True)):
        d = DiarizationErrorRate(collar=2 * COLLAR, skip_overlap=skip)(ref, hyp, detailed=True, uem=ext)
        out["der" + name] = [d["missed detection"] + d["false alarm"] + d["confusion"], d["total"]]
        if not skip:
            out["der_parts"] = {k: round(d[k], 2) for k in ("missed detection", "false alarm", "confusion")}
        out["jer" + name] = round(100 * JaccardErrorRate(collar=2 * COLLAR, skip_overlap=skip)(ref, hyp, uem=ext), 2)
    out["purity"] = round(100 * DiarizationPurity()(ref, hyp, uem=ext), 2)
    out["coverage"] = round(100 * DiarizationCoverage()(ref, hyp, uem=ext), 2)
    return out
